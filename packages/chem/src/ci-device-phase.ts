/**
 * The CI driver's float64 phase on the device (./ci.ts): H in the polish space is started
 * before the float32 Davidson (a sliced low-part build yields to the solve's readbacks, so it
 * runs in the solve's idle host time and its cost lands in the float32 part of `solve`), then
 * the Jacobi–Davidson polish (./ci-polish.ts) from the float32 Ritz vectors, with the phase's
 * stages timed: waiting for the prewarm, waiting for H, Davidson, final check.
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import type { EigenIterationInfo, EigenResult } from '@gpusparse/solvers';
import type { CiDevicePolish, CiPolishOutcome } from './ci-polish';
import { polishCi } from './ci-polish';
import type { CiResult, PolishStages } from './ci-types';
import type { ChunkSink } from './hamiltonian/chunked';

/** H in the polish space, being built (see {@link startPolishOperator}). */
export interface PendingPolishOperator<P> {
  readonly ready: Promise<LinearOperator<P>>;
  /** Return the operator's buffers once built (after a failed float32 solve). */
  abandon(): void;
}

/**
 * Start H in the polish space now (before the float32 solve): `given` (an operator factory's own
 * polish operator) as is, else the device polish's operator over the whole CSR or the chunk
 * sink, sharing the float32 operator `fast`. A rejection is held until `ready` is awaited.
 */
export function startPolishOperator<V, P>(device: CiDevicePolish<V, P>, given: LinearOperator<P> | undefined, matrix: Parameters<CiDevicePolish<V, P>['operator']>[0], sink: ChunkSink<V> | undefined, fast: LinearOperator<V>): PendingPolishOperator<P> {
  const ready = given ? Promise.resolve(given) : Promise.resolve().then(() => device.operator(matrix, sink, fast));
  ready.catch(() => {}); // awaited (and thrown) at the polish; no unhandled rejection meanwhile
  return {
    ready,
    abandon: () => void ready.then((o) => (o as { dispose?: () => void }).dispose?.(), () => {}),
  };
}

/** Options of {@link runDevicePolish}. */
export interface DevicePhaseOptions<V, P> {
  device: CiDevicePolish<V, P>;
  pending: PendingPolishOperator<P>;
  prewarmed: Promise<void> | undefined;
  fastOp: LinearOperator<V>;
  fastSpace: VectorSpace<V, unknown>;
  /** The float32 result (its vectors are released here). */
  res: EigenResult<V>;
  kSolve: number;
  nroots: number;
  diagonal: Float64Array;
  tol: number;
  maxIterations: number;
  byBound: boolean;
  onIteration: (info: EigenIterationInfo) => unknown;
  signal?: AbortSignal;
  /** ⟨S²⟩ of the final vectors in the polish space (CiPolishOptions.spinSquared). */
  spinSquared?: (vs: readonly P[]) => Promise<number[] | undefined>;
}

/** What the device phase gives the driver. */
export interface DevicePhase {
  outcome: CiPolishOutcome;
  solver: CiResult['solver'];
  /** Milliseconds of the phase (from the end of the float32 solve). */
  ms: number;
  stages: PolishStages;
  bounds: NonNullable<CiResult['bounds']>;
  notes: string[];
}

/** Host milliseconds an operator spent on its own build (Df64CsrOperator.build), when it says. */
function buildStats(op: unknown): PolishStages['operatorBuild'] {
  const b = (op as { build?: { scanMs: number; uploadMs: number; slices: number; yields: number } }).build;
  return b ? { scan: b.scanMs, upload: b.uploadMs, slices: b.slices, yields: b.yields } : undefined;
}

/**
 * The float64 phase on the device: wait for the prewarm and for H (both started before the
 * float32 solve), polish, check. Everything from the first wait on counts as the phase.
 */
export async function runDevicePolish<V, P>(o: DevicePhaseOptions<V, P>): Promise<DevicePhase> {
  const t0 = performance.now();
  await o.prewarmed; // compiles not done by now would block on first use anyway
  const tWarm = performance.now();
  const pop = await o.pending.ready;
  const tOp = performance.now();
  const outcome = await polishCi({
    fastOp: o.fastOp,
    fastSpace: o.fastSpace,
    fastVectors: o.res.vectors.slice(0, o.kSolve),
    kSolve: o.kSolve,
    nroots: o.nroots,
    diagonal: o.diagonal,
    tol: o.tol,
    maxIterations: o.maxIterations,
    device: o.device,
    operator: pop,
    ...(o.byBound ? { accept: 'bound' as const } : {}),
    onIteration: o.onIteration,
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.spinSquared ? { spinSquared: o.spinSquared } : {}),
  });
  (pop as { dispose?: () => void }).dispose?.();
  for (const v of o.res.vectors) o.fastSpace.release(v); // handed over to the polish on the device
  const ms = performance.now() - t0;
  const build = buildStats(pop);
  const stages: PolishStages = { prewarmWait: tWarm - t0, operatorWait: tOp - tWarm, davidson: outcome.stages.davidson, check: outcome.stages.check, ...(build ? { operatorBuild: build } : {}) };
  return { outcome, solver: solverInfo(o.res, outcome, o.device.precision), ms, stages, bounds: { accept: o.byBound ? 'bound' : 'residual', ...outcome.bounds }, notes: phaseNotes(o, outcome, ms, stages) };
}

function solverInfo(res: EigenResult<unknown>, outcome: CiPolishOutcome, precision: string): CiResult['solver'] {
  const p = outcome.result;
  return {
    method: `${res.method} (float32, ${res.stats.matvecs} matvecs) + ${p.method} ${precision} polish (${p.stats.matvecs} device matvecs, ${outcome.correctionMatvecs} float32 correction matvecs)`,
    converged: p.converged,
    iterations: res.iterations + p.iterations,
    matvecs: res.stats.matvecs + p.stats.matvecs + outcome.correctionMatvecs,
  };
}

function phaseNotes<V, P>(o: DevicePhaseOptions<V, P>, outcome: CiPolishOutcome, ms: number, st: PolishStages): string[] {
  const s = (x: number) => (x / 1000).toFixed(3);
  const { precision } = o.device;
  const b = st.operatorBuild;
  return [
    `float32 backend: ${o.res.iterations} iterations on ${o.fastSpace.name}, then ${outcome.result.iterations} iterations in ${precision} on the device (${(ms / 1000).toFixed(2)} s; Jacobi–Davidson corrections on ${o.fastSpace.name})`,
    `device polish stages: waiting for prewarm ${s(st.prewarmWait)} s, waiting for H in ${precision} ${s(st.operatorWait)} s, Davidson ${s(st.davidson)} s, final check ${s(st.check)} s`,
    ...(b ? [`H in ${precision}: low parts built during the float32 Davidson in ${b.slices} slices, host ${s(b.scan)} s scan + ${s(b.upload)} s upload (part of the solve time before the phase)`] : []),
    `device polish: roots accepted by ${outcome.bounds.acceptedBy.join(', ')}; certified bounds ${boundsText(outcome.bounds.bound)} (0 ≤ E − λ ≤ bound, docs/guides/precision.md)`,
  ];
}

/** Certified bounds for a note, in Eh to 2 digits: 'none' where no guard root gave one (was "Infinity Eh"). */
export function boundsText(bounds: readonly number[]): string {
  if (!bounds.some(Number.isFinite)) return 'none';
  return `${bounds.map((b) => (Number.isFinite(b) ? b.toExponential(1) : 'none')).join(' ')} Eh`;
}
