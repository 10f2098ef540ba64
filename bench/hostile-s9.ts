/**
 * Session 9 hardening (s9-harden-a) on a real GPU (subgroup size 32, real timestamps). A
 * pass/fail record per case, one summary line each:
 *   1. in-solve tuning switched to a candidate (its tuning products checked and right) that goes
 *      wrong after the switch (products × 1.1 from the 5th on): cg, bicgstab, gmres, lanczos,
 *      lobpcg must confirm 'converged' on the verified kernel, fall back to it (warning in
 *      stats.warnings) and end with the right x / λ;
 *   2. the cost of that final check when the chosen kernel stays right: the same CG solve with
 *      the check and with it switched off (best of 3 each; one product + one readback expected);
 *   3. a device product that is NaN / ±Inf at one call only (all rows, or one row), k = 2 and 20,
 *      for cg, bicgstab, gmres, lanczos, lobpcg, davidson, refinedSolve, eigsMixed: converged with
 *      the right answer, or a named error / a non-converged reason that says why;
 *   4. the device destroyed in the middle of a CG solve: DeviceLostError, then on later calls.
 *
 *   node .gpukit/app/hostile-s9.mjs [--out $OUT/hostile-s9.json] [--small]   (--small: 48² / 24² grids, for lavapipe)
 */
import { csrSpmv, generators, HostOperator, type LinearOperator } from '../packages/formats/src/index';
import { createGpuContext, DeviceLostError, type GpuOperator, gpuOperatorFromCsr, type GpuVector, GpuVectorSpace } from '../packages/gpu/src/index';
import { bicgstab, cg, davidson, eigsMixed, gmres, lanczos, lobpcg, refinedSolve, type SolveResult } from '../packages/solvers/src/index';
import { errText, hostileHarness, hostResidual, switchedThenWrong } from './lib/hostile-faults';

const { small, ctx, space, line, finish } = await hostileHarness('hostile-s9');

// 1–2. in-solve tuning: a chosen kernel that goes wrong after the switch
const big = generators.poisson2d(small ? 48 : 256);
const bBig = csrSpmv(big, new Float64Array(big.rows).fill(1));
for (const [name, solve] of [
  ['cg', cg],
  ['bicgstab', bicgstab],
  ['gmres', gmres],
] as const) {
  const what = `in-solve, chosen kernel wrong after the switch: ${name}`;
  try {
    const op = await switchedThenWrong(ctx, big, 1.1, 5);
    const t0 = performance.now();
    const r = await solve(space, op, space.fromArray(bBig), { rtol: 1e-5, maxIterations: 5000 });
    const ms = performance.now() - t0;
    const rel = hostResidual(big, await space.toArray(r.x), bBig).rel;
    const warned = (r.stats.warnings ?? []).some((w) => /fell back to the verified kernel/.test(w));
    line({ name: what, pass: r.converged && rel < 1e-4 && warned && !op.runsUnverified(), detail: `reason ${r.reason}, ${r.iterations} it, true rel ${rel.toExponential(2)}, warned ${warned}, active ${op.activeLabel}, ${ms.toFixed(0)} ms` });
    op.dispose();
  } catch (e) {
    line({ name: what, pass: false, detail: errText(e) });
  }
}
const mid = generators.poisson2d(small ? 24 : 128);
const hostMid = HostOperator.fromCsr(mid);
// the 5-point Laplacian's eigenvalues in closed form (degenerate pairs included: a Lanczos run
// without its multiplicity check may miss a copy)
const m = small ? 24 : 128;
const closed: number[] = [];
for (let i = 1; i <= m; i++) for (let j = 1; j <= m; j++) closed.push(4 - 2 * Math.cos((i * Math.PI) / (m + 1)) - 2 * Math.cos((j * Math.PI) / (m + 1)));
const wantMid = { values: closed.sort((p, q) => p - q).slice(0, 4) };
for (const [name, run] of [
  ['lanczos', (op: LinearOperator<GpuVector>) => lanczos(space, op, { k: 4 })],
  ['lobpcg', (op: LinearOperator<GpuVector>) => lobpcg(space, op, { k: 4 })],
] as const) {
  const what = `in-solve, chosen kernel wrong after the switch: ${name}`;
  try {
    const op = await switchedThenWrong(ctx, mid, 1.1, 1);
    const r = await run(op);
    // a converged pair is exact for a matrix within its threshold (tol·‖A‖est) of A: judge |Δλ| by it
    const err = Math.max(...r.values.map((v, i) => Math.abs(v - wantMid.values[i]!)));
    const thr = r.tolerance?.threshold ?? 1e-4;
    const warned = (r.stats.warnings ?? []).some((w) => /fell back to the verified kernel/.test(w));
    line({ name: what, pass: r.converged && err <= 2 * thr && warned, detail: `reason ${r.reason}, ${r.iterations} it, max |Δλ| ${err.toExponential(2)} (threshold ${thr.toExponential(2)}), warned ${warned}` });
    op.dispose();
  } catch (e) {
    line({ name: what, pass: false, detail: errText(e) });
  }
}
{
  const what = 'in-solve, the final check when the chosen kernel stays right (CG, poisson2d 256)';
  try {
    const op = await switchedThenWrong(ctx, big, 1, 1);
    const timeIt = async (check: boolean) => {
      let best = Number.POSITIVE_INFINITY;
      let r: SolveResult<GpuVector> | undefined;
      for (let rep = 0; rep < 3; rep++) {
        const saved = op.runsUnverified;
        if (!check) op.runsUnverified = () => false;
        const t0 = performance.now();
        r = await cg(space, op, space.fromArray(bBig), { rtol: 1e-5, maxIterations: 5000 });
        best = Math.min(best, performance.now() - t0);
        op.runsUnverified = saved;
        space.release(r.x);
      }
      return { ms: best, r: r! };
    };
    const on = await timeIt(true);
    const off = await timeIt(false);
    line({ name: what, pass: on.r.converged && on.r.stats.warnings === undefined, detail: `${on.ms.toFixed(1)} ms with the check (${on.r.stats.matvecs} products, ${on.r.stats.readbacks} readbacks) vs ${off.ms.toFixed(1)} ms without (${off.r.stats.matvecs}, ${off.r.stats.readbacks}); ratio ${(on.ms / off.ms).toFixed(3)}`, withMs: on.ms, withoutMs: off.ms });
    op.dispose();
  } catch (e) {
    line({ name: what, pass: false, detail: errText(e) });
  }
}

// 3. a product that is NaN / ±Inf at one call only
function faulty(op: GpuOperator, at: number, bad: number, row?: number): LinearOperator<GpuVector> {
  let calls = 0;
  const product = (alpha: number, x: GpuVector, beta: number, y: GpuVector) => {
    calls++;
    if (calls !== at || row === undefined) return op.applyScaled(calls === at ? bad : alpha, x, beta, y);
    op.applyScaled(alpha, x, beta, y);
    op.ctx.recorder.flush();
    op.ctx.device.queue.writeBuffer(y.buf.buffer, 4 * row, Float32Array.of(bad));
  };
  return { rows: op.rows, cols: op.cols, label: op.label, apply: (x, y) => product(1, x, 0, y), applyScaled: product, diagonal: () => op.diagonal!() };
}
const bMid = csrSpmv(mid, new Float64Array(mid.rows).fill(1));
type Outcome = { converged: boolean; reason: string; detail?: string; x?: unknown; values?: number[] };
const verdict = (r: Outcome | Error, right: () => Promise<boolean>): Promise<[boolean, string]> => {
  if (r instanceof Error) return Promise.resolve([!/^(TypeError|RangeError|ReferenceError|Error)$/.test(r.name), errText(r)]);
  if (!r.converged) return Promise.resolve([['non-finite', 'breakdown', 'max-iterations'].includes(r.reason) && !!r.detail, `${r.reason}: ${(r.detail ?? '').slice(0, 120)}`]);
  return right().then((ok) => [ok, `converged, answer ${ok ? 'right' : 'WRONG'}`]);
};
const solvers: [string, (op: LinearOperator<GpuVector>) => Promise<Outcome>, (r: Outcome) => Promise<boolean>][] = [
  ['cg', (op) => cg(space, op, space.fromArray(bMid), { rtol: 1e-5, maxIterations: 3000 }), async (r) => hostResidual(mid, await space.toArray(r.x as GpuVector), bMid).rel < 1e-4],
  ['bicgstab', (op) => bicgstab(space, op, space.fromArray(bMid), { rtol: 1e-5, maxIterations: 3000 }), async (r) => hostResidual(mid, await space.toArray(r.x as GpuVector), bMid).rel < 1e-4],
  ['gmres', (op) => gmres(space, op, space.fromArray(bMid), { rtol: 1e-5, maxIterations: 3000 }), async (r) => hostResidual(mid, await space.toArray(r.x as GpuVector), bMid).rel < 1e-4],
  ['refinedSolve', (op) => refinedSolve({ innerOperator: op, innerSpace: space, hostOperator: hostMid, b: bMid, rtol: 1e-10 }), async (r) => hostResidual(mid, r.x as Float64Array, bMid).rel < 1e-9],
  ['lanczos', (op) => lanczos(space, op, { k: 4, maxIterations: 2000 }), async (r) => (r.values as number[]).every((v, i) => Math.abs(v - wantMid.values[i]!) < 1e-4 * wantMid.values[i]!)],
  ['lobpcg', (op) => lobpcg(space, op, { k: 4, maxIterations: 500 }), async (r) => (r.values as number[]).every((v, i) => Math.abs(v - wantMid.values[i]!) < 1e-4 * wantMid.values[i]!)],
  ['davidson', (op) => davidson(space, op, { k: 4, diagonal: op.diagonal!(), maxIterations: 500 }), async (r) => (r.values as number[]).every((v, i) => Math.abs(v - wantMid.values[i]!) < 1e-4 * wantMid.values[i]!)],
  ['eigsMixed', (op) => eigsMixed({ k: 4, method: 'lanczos', fastOperator: op, fastSpace: space, hostOperator: hostMid }), async (r) => (r.values as number[]).every((v, i) => Math.abs(v - wantMid.values[i]!) < 1e-8 * wantMid.values[i]!)],
];
for (const [bad, row] of [
  [Number.NaN, undefined],
  [Number.POSITIVE_INFINITY, undefined],
  [Number.NaN, small ? 300 : 4097],
] as const) {
  for (const at of [2, 20]) {
    for (const [name, run, right] of solvers) {
      const what = `${name}, product ${at} = ${bad}${row === undefined ? '' : ` in row ${row}`}`;
      const base = gpuOperatorFromCsr(ctx, mid);
      const r = await run(faulty(base, at, bad, row)).catch((e: unknown) => e as Error);
      const [pass, detail] = await verdict(r, () => right(r as Outcome));
      line({ name: what, pass, detail });
      base.dispose();
    }
  }
}

// 4. the device destroyed mid-solve
{
  const what = 'device destroyed at CG iteration 3: DeviceLostError, then on later calls';
  const c2 = await createGpuContext();
  const s2 = new GpuVectorSpace(c2);
  const op = gpuOperatorFromCsr(c2, big);
  const t0 = performance.now();
  const r = await cg(s2, op, s2.fromArray(bBig), { rtol: 1e-9, checkEvery: 1, onIteration: (i) => void (i.iteration >= 3 && !c2.isLost && c2.device.destroy()) }).catch((e: unknown) => e);
  const ms = performance.now() - t0;
  let later = false;
  try {
    s2.fromArray(bBig);
  } catch (e) {
    later = e instanceof DeviceLostError;
  }
  line({ name: what, pass: r instanceof DeviceLostError && later, detail: `${r instanceof Error ? errText(r) : 'a result'} after ${ms.toFixed(0)} ms; later call raises DeviceLostError: ${later}` });
  c2.dispose();
}

await finish();
