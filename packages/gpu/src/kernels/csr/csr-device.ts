/**
 * CSR on the device, shared by the CSR kernels: validated upload, splitting over bindings
 * (row blocks; a row longer than one binding is cut into pieces whose later pieces accumulate
 * into y in a later, ordered dispatch — deterministic, no atomics), and the per-block encode.
 * @module
 */
import { type CsrMatrix, csrNnz, InvalidParameterError } from '@gpusparse/formats';
import type { GpuContext } from '../../device/context';
import type { PipelineEntry } from '../../device/pipelines';
import type { GpuBuf } from '../../memory/buffers';
import { Uniforms } from '../../memory/recorder';
import { type UnsortedEntry, uploadU32, validateCsrIndices, writeValues } from '../../memory/upload';
import type { DeviceMatrix, SpmvScale, UploadOptions } from '../types';

/** One binding block: rows [rowStart, rowStart + rows) and entries [k0, k1) of the matrix. */
export interface CsrBlockPlan {
  readonly rowStart: number;
  readonly rows: number;
  readonly k0: number;
  readonly k1: number;
  /** The first row continues a row begun in the previous block. */
  readonly cont: boolean;
}

/**
 * Plan the split of `a` into blocks of at most `capNnz` entries and `capRows` rows. A single
 * row with more than `capNnz` entries is cut into pieces. O(rows + blocks).
 * @example splitCsrPlan(a, 1 << 25, 1 << 25) // one block when a fits in a binding
 */
export function splitCsrPlan(a: CsrMatrix, capNnz: number, capRows: number): CsrBlockPlan[] {
  const out: CsrBlockPlan[] = [];
  const rp = a.rowPtr;
  let r = 0;
  while (r < a.rows) {
    const start = rp[r]!;
    let r1 = r;
    while (r1 < a.rows && rp[r1 + 1]! - start <= capNnz && r1 + 1 - r <= capRows) r1++;
    if (r1 === r) {
      const end = rp[r + 1]!;
      for (let k = start; k < end; k += capNnz) out.push({ rowStart: r, rows: 1, k0: k, k1: Math.min(end, k + capNnz), cont: k > start });
      r++;
    } else {
      out.push({ rowStart: r, rows: r1 - r, k0: start, k1: rp[r1]!, cont: false });
      r = r1;
    }
  }
  return out;
}

/** One uploaded block. `extra` is a kernel-specific table (e.g. adaptive row blocks). */
export interface CsrDeviceBlock extends CsrBlockPlan {
  readonly rowPtr: GpuBuf;
  readonly colIdx: GpuBuf;
  readonly values: GpuBuf;
  readonly extra?: GpuBuf;
  /** Workgroups to dispatch for this block. */
  readonly groups: number;
  /** Kernel-defined count passed in the uniform `count`. */
  readonly count: number;
}

/** A CSR matrix on the device. */
export interface CsrDeviceMatrix extends DeviceMatrix {
  readonly parts: readonly CsrDeviceBlock[];
  readonly pipeline: PipelineEntry;
  /** The matrix arrays this handle reads, when uploaded by {@link uploadCsr} (possibly shared with other CSR handles). */
  readonly sharedCsr?: SharedCsrUpload;
}

/** What a CSR kernel adds per block: its workgroup count and optional extra table. */
export type CsrBlockExtra = (localRowPtr: Int32Array | Uint32Array, rows: number) => { groups: number; count?: number; extra?: Uint32Array };

/** The device arrays of one binding block of a {@link SharedCsrUpload}. */
export interface SharedCsrBlock extends CsrBlockPlan {
  readonly rowPtr: GpuBuf;
  readonly colIdx: GpuBuf;
  readonly values: GpuBuf;
}

/**
 * The CSR arrays of one matrix on the device, split over bindings, shared by the uploads of
 * several CSR kernels (reference-counted: the buffers go back to the pool when the last holder
 * releases). The autotuner uploads the matrix once this way; every CSR candidate, the device
 * statistics and the final operator read the same buffers.
 */
export interface SharedCsrUpload {
  /** The shape of the host matrix these arrays were uploaded from. */
  readonly source: { readonly rows: number; readonly cols: number; readonly nnz: number };
  /** The first entry whose row is not strictly increasing (undefined: canonical), for layouts with one slot per (row, column). */
  readonly unsorted?: UnsortedEntry;
  /**
   * Whether `a` is the matrix these arrays came from (an upload of another matrix is refused).
   * Held weakly: a shared upload must not keep the host matrix alive (the chunked CI assembly
   * uploads 10^9 non-zeros chunk by chunk and drops each host chunk once it is on the device).
   */
  isSourceOf(a: CsrMatrix): boolean;
  /** Entries per binding block at most (the split was planned with it). */
  readonly capElems: number;
  readonly blocks: readonly SharedCsrBlock[];
  readonly deviceBytes: number;
  /** Holders so far (1 after creation). */
  readonly holders: number;
  retain(): void;
  release(): void;
}

const bindingCap = (ctx: GpuContext, opts: UploadOptions): number => Math.floor(Math.min(opts.maxBindingBytes ?? Number.POSITIVE_INFINITY, ctx.limits.maxStorageBufferBindingSize) / 4);

/** Block-local row pointers of plan block `b` (the matrix's own array when there is one block). */
function localRowPtr(a: CsrMatrix, b: CsrBlockPlan, single: boolean): Int32Array | Uint32Array {
  if (single) return a.rowPtr;
  const local = new Uint32Array(b.rows + 1);
  for (let i = 0; i <= b.rows; i++) local[i] = Math.min(Math.max(a.rowPtr[b.rowStart + i]!, b.k0), b.k1) - b.k0;
  return local;
}

/**
 * Validate `a`, split it over bindings and upload row pointers, columns and float32 values of
 * each block, once, for any number of CSR kernels (pass it as `UploadOptions.sharedCsr`).
 * Cost O(rows + nnz) host work plus the transfer of 8·nnz + 4·rows bytes.
 * @throws InvalidMatrixError naming the first bad row
 * @example const s = uploadCsrArrays(ctx, a); const h = csrScalarKernel.upload(ctx, a, {}, { sharedCsr: s }); s.release();
 */
export function uploadCsrArrays(ctx: GpuContext, a: CsrMatrix, where = 'csr upload', opts: UploadOptions = {}): SharedCsrUpload {
  const unsorted = validateCsrIndices(a, where);
  const capElems = bindingCap(ctx, opts);
  const plan = splitCsrPlan(a, capElems, capElems - 1);
  const blocks: SharedCsrBlock[] = [];
  let deviceBytes = 0;
  try {
    for (const b of plan) {
      const rowPtr = uploadU32(ctx, localRowPtr(a, b, plan.length === 1), `${where}-rowptr`);
      const colIdx = uploadU32(ctx, a.colIdx.subarray(b.k0, b.k1), `${where}-colidx`);
      const values = ctx.buffers.acquire((b.k1 - b.k0) * 4, undefined, `${where}-values`);
      blocks.push({ ...b, rowPtr, colIdx, values });
      writeValues(ctx, values, a.values.subarray(b.k0, b.k1));
      deviceBytes += rowPtr.bytes + colIdx.bytes + values.bytes;
    }
  } catch (e) {
    for (const p of blocks) for (const buf of [p.rowPtr, p.colIdx, p.values]) buf.dispose();
    throw e;
  }
  let holders = 1;
  const ref = new WeakRef(a);
  return {
    source: { rows: a.rows, cols: a.cols, nnz: a.rowPtr[a.rows] ?? 0 },
    ...(unsorted ? { unsorted } : {}),
    isSourceOf: (m) => ref.deref() === m,
    capElems,
    blocks,
    deviceBytes,
    get holders() {
      return holders;
    },
    retain() {
      if (holders <= 0) throw new InvalidParameterError('sharedCsr', 'a shared CSR upload still held', 'one already released');
      holders++;
    },
    release() {
      if (--holders === 0) for (const p of blocks) for (const buf of [p.rowPtr, p.colIdx, p.values]) buf.dispose();
    },
  };
}

/**
 * Upload `a` for one CSR kernel: its arrays (or the shared ones of `opts.sharedCsr`, which this
 * handle then holds until disposed) plus the kernel's per-block table. Cost O(rows + nnz) host
 * work plus the transfer of 8·nnz + 4·rows bytes; with a shared upload only the kernel's tables.
 * @throws InvalidMatrixError naming the first bad row
 * @throws InvalidParameterError when `opts.sharedCsr` holds another matrix or another split
 */
export function uploadCsr(
  ctx: GpuContext,
  kernelId: string,
  a: CsrMatrix,
  pipeline: PipelineEntry,
  perBlock: CsrBlockExtra,
  opts: UploadOptions = {},
): CsrDeviceMatrix {
  let arrays = opts.sharedCsr;
  if (arrays) {
    if (!arrays.isSourceOf(a)) throw new InvalidParameterError(`${kernelId} upload sharedCsr`, 'the arrays of the matrix being uploaded', `a shared upload of another ${arrays.source.rows}×${arrays.source.cols} matrix`);
    if (arrays.capElems !== bindingCap(ctx, opts)) throw new InvalidParameterError(`${kernelId} upload sharedCsr`, `a split with ${bindingCap(ctx, opts)} entries per binding`, arrays.capElems);
    arrays.retain();
  } else arrays = uploadCsrArrays(ctx, a, kernelId, opts);
  const shared = arrays;
  const parts: CsrDeviceBlock[] = [];
  let deviceBytes = shared.deviceBytes;
  try {
    for (const b of shared.blocks) {
      const x = perBlock(localRowPtr(a, b, shared.blocks.length === 1), b.rows);
      const extra = x.extra ? uploadU32(ctx, x.extra, `${kernelId}-extra`) : undefined;
      deviceBytes += extra?.bytes ?? 0;
      parts.push({ ...b, extra, groups: x.groups, count: x.count ?? 0 });
    }
  } catch (e) {
    for (const p of parts) p.extra?.dispose();
    shared.release();
    throw e;
  }
  return {
    kernelId,
    rows: a.rows,
    cols: a.cols,
    nnz: csrNnz(a),
    deviceBytes,
    blocks: parts.length,
    parts,
    pipeline,
    sharedCsr: shared,
    dispose() {
      for (const p of parts) p.extra?.dispose();
      shared.release();
    },
  };
}

/**
 * {@link uploadCsr} for a kernel that gives each row `lanes` invocations of a workgroup of
 * `workgroupSize`: ⌈rows / (workgroupSize / lanes)⌉ workgroups per block, no extra table.
 * @example uploadLanesCsr(ctx, 'csr-vector', a, pipe, 8, 256)
 */
export function uploadLanesCsr(ctx: GpuContext, kernelId: string, a: CsrMatrix, pipeline: PipelineEntry, lanes: number, workgroupSize: number, opts?: UploadOptions): CsrDeviceMatrix {
  const rowsPerGroup = workgroupSize / lanes;
  return uploadCsr(ctx, kernelId, a, pipeline, (_rp, rows) => ({ groups: Math.ceil(rows / rowsPerGroup) }), opts);
}

/**
 * The {@link SPMV_UNIFORMS} block of one row block: rows, first row, `cont`, alpha, beta, count.
 * @example ctx.recorder.dispatch(pipe, refs, blockUniforms(p, { alpha: 1, beta: 0 }, 0), groups);
 */
export function blockUniforms(p: Pick<CsrBlockPlan, 'rows' | 'rowStart' | 'cont'>, scale: SpmvScale, count: number): Uniforms {
  const u = new Uniforms();
  u.u[0] = p.rows;
  u.u[1] = p.rowStart;
  u.u[2] = p.cont ? 1 : 0;
  u.f[3] = scale.alpha;
  u.f[4] = scale.beta;
  u.u[5] = count;
  return u;
}

/** Record y = alpha·A·x + beta·y block by block (blocks in order: continued rows accumulate). */
export function encodeCsr(ctx: GpuContext, h: CsrDeviceMatrix, x: GpuBuf, y: GpuBuf, scale: SpmvScale = { alpha: 1, beta: 0 }): void {
  for (const p of h.parts) {
    const u = blockUniforms(p, scale, p.count);
    const refs = [p.rowPtr, p.colIdx, p.values, x, y];
    if (p.extra) refs.push(p.extra);
    ctx.recorder.dispatch(h.pipeline, refs, u, p.groups);
  }
}

/** The storage bindings of every CSR kernel (plus `blk` for kernels with an extra table). */
export const CSR_BINDINGS = [
  { name: 'row_ptr', type: 'array<u32>', access: 'r' },
  { name: 'col_idx', type: 'array<u32>', access: 'r' },
  { name: 'vals', type: 'array<f32>', access: 'r' },
  { name: 'x', type: 'array<f32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
] as const;

/** Check the vectors of `a` fit in one binding (x is read at arbitrary columns). */
export function csrVectorsFit(a: { rows: number; cols: number }, maxBinding: number): true | string {
  if (a.cols * 4 > maxBinding) return `x of ${a.cols} float32 exceeds one binding (${maxBinding} bytes)`;
  if (a.rows * 4 > maxBinding) return `y of ${a.rows} float32 exceeds one binding (${maxBinding} bytes)`;
  return true;
}
