/**
 * Session 12 hardening on a real device (the NVIDIA flush of float32 subnormals, which lavapipe
 * does not do; `--simulate-flush` rewrites the df64 kernels to flush as the tests do):
 *   1. probe: does this device flush? (the df64 residual of A·1e-30, lo parts ≈ 1e-38, unscaled);
 *   2. every Df64CsrOperator build of A·1e-30 refuses (InvalidMatrixError), `scale: 'auto'`
 *      multiplies by 2^s·A to 1e-14;
 *   3. eigsMixed with that df64 devicePolish: converged, λ₁..₃ to 1e-10, float64 residuals;
 *   4. eigsMixed on A·1e-30 / A·1e30 with the host polish: converged (session 11: 'max-iterations');
 *   5. a few entries of 1e-33 in poisson2d: the df64 product stays df64-accurate, refinedSolve keeps
 *      the df64 residual and converges to 1e-11;
 *   6. the adversarial sweep's device cases (see RESULTS.md session 12 harden-a);
 *   7. the cost of eigsMixed's scale probe, against one product.
 * Usage: node hostile-s12.mjs [--small] [--simulate-flush] [--only REGEX] [--out FILE]
 */
import { type CsrMatrix, csrSpmv, generators, HostOperator, InvalidMatrixError } from '../packages/formats/src/index';
import { Df64Blas, Df64Csr, Df64CsrOperator, Df64VectorSpace, gpuOperatorFromCsr } from '../packages/gpu/src/index';
import { eigsMixed, refinedSolve } from '../packages/solvers/src/index';
import { problemScale } from '../packages/solvers/src/eigen/mixed-scale';
import { simulateSubnormalFlush, withTinyPairs } from '../packages/gpu/test/support/faults';
import { errText, hostileHarness, hostResidual } from './lib/hostile-faults';
import { sweepCases } from './lib/hostile-s12-sweep';

const argv = process.argv.slice(2);
const { small, ctx, space, run, finish } = await hostileHarness('hostile-s12');
if (argv.includes('--simulate-flush')) simulateSubnormalFlush(ctx);
const d = await Df64Blas.of(ctx);
if (!d) throw new Error('hostile-s12: this device fails the df64 self-test');
const m = small ? 16 : 32;
const a0 = generators.poisson2d(m);
const scaled = (s: number): CsrMatrix => ({ ...a0, values: a0.values.map((v) => v * s) });
const xs = Float64Array.from({ length: a0.rows }, (_, i) => 1 + i / a0.rows);
const relMax = (y: Float64Array, ref: Float64Array) => Math.max(...y.map((v, i) => Math.abs(v - ref[i]!))) / Math.max(...ref.map(Math.abs));
const lowest = (k: number) => {
  const l: number[] = [];
  for (let i = 1; i <= m; i++) for (let j = 1; j <= m; j++) l.push(4 - 2 * Math.cos((i * Math.PI) / (m + 1)) - 2 * Math.cos((j * Math.PI) / (m + 1)));
  return l.sort((x, y) => x - y).slice(0, k);
};
const tiny = scaled(1e-30);

// 1. the probe
await run('probe: df64 residual of A·1e-30 built unscaled (≈1e-8 where the device flushes subnormals, ≈1e-15 where not)', async () => {
  const mat = new Df64Csr(d, tiny);
  const [x, b, r] = [d.fromFloat64(xs), d.fromFloat64(new Float64Array(tiny.rows)), d.create(tiny.rows)];
  mat.residual(x, b, r);
  const e = relMax((await d.toFloat64(r)).map((v) => -v), csrSpmv(tiny, xs));
  for (const v of [x, b, r]) v.buf.dispose();
  mat.dispose();
  return { pass: true, detail: `max rel error ${e.toExponential(2)}: ${e > 1e-11 ? 'this device flushes' : 'no flush seen'}` };
});

// 2. the builds
const op = gpuOperatorFromCsr(ctx, tiny);
for (const [how, build] of [
  ['fromCsr', async () => Df64CsrOperator.fromCsr(d, tiny)],
  ['fromGpuOperator', async () => Df64CsrOperator.fromGpuOperator(d, op, tiny)],
  ['fromGpuOperatorSliced', () => Df64CsrOperator.fromGpuOperatorSliced(d, op, tiny)],
] as const) {
  await run(`Df64CsrOperator.${how}(A·1e-30): InvalidMatrixError`, async () => {
    try {
      (await build())?.dispose();
      return { pass: false, detail: 'built' };
    } catch (e) {
      return { pass: e instanceof InvalidMatrixError, detail: errText(e).slice(0, 160) };
    }
  });
}
await run("Df64CsrOperator.fromGpuOperator(A·1e-30, { scale: 'auto' }): 2^s·A·x to 1e-14", async () => {
  const dop = Df64CsrOperator.fromGpuOperator(d, op, tiny, { scale: 'auto' })!;
  const [x, y] = [d.fromFloat64(xs), d.create(tiny.rows)];
  dop.apply(x, y);
  const e = relMax(await d.toFloat64(y), csrSpmv(tiny, xs).map((v) => v * dop.scale));
  x.buf.dispose();
  y.buf.dispose();
  dop.dispose();
  return { pass: e < 1e-14, detail: `scale 2^${Math.log2(dop.scale)}, max rel error ${e.toExponential(2)}` };
});

// 3. eigsMixed with the scaled df64 polish
await run("eigsMixed lanczos A·1e-30 k=3, df64 devicePolish { scale: 'auto' }: converged, λ to 1e-10, float64 residuals ≤ 1e-9·‖A‖", async () => {
  const df = (await Df64VectorSpace.of(ctx))!;
  const dop = Df64CsrOperator.fromGpuOperator(df.d, op, tiny, { scale: 'auto' })!;
  const t0 = performance.now();
  const r = await eigsMixed({ method: 'lanczos', k: 3, fastOperator: op, fastSpace: space, devicePolish: df.polish(dop), rtol: 1e-10 });
  const ms = performance.now() - t0;
  dop.dispose();
  const want = lowest(3);
  const err = Math.max(...r.values.map((l, i) => Math.abs(l / 1e-30 - want[i]!) / want[i]!));
  const res = Math.max(...r.vectors.map((v, i) => Math.hypot(...csrSpmv(tiny, v).map((t, j) => t - r.values[i]! * v[j]!)) / Math.hypot(...v))) / 8e-30;
  return { pass: r.converged && err < 1e-10 && res < 1e-9, detail: `${r.reason}, ${r.iterations} it, max rel λ err ${err.toExponential(2)}, residual/‖A‖ ${res.toExponential(2)}, ${ms.toFixed(0)} ms` };
});

// 4. eigsMixed, host polish, both scales
for (const s of [1e-30, 1e30]) {
  await run(`eigsMixed lanczos A·${s} k=2 (host polish): converged, λ to 1e-10 (session 11: A·1e-30 'max-iterations')`, async () => {
    const a = scaled(s);
    const o = gpuOperatorFromCsr(ctx, a);
    const t0 = performance.now();
    const r = await eigsMixed({ method: 'lanczos', k: 2, fastOperator: o, fastSpace: space, hostOperator: HostOperator.fromCsr(a), rtol: 1e-10 });
    const ms = performance.now() - t0;
    o.dispose();
    const want = lowest(2);
    const err = Math.max(...r.values.map((l, i) => Math.abs(l / s - want[i]!) / want[i]!));
    return { pass: r.converged && err < 1e-10, detail: `${r.reason}, ${r.iterations} it, max rel λ err ${err.toExponential(2)}, ${ms.toFixed(0)} ms` };
  });
}
op.dispose();

// 5. a few tiny entries
{
  const a = withTinyPairs(a0, 3);
  const o = gpuOperatorFromCsr(ctx, a);
  await run('poisson2d with 3 pairs of 1e-33: df64 product to 1e-14; refinedSolve keeps the df64 residual, true rel < 1e-11', async () => {
    const dop = Df64CsrOperator.fromGpuOperator(d, o, a)!;
    const [x, y] = [d.fromFloat64(xs), d.create(a.rows)];
    dop.apply(x, y);
    const e = relMax(await d.toFloat64(y), csrSpmv(a, xs));
    x.buf.dispose();
    y.buf.dispose();
    dop.dispose();
    const b = csrSpmv(a, xs);
    const r = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: o, innerSpace: space, b, rtol: 1e-12, inner: { method: 'cg', rtol: 1e-4 } });
    const tr = hostResidual(a, r.x as Float64Array, b).rel;
    return { pass: e < 1e-14 && r.converged && /df64/.test(r.outerPrecision) && tr < 1e-11, detail: `product err ${e.toExponential(2)}; ${r.reason} on ${r.outerPrecision}, ${r.outerIterations} outer, true rel ${tr.toExponential(2)}` };
  });
  o.dispose();
}

// 6. the sweep
for (const [name, f] of sweepCases(ctx, space, small)) await run(name, f);

// 7. what eigsMixed's scale probe costs every call (A·1 made on the device, one product, one norm readback)
await run(`cost: eigsMixed's scale probe on poisson3d ${small ? '30×33×36' : '100×110×120'} (median of 7; against one product)`, async () => {
  const p = small ? generators.poisson3d(30, 33, 36) : generators.poisson3d(100, 110, 120);
  const o = gpuOperatorFromCsr(ctx, p);
  const probe: number[] = [];
  const product: number[] = [];
  const [x, y] = [space.fromArray(new Float64Array(p.rows).fill(1)), space.create(p.rows)];
  for (let rep = 0; rep < 8; rep++) {
    let t0 = performance.now();
    const r = await problemScale({ method: 'lanczos', k: 1, fastOperator: o, fastSpace: space, hostOperator: HostOperator.fromCsr(p) });
    if (rep > 0) probe.push(performance.now() - t0);
    if (r.scale !== 1) throw new Error(`probe scale ${r.scale} on poisson3d`);
    t0 = performance.now();
    o.apply(x, y);
    await ctx.finish();
    if (rep > 0) product.push(performance.now() - t0);
  }
  space.release(x);
  space.release(y);
  o.dispose();
  const med = (v: number[]) => [...v].sort((q, w) => q - w)[v.length >> 1]!;
  return { pass: true, detail: `probe ${med(probe).toFixed(2)} ms, one product + finish ${med(product).toFixed(2)} ms (n = ${p.rows})` };
});

await finish();
