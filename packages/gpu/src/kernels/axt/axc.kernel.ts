/**
 * AXC kernel (seed 004 §2.2, Listing 2): bricks of HBRs = THW entries followed by their THW x
 * values; THW invocations per row walk the row's bricks (lane l takes slot l of each brick),
 * keep a lane-local sum, and reduce it once across the lanes at the end — subgroup shuffles when
 * THW divides the subgroup size (lavapipe 8, NVIDIA 32), a tree in workgroup memory otherwise.
 * Listing 2 reduces every brick with shuffles; summing per lane first and reducing once gives
 * the same result up to rounding order and log2(THW) instead of bricks·log2(THW) shuffles.
 *
 * No atomics at all: a row belongs to one lane group, whose lane 0 stores y[i] = α·Σ + β·y[i]
 * (as in Listing 2). A row whose bricks do not fit one binding is cut into brick-aligned pieces;
 * the later pieces accumulate into y in later, ordered dispatches (β = 1), as the CSR kernels do.
 * brp[] (ax positions) is uploaded as a slot pointer brp/2 per binding block.
 * @module
 */
import { type AxcMatrix, type CsrMatrix, DimensionMismatchError, InvalidMatrixError } from '@gpusparse/formats';
import type { GpuCaps } from '../../device/context';
import type { PipelineEntry } from '../../device/pipelines';
import type { GpuBuf } from '../../memory/buffers';
import { uploadU32 } from '../../memory/upload';
import { blockUniforms, type CsrBlockPlan, splitCsrPlan } from '../csr/csr-device';
import { useSubgroupPath } from '../csr/vector.kernel';
import type { DeviceMatrix, SpmvKernel } from '../types';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, segmentedSum } from '../wgsl/index';
import { AX_BINDINGS, AX_PARAMS, type AxChunk, axSlotWgsl, axVectorsFit, checkGather, chunkBytes, chunkCapSlots, disposeChunk, encodeGather, gatherPipeline, matchLayoutParam, uploadAxChunk, validateXIdx } from './ax-device';
import { axPipelines } from './axt-device';

/** Parameters of {@link axcKernel}. */
export type AxcKernelParams = { thw: number; gather: number; workgroupSize: number };

const BINDINGS = [...AX_BINDINGS, { name: 'bsp', type: 'array<u32>', access: 'r' }, { name: 'y', type: 'array<f32>', access: 'w' }] as const;

/** One binding block of an AXC matrix: rows [rowStart, rowStart + rows), slots [k0, k1). */
interface AxcPart extends CsrBlockPlan {
  readonly chunk: AxChunk;
  /** Slot pointer of the block's rows, rebased to k0 (rows + 1). */
  readonly bsp: GpuBuf;
}

/** An AXC matrix on the device. */
export interface AxcDeviceMatrix extends DeviceMatrix {
  readonly parts: readonly AxcPart[];
  readonly product: PipelineEntry;
  readonly gatherPipe?: PipelineEntry;
  /** Rows per workgroup (workgroupSize / THW). */
  readonly rowsPerGroup: number;
}

/** brp[] as a slot pointer (brp/2), validated: starts at 0, whole bricks, non-decreasing, ends at ax.length. */
function slotPointer(m: AxcMatrix, where: string): Int32Array {
  const { rows, brp, hbrs, ax } = m;
  if (brp.length !== rows + 1) throw new DimensionMismatchError(`${where} brp`, rows + 1, brp.length);
  const sp = new Int32Array(rows + 1);
  for (let i = 0; i <= rows; i++) {
    const p = brp[i]!;
    if (p % (2 * hbrs) !== 0 || (i > 0 && p < brp[i - 1]!) || (i === 0 && p !== 0) || (i === rows && p !== ax.length)) {
      throw new InvalidMatrixError(where, `row ${i}: brp ${p} is not a whole-brick (${2 * hbrs}) position in order ending at ax.length ${ax.length}`);
    }
    sp[i] = p / 2;
  }
  return sp;
}

/**
 * AXC SpMV. Cost per apply: gather (12 B/slot), product (8 B/slot + 8 B/row), log2(THW)
 * reduction steps per row.
 * @example const h = axcKernel.upload(ctx, axcFormat.fromCsr(a, { hbrs: 32 }));
 */
export const axcKernel: SpmvKernel<AxcMatrix, AxcKernelParams, AxcDeviceMatrix> = {
  id: 'axc',
  format: 'axc',
  title: 'AXC: THW lanes per row over its bricks, one cross-lane reduction, lane 0 stores y (seed 004 §2.2, Listing 2)',
  params: {
    thw: AX_PARAMS.thw('lanes per row'),
    gather: AX_PARAMS.gather,
    workgroupSize: AX_PARAMS.workgroupSize,
  },
  defaults: { thw: 32, gather: 1, workgroupSize: 256 },
  formatParams: (p) => ({ hbrs: p.thw }),
  supports: (m, limits) => axVectorsFit(m, limits.maxStorageBufferBindingSize),
  wgsl(p, caps: GpuCaps) {
    const { thw, workgroupSize: wg } = p;
    checkGather(this.id, p.gather);
    if (thw < 1 || wg % thw !== 0) throw new RangeError(`axc: thw expected a power of two in 1..64 dividing ${wg}, got ${thw}`);
    const sg = useSubgroupPath(thw, caps);
    return `${preamble([...SPMV_UNIFORMS, ['cols', 'u32']], BINDINGS, { subgroups: sg })}
${SPMV_STORE}
${axSlotWgsl(thw, p.gather)}
${segmentedSum('red', thw, wg, sg)}
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let r = wg_linear(wid, nwg) * ${wg / thw}u + lid / ${thw}u;
  let l = lid % ${thw}u;
  var v = 0.0;
  if (r < u.rows) {
    let end = bsp[r + 1u];
    for (var s = bsp[r] + l; s < end; s += ${thw}u) { v = v + prod(s); }
  }
  let t = red_seg(lid, v);
  if (r < u.rows && l == 0u) { store_y(r, t); }
}`;
  },
  ...axPipelines<AxcKernelParams>(BINDINGS, (p, caps) => `axc(thw=${p.thw},gather=${p.gather}${useSubgroupPath(p.thw, caps) ? ',subgroup' : ',wgmem'})`, false),
  upload(ctx, m, params = {}, opts = {}) {
    const p = { ...this.defaults, ...params };
    matchLayoutParam(this.id, 'thw', p.thw, m.hbrs);
    validateXIdx(m.xIdx, m.cols, this.id);
    if (m.ax.length !== 2 * m.xIdx.length) throw new DimensionMismatchError(`${this.id} ax (2 per slot)`, 2 * m.xIdx.length, m.ax.length);
    const sp = slotPointer(m, this.id);
    const product = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    const cap = chunkCapSlots(opts.maxBindingBytes, ctx.limits.maxStorageBufferBindingSize, p.thw);
    const capRows = Math.floor(Math.min(opts.maxBindingBytes ?? Number.POSITIVE_INFINITY, ctx.limits.maxStorageBufferBindingSize) / 4) - 1;
    // splitCsrPlan reads only rows and rowPtr: the slot pointer plays the row pointer
    const plan = splitCsrPlan({ rows: m.rows, rowPtr: sp } as unknown as CsrMatrix, cap, Math.max(1, capRows));
    const parts: AxcPart[] = plan.map((b) => {
      const local = new Uint32Array(b.rows + 1);
      for (let i = 0; i <= b.rows; i++) local[i] = Math.min(Math.max(sp[b.rowStart + i]!, b.k0), b.k1) - b.k0;
      return { ...b, chunk: uploadAxChunk(ctx, m, b.k0, b.k1, undefined, this.id), bsp: uploadU32(ctx, local, `${this.id}-bsp`) };
    });
    let deviceBytes = 0;
    for (const q of parts) deviceBytes += chunkBytes(q.chunk) + q.bsp.bytes;
    return {
      kernelId: this.id,
      rows: m.rows,
      cols: m.cols,
      nnz: m.nnz,
      deviceBytes,
      blocks: parts.length,
      parts,
      product,
      gatherPipe: p.gather === 1 ? gatherPipeline(ctx, p.thw) : undefined,
      rowsPerGroup: p.workgroupSize / p.thw,
      dispose() {
        for (const q of parts) {
          disposeChunk(q.chunk);
          q.bsp.dispose();
        }
      },
    };
  },
  encode(ctx, h, x, y, scale = { alpha: 1, beta: 0 }) {
    for (const q of h.parts) {
      if (h.gatherPipe) encodeGather(ctx, h.gatherPipe, q.chunk, x, h.cols);
      const u = blockUniforms(q, scale, q.k1 - q.k0);
      u.u[6] = h.cols;
      ctx.recorder.dispatch(h.product, [q.chunk.ax, q.chunk.xIdx, x, q.bsp, y], u, Math.ceil(q.rows / h.rowsPerGroup));
    }
  },
};
