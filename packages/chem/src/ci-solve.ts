/**
 * The CI driver's Davidson solve (./ci.ts): the operator (H, + the spin penalty when asked),
 * Davidson on the backend from guarded start vectors, then — on a float32 backend — the float64
 * polish on the device (./ci-device-phase.ts) or on the host (./ci-phases.ts).
 * @module
 */
import { type CsrMatrix, HostOperator, type LinearOperator } from '@gpusparse/formats';
import { davidsonWith, type EigenResult } from '@gpusparse/solvers';
import { boundsText, type PendingPolishOperator, runDevicePolish, startPolishOperator } from './ci-device-phase';
import { parityHalf } from './ci-parity';
import { hostJdPolish } from './ci-phases';
import type { CiBuilt, CiPlan } from './ci-plan';
import { ciJudge, type CiPolishOutcome } from './ci-polish';
import { startVectors } from './ci-start';
import { configurationAverage, pSpace, pSpaceCorrector } from './pspace-precond';
import { energyChangeAccept } from './davidson-stop';
import type { CiOptions, CiProgress, CiResult, PolishStages } from './ci-types';
import type { HalfSpaceOperator } from './direct/operator';
import { SpinPenaltyOperator } from './hamiltonian/spin';
import { solveSpinFiltered } from './spin-guess';

/** The spin treatment: a penalty matrix (P, its weight) or the spin parity of the operator. */
export interface CiSpin {
  multiplicity: number | undefined;
  pm: CsrMatrix | undefined;
  penalty: number;
  byParity: boolean;
}

/** What a solve gives the driver. */
export interface CiSolved {
  values: number[];
  vectors: Float64Array[];
  solver: CiResult['solver'];
  format: string;
  /** The device polish's result, when it ran (its energies and residuals are final). */
  outcome?: CiPolishOutcome;
  polishMs: number;
  polishStages?: PolishStages;
  /** ⟨S²⟩ of the roots when the spin filter or the device polish already computed them. */
  knownS2?: number[];
  /** Milliseconds of the device polish's ⟨S²⟩ (when it gave knownS2). */
  spinMs?: number;
  bounds?: CiResult['bounds'];
}

/** Everything the float32 Davidson and the polishes share. */
interface SolveState<V, S> {
  plan: CiPlan<V, S>;
  built: CiBuilt<V>;
  spin: CiSpin;
  options: CiOptions<V, S>;
  emit: (p: CiProgress) => void;
  notes: string[];
  /** The backend's operator over H (shared with the df64 polish) and the one Davidson runs (+ penalty, or the half space). */
  hop: LinearOperator<V>;
  op: LinearOperator<V>;
  diagonal: Float64Array;
  /** Diagonal of the penalty matrix (empty without one). */
  pdiag: Float64Array;
  format: string;
  kSolve: number;
  byBound: boolean;
  lowPrecision: boolean;
  tol: number;
  /** The float64 Davidson's default stop: the certified energy bound (./ci-polish ciJudge) with a residual floor. */
  judge64?: ReturnType<typeof ciJudge>;
  /** The last verdict's Ritz values and residual norms, for the bounds report. */
  lastVerdict?: { theta: readonly number[]; rn: readonly number[] };
}

/** The backend's operators over H (+ the spin penalty). */
async function fastOperators<V, S>(plan: CiPlan<V, S>, built: CiBuilt<V>, spin: CiSpin): Promise<Pick<SolveState<V, S>, 'hop' | 'op' | 'diagonal' | 'pdiag' | 'format'>> {
  const { h, sink } = built;
  const { backend, space } = plan;
  const hop = h.device ? await h.device() : h.matrix ? await backend.operator(h.matrix, plan.format) : (h.host as unknown as LinearOperator<V>);
  let op: LinearOperator<V> = hop;
  let diagonal = h.diagonal;
  let pdiag = new Float64Array(0);
  const { pm } = spin;
  if (pm) {
    const pop0 = await backend.operator(pm, plan.format);
    pdiag = new Float64Array(space.size);
    for (let i = 0; i < space.size; i++) {
      for (let k = pm.rowPtr[i]!; k < pm.rowPtr[i + 1]!; k++) if (pm.colIdx[k] === i) pdiag[i] = pm.values[k]!;
    }
    const pop = new SpinPenaltyOperator(hop, pop0, spin.penalty, h.diagonal, pdiag);
    op = pop;
    diagonal = pop.diagonal();
  }
  // after the penalty's operator, which takes a registry format
  const format = !h.matrix && !sink ? (hop.label ?? h.host?.label ?? 'operator') : plan.format;
  return { hop, op, diagonal, pdiag, format };
}

/**
 * Davidson on the backend with guard roots (states orthogonal to every unit-vector guess stay
 * reachable), then the float64 polish when the backend is float32.
 */
export async function davidsonCi<V, S>(plan: CiPlan<V, S>, built: CiBuilt<V>, spin: CiSpin, options: CiOptions<V, S>, emit: (p: CiProgress) => void, notes: string[]): Promise<CiSolved> {
  const lowPrecision = plan.backend.space.precision === 'f32';
  // accept 'bound' needs a guard root above the wanted ones (it gives the gap), even for one root
  const byBound = options.accept === 'bound' && lowPrecision && !spin.pm;
  const tol = options.tol ?? 1e-8;
  // float64 Davidson (no polish): the certified energy bound is the default stop (./ci-types.ts accept)
  const judge64 = !lowPrecision && (options.accept ?? 'bound') === 'bound' && !spin.pm && options.energyChange === undefined ? ciJudge(tol, plan.nroots, 2 ** -53, true, residualFloor(tol, options.residualFloor)) : undefined;
  // a guard root gives the bound its gap; for one root only when 'bound' is asked for (it doubles the products per iteration)
  const guard = plan.nroots > 1 || byBound || (judge64 !== undefined && options.accept === 'bound');
  const kSolve = Math.min(parityHalf(built.h.host)?.rows ?? plan.space.size, plan.nroots + (options.extraRoots ?? (guard ? 1 : 0)));
  const st: SolveState<V, S> = { plan, built, spin, options, emit, notes, ...(await fastOperators(plan, built, spin)), kSolve, byBound, lowPrecision, tol, ...(judge64 ? { judge64 } : {}) };
  const { res, knownS2, half, pending, prewarmed } = await float32Davidson(st);
  const devicePolish = built.devicePolish;
  if (pending && devicePolish) {
    // float64-accurate polish on the device (df64): no float64 H and no vector on the host
    // ⟨S²⟩ of the final vectors where they are (the device direct σ's tables), before the readback
    const spinSquared = built.h.spinSquared;
    const phase = await runDevicePolish({ device: devicePolish, pending, prewarmed, fastOp: st.op, fastSpace: plan.backend.space, res, kSolve, nroots: plan.nroots, diagonal: st.diagonal, tol: st.tol, maxIterations: options.maxIterations ?? 50, byBound, onIteration: polishProgress(emit), ...(options.signal ? { signal: options.signal } : {}), ...(spinSquared ? { spinSquared } : {}) });
    notes.push(...phase.notes);
    const { outcome } = phase;
    const spin = outcome.s2 ? { knownS2: outcome.s2, spinMs: outcome.spinMs ?? 0 } : {};
    if (outcome.s2) notes.push(`⟨S²⟩ on the device from the direct σ's tables (the polish's final vectors, df64 sums; one readback): ${((outcome.spinMs ?? 0) / 1000).toFixed(3)} s`);
    return { values: outcome.values, vectors: outcome.vectors.slice(0, plan.nroots), solver: phase.solver, format: st.format, outcome, polishMs: phase.ms, polishStages: phase.stages, bounds: phase.bounds, ...spin };
  }
  const space = plan.backend.space;
  const fastVectors = await Promise.all(res.vectors.slice(0, kSolve).map(async (v) => (half ? half.expand(await space.toArray(v)) : space.toArray(v))));
  await (built.h as { prepareHost?: () => Promise<void> }).prepareHost?.(); // the host polish and the float64 energies (built on demand by some operator factories)
  const solver = { method: res.method, converged: res.converged, iterations: res.iterations, matvecs: res.stats.matvecs };
  const base: CiSolved = { values: res.values.slice(0, plan.nroots), vectors: fastVectors.slice(0, plan.nroots), solver, format: st.format, polishMs: 0, ...(knownS2 ? { knownS2 } : {}), ...(judge64 ? { bounds: boundsReport(st, judge64) } : {}) };
  return lowPrecision ? { ...base, ...(await hostPolish(st, res, fastVectors)) } : base;
}

/**
 * The residual floor of the float64 bound stop: √tol Eh (1e-4 at 1e-8, the energy-change rule's
 * guard) unless given. Should the bound's assumption fail (a state missed below the guard), an
 * eigenvalue still lies within ‖r‖ of each energy; the vectors are converged to ≈ ‖r‖/gap. A
 * floor of 0.1·√tol cost 11 → 15 iterations on CH2/6-31G ¹B2 for no energy digit.
 */
export function residualFloor(tol: number, floor: number | undefined): number {
  return Math.max(tol, floor ?? Math.sqrt(tol));
}

/** How the float64 Davidson accepted each wanted root and its certified bound (from its last verdict). */
function boundsReport<V, S>(st: SolveState<V, S>, judge: ReturnType<typeof ciJudge>): NonNullable<CiSolved['bounds']> {
  const last = st.lastVerdict;
  const n = st.plan.nroots;
  const r = last ? judge.report(last.theta, last.rn) : { bound: new Array<number>(n).fill(Number.POSITIVE_INFINITY), acceptedBy: new Array<'none'>(n).fill('none') };
  if (st.kSolve <= n) st.notes.push("stop: no guard root above the wanted one (one root: accept 'bound' or extraRoots adds one), so no bound: the residual rule judged");
  st.notes.push(`stop: roots accepted by ${r.acceptedBy.join(', ')}; certified bounds ${boundsText(r.bound)} (0 ≤ E − λ ≤ bound with ‖r‖ ≤ ${residualFloor(st.tol, st.options.residualFloor).toExponential(1)}, or ‖r‖ ≤ ${st.tol.toExponential(1)}; docs/guides/ci.md)`);
  return { accept: 'bound', ...r };
}

function polishProgress(emit: (p: CiProgress) => void) {
  return (info: { iteration: number; values: readonly number[]; residualNorms: readonly number[] }) => void emit({ stage: 'polish', iteration: info.iteration, values: info.values, residualNorms: info.residualNorms });
}

/**
 * The float32 (or float64) Davidson from guarded starts; on a float32 backend with a device
 * polish, the polish's pipelines are prewarmed and H in its space is started first, so both
 * overlap the solve. With the spin parity, other spins of the parity are shifted out after.
 */
async function float32Davidson<V, S>(st: SolveState<V, S>): Promise<{ res: EigenResult<V>; knownS2?: number[]; half?: HalfSpaceOperator; pending?: PendingPolishOperator<unknown>; prewarmed?: Promise<void> }> {
  const { plan, built, spin, options, lowPrecision, kSolve } = st;
  const { h } = built;
  const { backend, space, nroots } = plan;
  const devicePolish = built.devicePolish;
  // compile the polish's pipelines and pool its vectors now, overlapped with the float32 solve
  const prewarmed = lowPrecision && devicePolish && !spin.pm ? devicePolish.prewarm?.({ rows: space.size, nnz: h.nnz, vectors: 4 * kSolve + 16 }) : undefined;
  // direct σ with time reversal: Davidson in the half space of the spin parity (half the vectors' length)
  const half = !spin.pm && !lowPrecision && !h.matrix && !h.device ? (h.host as { half?: HalfSpaceOperator } | undefined)?.half : undefined;
  const { initial, spare } = startVectors<V>({
    space,
    diagonal: st.diagonal,
    kSolve,
    ...(spin.multiplicity !== undefined && !spin.pm ? { multiplicity: spin.multiplicity } : {}),
    ...(half ? { half } : {}),
    project: (g) => (h.host as { project?: (v: Float64Array) => void } | undefined)?.project?.(g), // e.g. onto one spin parity (direct σ with time reversal)
    fromArray: (g) => backend.space.fromArray(g),
  });
  if (half) {
    st.op = half as unknown as LinearOperator<V>;
    // a spin by parity: diag(H) averaged over each configuration commutes with S², so Davidson's
    // corrections keep the spin of the (spin-projected) starts and no other spin of the parity enters
    st.diagonal = spin.byParity ? configurationAverage(half.diagonal(), half.configurations()) : half.diagonal();
    st.notes.push(`Davidson on the ${half.rows}-dimensional half space of the spin parity (time reversal)`);
  }
  // energyChange (./davidson-stop.ts): float64 only, a float32 phase cannot see 1e-8 Eh changes
  const energyRule = options.energyChange !== undefined && !lowPrecision ? energyChangeAccept(options.energyChange) : undefined;
  if (options.energyChange !== undefined) st.notes.push(energyRule ? `stop: energy change < ${options.energyChange} Eh per iteration and ‖r‖ ≤ ${Math.sqrt(options.energyChange).toExponential(1)} (not a certified energy error)` : 'energyChange: not on a float32 backend (residual rule)');
  // the P-space preconditioner on the float64 half space (./pspace-precond.ts); its corrections go through the backend's vectors
  const ps = half && !lowPrecision ? pSpace(half) : undefined;
  // a float64 host space's vectors are Float64Arrays: the corrector reads the residual in place and writes
  // the correction into a vector of the space (two copies of n/2 doubles less per root and iteration)
  const hostVectors = !lowPrecision;
  const corrector = ps
    ? pSpaceCorrector<V>({
        ps,
        diagonal: st.diagonal,
        toArray: (v) => (hostVectors && v instanceof Float64Array ? Promise.resolve(v) : backend.space.toArray(v)),
        fromArray: (a) => backend.space.fromArray(a),
        ...(hostVectors ? { alloc: (n: number) => hostVector(backend.space, n) } : {}),
      })
    : undefined;
  if (ps) st.notes.push(`Davidson preconditioner: exact H on the ${ps.idx.length} half coordinates of lowest diagonal (P space${ps.diagonal ? ', whole configurations' : ''}), diag(H)${ps.diagonal ? ' averaged per configuration' : ''} elsewhere`);
  const solveFrom = (o: LinearOperator<V>, starts: V[]) =>
    davidsonWith<V, S>(o, backend.space, {
      ...(corrector ? { corrector } : {}),
      // float64: the driver's float64Energies recomputes every ‖H v − E v‖ after the solve (one product per root saved)
      ...(lowPrecision ? {} : { recomputeResiduals: false }),
      k: kSolve,
      nConverge: nroots, // the guard roots help Davidson but do not hold the verdict
      diagonal: st.diagonal,
      initialVectors: starts,
      // A float32 backend cannot reach 1e-8 Eh by itself: it converges to what float32 allows, then the float64 polish
      // (docs/guides/precision.md); accept 'bound': to 0.3·√tol (3e-5 at 1e-8), where ε²/gap usually meets tol with no correction
      residualTol: lowPrecision ? Math.max(st.tol, st.byBound ? Math.min(1e-4, 0.3 * Math.sqrt(st.tol)) : 1e-4) : st.tol,
      ...(lowPrecision ? { tol: 1e-6 } : {}),
      ...(options.maxIterations === undefined ? {} : { maxIterations: options.maxIterations }),
      ...(energyRule ? { acceptRoots: energyRule } : st.judge64 ? { acceptRoots: boundAccept(st) } : {}),
      onIteration: (info) => void st.emit({ stage: 'solve', iteration: info.iteration, values: info.values, residualNorms: info.residualNorms }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  // H in the polish space, started now: a sliced low-part build runs while the float32 solve awaits its readbacks
  const pending = lowPrecision && devicePolish ? startPolishOperator(devicePolish, built.polishOp, h.matrix, built.sink, st.hop) : undefined; // hop: its float32 arrays can be shared
  let res: EigenResult<V>;
  try {
    res = await solveFrom(st.op, initial);
  } catch (e) {
    pending?.abandon();
    throw e;
  }
  const out = { ...(half ? { half } : {}), ...(pending ? { pending } : {}), ...(prewarmed ? { prewarmed } : {}) };
  if (!(half && spin.byParity)) return { res, ...out };
  // V is Float64Array on this path (a float64 host backend); other spins of the parity are shifted out
  const f = await solveSpinFiltered(res as unknown as EigenResult<Float64Array>, { half, space, multiplicity: spin.multiplicity!, nroots, spare: spare as unknown as Float64Array[], solve: (o, s) => solveFrom(o as unknown as LinearOperator<V>, s as unknown as V[]) as unknown as Promise<EigenResult<Float64Array>> });
  if (f.deflated) st.notes.push(`spin: ${f.deflated} state(s) of another spin of the same parity shifted out of the lowest roots`);
  // ⟨S²⟩ of these vectors (O(size·n_open²), ≈ 0.25 s at 4·10^5 determinants): not computed twice
  return { res: f as unknown as EigenResult<V>, knownS2: f.s2, ...out };
}

/** A new vector of the space and itself as a Float64Array when its vectors are host arrays (else released, undefined). */
function hostVector<V, S>(space: CiPlan<V, S>['backend']['space'], n: number): { vector: V; array: Float64Array } | undefined {
  const x = space.create(n);
  if (x instanceof Float64Array) return { vector: x, array: x };
  space.release(x);
  return undefined;
}

/** The float64 Davidson's bound stop as an acceptRoots test, remembering the last verdict for the report. */
function boundAccept<V, S>(st: SolveState<V, S>) {
  const judge = st.judge64!;
  return (theta: readonly number[], rn: readonly number[]) => {
    st.lastVerdict = { theta: [...theta], rn: [...rn] };
    return judge.accept(theta, rn);
  };
}

/** The float64 Jacobi–Davidson polish on the host (kept float64 H), corrections on the backend. */
async function hostPolish<V, S>(st: SolveState<V, S>, res: EigenResult<V>, fastVectors: Float64Array[]): Promise<Partial<CiSolved>> {
  const t0 = performance.now();
  const { h } = st.built;
  const { pm } = st.spin;
  const space = st.plan.backend.space;
  const hostOp: LinearOperator<Float64Array> = pm ? new SpinPenaltyOperator(h.host!, HostOperator.fromCsr(pm), st.spin.penalty, h.diagonal, st.pdiag) : h.host!;
  const { polish, jd, judge } = await hostJdPolish(hostOp, st.op, space, {
    kSolve: st.kSolve,
    nroots: st.plan.nroots,
    diagonal: st.diagonal,
    fastVectors,
    tol: st.tol,
    byBound: st.byBound,
    maxIterations: st.options.maxIterations ?? 50,
    onIteration: polishProgress(st.emit),
    ...(st.options.signal ? { signal: st.options.signal } : {}),
  });
  const solver = {
    method: `${res.method} (float32, ${res.stats.matvecs} matvecs) + ${polish.method} float64 polish (${polish.stats.matvecs} host matvecs, ${jd.stats.matvecs} float32 correction matvecs)`,
    converged: polish.converged,
    iterations: res.iterations + polish.iterations,
    matvecs: res.stats.matvecs + polish.stats.matvecs + jd.stats.matvecs,
  };
  const polishMs = performance.now() - t0;
  const bounds = { accept: st.byBound ? ('bound' as const) : ('residual' as const), ...judge.report(polish.values, polish.residualNorms) };
  st.notes.push(`host polish: roots accepted by ${bounds.acceptedBy.join(', ')}; certified bounds ${boundsText(bounds.bound)} (0 ≤ E − λ ≤ bound${pm ? ' of H + spin penalty' : ''}, docs/guides/precision.md)`);
  st.notes.push(`float32 backend: ${res.iterations} iterations on ${space.name}, then ${polish.iterations} float64 host iterations (${(polishMs / 1000).toFixed(2)} s; Jacobi–Davidson corrections on ${space.name})`);
  return { values: polish.values.slice(0, st.plan.nroots), vectors: polish.vectors.slice(0, st.plan.nroots), solver, polishMs, bounds };
}
