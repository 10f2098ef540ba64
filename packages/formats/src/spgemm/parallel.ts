/**
 * Parallel CPU diagonal SpGEMM (seed 002 §6, issue 8): {@link hmSpgemmParallel} and
 * {@link cdmSpgemmParallel} compute exactly what hmSpgemm / cdmSpgemm compute — the same C
 * structure (diagonal set fixed before any arithmetic, same present slots, same nnz) and
 * bit-identical values — on node:worker_threads.
 *
 * Split: HM by C's diagonals (contiguous ranges in C's storage order, of about equal cost: a C
 * diagonal dC pairs each A diagonal dA with B's diagonal dC − dA, and the three are swept as
 * contiguous runs); CDM by row ranges of C (the serial loop nest restricted to those rows). About
 * 8 chunks per worker, handed out dynamically. Every entry of C receives its products in the
 * serial order (HM: A's diagonals in HM order; CDM: op(A)'s compact diagonals ascending), so the
 * float64 sums are the same, bit for bit. The operands are copied once per product into
 * SharedArrayBuffers; C's values and presence mask are allocated in SharedArrayBuffers, each chunk
 * writes only its own diagonals' or rows' values (no races) and sets presence bits with
 * Atomics.or; at the end C is copied out into ordinary arrays, so the result is indistinguishable
 * from the serial one (option `sharedResult` skips that copy).
 *
 * Serial fallback (the serial function itself runs, on the calling thread): when worker threads
 * are unavailable (a browser, a bundle with node modules stubbed), when C (CDM) has fewer than
 * 2 rows, or when the product is small: fewer than `minWork` candidate multiply–adds (default
 * {@link PARALLEL_SPGEMM_MIN_WORK} = 200 000, a few ms of serial work, below which handing the
 * work to threads costs more than it saves). Candidate multiply–adds: stored slots of A × dg(B)
 * for HM, Σ over C's diagonals of the op(A) diagonals that meet a stored op(B) diagonal × n for CDM.
 *
 * No static `node:` import: this module is safe in the browser-facing index.
 * @module
 */
import { InvalidParameterError } from '../core/errors';
import { type CdmMatrix, cdmAllocate, cdmDiagonalLookup } from '../cdm/cdm';
import { requireInt } from '../dia/common';
import { checkDiagonalCount } from '../dia/dia';
import { type HmMatrix, hmAllocate, hmDiagonalLookup, hmDiagonalSize } from '../hm/hm';
import { type CdmSpgemmOptions, cdmSpgemm, cdmSpgemmDiagonals } from './cdm-spgemm';
import { hmSpgemm, hmSpgemmDiagonals, type SpgemmOptions } from './hm-spgemm';
import type { CdmRowsJob, HmDiagonalsJob } from './parallel-kernels';
import { acquireSpgemmPool, hardwareThreads } from './parallel-node';

/** Default `minWork`: below this many candidate multiply–adds the serial function runs. */
export const PARALLEL_SPGEMM_MIN_WORK = 200_000;

/** How a parallel product ran (reported through `onRun`). */
export interface ParallelSpgemmRun {
  /** 'workers': on worker threads; 'serial': the serial function on the calling thread. */
  readonly mode: 'workers' | 'serial';
  /** Why: 'parallel', or the fallback reason. */
  readonly reason: 'parallel' | 'small' | 'few-rows' | 'no-workers';
  /** Worker threads used (0 when serial). */
  readonly workers: number;
  /** Row chunks handed out (0 when serial). */
  readonly chunks: number;
  /** Candidate multiply–adds (the quantity compared with minWork). */
  readonly work: number;
}

/** Options of the parallel products. */
export interface ParallelSpgemmOptions extends SpgemmOptions {
  /** Worker threads, 1 … 256. Default: the hardware threads (node:os availableParallelism). */
  readonly workers?: number;
  /** Run serially below this many candidate multiply–adds. Default {@link PARALLEL_SPGEMM_MIN_WORK}. */
  readonly minWork?: number;
  /**
   * Return C's values and presence mask in the SharedArrayBuffers the workers wrote (no final
   * copy; such arrays cannot be listed for transfer in postMessage). Default false: ordinary
   * ArrayBuffers, like the serial functions.
   */
  readonly sharedResult?: boolean;
  /** Called once per product with how it ran. */
  readonly onRun?: (run: ParallelSpgemmRun) => void;
}

/** Options of {@link cdmSpgemmParallel}: the parallel options plus transposed operands. */
export interface CdmSpgemmParallelOptions extends ParallelSpgemmOptions, CdmSpgemmOptions {}

interface Plan {
  readonly workers: number;
  readonly minWork: number;
  readonly maxDiagonals: number;
}

async function plan(opts: ParallelSpgemmOptions): Promise<Plan> {
  const workers = requireInt('workers', opts.workers ?? Math.min(256, (await hardwareThreads()) ?? 1), 1, 256);
  const minWork = opts.minWork ?? PARALLEL_SPGEMM_MIN_WORK;
  if (typeof minWork !== 'number' || !(minWork >= 0)) throw new InvalidParameterError('minWork', 'a number >= 0', minWork);
  return { workers, minWork, maxDiagonals: requireInt('maxDiagonals', opts.maxDiagonals ?? 4096, 0) };
}

/** A copy of `a` in a SharedArrayBuffer (or `a` itself when already shared). O(length). */
function share<T extends Int32Array | Uint32Array | Float64Array | Uint8Array>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const ctor = a.constructor as new (b: SharedArrayBuffer) => T;
  const out = new ctor(new SharedArrayBuffer(a.byteLength));
  (out as Float64Array).set(a as Float64Array);
  return out;
}

/** A zero-filled array of the same type and length as `a`, in a SharedArrayBuffer (no copy). */
function sharedZeros<T extends Float64Array | Uint32Array>(a: T): T {
  const ctor = a.constructor as new (b: SharedArrayBuffer) => T;
  return new ctor(new SharedArrayBuffer(a.byteLength));
}

/** C with its values and presence mask taken from the shared arrays the workers filled. */
function result<T extends HmMatrix | CdmMatrix>(c: T, values: Float64Array, present: Uint32Array, nnz: number, keepShared: boolean): T {
  if (keepShared) return { ...c, values, present, nnz };
  c.values.set(values); // c's own (untouched) zero arrays receive the copy
  c.present.set(present);
  return { ...c, nnz };
}

/**
 * Contiguous ranges of C's diagonals of about equal cost, about 8 per worker (dynamic scheduling
 * evens out the rest); empty ranges dropped.
 */
function costChunks(cost: Float64Array, workers: number): [number, number][] {
  let total = 0;
  for (const w of cost) total += w;
  const target = total / (8 * workers);
  const out: [number, number][] = [];
  let start = 0;
  let acc = 0;
  for (let d = 0; d < cost.length; d++) {
    acc += cost[d];
    if (acc >= target || d === cost.length - 1) {
      out.push([start, d + 1]);
      start = d + 1;
      acc = 0;
    }
  }
  return out;
}

/** About 8 equal row ranges per worker over [0, rows). */
function rowChunks(rows: number, workers: number): [number, number][] {
  const count = Math.min(rows, 8 * workers);
  const out: [number, number][] = [];
  for (let c = 0; c < count; c++) out.push([Math.floor((c * rows) / count), Math.floor(((c + 1) * rows) / count)]);
  return out;
}

/**
 * C = A·B with HM operands and an HM result, on worker threads; resolves to exactly what
 * {@link hmSpgemm} returns (same diagonals, present slots, nnz, and bit-identical values).
 * Rejects with DimensionMismatchError when columns of A ≠ rows of B, InvalidParameterError for a
 * bad option or too many product diagonals. Runs hmSpgemm itself below `minWork` or without
 * worker threads. Cost: O(stored(A)·dg(B)) work over `workers` threads, plus O(dg(C)·dg(A)) to
 * cut C's diagonals into chunks of equal cost and O(size of A, B, C) copies into and out of
 * SharedArrayBuffers.
 * @example
 * const c = await hmSpgemmParallel(hmFromCsr(a), hmFromCsr(b), { workers: 4 }); hmToCsr(c); // A·B
 */
export async function hmSpgemmParallel(a: HmMatrix, b: HmMatrix, opts: ParallelSpgemmOptions = {}): Promise<HmMatrix> {
  const p = await plan(opts);
  const serialOpts = { maxDiagonals: p.maxDiagonals };
  let work = 0;
  for (let u = 0; u < a.numDiagonals; u++) work += hmDiagonalSize(a, u) * b.numDiagonals;
  const serial = (reason: ParallelSpgemmRun['reason']): HmMatrix => {
    const c = hmSpgemm(a, b, serialOpts);
    opts.onRun?.({ mode: 'serial', reason, workers: 0, chunks: 0, work });
    return c;
  };
  if (work < p.minWork) return serial('small');
  const offsets = hmSpgemmDiagonals(a, b);
  const m = a.rows;
  const n = b.cols;
  let slots = 0;
  for (const d of offsets) slots += Math.max(0, d >= 0 ? Math.min(m, n - d) : Math.min(m + d, n));
  checkDiagonalCount('hm (product)', offsets.length, p.maxDiagonals, slots);
  const pool = await acquireSpgemmPool(p.workers);
  if (!pool) return serial('no-workers');
  const c = hmAllocate(m, n, offsets);
  const k = a.cols;
  const bLookup = hmDiagonalLookup(b);
  // cost of each C diagonal: Σ over A's diagonals dA (with B diagonal dC − dA) of the rows they share
  const cost = new Float64Array(c.numDiagonals);
  for (let dc = 0; dc < c.numDiagonals; dc++) {
    const dC = c.offsets[dc];
    for (const dA of a.offsets) {
      const dB = dC - dA;
      if (dB <= -k || dB >= n || bLookup[dB + k - 1] < 0) continue;
      cost[dc] += Math.max(0, Math.min(m, k - dA, n - dC) - Math.max(0, -dA, -dC));
    }
  }
  const job: HmDiagonalsJob = {
    kind: 'hm',
    m,
    k,
    n,
    aOffsets: a.offsets,
    aStarts: a.starts,
    aValues: share(a.values),
    aPresent: share(a.present),
    bLookup,
    bStarts: b.starts,
    bValues: share(b.values),
    bPresent: share(b.present),
    cOffsets: c.offsets,
    cStarts: c.starts,
    cValues: sharedZeros(c.values),
    cPresent: sharedZeros(c.present),
  };
  const chunks = costChunks(cost, p.workers);
  const nnz = await pool.run(job, chunks, p.workers);
  opts.onRun?.({ mode: 'workers', reason: 'parallel', workers: p.workers, chunks: chunks.length, work });
  return result(c, job.cValues, job.cPresent, nnz, opts.sharedResult ?? false);
}

/** Compact indices of op(X), in the order cdmSpgemm visits them (ascending). */
function opOffsets(x: CdmMatrix, transpose: boolean): Int32Array {
  const n = x.rows;
  return transpose ? Int32Array.from(x.offsets, (k) => (n - k) % n).sort() : x.offsets;
}

/**
 * C = op(A)·op(B) with square CDM operands and a CDM result, on worker threads; resolves to exactly
 * what {@link cdmSpgemm} returns with the same transposes (same compact diagonals, present slots,
 * nnz, and bit-identical values). Transposed operands are read through reverse compact diagonals,
 * never copied. Rejects with DimensionMismatchError when the orders differ, InvalidParameterError
 * for a bad option or too many product diagonals. Runs cdmSpgemm itself below `minWork` or without
 * worker threads. Cost: O(dg(C)·dg(A)·n) work over `workers` threads, plus O(size of A, B, C) copies.
 * @example
 * const c = await cdmSpgemmParallel(cdmFromCsr(a), cdmFromCsr(a), { workers: 2, transposeB: true }); // A·Aᵀ
 */
export async function cdmSpgemmParallel(a: CdmMatrix, b: CdmMatrix, opts: CdmSpgemmParallelOptions = {}): Promise<CdmMatrix> {
  const p = await plan(opts);
  const aT = opts.transposeA ?? false;
  const bT = opts.transposeB ?? false;
  const serialOpts = { maxDiagonals: p.maxDiagonals, transposeA: aT, transposeB: bT };
  const ks = cdmSpgemmDiagonals(a, b, serialOpts); // throws DimensionMismatchError
  const n = a.rows;
  const aOps = opOffsets(a, aT);
  const bHas = new Uint8Array(n);
  for (const kB of opOffsets(b, bT)) bHas[kB] = 1;
  let work = 0;
  for (const kC of ks) for (const kA of aOps) work += bHas[(kC - kA + n) % n] * n;
  const serial = (reason: ParallelSpgemmRun['reason']): CdmMatrix => {
    const c = cdmSpgemm(a, b, serialOpts);
    opts.onRun?.({ mode: 'serial', reason, workers: 0, chunks: 0, work });
    return c;
  };
  if (work < p.minWork) return serial('small');
  if (n < 2) return serial('few-rows');
  checkDiagonalCount('cdm (product)', ks.length, p.maxDiagonals, ks.length * n);
  const pool = await acquireSpgemmPool(p.workers);
  if (!pool) return serial('no-workers');
  const c = cdmAllocate(n, ks);
  const job: CdmRowsJob = {
    kind: 'cdm',
    n,
    aOps,
    aLookup: cdmDiagonalLookup(a),
    aT,
    aValues: share(a.values),
    aPresent: share(a.present),
    bHas: share(bHas),
    bLookup: cdmDiagonalLookup(b),
    bT,
    bValues: share(b.values),
    bPresent: share(b.present),
    cOffsets: c.offsets,
    cValues: sharedZeros(c.values),
    cPresent: sharedZeros(c.present),
  };
  const chunks = rowChunks(n, p.workers);
  const nnz = await pool.run(job, chunks, p.workers);
  opts.onRun?.({ mode: 'workers', reason: 'parallel', workers: p.workers, chunks: chunks.length, work });
  return result(c, job.cValues, job.cPresent, nnz, opts.sharedResult ?? false);
}

export { shutdownSpgemmPool } from './parallel-node';
