/**
 * Session 10 hardening (s10-harden-a) on a real GPU (subgroup size 32, real timestamps). A
 * pass/fail record per case, one summary line each:
 *   1. exits without convergence on an operator whose in-solve tuning switched to a kernel that
 *      went wrong after the switch (×1.1 from the 5th product on): cg, bicgstab, gmres
 *      'max-iterations' and cg 'stopped' must report trueResidual = ‖b − A·x‖ of the returned x
 *      (float64 on the host, within 1e-4·‖b‖) and fall back with a warning;
 *   2. GMRES(30), poisson2d 256², rtol 1e-5 (session 9's FAIL: 'breakdown' at 1.00e-5 after
 *      3 877 iterations): with the fault and fallback, and plain (no tuning, no fault) — both must
 *      converge with true rel < 1.05e-5;
 *   3. two solves at once on one device (Promise.all): two CG on different operators, and two on
 *      the same operator — each must converge to its own right x;
 *   4. an operator disposed while a CG solve on it runs (from onIteration): a named error
 *      (UseAfterDisposeError), not a crash or a result.
 *
 *   node .gpukit/app/hostile-s10.mjs [--out $OUT/hostile-s10.json] [--small]   (--small: 48² / 24² grids, for lavapipe)
 */
import { csrSpmv, GpuSparseError, generators } from '../packages/formats/src/index';
import { gpuOperatorFromCsr, type GpuVector } from '../packages/gpu/src/index';
import { bicgstab, cg, gmres, type SolveResult } from '../packages/solvers/src/index';
import { errText, hostileHarness, hostResidual, switchedThenWrong, type Tuned } from './lib/hostile-faults';

const { small, ctx, space, line, finish } = await hostileHarness('hostile-s10');

const big = generators.poisson2d(small ? 48 : 256);
const bBig = csrSpmv(big, new Float64Array(big.rows).fill(1));
const warnedOf = (r: SolveResult<GpuVector>) => (r.stats.warnings ?? []).some((w) => /fell back to the verified kernel/.test(w));

// 1. exits without convergence report the verified residual
for (const [name, solve] of [
  ['cg max-iterations', (op: Tuned) => cg(space, op, space.fromArray(bBig), { rtol: 1e-10, maxIterations: 50 })],
  ['bicgstab max-iterations', (op: Tuned) => bicgstab(space, op, space.fromArray(bBig), { rtol: 1e-10, maxIterations: 50 })],
  ['gmres max-iterations', (op: Tuned) => gmres(space, op, space.fromArray(bBig), { rtol: 1e-10, maxIterations: 50 })],
  ['cg stopped by onIteration', (op: Tuned) => cg(space, op, space.fromArray(bBig), { rtol: 1e-10, checkEvery: 1, onIteration: (i) => i.iteration < 40 })],
] as const) {
  const what = `exit without convergence on a wrong tuned kernel: ${name}`;
  try {
    const op = await switchedThenWrong(ctx, big, 1.1, 5);
    const r = await solve(op);
    const host = hostResidual(big, await space.toArray(r.x), bBig);
    const bn = host.abs / host.rel;
    const off = Math.abs(r.trueResidual - host.abs) / bn;
    line({ name: what, pass: !r.converged && off < 1e-4 && warnedOf(r) && !op.runsUnverified(), detail: `reason ${r.reason}, reported rel ${(r.trueResidual / bn).toExponential(3)}, host f64 rel ${host.rel.toExponential(3)} (|Δ|/‖b‖ ${off.toExponential(1)}), warned ${warnedOf(r)}` });
    op.dispose();
  } catch (e) {
    line({ name: what, pass: false, detail: errText(e) });
  }
}

// 2. GMRES(30) at rtol 1e-5 on poisson2d 256² (near float32's attainable accuracy)
for (const faulty of [true, false]) {
  const what = `gmres(30) poisson2d ${small ? 48 : 256}² rtol 1e-5, ${faulty ? 'chosen kernel wrong after the switch (fallback)' : 'plain operator, no fault'}`;
  try {
    const op = faulty ? await switchedThenWrong(ctx, big, 1.1, 5) : gpuOperatorFromCsr(ctx, big);
    const t0 = performance.now();
    const r = await gmres(space, op, space.fromArray(bBig), { rtol: 1e-5, maxIterations: 8000 });
    const ms = performance.now() - t0;
    const rel = hostResidual(big, await space.toArray(r.x), bBig).rel;
    const warned = warnedOf(r);
    line({ name: what, pass: r.converged && rel < 1.05e-5 && (!faulty || warned), detail: `reason ${r.reason}, ${r.iterations} it, true rel ${rel.toExponential(3)}, reported ${(r.trueResidual / r.bNorm).toExponential(3)}, warned ${warned}, ${ms.toFixed(0)} ms${r.converged ? '' : `; ${(r.detail ?? '').slice(0, 200)}`}` });
    op.dispose();
  } catch (e) {
    line({ name: what, pass: false, detail: errText(e) });
  }
}

// 3. two solves at once on one device
{
  const mid = generators.poisson2d(small ? 24 : 128);
  const other = generators.poisson2d(small ? 24 : 128);
  const x1 = Float64Array.from({ length: mid.rows }, (_, i) => 1 + (i % 7));
  const x2 = Float64Array.from({ length: mid.rows }, (_, i) => 2 - (i % 3));
  const b1 = csrSpmv(mid, x1);
  const b2 = csrSpmv(other, x2);
  for (const same of [false, true]) {
    const what = `two CG solves at once (Promise.all) on ${same ? 'the same operator' : 'two operators'}`;
    try {
      const o1 = gpuOperatorFromCsr(ctx, mid);
      const o2 = same ? o1 : gpuOperatorFromCsr(ctx, other);
      const [r1, r2] = await Promise.all([cg(space, o1, space.fromArray(b1), { rtol: 1e-5 }), cg(space, o2, space.fromArray(b2), { rtol: 1e-5 })]);
      const e1 = hostResidual(mid, await space.toArray(r1.x), b1).rel;
      const e2 = hostResidual(other, await space.toArray(r2.x), b2).rel;
      line({ name: what, pass: r1.converged && r2.converged && e1 < 1e-4 && e2 < 1e-4, detail: `${r1.reason}/${r2.reason}, true rel ${e1.toExponential(2)} / ${e2.toExponential(2)}, ${r1.iterations}/${r2.iterations} it` });
      o1.dispose();
      if (!same) o2.dispose();
    } catch (e) {
      line({ name: what, pass: false, detail: errText(e) });
    }
  }
}

// 4. the operator disposed in the middle of a solve on it
{
  const what = 'operator disposed at CG iteration 3 (from onIteration): a named error';
  const op = gpuOperatorFromCsr(ctx, big);
  try {
    const r = await cg(space, op, space.fromArray(bBig), { rtol: 1e-9, checkEvery: 1, onIteration: (i) => void (i.iteration === 3 && op.dispose()) });
    line({ name: what, pass: false, detail: `a result: ${r.reason}` });
  } catch (e) {
    line({ name: what, pass: e instanceof GpuSparseError || (e as Error).name === 'UseAfterDisposeError', detail: errText(e) });
  }
}

await finish();
