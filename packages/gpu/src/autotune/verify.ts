/**
 * Verification of a chosen candidate: one product on the device against the float64 CSR
 * product of the float32-rounded matrix, row by row with the conformance tier's bound. Past
 * {@link VERIFY_NNZ} non-zeros only evenly spread blocks of rows are compared, so that the
 * host reference stays a bounded fixed cost (the report says how many rows were checked).
 * @module
 */
import type { CsrMatrix, SparseMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { DeviceMatrix } from '../kernels/types';
import { readRanges } from '../memory/readback';
import type { GpuBuf } from '../memory/buffers';
import type { Candidate } from './candidates';
import type { TuneVectors } from './conversions';

/**
 * Non-zeros the host reference covers at most: 2^20, about 10 ms in JavaScript. At 2^23 the
 * reference was 80–100 ms of the 117–296 ms verification on the H100 (issue 16, 10^7–4.6·10^7
 * non-zeros); 64 blocks spread over the rows still reach every part of every layout's storage.
 */
export const VERIFY_NNZ = 1 << 20;
/** Row blocks compared when the matrix has more than {@link VERIFY_NNZ} non-zeros. */
const VERIFY_BLOCKS = 64;

/** Result of {@link verifyProduct}. */
export interface Verification {
  readonly ok: boolean;
  /** max over the compared rows of |y − y_ref| / bound (≤ 1 passes). */
  readonly maxErrOverBound: number;
  /** First failing row, if any. */
  readonly row?: number;
  /** Rows compared. */
  readonly rows: number;
}

/** Row ranges to compare: all rows, or VERIFY_BLOCKS evenly spread blocks of about VERIFY_NNZ non-zeros in all. O(blocks · log rows). */
export function verifyRanges(a: CsrMatrix): [number, number][] {
  const nnz = a.rowPtr[a.rows] ?? 0;
  if (nnz <= VERIFY_NNZ) return [[0, a.rows]];
  const per = VERIFY_NNZ / VERIFY_BLOCKS;
  const out: [number, number][] = [];
  for (let b = 0; b < VERIFY_BLOCKS; b++) {
    const lo = Math.floor((b * a.rows) / VERIFY_BLOCKS);
    let hi = lo;
    while (hi < a.rows && a.rowPtr[hi]! - a.rowPtr[lo]! < per) hi++;
    out.push([lo, Math.max(hi, lo + 1)]);
  }
  return out;
}

/**
 * y over the compared rows only, in range order, with one round trip: past {@link VERIFY_NNZ}
 * the 64 blocks are a few per cent of y (the whole y of issue 16's stencil is 6.9 MB to map and
 * convert for 2^20 compared entries). O(compared rows).
 */
export async function readCompared(ctx: GpuContext, y: GpuBuf, ranges: readonly [number, number][]): Promise<Float32Array> {
  const parts = await readRanges(ctx, ranges.map(([lo, hi]) => ({ buf: y, offset: 4 * lo, bytes: 4 * (hi - lo) })));
  const out = new Float32Array(ranges.reduce((k, [lo, hi]) => k + hi - lo, 0));
  let j = 0;
  for (const p of parts) {
    out.set(new Float32Array(p), j);
    j += p.byteLength / 4;
  }
  return out;
}

/** The float64 reference of y = A·x over the compared rows, and each row's rounding scale Σ|a_ij x_j|. */
export interface VerifyReference {
  readonly ranges: [number, number][];
  /** Reference and scale per compared row, in range order. */
  readonly ref: Float64Array;
  readonly scale: Float64Array;
}

/** The reference of {@link verifyProduct}, computed once per tuning run and shared by every candidate verified. O(min(nnz, VERIFY_NNZ)). */
export function verifyReference(a: CsrMatrix, x: Float64Array): VerifyReference {
  const ranges = verifyRanges(a);
  const n = ranges.reduce((k, [lo, hi]) => k + hi - lo, 0);
  const ref = new Float64Array(n);
  const scale = new Float64Array(n);
  let j = 0;
  for (const [lo, hi] of ranges) {
    for (let i = lo; i < hi; i++, j++) {
      let s = 0;
      let r = 0;
      for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
        const p = Math.fround(a.values[k]!) * x[a.colIdx[k]!]!;
        r += p;
        s += Math.abs(p);
      }
      ref[j] = r;
      scale[j] = s;
    }
  }
  return { ranges, ref, scale };
}

const references = new WeakMap<Float64Array, { a: CsrMatrix; r: VerifyReference }>();

/**
 * Run the uploaded candidate once on x and compare with the float64 CSR product of the
 * float32-rounded matrix: per row |y − y_ref| ≤ 2 · nnz_row · 2^-24 · Σ|a_ij x_j| plus the
 * kernel's own `errorBound` when it declares one. The matrix is not copied (values are rounded
 * on the fly); the reference is computed once per tuning vector x and matrix and reused by
 * every candidate verified on them. Cost: one product, one readback of the compared rows of y, and the first time
 * O(min(nnz, VERIFY_NNZ)) on the host, then O(compared rows).
 * @example const v = await verifyProduct(ctx, a, cand, m, handle, vectors); v.ok
 */
export async function verifyProduct(ctx: GpuContext, a: CsrMatrix, c: Candidate, m: SparseMatrix | CsrMatrix, handle: DeviceMatrix, v: TuneVectors): Promise<Verification> {
  c.kernel.encode(ctx, handle, v.dx, v.dy, { alpha: 1, beta: 0 });
  const extra = c.kernel.errorBound?.(m, c.params, v.x);
  let held = references.get(v.x);
  if (held?.a !== a) {
    held = { a, r: verifyReference(a, v.x) };
    references.set(v.x, held);
  }
  const { ranges, ref, scale } = held.r;
  const y = await readCompared(ctx, v.dy, ranges);
  let worst = 0;
  let row: number | undefined;
  let j = 0;
  for (const [lo, hi] of ranges) {
    for (let i = lo; i < hi; i++, j++) {
      const bound = 2 * (a.rowPtr[i + 1]! - a.rowPtr[i]!) * 2 ** -24 * scale[j]! + (extra?.[i] ?? 0);
      const e = Math.abs(y[j]! - ref[j]!);
      const r = bound > 0 ? e / bound : e > 0 || Number.isNaN(e) ? Number.POSITIVE_INFINITY : 0;
      if (!(r <= worst)) {
        worst = Number.isNaN(r) ? Number.POSITIVE_INFINITY : r;
        if (!(worst <= 1) && row === undefined) row = i;
      }
    }
  }
  return { ok: worst <= 1, maxErrOverBound: worst, row, rows: j };
}

/**
 * The largest error of a device product y ≈ A·x over all rows, each row's |y_i − ref_i| taken
 * relative to its absolute scale Σ_j |a_ij x_j| (ref: the float64 product of the float32-rounded
 * matrix): what a kernel's summation can get wrong, on the scale of the terms it sums. Relative
 * to |ref_i| instead, a stencil row whose terms cancel (ref_i ≈ 0) reads 1e-1 for a correct
 * float32 sum. A row of scale 0 must give exactly 0 (any other value is an error of ∞). O(nnz).
 * @example rowScaledError(a, x, y).worst // ≲ 1e-6 for a correct float32 product
 */
export function rowScaledError(a: CsrMatrix, x: ArrayLike<number>, y: ArrayLike<number>): { worst: number; row?: number } {
  if (y.length < a.rows) throw new RangeError(`rowScaledError: y expected ${a.rows} entries (one per row), got ${y.length}`);
  let worst = 0;
  let row: number | undefined;
  for (let i = 0; i < a.rows; i++) {
    let r = 0;
    let s = 0;
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const p = Math.fround(a.values[k]!) * x[a.colIdx[k]!]!;
      r += p;
      s += Math.abs(p);
    }
    const e = Math.abs(y[i]! - r);
    const q = s > 0 ? e / s : e === 0 ? 0 : Number.POSITIVE_INFINITY;
    if (!(q <= worst)) {
      worst = Number.isNaN(q) ? Number.POSITIVE_INFINITY : q;
      row = i;
    }
  }
  return { worst, row };
}
