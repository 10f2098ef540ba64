/**
 * Session 11 hardening (s11-harden-a) on a real GPU (subgroup size 32; NVIDIA flushes float32
 * subnormals, lavapipe may not). A pass/fail record per case, one summary line each:
 *   1. badly scaled systems through the float32 device space: cg / gmres / bicgstab on A·1e-30
 *      (b = A·1), A·1 with b·1e-30 and b·1e30 must throw InvalidParameterError (A·1e-30 was
 *      x = 0 'converged'); A·1e-15 (rtol·‖b‖ below the floor) must not say 'converged'; A·1e-6
 *      and A·1e6 (in range) must still converge right;
 *   2. lanczos / lobpcg on A·1e-30 must not say 'converged' (they called wrong pairs converged);
 *      eigsMixed on A·1e-30 and A·1e30: 'converged' only with λ₁, λ₂ right to 1e-8 (on lavapipe
 *      24², A·1e-30 ends 'max-iterations' with values right to 4e-14: the fast phase's pairs are
 *      unverified there, the float64 polish runs out of its 50 iterations; 12² converges);
 *   3. refinedSolve (b scaled by a power of two) on A·1e-30 and b·1e30: true rel < 1e-9;
 *   4. a device operator whose apply is a plain function returning a Promise: cg, lanczos refuse;
 *   5. out of memory injected at Dawn's error scope for refinedSolve's b = 0 output 'device',
 *      Df64CsrOperator.fromGpuOperatorSliced and deviceDiaFromCsr: ResourceLimitError from the
 *      call itself, and the context clean afterwards;
 *   6. CG on a symmetric indefinite matrix, GMRES with restart > n, solves with x0 exact: no
 *      'converged' on a wrong x.
 *
 *   node .gpukit/app/hostile-s11.mjs [--out $OUT/hostile-s11.json] [--small] [--only <regex>]   (--small: smaller grids, for lavapipe)
 */
import { type CsrMatrix, csrFromTriplets, csrSpmv, generators, HostOperator, InvalidParameterError, type LinearOperator, ResourceLimitError } from '../packages/formats/src/index';
import { createGpuContext, Df64CsrOperator, Df64VectorSpace, type GpuContext, gpuOperatorFromCsr, type GpuVector, GpuVectorSpace, uploadCsrArrays } from '../packages/gpu/src/index';
import { deviceDiaFromCsr } from '../packages/gpu/src/kernels/dia/dia-build';
import { bicgstab, cg, eigsMixed, gmres, lanczos, lobpcg, refinedSolve } from '../packages/solvers/src/index';
import { injectOom } from '../packages/gpu/test/support/faults';
import { errText, hostileHarness, hostResidual } from './lib/hostile-faults';

const { small, ctx, space, run, finish } = await hostileHarness('hostile-s11');
const rel = (a: CsrMatrix, x: Float64Array, b: Float64Array): number => hostResidual(a, x, b).rel;
const nx = small ? 24 : 128;
const a0 = generators.poisson2d(nx);
const scaled = (s: number): CsrMatrix => ({ ...a0, values: a0.values.map((v) => v * s) });
const ones = new Float64Array(a0.rows).fill(1);
const krylov = { cg, gmres, bicgstab } as const;
// the eigen cases on a small grid everywhere: eigsMixed's polish of A·1e-30 runs on the host
const ne = small ? 24 : 32;
const e0 = generators.poisson2d(ne);
const scaledE = (s: number): CsrMatrix => ({ ...e0, values: e0.values.map((v) => v * s) });
/** λ₁, λ₂ of the ne² 5-point Laplacian: (1,1) and (1,2). */
const exact = [1, 2].map((j) => 4 - 2 * Math.cos(Math.PI / (ne + 1)) - 2 * Math.cos((Math.PI * j) / (ne + 1)));

// 1. scaled Krylov solves
for (const [what, sa, sb, refuse] of [
  ['A·1e-30, b = A·1', 1e-30, 1, true],
  ['b = 1e-30·A·1', 1, 1e-30, true],
  ['b = 1e30·A·1', 1, 1e30, true],
  ['A·1e-15, b = A·1 (rtol·‖b‖ below the float32 floor: not converged)', 1e-15, 1, 'unresolved'],
  ['A·1e-6, b = A·1 (in range)', 1e-6, 1, false],
  ['A·1e6, b = A·1 (in range)', 1e6, 1, false],
] as const) {
  const a = scaled(sa);
  const b = csrSpmv(a, ones).map((v) => v * sb);
  const op = gpuOperatorFromCsr(ctx, a);
  for (const [m, f] of Object.entries(krylov)) {
    await run(`${m} ${what}: ${refuse === true ? 'InvalidParameterError' : refuse ? "not 'converged'" : 'converged, true rel < 1e-4'}`, async () => {
      try {
        const r = await f(space, op, space.fromArray(b), { rtol: 1e-5, maxIterations: 4000 });
        const e = rel(a, await space.toArray(r.x), b);
        const pass = refuse === 'unresolved' ? !r.converged : !refuse && r.converged && e < 1e-4;
        return { pass, detail: `${r.reason}, ${r.iterations} it, true rel ${e.toExponential(2)}${r.converged ? '' : `; ${(r.detail ?? '').slice(0, 100)}`}` };
      } catch (e) {
        return { pass: refuse === true && e instanceof InvalidParameterError, detail: errText(e).slice(0, 160) };
      }
    });
  }
  op.dispose();
}

// 2. eigensolvers
{
  const a = scaledE(1e-30);
  const op = gpuOperatorFromCsr(ctx, a);
  for (const m of ['lanczos', 'lobpcg'] as const) {
    await run(`${m} A·1e-30 k=2: not 'converged' (the residual threshold is below float32's floor)`, async () => {
      const r = m === 'lanczos' ? await lanczos(space, op, { k: 2 }) : await lobpcg(space, op, { k: 2 });
      return { pass: !r.converged, detail: `${r.reason}; ${(r.detail ?? '').slice(0, 120)}` };
    });
  }
  op.dispose();
  for (const s of [1e-30, 1e30]) {
    const as = scaledE(s);
    const o = gpuOperatorFromCsr(ctx, as);
    await run(`eigsMixed lanczos A·${s} k=2: 'converged' only with λ₁, λ₂ right to 1e-8`, async () => {
      const t0 = performance.now();
      const r = await eigsMixed({ method: 'lanczos', k: 2, fastOperator: o, fastSpace: space, hostOperator: HostOperator.fromCsr(as), rtol: 1e-10 });
      const err = Math.max(...r.values.map((v, i) => Math.abs(v / s - exact[i]!) / exact[i]!));
      return { pass: !r.converged || err < 1e-8, detail: `${r.reason}, max rel err ${err.toExponential(2)}, ${(performance.now() - t0).toFixed(0)} ms` };
    });
    o.dispose();
  }
}

// 3. refinedSolve
for (const [sa, sb] of [[1e-30, 1], [1, 1e30]] as const) {
  const a = scaled(sa);
  const b = csrSpmv(a, ones).map((v) => v * sb);
  const op = gpuOperatorFromCsr(ctx, a);
  await run(`refinedSolve cg A·${sa} b·${sb}: true rel < 1e-9`, async () => {
    const t0 = performance.now();
    const r = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: op, innerSpace: space, b, rtol: 1e-10, inner: { method: 'cg', rtol: 1e-4 } });
    const e = rel(a, r.x, b);
    return { pass: r.converged && e < 1e-9, detail: `${r.reason}, true rel ${e.toExponential(2)}, ${(performance.now() - t0).toFixed(0)} ms` };
  });
  op.dispose();
}

// 4. a Promise-returning apply around a device operator
{
  const op = gpuOperatorFromCsr(ctx, a0);
  const later = { rows: op.rows, cols: op.cols, label: 'later', apply: (x: GpuVector, y: GpuVector) => Promise.resolve().then(() => op.apply(x, y)), applyScaled: op.applyScaled.bind(op) } as unknown as LinearOperator<GpuVector>;
  const b = csrSpmv(a0, ones);
  await run('cg, lanczos: an apply returning a Promise (not async) is InvalidParameterError', async () => {
    const got: string[] = [];
    for (const f of [() => cg(space, later, space.fromArray(b)), () => lanczos(space, later, { k: 1 })]) {
      got.push(await f().then((r) => `a result (${r.reason})`, (e: unknown) => (e instanceof InvalidParameterError ? 'InvalidParameterError' : errText(e))));
    }
    return { pass: got.every((g) => g === 'InvalidParameterError'), detail: got.join(' / ') };
  });
  op.dispose();
}

// 5. out of memory at the allocating call (injected at the error scope)
for (const [what, label, call] of [
  ["refinedSolve b = 0 output 'device'", /df64-vector/, async (c: GpuContext) => {
    const op = gpuOperatorFromCsr(c, a0);
    const r = await refinedSolve({ innerOperator: op, innerSpace: new GpuVectorSpace(c), b: new Float64Array(a0.rows), inner: { method: 'cg' }, output: 'device' });
    r.x.dispose();
  }],
  ['Df64CsrOperator.fromGpuOperatorSliced', /df64-op-lo/, async (c: GpuContext) => {
    // an odd size: the lo array's buffer is a new allocation, not one the df64 self-test left in the pool
    const p = generators.poisson2d(nx + 7);
    const m = { ...p, values: p.values.map((v) => v / 3) };
    const op = gpuOperatorFromCsr(c, m, { kernel: 'csr-vector' });
    const d = (await Df64VectorSpace.of(c))!.d;
    (await Df64CsrOperator.fromGpuOperatorSliced(d, op, m))?.dispose();
  }],
  ['deviceDiaFromCsr', /dia-build-map/, async (c: GpuContext) => {
    const shared = uploadCsrArrays(c, a0);
    (await deviceDiaFromCsr(c, shared, { offsets: Int32Array.from([-nx, -1, 0, 1, nx]) })).release();
  }],
] as const) {
  await run(`out of memory in ${what}: ResourceLimitError from the call`, async () => {
    const c = await createGpuContext();
    try {
      const { fired } = injectOom(c, label);
      const got = await call(c).then(() => 'a result', (e: unknown) => (e instanceof ResourceLimitError ? 'ResourceLimitError' : errText(e)));
      let clean = true;
      try {
        c.check();
      } catch {
        clean = false;
      }
      return { pass: fired() && got === 'ResourceLimitError' && clean, detail: `${got}, fault fired ${fired()}, context clean after ${clean}` };
    } finally {
      c.dispose();
    }
  });
}

// 6. solver edge cases
{
  const n = 60;
  const t: [number, number, number][] = [];
  for (let i = 0; i < n; i++) {
    t.push([i, i, i + 1 - 30.5]); // eigenvalues of both signs
    if (i + 1 < n) t.push([i, i + 1, 0.3], [i + 1, i, 0.3]);
  }
  const ind = csrFromTriplets(n, n, t.map((x) => x[0]), t.map((x) => x[1]), t.map((x) => x[2]));
  const b = csrSpmv(ind, new Float64Array(n).fill(1));
  const op = gpuOperatorFromCsr(ctx, ind);
  await run('cg on a symmetric indefinite matrix: converged only with true rel < 1e-4', async () => {
    const r = await cg(space, op, space.fromArray(b), { rtol: 1e-6 });
    const e = rel(ind, await space.toArray(r.x), b);
    return { pass: !r.converged || e < 1e-4, detail: `${r.reason}, true rel ${e.toExponential(2)}; ${(r.detail ?? '').slice(0, 100)}` };
  });
  await run('gmres restart 100 > n = 60: converged, true rel < 1e-4', async () => {
    const r = await gmres(space, op, space.fromArray(b), { rtol: 1e-6, restart: 100 });
    const e = rel(ind, await space.toArray(r.x), b);
    return { pass: r.converged && e < 1e-4, detail: `${r.reason}, ${r.iterations} it, true rel ${e.toExponential(2)}` };
  });
  for (const [m, f] of Object.entries(krylov)) {
    await run(`${m} with x0 exact: converged at iteration 0, x = x0`, async () => {
      const r = await f(space, op, space.fromArray(b), { rtol: 1e-5, x0: space.fromArray(new Float64Array(n).fill(1)) });
      const e = rel(ind, await space.toArray(r.x), b);
      return { pass: r.converged && e < 1e-5 && r.iterations === 0, detail: `${r.reason}, ${r.iterations} it, true rel ${e.toExponential(2)}` };
    });
  }
  op.dispose();
}

await finish();
