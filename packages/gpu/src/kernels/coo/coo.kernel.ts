/**
 * COO kernel (survey §2.1.3; the segmented-reduction COO kernel of Bell & Garland 2008) over
 * row-sorted triplets, in three ordered dispatches per binding piece:
 * 1. scale: y = beta·y (every row, empty rows included);
 * 2. chunk: workgroup w takes a contiguous chunk of `workgroupSize` non-zeros and does a
 *    segmented sum in workgroup memory; a row lying entirely inside the chunk is added to y by
 *    the invocation ending its run; the first and last (possibly carried) runs of each chunk go
 *    to a partials buffer;
 * 3. carry: a deterministic second pass adds the partials of each cut row in chunk order.
 *
 * No float atomics (WGSL has none): a row wholly inside a chunk has one writer (its run's last
 * invocation); a row touching a chunk boundary is written only by the carry pass, by the one
 * invocation at the start of its run of partials. Both orders are fixed: results are
 * deterministic. Rows longer than a chunk (one spanning many chunks) appear once or twice per
 * chunk in the partials and are summed there. Past one binding, the triplets are cut into
 * pieces of whole chunks; each piece runs chunk + carry after the previous one.
 * @module
 */
import { type CooMatrix, InvalidMatrixError, validateCoo } from '@gpusparse/formats';
import type { PipelineEntry, PipelineSpec } from '../../device/pipelines';
import type { GpuBuf } from '../../memory/buffers';
import { Uniforms } from '../../memory/recorder';
import { uploadF32, uploadU32, validateIndexRange } from '../../memory/upload';
import { csrVectorsFit } from '../csr/csr-device';
import { bindingCapElems } from '../ell/ell-device';
import type { DeviceMatrix, SpmvKernel, SpmvScale } from '../types';
import { signature } from '../wgsl/index';
import { CARRY_BINDINGS, CHUNK_BINDINGS, cooCarryWgsl, cooChunkWgsl, cooScaleWgsl, SCALE_BINDINGS } from './coo-shaders';

/** Parameters of {@link cooKernel}: `workgroupSize` is also the chunk length. */
export type CooKernelParams = { workgroupSize: number };

/** One binding piece of a COO matrix: triplets [k0, k0 + nnz). */
interface CooPiece {
  readonly nnz: number;
  readonly chunks: number;
  readonly rowIdx: GpuBuf;
  readonly colIdx: GpuBuf;
  readonly values: GpuBuf;
}

/** A COO matrix on the device: pieces, a partials buffer (2 pairs per chunk) and three pipelines. */
export interface CooDeviceMatrix extends DeviceMatrix {
  readonly parts: readonly CooPiece[];
  readonly partials: GpuBuf;
  readonly workgroupSize: number;
  readonly pipelines: { readonly scale: PipelineEntry; readonly chunk: PipelineEntry; readonly carry: PipelineEntry };
}

/**
 * Check row-sorted triplets: lengths nnz, rows in [0, rows) and non-decreasing, columns in
 * [0, cols). Throws InvalidMatrixError naming the first bad entry. O(nnz).
 * @example checkCooSorted(m, 'coo upload')
 */
export function checkCooSorted(m: CooMatrix, where: string): void {
  validateCoo(m, where); // the rules of every COO consumer (types, lengths, ranges); then the order
  const { nnz, rowIdx, colIdx, values } = m;
  if (rowIdx.length !== nnz || colIdx.length !== nnz || values.length !== nnz) {
    throw new InvalidMatrixError(where, `expected ${nnz} rows, columns and values, got ${rowIdx.length}, ${colIdx.length}, ${values.length}`);
  }
  validateIndexRange(rowIdx, m.rows, `${where} rows`);
  validateIndexRange(colIdx, m.cols, `${where} columns`);
  for (let k = 1; k < nnz; k++) {
    if (rowIdx[k]! < rowIdx[k - 1]!) throw new InvalidMatrixError(where, `row ${rowIdx[k]}: expected triplets sorted by row, got row ${rowIdx[k - 1]} before it at entry ${k}`);
  }
}

/** One of the COO passes' pipeline specs (key = its shader text). */
function cooSpec(name: string, wg: number, text: string, bindings: Parameters<typeof signature>[0]): PipelineSpec {
  return { key: text, label: `coo-${name}(wg=${wg})`, bindings: signature(bindings), wgsl: () => text };
}

/**
 * Segmented-reduction COO SpMV. Cost per apply: 1 + 2·pieces dispatches; 12·nnz bytes of
 * triplets + 8 bytes per row (scale) + 16 bytes per chunk of partials; log2(workgroupSize)
 * scan steps per chunk.
 * @example const h = cooKernel.upload(ctx, cooFromCsr(a)); cooKernel.encode(ctx, h, x, y);
 */
export const cooKernel: SpmvKernel<CooMatrix, CooKernelParams, CooDeviceMatrix> = {
  id: 'coo',
  format: 'coo',
  title: 'COO: segmented sums per chunk of non-zeros in workgroup memory, carried rows in a second pass (survey §2.1.3)',
  params: { workgroupSize: { description: 'invocations per workgroup = non-zeros per chunk (power of two)', values: [256, 64] } },
  defaults: { workgroupSize: 256 },
  supports: (m, limits) => csrVectorsFit(m, limits.maxStorageBufferBindingSize),
  wgsl: (p) => cooChunkWgsl(p.workgroupSize),
  // the chunk pass, then the scale and carry passes: every pipeline the upload asks for, declared
  // so that the tuner compiles them ahead (they compiled blocking inside the upload before session 13)
  pipelineSpec: (p) => cooSpec('chunk', p.workgroupSize, cooChunkWgsl(p.workgroupSize), CHUNK_BINDINGS),
  uploadSpecs: (p) => [cooSpec('scale', p.workgroupSize, cooScaleWgsl(p.workgroupSize), SCALE_BINDINGS), cooSpec('carry', p.workgroupSize, cooCarryWgsl(p.workgroupSize), CARRY_BINDINGS)],
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const wg = p.workgroupSize;
    checkCooSorted(m, 'coo upload');
    const [scale, carry] = this.uploadSpecs!(p, ctx.caps).map((sp) => ctx.pipelines.get(sp));
    const pipelines = { scale: scale!, chunk: ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps)), carry: carry! };
    // pieces of whole chunks, each array and the partials (2 vec2 = 4 words per chunk) in one binding
    const cap = bindingCapElems(ctx, opts);
    const chunksPerPiece = Math.max(1, Math.floor(cap / wg)); // wg ≥ 4: partials (4 words per chunk) fit too
    const per = chunksPerPiece * wg;
    const parts: CooPiece[] = [];
    let deviceBytes = 0;
    let maxChunks = 0;
    for (let k0 = 0; k0 < m.nnz; k0 += per) {
      const k1 = Math.min(m.nnz, k0 + per);
      const chunks = Math.ceil((k1 - k0) / wg);
      maxChunks = Math.max(maxChunks, chunks);
      const rowIdx = uploadU32(ctx, m.rowIdx.subarray(k0, k1), 'coo-rows');
      const colIdx = uploadU32(ctx, m.colIdx.subarray(k0, k1), 'coo-cols');
      const values = uploadF32(ctx, m.values.subarray(k0, k1), 'coo-values');
      deviceBytes += rowIdx.bytes + colIdx.bytes + values.bytes;
      parts.push({ nnz: k1 - k0, chunks, rowIdx, colIdx, values });
    }
    const partials = ctx.buffers.acquire(maxChunks * 16, undefined, 'coo-partials');
    deviceBytes += partials.bytes;
    return {
      kernelId: this.id,
      rows: m.rows,
      cols: m.cols,
      nnz: m.nnz,
      deviceBytes,
      blocks: parts.length,
      parts,
      partials,
      workgroupSize: wg,
      pipelines,
      dispose() {
        for (const q of parts) for (const b of [q.rowIdx, q.colIdx, q.values]) b.dispose();
        partials.dispose();
      },
    };
  },
  encode(ctx, h, x, y, scale: SpmvScale = { alpha: 1, beta: 0 }) {
    const wg = h.workgroupSize;
    const uni = (count: number) => {
      const u = new Uniforms();
      u.u[0] = h.rows;
      u.f[3] = scale.alpha;
      u.f[4] = scale.beta;
      u.u[5] = count;
      return u;
    };
    ctx.recorder.dispatch(h.pipelines.scale, [y], uni(0), Math.ceil(h.rows / wg));
    for (const q of h.parts) {
      ctx.recorder.dispatch(h.pipelines.chunk, [q.rowIdx, q.colIdx, q.values, x, y, h.partials], uni(q.nnz), q.chunks);
      ctx.recorder.dispatch(h.pipelines.carry, [h.partials, y], uni(2 * q.chunks), Math.ceil((2 * q.chunks) / wg));
    }
  },
};
