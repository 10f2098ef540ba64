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
import { writeFileSync } from 'node:fs';
import { type CsrMatrix, csrSpmv, generators, HostOperator, type LinearOperator } from '../packages/formats/src/index';
import { createGpuContext, DeviceLostError, type GpuOperator, gpuOperatorFromCsr, type GpuVector, GpuVectorSpace, InSolveOperator, type TuningReport, tunedOperator } from '../packages/gpu/src/index';
import { bicgstab, cg, davidson, eigsMixed, gmres, lanczos, lobpcg, refinedSolve, type SolveResult } from '../packages/solvers/src/index';

const argv = process.argv.slice(2);
const out = argv.includes('--out') ? argv[argv.indexOf('--out') + 1] : undefined;
const small = argv.includes('--small');
const ctx = await createGpuContext();
const device = ctx.describeText().split('\n')[0];
const space = new GpuVectorSpace(ctx);
const cases: Record<string, unknown>[] = [];
const line = (c: Record<string, unknown>) => {
  cases.push(c);
  console.log(`${c.pass ? 'PASS' : 'FAIL'} ${c.name}${c.detail ? `: ${c.detail}` : ''}`);
};
const errText = (e: unknown) => `${(e as Error).name}: ${(e as Error).message.slice(0, 240)}`;

function relResidual(a: CsrMatrix, x: Float64Array, b: Float64Array): number {
  const ax = csrSpmv(a, x);
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.rows; i++) {
    num += (b[i]! - ax[i]!) ** 2;
    den += b[i]! ** 2;
  }
  return Math.sqrt(num / den);
}

// 1–2. in-solve tuning: a chosen kernel that goes wrong after the switch
type Tuned = InSolveOperator & { readonly tuning: TuningReport };
interface Internals {
  total: number;
  candidates: unknown[];
  others: GpuOperator[];
  decide(t: BigUint64Array, w: Uint32Array | undefined): void;
}

/** Tuning (real, checked tuning products) made to choose candidate 1; its products × factor from the `after`-th after the switch. */
async function switchedThenWrong(a: CsrMatrix, factor: number, after: number): Promise<Tuned> {
  const op = (await tunedOperator(ctx, a, { warn: () => {}, cache: false, inSolve: true, candidates: ['csr-scalar', 'csr-vector', 'ell', 'sliced-ell'], maxTimed: 4, budgetMs: 1e6, expectedProducts: 1e4 })) as Tuned;
  if (!(op instanceof InSolveOperator)) throw new Error(`expected an InSolveOperator, got ${(op as GpuOperator).label}`);
  const inner = op as unknown as Internals;
  const n = inner.candidates.length;
  const decide = inner.decide.bind(op);
  inner.decide = (_t, w) => {
    const t = new BigUint64Array(2 * inner.total);
    for (let k = 0; k < inner.total; k++) {
      t[2 * k] = 1_000_000_000n * BigInt(k + 1);
      t[2 * k + 1] = t[2 * k]! + (k % n === 1 ? 1_000_000n : 2_000_000n);
    }
    decide(t, w);
  };
  const cand = inner.others[0]!;
  const orig = cand.applyScaled.bind(cand);
  let afterSwitch = 0;
  cand.applyScaled = (alpha, x, beta, y) => orig(op.activeLabel === cand.label && ++afterSwitch >= after ? alpha * factor : alpha, x, beta, y);
  const x = space.fromArray(new Float64Array(a.rows).fill(1));
  const y = space.create(a.rows);
  for (let k = 0; k < inner.total; k++) op.apply(x, y);
  await op.decided;
  space.release(x);
  space.release(y);
  if (op.activeLabel !== cand.label) throw new Error(`expected the switch to ${cand.label}, got ${op.activeLabel}`);
  return op;
}

const big = generators.poisson2d(small ? 48 : 256);
const bBig = csrSpmv(big, new Float64Array(big.rows).fill(1));
for (const [name, solve] of [
  ['cg', cg],
  ['bicgstab', bicgstab],
  ['gmres', gmres],
] as const) {
  const what = `in-solve, chosen kernel wrong after the switch: ${name}`;
  try {
    const op = await switchedThenWrong(big, 1.1, 5);
    const t0 = performance.now();
    const r = await solve(space, op, space.fromArray(bBig), { rtol: 1e-5, maxIterations: 5000 });
    const ms = performance.now() - t0;
    const rel = relResidual(big, await space.toArray(r.x), bBig);
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
    const op = await switchedThenWrong(mid, 1.1, 1);
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
    const op = await switchedThenWrong(big, 1, 1);
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
  ['cg', (op) => cg(space, op, space.fromArray(bMid), { rtol: 1e-5, maxIterations: 3000 }), async (r) => relResidual(mid, await space.toArray(r.x as GpuVector), bMid) < 1e-4],
  ['bicgstab', (op) => bicgstab(space, op, space.fromArray(bMid), { rtol: 1e-5, maxIterations: 3000 }), async (r) => relResidual(mid, await space.toArray(r.x as GpuVector), bMid) < 1e-4],
  ['gmres', (op) => gmres(space, op, space.fromArray(bMid), { rtol: 1e-5, maxIterations: 3000 }), async (r) => relResidual(mid, await space.toArray(r.x as GpuVector), bMid) < 1e-4],
  ['refinedSolve', (op) => refinedSolve({ innerOperator: op, innerSpace: space, hostOperator: hostMid, b: bMid, rtol: 1e-10 }), async (r) => relResidual(mid, r.x as Float64Array, bMid) < 1e-9],
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

await ctx.finish();
const result = { bench: 'hostile-s9', device, cases, allPass: cases.every((c) => c.pass === true) };
console.log(`hostile-s9: ${cases.filter((c) => c.pass).length}/${cases.length} pass on ${device}`);
if (out) writeFileSync(out, `${JSON.stringify(result, null, 1)}\n`);
ctx.dispose();
process.exit(0);
