/**
 * Host float64 BLAS-1 micro-benchmark: `HostVectorSpace`'s combine (12 vectors), multiDot (12
 * vectors), dot, axpby and norm2 at n = 2·10^5 (the L = 11 Hubbard CI space is 213 444 long) and
 * n = 3·10^6. Run: `pnpm -s tsx bench/host-blas1.ts [--quick] [--sizes 200000,3000000] [--k 12]`.
 *
 * Timing: median over batches of calls, each batch lasting ≥ 2 ms; ≥ 15 batches and ≥ 0.4 s per
 * median (`--quick`: ≥ 7 batches, ≥ 0.1 s). GB/s counts the minimum memory traffic of the
 * operation, each float64 read or written once: combine (beta ≠ 0) (k + 2)·8n bytes, multiDot
 * (k + 1)·8n, dot 16n, axpby (beta ≠ 0) 24n, norm2 8n. An implementation that passes over y more
 * than once moves more bytes than counted, so its GB/s reads as "effective" throughput.
 *
 * Each timed result is also checked against a plain float64 loop (relative error printed), so a
 * fast but wrong kernel shows up here and not only in the tests.
 */
import { HostVectorSpace } from '@gpusparse/formats';

const quick = process.argv.includes('--quick');
const argValue = (flag: string): string | undefined => {
  const k = process.argv.indexOf(flag);
  return k >= 0 ? process.argv[k + 1] : undefined;
};
const sizes = (argValue('--sizes') ?? '200000,3000000').split(',').map(Number);
const k = Number(argValue('--k') ?? 12);
const MIN_BATCHES = quick ? 7 : 15;
const BUDGET_MS = quick ? 100 : 400;

/** Median seconds per call over batches of ≥ 2 ms. */
function medianTime(fn: () => void): number {
  fn(); // warm-up (JIT)
  let t0 = performance.now();
  fn();
  const one = Math.max(performance.now() - t0, 1e-6);
  const reps = Math.max(1, Math.ceil(2 / one));
  const samples: number[] = [];
  const start = performance.now();
  while (samples.length < MIN_BATCHES || (performance.now() - start < BUDGET_MS && samples.length < 200)) {
    t0 = performance.now();
    for (let r = 0; r < reps; r++) fn();
    samples.push((performance.now() - t0) / 1e3 / reps);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1]!;
}

/** Deterministic pseudo-random vector in [−1, 1). */
function randomVector(n: number, seed: number): Float64Array {
  const v = new Float64Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    v[i] = (s >>> 0) / 2 ** 31 - 1;
  }
  return v;
}

const relErr = (got: number, want: number, scale: number): number => Math.abs(got - want) / Math.max(scale, 1e-300);

const sp = new HostVectorSpace();
const rows: string[][] = [['op', 'n', 'k', 'ms', 'GB/s', 'rel.err']];
for (const n of sizes) {
  const xs = Array.from({ length: k }, (_, j) => randomVector(n, 1000 + j));
  const y0 = randomVector(n, 7);
  const y = y0.slice();
  const coeffs = Array.from({ length: k }, (_, j) => 0.01 * (j + 1) * (j % 2 ? -1 : 1));
  const add = (op: string, kk: number, s: number, bytes: number, err: number) =>
    rows.push([op, String(n), String(kk), (s * 1e3).toFixed(3), (bytes / s / 1e9).toFixed(2), err.toExponential(1)]);

  // combine, beta = 1 (the Davidson/GMRES orthogonalisation update); y drifts between calls but
  // the coefficients are small and the check below is done on a fresh copy.
  {
    const s = medianTime(() => sp.combine(coeffs, xs, 1, y));
    const t = y0.slice();
    sp.combine(coeffs, xs, 1, t);
    let err = 0;
    for (let i = 0; i < n; i++) {
      let r = y0[i]!;
      for (let j = 0; j < k; j++) r += coeffs[j]! * xs[j]![i]!;
      err = Math.max(err, relErr(t[i]!, r, 1));
    }
    add('combine β=1', k, s, (k + 2) * 8 * n, err);
  }
  // combine, beta = 0 (forming a Ritz vector from the basis)
  {
    const s = medianTime(() => sp.combine(coeffs, xs, 0, y));
    add('combine β=0', k, s, (k + 1) * 8 * n, 0);
  }
  // multiDot
  {
    let out: { value: number }[] = [];
    const s = medianTime(() => {
      out = sp.multiDot(xs, y0);
    });
    let err = 0;
    for (let j = 0; j < k; j++) {
      let r = 0;
      let a = 0;
      for (let i = 0; i < n; i++) {
        r += xs[j]![i]! * y0[i]!;
        a += Math.abs(xs[j]![i]! * y0[i]!);
      }
      err = Math.max(err, relErr(out[j]!.value, r, a));
    }
    add('multiDot', k, s, (k + 1) * 8 * n, err);
  }
  // dot
  {
    let d = 0;
    const s = medianTime(() => {
      d = sp.dot(xs[0]!, y0).value;
    });
    let r = 0;
    let a = 0;
    for (let i = 0; i < n; i++) {
      r += xs[0]![i]! * y0[i]!;
      a += Math.abs(xs[0]![i]! * y0[i]!);
    }
    add('dot', 1, s, 16 * n, relErr(d, r, a));
  }
  // axpby, beta ≠ 0
  {
    const s = medianTime(() => sp.axpby(0.5, xs[0]!, -0.25, y));
    add('axpby', 1, s, 24 * n, 0);
  }
  // norm2
  {
    let v = 0;
    const s = medianTime(() => {
      v = sp.norm2(y0).value;
    });
    let r = 0;
    for (let i = 0; i < n; i++) r += y0[i]! * y0[i]!;
    add('norm2', 1, s, 8 * n, relErr(v, Math.sqrt(r), Math.sqrt(r)));
  }
}
const w = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  '));
