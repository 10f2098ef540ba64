/**
 * The steps of thick-restart Lanczos (./lanczos): a run's basis Q and projected matrix H, the
 * product and orthogonalisation of one step, and the readback that turns a batch of steps into
 * columns of H.
 *
 * Two kinds of step. On float64 host spaces checked every step (`ctx.icgs`) a step is one
 * Gram–Schmidt pass, a second only when the loss-of-orthogonality bound of ../common/icgs asks
 * for it, and its scalars are read at once (reads are free there); the Ritz estimates of H are
 * then taken on a schedule (./lanczos-restart EstimateSchedule). Elsewhere (the GPU, float32) a
 * step is CGS2 against [L Q] recorded without waiting: its projections and ‖w‖ stay device
 * scalars, q_{j+1} = w/‖w‖ is normalised on the device, A·q_j goes to one work vector reused by
 * the whole run, and the host reads a batch of steps back every `checkEvery` steps; on the block
 * path it records the next batch's steps while that readback is in flight ({@link readBatch}).
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import type { StopReason } from '../common/result';
import { type EigenTolerance, residualThreshold } from '../common/eigen-tolerance';
import { allFinite, type EigenRun, randomVector, readAndRelease } from './common';
import { type DenseEigen, symmetricEigen, zeros } from './dense';
import { IcgsBasis } from '../common/icgs';
import { type RitzEstimates, ritzEstimates } from './ritz-estimates';
import { combineColumns, createForOverwrite, projectOutTwice, projectOutTwiceNormalize } from './ortho';
import { returnedVoid } from '../common/operator-check';
import type { SpectrumHint } from './lanczos-filter';

/** What every run of one `lanczos` call shares. */
export interface LanczosCtx<V, S> {
  op: LinearOperator<V>;
  space: VectorSpace<V, S>;
  run: EigenRun;
  sign: 1 | -1;
  tolerance: EigenTolerance;
  maxBasis: number;
  maxIterations: number;
  checkEvery: number;
  iterations: number;
  normA: number;
  eps: number;
  /** One-pass Gram–Schmidt with the loss test (host spaces checked every step), else CGS2 batched. */
  icgs?: IcgsBasis<V, S>;
  /** Ritz vectors kept at a restart, given or undefined for the default of the path. */
  keep: number | undefined;
  /** Skip the Ritz estimates of steps predicted not to converge (one-pass host path, no onIteration). */
  scheduleEstimates: boolean;

  /** A·q_j of the batched (CGS2) steps: one vector for the whole run, overwritten by every product. */
  work?: V;
  /** The basis in one device block (the space's `lanczosBlock`), for the batched steps; null: none offered. */
  block?: BasisBlock<V> | null;
  /** Record the next batch's steps while a batch's readback is in flight (block path; see recordAhead). */
  recordAhead?: boolean;
  /** What the main run saw of the spectrum past its answer (./lanczos-filter; s12-eig18). */
  hint: SpectrumHint;
}

/**
 * A copy of the basis [L Q] in one device buffer (GpuVectorSpace.lanczosBlock): one CGS2 step
 * in a fixed number of dispatches for any basis size, its projections in a history row per
 * step of a batch, read back together. Optional: spaces without it take the per-vector path.
 */
export interface BasisBlock<V> {
  readonly capacity: number;
  readonly rows: number;
  /** w ← (I − QQᵀ)²·w against `basis`, next = w/‖w‖; row `row` := [h1, h2, ‖w‖]. */
  step(basis: readonly V[], w: V, next: V, row: number): void;
  /** Rows 0 … widths.length − 1, row r as [h1 (widths[r]), h2 (widths[r]), β]. */
  read(widths: readonly number[]): Promise<number[][]>;
  /** New vectors Σ_j coeffs[t][j]·basis[j] from the block's copy, or undefined (nothing done) when it cannot. */
  combineColumns?(basis: readonly V[], coeffs: readonly (readonly number[])[], make: (n: number) => V): V[] | undefined;
  /** Submit the recorded work now (after the steps recorded ahead, before the host waits). */
  submit?(): void;
  dispose(): void;
}

/**
 * The run's basis block with room for `columns` columns, made (or remade larger) only between
 * batches; undefined where the space has none or it would not fit (the per-vector path).
 */
function basisBlock<V, S>(c: LanczosCtx<V, S>, columns: number, batchEmpty: boolean): BasisBlock<V> | undefined {
  if (c.block === null) return undefined;
  if (c.block && c.block.capacity >= columns) return c.block;
  if (!batchEmpty) return undefined; // its history holds steps of this batch: this step goes per vector
  const make = (c.space as { lanczosBlock?: (n: number, capacity: number, rows: number) => BasisBlock<V> | undefined }).lanczosBlock;
  if (typeof make !== 'function') {
    c.block = null;
    return undefined;
  }
  c.block?.dispose();
  // room for the multiplicity check's locked vectors too (a few more columns than this run needs)
  const made = make.call(c.space, c.op.rows, Math.max(columns, c.maxBasis + 9), c.checkEvery) ?? make.call(c.space, c.op.rows, columns, c.checkEvery);
  c.block = made ?? null;
  return made;
}

/** Release what the batched steps kept for the whole call: the product vector and the basis block. */
export function releaseWork<V, S>(c: LanczosCtx<V, S>): void {
  if (c.work) c.space.release(c.work);
  c.work = undefined;
  c.block?.dispose();
  c.block = undefined;
}

/** The end of one run (./lanczos lanczosCore). */
export interface CoreOut<V> {
  /** A multiplicity-check run that stopped early: its smallest Ritz value is clear of the limit. */
  clear?: boolean;
  values: number[];
  vectors: V[];
  reason: StopReason;
  detail?: string;
  /** (s13-eig13) A check run that found a copy from a filtered start: that start, which may clear the next attempt (./lanczos-residue). */
  residue?: CheckResidue<V>;
}

/** See ./lanczos-residue Residue. */
export interface CheckResidue<V> {
  clears(locked: readonly V[], mu0: number, found: { value: number; vector: V }): Promise<boolean>;
  release(): void;
}

/** A step recorded but not yet applied to H: its scalars on the device (`s`) or read (`vals`). */
interface PendingStep<S> {
  j: number;
  s: S[];
  nb: number;
  vals?: number[];
  /** The step's history row in the basis block. */
  row?: number;
}

export const threshold = <V, S>(c: LanczosCtx<V, S>): number => residualThreshold(c.tolerance, c.normA);

/** β at or below this is an invariant subspace: Q spans an eigenspace of the operator. */
export const negligible = <V, S>(c: LanczosCtx<V, S>, beta: number): boolean => beta <= 100 * c.eps * Math.max(c.normA, Number.MIN_VALUE);

/** Indices of the Ritz values in wanted order (ascending for smallest, descending for largest). */
export function wantedOrder(values: readonly number[], sign: 1 | -1): number[] {
  const idx = values.map((_, i) => i);
  return sign === 1 ? idx : idx.reverse();
}

/** Normalise w to a unit vector orthogonal to `basis`, or return false if it vanished. */
async function orthonormalise<V, S>(c: LanczosCtx<V, S>, basis: readonly V[], w: V): Promise<boolean> {
  const s = c.space;
  const before = s.norm2(w);
  projectOutTwice(s, basis, w); // w ← (I − QQᵀ)²·w
  const [n0, n1] = await readAndRelease(s, [before, s.norm2(w)], c.run.stats);
  if (!(Number.isFinite(n0!) && Number.isFinite(n1!)) || n1! <= 1e3 * c.eps * n0! || n1 === 0) return false;
  s.axpby(1 / n1!, w, 0, w); // w ← w / ‖w‖
  return true;
}

/** A fresh random unit vector orthogonal to `basis` (tries a few seeds). */
export async function freshVector<V, S>(c: LanczosCtx<V, S>, basis: readonly V[], seed: number): Promise<V | undefined> {
  const n = c.op.rows;
  for (let t = 0; t < 4; t++) {
    const w = randomVector(c.space, n, seed * 7919 + t);
    if (await orthonormalise(c, basis, w)) return w;
    c.space.release(w);
  }
  return undefined;
}

/** `start` (consumed) as a unit vector orthogonal to the locked ones, else a fresh random one. */
export async function startVector<V, S>(c: LanczosCtx<V, S>, locked: readonly V[], start: V, seed: number): Promise<V | undefined> {
  if (await orthonormalise(c, locked, start)) return start;
  c.space.release(start);
  return freshVector(c, locked, seed);
}

/**
 * The basis Q of one run and its projected matrix H = QᵀAQ (arrowhead + tridiagonal after a
 * restart), with H's eigenpairs decomposed fully only when Ritz vectors are formed.
 */
export class KrylovState<V, S> {
  q: V[];
  h: number[][];
  /** Eigenpairs of the projected matrix, when decomposed. */
  eig: DenseEigen | undefined;
  /** The projected matrix whose decomposition `eig` is, while stale. */
  hm: number[][] | undefined;
  /** When > 0: hm is h's leading hmSize × hmSize block, not copied yet (a skipped estimate). */
  hmSize = 0;
  /** Steps recorded since the last readback. */
  readonly pending: PendingStep<S>[] = [];
  /**
   * Steps recorded while the previous batch's readback was in flight ({@link readBatch}): their
   * vectors and pending rows, kept off Q and `pending` until that batch has been examined.
   */
  ahead: { q: V[]; pending: PendingStep<S>[] } | undefined;

  constructor(
    private readonly c: LanczosCtx<V, S>,
    q0: V,
    readonly mMax: number,
  ) {
    this.q = [q0];
    this.h = zeros(mMax);
  }

  fullEig(): DenseEigen | undefined {
    if (!this.eig && !this.hm && this.hmSize > 0) this.hm = this.h.slice(0, this.hmSize).map((row) => row.slice(0, this.hmSize));
    if (!this.eig && this.hm) this.eig = symmetricEigen(this.hm);
    return this.eig;
  }

  /** The `count` wanted Ritz pairs, vectors formed as Q·s_i. */
  ritz(count: number): { values: number[]; vectors: V[] } {
    const e = this.fullEig();
    if (!e) return { values: [], vectors: [] };
    const order = wantedOrder(e.values, this.c.sign).slice(0, count);
    return { values: order.map((i) => e.values[i]!), vectors: this.combine(order.map((i) => e.vectors[i]!)) };
  }

  /**
   * New vectors Q·s for each coefficient vector s (Ritz vectors, the kept vectors of a thick
   * restart): from the basis block in one pass over Q per 12 outputs where the run has one
   * holding Q, else one combine per output.
   */
  combine(coeffs: readonly (readonly number[])[]): V[] {
    const { space } = this.c;
    const fromBlock = coeffs.length > 0 ? this.c.block?.combineColumns?.(this.q, coeffs, (len) => createForOverwrite(space, len)) : undefined;
    return fromBlock ?? combineColumns(space, this.q, coeffs);
  }

  /**
   * After the batch before them was examined: the steps recorded ahead go on Q when the run
   * continued from the very vector they started from (`kept`), else they are discarded.
   */
  reattachAhead(kept: boolean): void {
    const a = this.ahead;
    if (!a) return;
    this.ahead = undefined;
    if (!kept) {
      for (const v of a.q) this.c.space.release(v);
      return;
    }
    this.q.push(...a.q);
    this.pending.push(...a.pending);
  }

  /** Discard the steps recorded ahead (the run ends, restarts or changed its next vector). */
  dropAhead(): void {
    this.reattachAhead(false);
  }

  /** End the run: the wanted Ritz pairs, the basis released. */
  finish(nWant: number, reason: StopReason, detail?: string): CoreOut<V> {
    this.dropAhead();
    const r = this.ritz(nWant);
    for (const v of this.q) this.c.space.release(v);
    return detail === undefined ? { ...r, reason } : { ...r, reason, detail };
  }

  /** Keep q_0..q_last and the next vector (returned, taken off Q); later steps go with their H entries. */
  truncate(last: number): V {
    for (const v of this.q.splice(last + 2)) this.c.space.release(v);
    for (let i = last + 1; i < this.mMax; i++) for (let t = 0; t < this.mMax; t++) this.h[i]![t] = this.h[t]![i] = 0;
    return this.q.pop()!;
  }

  /** A step whose estimates are skipped: the decomposition, when needed, is of H's leading m × m block. */
  defer(m: number): void {
    this.eig = undefined;
    this.hm = undefined;
    this.hmSize = m;
  }
}

/** Record one step: w = A·q_j orthogonalised against [L Q], the provisional q_{j+1} pushed on Q. Returns j. */
export async function recordStep<V, S>(c: LanczosCtx<V, S>, locked: readonly V[], st: KrylovState<V, S>): Promise<number> {
  const { op, space, run } = c;
  const n = op.rows;
  const j = st.q.length - 1;
  // CGS2 steps write A·q_j into one reused vector (apply overwrites y, as CG's q = A·p)
  const w = c.icgs ? createForOverwrite(space, n) : (c.work ??= space.create(n)); // apply writes every element
  returnedVoid(op.apply(st.q[j]!, w), 'lanczos', 'apply', w); // w = A·q_j
  let next = w;
  run.stats.matvecs++;
  const basis = [...locked, ...st.q];
  if (c.icgs) {
    // one pass, a second when the loss bound says so; the scalars are read now (free here)
    const step = await c.icgs.step(basis, w);
    st.pending.push({ j, s: [], nb: basis.length, vals: [...step.h, ...new Array<number>(basis.length).fill(0), step.norm] });
    space.axpby(step.sign / step.norm, w, 0, w); // provisional q_{j+1} = w' / ‖w'‖
  } else {
    // w ← w − [L Q]·([L Q]ᵀ·w) twice; provisional q_{j+1} = w / ‖w‖ (replaced when ‖w‖ turns out negligible)
    next = createForOverwrite(space, n);
    const block = basisBlock(c, basis.length + 1, st.pending.length === 0);
    const row = st.pending.filter((p) => p.row !== undefined).length;
    if (block && row < block.rows) {
      block.step(basis, w, next, row); // the same two passes over one buffer: six dispatches for any basis size
      st.pending.push({ j, s: [], nb: basis.length, row });
    } else {
      const { h1, h2, hn } = projectOutTwiceNormalize(space, basis, w, next);
      st.pending.push({ j, s: [...h1, ...h2, hn], nb: basis.length });
    }
  }
  c.iterations++;
  st.q.push(next);
  return j;
}

/**
 * Read the pending steps back (one readback; none on the one-pass host path) and write their
 * columns of H. A negligible ‖w‖ ends the batch there (later steps are discarded by the caller
 * through `truncate(last)`); `bad` flags a non-finite scalar.
 */
export async function readBatch<V, S>(c: LanczosCtx<V, S>, locked: readonly V[], st: KrylovState<V, S>): Promise<{ beta: number; last: number; bad: boolean }> {
  const { pending, h } = st;
  // (the one-pass host path has read its scalars already: no readback of an empty list)
  const fromBlock = pending.filter((p) => p.row !== undefined);
  // the block's read copies its history rows and submits before its first await: the steps
  // recorded ahead below may overwrite those rows, and the GPU runs them during the wait
  const reading = fromBlock.length > 0 && c.block ? c.block.read(fromBlock.map((p) => p.nb)) : Promise.resolve([]);
  reading.catch(() => undefined); // awaited below; no unhandled rejection while the ahead steps are recorded
  if (fromBlock.length > 0 && fromBlock.length === pending.length) await recordAhead(c, locked, st);
  const rows = await reading;
  if (fromBlock.length > 0) c.run.stats.readbacks++;
  const perVector = pending.filter((p) => !p.vals && p.row === undefined);
  const got = perVector.length > 0 ? await readAndRelease(c.space, perVector.flatMap((p) => p.s), c.run.stats) : [];
  let off = 0;
  let beta = 0;
  let last = -1;
  let bad = false;
  for (const p of pending) {
    let vals = p.vals;
    if (p.row !== undefined) vals = rows[p.row] ?? [Number.NaN];
    else if (!vals) {
      vals = got.slice(off, off + 2 * p.nb + 1);
      off += 2 * p.nb + 1;
    }
    if (!allFinite(vals)) {
      bad = true;
      break;
    }
    for (let i = 0; i <= p.j; i++) {
      const alpha = vals[locked.length + i]! - vals[p.nb + locked.length + i]!; // H[i][j] = q_iᵀ·A·q_j
      h[i]![p.j] = alpha;
      h[p.j]![i] = alpha;
    }
    beta = vals[2 * p.nb]!; // β = ‖w‖
    last = p.j;
    c.normA = Math.max(c.normA, Math.abs(h[p.j]![p.j]!));
    if (negligible(c, beta)) break;
  }
  pending.length = 0;
  return { beta, last, bad };
}

/**
 * Record ahead: while a batch's readback is in flight, the next checkEvery − 1 steps (they need
 * no host scalar: projections and ‖w‖ stay on the device), so the host records while the GPU
 * runs instead of the two taking turns (s8 H100 profile, Hubbard L = 13: wall 1.81 ms/product =
 * host 1.20 + wait 0.61, GPU 0.58: no overlap). They are kept off Q (`st.ahead`) until the batch
 * is examined ({@link KrylovState.reattachAhead}); the loop's next step completes their batch.
 * Only on the block path with `ctx.recordAhead`, never past the basis size, the free dimension or
 * the step cap; discarded (their products counted) when the run ends, restarts early or replaces
 * its next vector.
 */
async function recordAhead<V, S>(c: LanczosCtx<V, S>, locked: readonly V[], st: KrylovState<V, S>): Promise<void> {
  if (!c.recordAhead || !c.block || c.icgs || st.ahead || c.run.aborted()) return;
  const len = st.q.length; // Q with the provisional next vector: the next step is j = len − 1
  const free = c.op.rows - locked.length;
  const steps = Math.min(c.checkEvery - 1, st.mMax - len, free - len, c.maxIterations - c.iterations - 1);
  if (steps <= 0) return;
  const batch = st.pending.splice(0); // the batch being read; its rows were copied already
  for (let t = 0; t < steps; t++) await recordStep(c, locked, st);
  st.ahead = { q: st.q.splice(len), pending: st.pending.splice(0) };
  st.pending.push(...batch);
  c.block?.submit?.(); // the last of them too: the GPU works on them while the host waits and examines
}

/**
 * Ritz values and last eigenvector components of the leading m×m block of the projected matrix (./ritz-estimates);
 * from a full decomposition, returned too, when the QL sweeps there do not converge.
 */
export function estimates(h: number[][], m: number): (RitzEstimates & { full?: DenseEigen }) | undefined {
  const fast = ritzEstimates(h, m);
  if (fast) return fast;
  const full = symmetricEigen(h.length === m ? h : h.slice(0, m).map((row) => row.slice(0, m)));
  return full && { values: full.values, last: full.vectors.map((v) => v[m - 1]!), full };
}

/** A basis object like `old` (same loss) that takes the second pass at every step whose norm dropped. */
export function strictIcgs<V, S>(old: IcgsBasis<V, S>, space: VectorSpace<V, S>, run: EigenRun): IcgsBasis<V, S> {
  const strict = new IcgsBasis(space, 0, () => run.stats.readbacks++);
  strict.reset(old.loss);
  return strict;
}
