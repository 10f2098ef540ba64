/**
 * The ELL family on the device, shared by the ELL, ELL-R, sliced ELL(-R), SELL-C-σ and hybrid
 * kernels: a matrix becomes a list of *pieces*, one dispatch each. A piece is a set of
 * consecutive row positions with its own packed arrays; it either fits in one binding as
 * stored (the usual case: one piece, arrays uploaded as they are) or is re-packed on the host
 * from the column-major slots, so a matrix larger than `maxBindingBytes` is split into row
 * blocks and, when a single row (or slice) is wider than a binding, into slot ranges.
 *
 * No atomics: each piece's rows are written by one invocation (group) per row. A piece that
 * continues the slot range of rows an earlier piece already wrote is `accumulate`: it runs with
 * beta = 1, after the first piece (dispatches of one batch execute in order), so y = alpha·A·x
 * + beta·y is built in a fixed order, deterministically.
 * @module
 */
import type { GpuContext } from '../../device/context';
import type { PipelineEntry } from '../../device/pipelines';
import type { GpuBuf } from '../../memory/buffers';
import { Uniforms } from '../../memory/recorder';
import { uploadF32, uploadU32 } from '../../memory/upload';
import type { DeviceMatrix, SpmvScale, UploadOptions } from '../types';

/** A host array a piece binds: indices (uploaded as u32) or values (uploaded as f32). */
export type PieceArray = Int32Array | Uint32Array | Float32Array | Float64Array;

/** One dispatch's worth of a matrix, on the host, before upload. */
export interface HostPiece {
  /** Row positions in this piece (the uniform `rows`). */
  readonly rows: number;
  /** The uniform `row_base` (first matrix row, or 0 when rows are stored through a permutation). */
  readonly rowBase: number;
  /** The uniform `count` (kernel-defined: ELL width, slice height). */
  readonly count: number;
  /** Add into y (beta = 1): these rows were already written by an earlier piece. */
  readonly accumulate: boolean;
  /** Storage bindings 1…k − 2 in shader order (x and y follow). Values arrays are Float32/Float64. */
  readonly data: readonly PieceArray[];
}

/** One uploaded piece. */
export interface EllPiece {
  readonly rows: number;
  readonly rowBase: number;
  readonly count: number;
  readonly accumulate: boolean;
  /** Workgroups to dispatch. */
  readonly groups: number;
  readonly arrays: readonly GpuBuf[];
}

/** An ELL-family matrix on the device. */
export interface EllDeviceMatrix extends DeviceMatrix {
  readonly parts: readonly EllPiece[];
  readonly pipeline: PipelineEntry;
}

/**
 * Elements (4 bytes) of one binding: the smaller of `opts.maxBindingBytes` and the device's
 * maxStorageBufferBindingSize. O(1).
 * @example bindingCapElems(ctx, { maxBindingBytes: 4096 }) // 1024
 */
export function bindingCapElems(ctx: GpuContext, opts: UploadOptions = {}): number {
  const bytes = Math.min(opts.maxBindingBytes ?? Number.POSITIVE_INFINITY, ctx.limits.maxStorageBufferBindingSize);
  const cap = Math.floor(bytes / 4);
  if (!(cap >= 1)) throw new RangeError(`ELL upload: expected maxBindingBytes ≥ 4, got ${opts.maxBindingBytes}`);
  return cap;
}

/**
 * Upload the pieces of a matrix and count its device bytes. `rowsPerGroup` rows go to one
 * workgroup. Cost: the transfer of every piece's arrays (f64 values rounded to f32).
 * @example uploadPieces(ctx, 'ell', a, pipe, ellPieces(...), 256)
 */
export function uploadPieces(
  ctx: GpuContext,
  kernelId: string,
  shape: { rows: number; cols: number; nnz: number },
  pipeline: PipelineEntry,
  pieces: Iterable<HostPiece>,
  rowsPerGroup: number,
): EllDeviceMatrix {
  const parts: EllPiece[] = [];
  let deviceBytes = 0;
  for (const p of pieces) {
    const arrays = p.data.map((d, i) =>
      d instanceof Float32Array || d instanceof Float64Array ? uploadF32(ctx, d, `${kernelId}-${i}`) : uploadU32(ctx, d, `${kernelId}-${i}`),
    );
    for (const b of arrays) deviceBytes += b.bytes;
    parts.push({ rows: p.rows, rowBase: p.rowBase, count: p.count, accumulate: p.accumulate, groups: Math.ceil(p.rows / rowsPerGroup), arrays });
  }
  return {
    kernelId,
    rows: shape.rows,
    cols: shape.cols,
    nnz: shape.nnz,
    deviceBytes,
    blocks: parts.length,
    parts,
    pipeline,
    dispose() {
      for (const p of parts) for (const b of p.arrays) b.dispose();
    },
  };
}

/**
 * Record y = alpha·A·x + beta·y piece by piece, in order (accumulating pieces use beta = 1).
 * Bindings: the piece's arrays, then x, then y. `more(u, i)` may set uniform words past the six
 * of SPMV_UNIFORMS for piece i (a kernel's own fields). Cost: one dispatch per piece.
 * @example encodeEll(ctx, h, x, y, { alpha: 1, beta: 0 })
 */
export function encodeEll(ctx: GpuContext, h: EllDeviceMatrix, x: GpuBuf, y: GpuBuf, scale: SpmvScale = { alpha: 1, beta: 0 }, more?: (u: Uniforms, piece: number) => void): void {
  h.parts.forEach((p, i) => {
    const u = new Uniforms();
    u.u[0] = p.rows;
    u.u[1] = p.rowBase;
    u.u[2] = 0; // no `cont`: accumulation is by beta = 1 for the whole piece
    u.f[3] = scale.alpha;
    u.f[4] = p.accumulate ? 1 : scale.beta;
    u.u[5] = p.count;
    more?.(u, i);
    ctx.recorder.dispatch(h.pipeline, [...p.arrays, x, y], u, p.groups);
  });
}

/**
 * Re-pack a window of column-major slots: rows r0 … r0 + h − 1 and slots k0 … k0 + kk − 1 of
 * a block stored at `off` with stride `stride` (slot k of row r at off + k·stride + r), into a
 * new column-major block of stride h. Cost O(h·kk).
 * @example repackSlots(colIdx, values, 0, rows, 10, 5, 0, width) // rows 10..14 of an ELL
 */
export function repackSlots(
  colIdx: Int32Array,
  values: Float64Array,
  off: number,
  stride: number,
  r0: number,
  h: number,
  k0: number,
  kk: number,
): { col: Uint32Array; val: Float32Array } {
  const col = new Uint32Array(h * kk);
  const val = new Float32Array(h * kk);
  for (let k = 0; k < kk; k++) {
    const src = off + (k0 + k) * stride + r0;
    for (let r = 0; r < h; r++) {
      col[k * h + r] = colIdx[src + r]!;
      val[k * h + r] = values[src + r]!;
    }
  }
  return { col, val };
}

/** Row lengths of rows r0 … r0 + h − 1 seen from a slot window [k0, k0 + kk): clamp(len − k0, 0, kk). O(h). */
export function clampLengths(len: Int32Array, r0: number, h: number, k0: number, kk: number): Uint32Array {
  const out = new Uint32Array(h);
  for (let r = 0; r < h; r++) out[r] = Math.min(Math.max(len[r0 + r]! - k0, 0), kk);
  return out;
}

/** The plain ELL layout (one block of `rows` rows, `width` slots, column-major). */
export interface EllLayout {
  readonly rows: number;
  readonly width: number;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
}

/**
 * Pieces of an ELL (or ELL-R, when `rowLength` is given) matrix for bindings of `cap`
 * elements: the whole matrix when it fits; otherwise blocks of ⌊cap / width⌋ rows; a row wider
 * than `cap` alone in slot ranges of `cap` (later ranges accumulate). Each piece's data:
 * [colIdx, values, (rowLength)], stride = the piece's rows, `count` = its width.
 * Cost: O(rows·width) host copies when split, none otherwise.
 * @example [...ellPieces(e, null, 1024)].length // 1 for a small matrix
 */
export function* ellPieces(m: EllLayout, rowLength: Int32Array | null, cap: number): Generator<HostPiece> {
  const { rows, width: w } = m;
  const rl = (r0: number, h: number, k0: number, kk: number) => (rowLength ? [clampLengths(rowLength, r0, h, k0, kk)] : []);
  if (rows * w <= cap && rows <= cap) {
    yield { rows, rowBase: 0, count: w, accumulate: false, data: [m.colIdx, m.values, ...(rowLength ? [rowLength] : [])] };
    return;
  }
  if (w <= cap) {
    const h = Math.max(1, Math.min(cap, Math.floor(cap / Math.max(w, 1))));
    for (let r0 = 0; r0 < rows; r0 += h) {
      const hh = Math.min(h, rows - r0);
      const t = repackSlots(m.colIdx, m.values, 0, rows, r0, hh, 0, w);
      yield { rows: hh, rowBase: r0, count: w, accumulate: false, data: [t.col, t.val, ...rl(r0, hh, 0, w)] };
    }
    return;
  }
  for (let r = 0; r < rows; r++) {
    for (let k0 = 0; k0 < w; k0 += cap) {
      const kk = Math.min(cap, w - k0);
      const t = repackSlots(m.colIdx, m.values, 0, rows, r, 1, k0, kk);
      yield { rows: 1, rowBase: r, count: kk, accumulate: k0 > 0, data: [t.col, t.val, ...rl(r, 1, k0, kk)] };
    }
  }
}
