/**
 * Session 7 hardening on a real GPU: the range cases fixed on lavapipe, checked where the
 * hardware flushes float32 subnormals and has other rounding. Not a benchmark: a pass/fail
 * record per case (no timing claims).
 *   - device SpGEMM with values 1e20 (products 1e40), 1e-30 (products 1e-60), 1e300 × 1e-300:
 *     max |c − c_ref| / Σ|a·b| against the float64 product, nnz equal, and the refusal of
 *     operands whose products span more than float32;
 *   - refinedSolve (df64 outer residual) CG and GMRES with b = A·1 × {1e-300, 1e-45, 1e38, 1e300}:
 *     reason, true float64 relative residual (b and r scaled by max|b| before squaring);
 *   - the plain float32 CG on GpuVectorSpace with b below float32's normal range: fromArray
 *     refuses b (InvalidParameterError) instead of a 'converged' x = 0.
 * Prints one JSON object and writes it with --out.
 *
 *   node .gpukit/app/hostile-range.mjs [--out $OUT/hostile-range.json]
 */
import { writeFileSync } from 'node:fs';
import { type CsrMatrix, csrFromTriplets, csrSpgemmReference, csrSpmv, generators, spgemmMaxRelError } from '../packages/formats/src/index';
import { createGpuContext, gpuOperatorFromCsr, GpuVectorSpace, spgemmCsr } from '../packages/gpu/src/index';
import { cg, refinedSolve } from '../packages/solvers/src/index';

const argv = process.argv.slice(2);
const out = argv.includes('--out') ? argv[argv.indexOf('--out') + 1] : undefined;
const ctx = await createGpuContext();
const device = ctx.describeText().split('\n')[0];

/** A banded n × n matrix (offsets −2..2) with values v(i, j). */
function band(n: number, v: (i: number, j: number) => number): CsrMatrix {
  const ri: number[] = [];
  const ci: number[] = [];
  const vals: number[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = Math.max(0, i - 2); j <= Math.min(n - 1, i + 2); j++) {
      ri.push(i);
      ci.push(j);
      vals.push(v(i, j));
    }
  }
  return csrFromTriplets(n, n, ri, ci, vals);
}

async function spgemmCase(name: string, a: CsrMatrix, b: CsrMatrix) {
  const ref = csrSpgemmReference(a, b);
  const rows: Record<string, unknown>[] = [];
  for (const format of ['hm', 'cdm'] as const) {
    try {
      const r = await spgemmCsr(ctx, a, b, { format });
      const err = spgemmMaxRelError(r.c, ref);
      const bound = (2 * Math.max(1, r.stats.diagonalsA) + 2) * 2 ** -24;
      rows.push({ name, format, nnz: r.c.values.length, nnzRef: ref.c.values.length, maxRelError: err, bound, pass: err <= bound && r.c.values.length === ref.c.values.length });
    } catch (e) {
      rows.push({ name, format, error: `${(e as Error).name}: ${(e as Error).message}` });
    }
  }
  return rows;
}

const n = 20000;
const spgemm = [
  ...(await spgemmCase('1e20 × 3e19 (products 1e40)', band(n, (i, j) => 1e20 * (1 + ((i + 2 * j) % 5))), band(n, (i, j) => 3e19 * (1 + ((2 * i + j) % 3))))),
  ...(await spgemmCase('1e-30 × -2e-31 (products 1e-61)', band(n, (i, j) => 1e-30 * (1 + ((i + j) % 4))), band(n, (i, j) => -2e-31 * (1 + ((i * j) % 3))))),
  ...(await spgemmCase('1e300 × 1e-300', band(n, (i, j) => 1e300 * (3 + i - j)), band(n, (i, j) => 1e-300 * (2 + ((i + j) % 7))))),
  ...(await spgemmCase('refused: 1e-30 … 1 × 1e-12 … 1', band(64, (i) => (i === 3 ? 1e-30 : 1)), band(64, (i) => (i === 5 ? 1e-12 : 1)))),
];

/** ‖b − A·x‖ / ‖b‖ with b and the residual scaled by max|b| first. */
function scaledRelative(a: CsrMatrix, x: Float64Array, b: Float64Array): number {
  const ax = csrSpmv(a, x);
  let m = 0;
  for (const v of b) m = Math.max(m, Math.abs(v));
  let r = 0;
  let bb = 0;
  for (let i = 0; i < b.length; i++) {
    r += ((b[i]! - ax[i]!) / m) ** 2;
    bb += (b[i]! / m) ** 2;
  }
  return Math.sqrt(r / bb);
}

const a = generators.poisson2d(128);
const b1 = csrSpmv(a, new Float64Array(a.rows).fill(1));
const refined: Record<string, unknown>[] = [];
for (const scale of [1e-300, 1e-45, 1e38, 1e300]) {
  for (const method of ['cg', 'gmres'] as const) {
    const b = b1.map((v) => v * scale);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    try {
      const r = await refinedSolve({ innerOperator: op, innerSpace: new GpuVectorSpace(ctx), b, rtol: 1e-10, inner: { method } });
      refined.push({ scale, method, reason: r.reason, outerPrecision: r.outerPrecision, trueRelative: scaledRelative(a, r.x, b), x0OverScale: r.x[0]! / scale, detail: r.detail, pass: r.reason === 'converged' && scaledRelative(a, r.x, b) <= 1e-10 });
    } catch (e) {
      refined.push({ scale, method, error: `${(e as Error).name}: ${(e as Error).message}` });
    } finally {
      op.dispose();
    }
  }
}

// plain float32 CG on the device with b below float32's normal range: fromArray refuses b
// (was 'converged', x = 0); pass = the InvalidParameterError
const gap: Record<string, unknown>[] = [];
for (const scale of [1e-39, 1e-45]) {
  const gs = new GpuVectorSpace(ctx);
  const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
  try {
    const r = await cg(gs, op, gs.fromArray(b1.map((v) => v * scale)), { rtol: 1e-5 });
    gap.push({ scale, reason: r.reason, detail: r.detail, x0: (await gs.toArray(r.x))[0], pass: false });
  } catch (e) {
    gap.push({ scale, error: `${(e as Error).name}: ${(e as Error).message}`, pass: (e as Error).name === 'InvalidParameterError' });
  } finally {
    op.dispose();
  }
}

const result = { bench: 'hostile-range', device, spgemm, refined, plainF32CgTinyB: gap, allPass: [...spgemm.filter((r) => !String(r.name).startsWith('refused')), ...refined, ...gap].every((r) => r.pass === true) && spgemm.filter((r) => String(r.name).startsWith('refused')).every((r) => /InvalidMatrixError/.test(String(r.error))) };
const text = JSON.stringify(result, null, 1);
console.log(text);
if (out) writeFileSync(out, `${text}\n`);
ctx.dispose();
process.exit(0);
