/**
 * The plain ELL layout built on the device from the CSR arrays already there (issue 16): the
 * tuner uploads the matrix once as CSR, and on the H100 the host conversion of ELL (30–92 ms at
 * 0.1–0.5·10^6 rows, ×10 at full size) plus the upload of its padded slots (21–100 ms) kept ELL
 * out of the trials on the matrices where it was the exhaustive best (session 9: uniform,
 * banded, 30 % empty rows; product time up to 1.31× the tuner's pick). Here the host computes
 * only the width (longest row, O(rows)) and one dispatch writes the column-major slots: one
 * invocation per slot k·rows + r copies entry k of row r or, past the row's end, writes value 0
 * and the row's last column (column 0 for an empty row), the ELL-family padding of `ellFromCsr`.
 *
 * The result is word for word the `ell` upload of `ellFromCsr(a)` (with format 'ell-r', the
 * `ell-r` upload of `ellRFromCsr(a)`: the same slots and the row lengths; the f32 values were rounded
 * once, at the CSR upload, as the host upload rounds the f64 ones; padding +0). Only a matrix
 * whose CSR arrays are one binding block and whose slots fit one binding (one piece): the other
 * cases keep the host conversion.
 * @module
 */
import { type CsrMatrix, InvalidMatrixError } from '@gpusparse/formats';
import type { GpuContext } from '../../device/context';
import type { PipelineSpec } from '../../device/pipelines';
import type { GpuBuf } from '../../memory/buffers';
import { Uniforms } from '../../memory/recorder';
import { uploadU32 } from '../../memory/upload';
import type { SharedCsrUpload } from '../csr/csr-device';
import type { MatrixShape } from '../types';
import { entryArgs, preamble, signature, type WgslBinding } from '../wgsl/index';

/** Invocations per workgroup of the build. */
const ELL_BUILD_WG = 256;

const BINDINGS: readonly WgslBinding[] = [
  { name: 'row_ptr', type: 'array<u32>', access: 'r' },
  { name: 'col_idx', type: 'array<u32>', access: 'r' },
  { name: 'values', type: 'array<f32>', access: 'r' },
  { name: 'ecols', type: 'array<u32>', access: 'w' },
  { name: 'evals', type: 'array<f32>', access: 'w' },
];

/**
 * Slot q = k·rows + r (one invocation each, so a row as long as the matrix is wide costs no more
 * than many short ones): entry k of row r, or for k ≥ len the pad, value 0 and the row's last
 * column (0 when empty). Writes are consecutive across invocations; the row pointers are read
 * by `rows` neighbours at once.
 */
function ellBuildWgsl(): string {
  return `${preamble(
    [
      ['rows', 'u32'],
      ['slots', 'u32'],
    ],
    BINDINGS,
  )}
@compute @workgroup_size(${ELL_BUILD_WG})
fn main(${entryArgs()}) {
  let q = wg_linear(wid, nwg) * ${ELL_BUILD_WG}u + lid;
  if (q >= u.slots) { return; }
  let r = q % u.rows;
  let k = q / u.rows;
  let s = row_ptr[r];
  let len = row_ptr[r + 1u] - s;
  if (k < len) {
    ecols[q] = col_idx[s + k];
    evals[q] = values[s + k];
  } else {
    var pad = 0u;
    if (len > 0u) { pad = col_idx[s + len - 1u]; }
    ecols[q] = pad;
    evals[q] = 0.0;
  }
}`;
}

const SPEC: PipelineSpec = (() => {
  const text = ellBuildWgsl();
  return { key: text, label: 'ell-build', bindings: signature(BINDINGS), wgsl: () => text };
})();

/** The build's pipeline (for PipelineCache.prewarm). */
export const ellBuildSpec = (): PipelineSpec => SPEC;

/** Kernels whose upload takes a {@link DeviceEllMatrix} (of their own format). */
export const DEVICE_ELL_KERNELS: ReadonlySet<string> = new Set(['ell', 'ell-r']);

/**
 * An ELL matrix whose column-major slots live on the device (one piece): what the `ell` upload
 * accepts beside a host `EllMatrix`. Reference-counted: the handles taken from it hold it.
 */
export interface DeviceEllMatrix extends MatrixShape {
  /** 'ell-r' carries the row lengths too (`ellRFromCsr`'s rowLength). */
  readonly format: 'ell' | 'ell-r';
  readonly onDevice: true;
  readonly nnz: number;
  /** Slots per row (the longest row). */
  readonly width: number;
  /** [column indices, float32 values], rows·width each, slot k of row r at k·rows + r; 'ell-r': then the row lengths. */
  readonly arrays: readonly GpuBuf[];
  retain(): void;
  /** Drop one hold; the buffers go back to the pool with the last. */
  release(): void;
}

/** Whether `m` is a {@link DeviceEllMatrix}. */
export const isDeviceEll = (m: unknown): m is DeviceEllMatrix => {
  const d = m as { onDevice?: unknown; format?: unknown } | undefined;
  return d?.onDevice === true && (d.format === 'ell' || d.format === 'ell-r');
};

/** The longest row of `a`. O(rows). */
export function ellWidth(a: CsrMatrix): number {
  let w = 0;
  for (let i = 0; i < a.rows; i++) w = Math.max(w, a.rowPtr[i + 1]! - a.rowPtr[i]!);
  return w;
}

/**
 * True, or why ELL cannot be built on the device from `shared` for `a` (then convert on the
 * host): the arrays must be `a`'s in one block, and the rows·width slots (width ≥ 1) one piece
 * of bindings of `cap` elements, as `ellPieces` uploads a matrix whole. O(rows).
 */
export function deviceEllApplies(shared: SharedCsrUpload | undefined, a: CsrMatrix, cap: number): true | string {
  if (!shared?.isSourceOf(a)) return 'no shared CSR upload of this matrix';
  const w = ellWidth(a);
  if (w === 0 || a.rows === 0) return 'no entries to lay out';
  if (shared.blocks.length !== 1) return `the CSR arrays span ${shared.blocks.length} binding blocks`;
  if (a.rows * w > cap || a.rows > cap) return `${a.rows} rows × width ${w} exceed one binding of ${cap} elements`;
  return true;
}

/**
 * Build `ellFromCsr(a)`'s slots on the device from `shared` (check {@link deviceEllApplies}
 * first): one O(rows) host pass, one dispatch over the slots, recorded and flushed (not waited for). The CSR
 * arrays stay held until the queue has run the build.
 * Cost on the device: one read of the CSR arrays, 8 bytes written per slot.
 * With `format` 'ell-r' also the row lengths (one upload of 4·rows bytes), as `ellRFromCsr`.
 * @throws InvalidMatrixError for unsorted or repeated columns in a row, as `ellFromCsr`
 * @example const m = buildEllOnDevice(ctx, shared, a); const h = ellKernel.upload(ctx, m); m.release();
 */
export function buildEllOnDevice(ctx: GpuContext, shared: SharedCsrUpload, a: CsrMatrix, format: 'ell' | 'ell-r' = 'ell'): DeviceEllMatrix {
  refuseUnsorted(shared, format);
  const width = ellWidth(a);
  const slots = a.rows * width;
  const src = shared.blocks[0]!;
  const cols = ctx.buffers.acquire(4 * slots, undefined, `${format}-0`);
  const vals = ctx.buffers.acquire(4 * slots, undefined, `${format}-1`);
  const all = [cols, vals];
  try {
    // ELL-R's row lengths: O(rows) from the row pointers, 4 bytes a row (the slots stay on the device)
    if (format === 'ell-r') all.push(uploadU32(ctx, rowLengthsOf(a), `${format}-2`));
    const u = new Uniforms();
    u.u[0] = a.rows;
    u.u[1] = slots;
    ctx.recorder.dispatch(ctx.pipelines.get(SPEC), [src.rowPtr, src.colIdx, src.values, cols, vals], u, Math.ceil(slots / ELL_BUILD_WG));
  } catch (e) {
    for (const b of all) b.dispose();
    throw e;
  }
  // the CSR arrays are read by a dispatch still to run: held until the queue has done it
  shared.retain();
  ctx.recorder.flush();
  const done = () => shared.release();
  ctx.device.queue.onSubmittedWorkDone().then(done, done);
  let refs = 1;
  return {
    format,
    onDevice: true,
    rows: a.rows,
    cols: a.cols,
    nnz: a.rowPtr[a.rows]!,
    width,
    arrays: all,
    retain() {
      if (refs <= 0) throw new RangeError('DeviceEllMatrix.retain: expected a matrix still held, got a released one');
      refs++;
    },
    release() {
      if (refs <= 0) return;
      if (--refs === 0) for (const b of all) b.dispose();
    },
  };
}

/** The stored entries of each row of `a`. O(rows). */
function rowLengthsOf(a: CsrMatrix): Uint32Array {
  const out = new Uint32Array(a.rows);
  for (let i = 0; i < a.rows; i++) out[i] = a.rowPtr[i + 1]! - a.rowPtr[i]!;
  return out;
}

/** As `ellFromCsr` / `ellRFromCsr` (validateCsr): refuse rows whose columns do not strictly increase. O(1). */
function refuseUnsorted(shared: SharedCsrUpload, format: string): void {
  const u = shared.unsorted;
  if (!u) return;
  const what = u.col === u.prev ? 'a repeated column' : 'unsorted columns';
  throw new InvalidMatrixError(
    `${format === 'ell' ? 'ellFromCsr' : 'ellRFromCsr'} (device build)`,
    `CSR colIdx[${u.entry}] = ${u.col} in row ${u.row} after column ${u.prev}: expected columns sorted and unique within a row, got ${what}`,
  );
}
