/**
 * The CI driver's float64 phase after a float32 device Davidson: a Jacobi–Davidson polish whose
 * outer loop runs in float64 on the host (kept float64 row blocks or the whole CSR), or — when
 * the backend offers a float64-accurate device space (df64 on WebGPU) — on the device over the
 * device's own copy of H (float32 hi values shared with the float32 operator, plus lo arrays
 * where values are not exact in f32). Either way the correction equations are solved in the
 * float32 space, and the energies and residual norms are recomputed in float64 accuracy.
 * @module
 */
import type { CsrMatrix, LinearOperator, VectorSpace } from '@gpusparse/formats';
import { type DavidsonCorrector, davidsonWith, type EigenIterationInfo, type EigenResult, type FastCorrectorOptions, fastCorrector, spaceBridge } from '@gpusparse/solvers';
import type { ChunkSink } from './hamiltonian/chunked';

/**
 * A float64-accurate space on the backend's device for the polish (see the module comment).
 * @typeParam V - the fast (float32) vector type
 * @typeParam P - the polish vector type (e.g. a df64 device vector)
 */
export interface CiDevicePolish<V, P = unknown> {
  readonly space: VectorSpace<P, unknown>;
  /** 'df64 (≈48 bits) on webgpu', for notes. */
  readonly precision: string;
  /**
   * Electronic H in the polish space: from the chunk sink's device blocks (chunked assembly;
   * the sink was opened with `keepLo`), else uploaded from the whole host CSR.
   */
  operator(matrix: CsrMatrix | undefined, sink: ChunkSink<V> | undefined): LinearOperator<P> | Promise<LinearOperator<P>>;
  /** A new polish vector holding the fast vector v (on the device). */
  fromFast(v: V): P;
  /** A new fast vector fl(scale·p) (on the device). */
  toFast(p: P, scale: number): V;
}

/** What {@link polishCi} returns: the polish result and its float64 check. */
export interface CiPolishOutcome {
  values: number[];
  /** Normalised float64 host vectors, one per requested root. */
  vectors: Float64Array[];
  /** ‖H·v − E·v‖ per root, recomputed (in the polish precision) after the polish. */
  residualNorms: number[];
  /** Rayleigh quotients v·H·v per root (electronic). */
  rayleigh: number[];
  result: EigenResult<unknown>;
  /** float32 matvecs of the correction equations. */
  correctionMatvecs: number;
}

/** Options of {@link polishCi}. */
export interface CiPolishOptions<V, P> {
  fastOp: LinearOperator<V>;
  fastSpace: VectorSpace<V, unknown>;
  /** The fast Ritz vectors (kSolve of them; released by the caller). */
  fastVectors: readonly V[];
  kSolve: number;
  nroots: number;
  diagonal: Float64Array;
  tol: number;
  maxIterations: number;
  onIteration: (info: EigenIterationInfo) => unknown;
  signal?: AbortSignal;
  device: CiDevicePolish<V, P>;
  operator: LinearOperator<P>;
}

/**
 * The correction equations' settings of the CI polish (host or device): each root's inner
 * tolerance tied to its residual against the target `tol` (a root already below it gets no
 * correction, so the polish ends when every wanted root passes), and no correction for the
 * guard roots; GMRES right-preconditioned by the diagonal (CI Hamiltonians are diagonally
 * dominant). A CI-like test case: one round of 14 float32 products per wanted root instead of
 * two rounds of 26 for every root (docs/guides/precision.md).
 */
export function polishCorrection(tol: number, nroots: number, diagonal: Float64Array): FastCorrectorOptions {
  return { targetResidual: tol, guardFrom: nroots, diagonal };
}

/**
 * Jacobi–Davidson polish in the device space from the float32 Ritz vectors (handed over on the
 * device), then E = v·Hv and ‖Hv − Ev‖ per root in the same space, and the normalised vectors
 * read back once. Host memory: the nroots vectors at the end; no float64 H on the host.
 */
export async function polishCi<V, P>(o: CiPolishOptions<V, P>): Promise<CiPolishOutcome> {
  const { space } = o.device;
  const start = o.fastVectors.map((v) => o.device.fromFast(v));
  const bridge = spaceBridge(
    space,
    (p: P, s: number) => o.device.toFast(p, s),
    (v: V) => o.device.fromFast(v),
  );
  const jd = fastCorrector(o.fastOp, o.fastSpace, polishCorrection(o.tol, o.nroots, o.diagonal), bridge);
  const n = o.operator.rows;
  const result = await davidsonWith(o.operator, space, {
    k: o.kSolve,
    nConverge: o.nroots,
    diagonal: o.diagonal,
    initialVectors: start,
    corrector: jd.corrector as DavidsonCorrector<P>,
    residualTol: o.tol,
    maxIterations: o.maxIterations,
    maxSubspace: Math.min(n, 4 * o.kSolve + 8),
    name: 'jd-davidson',
    recomputeResiduals: false, // recomputed below from the normalised vectors
    onIteration: o.onIteration,
    ...(o.signal ? { signal: o.signal } : {}),
  });
  jd.dispose();
  for (const v of start) space.release(v);
  const check = await rayleighCheck(space, o.operator, result.vectors.slice(0, o.nroots));
  for (const v of result.vectors) space.release(v);
  return { values: result.values.slice(0, o.nroots), ...check, result: result as EigenResult<unknown>, correctionMatvecs: jd.stats.matvecs };
}

/**
 * Per vector c: c ← c/‖c‖, E = c·Hc, ‖Hc − E·c‖, all in `space` (two synchronisations per
 * vector), then c read back as float64.
 */
export async function rayleighCheck<P, S>(space: VectorSpace<P, S>, op: LinearOperator<P>, vs: readonly P[]): Promise<{ vectors: Float64Array[]; residualNorms: number[]; rayleigh: number[] }> {
  const out = { vectors: [] as Float64Array[], residualNorms: [] as number[], rayleigh: [] as number[] };
  const hc = space.create(op.rows);
  for (const v of vs) {
    const c = space.create(op.rows);
    const [nrm] = await space.readMany([space.norm2(v)]);
    space.axpby(1 / nrm!, v, 0, c); // c = v/‖v‖
    op.apply(c, hc);
    const [e] = await space.readMany([space.dot(c, hc)]);
    space.axpby(-e!, c, 1, hc); // hc ← Hc − E·c
    const [res] = await space.readMany([space.norm2(hc)]);
    out.rayleigh.push(e!);
    out.residualNorms.push(res!);
    out.vectors.push(await space.toArray(c));
    space.release(c);
  }
  space.release(hc);
  return out;
}
