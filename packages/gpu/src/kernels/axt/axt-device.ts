/**
 * AXT matrices on the device, shared by the four AXT kernels: the slots are cut into chunks of
 * whole tiles / blocks that fit one binding; per chunk and apply, three ordered dispatches —
 * gather (skipped with gather = 0), product (writes partials, see axt-partials.ts), combine
 * (one owner per row stores y). Rows crossing a chunk boundary are continued by the later
 * chunk's combine (β = 1), as the CSR kernels do across bindings.
 * @module
 */
import { InvalidMatrixError } from '@gpusparse/formats';
import type { GpuCaps, GpuContext } from '../../device/context';
import type { PipelineEntry, PipelineSpec } from '../../device/pipelines';
import type { GpuBuf } from '../../memory/buffers';
import { Uniforms } from '../../memory/recorder';
import type { DeviceMatrix, SpmvScale, UploadOptions } from '../types';
import { AX_BINDINGS, type AxChunk, chunkBytes, chunkCapSlots, disposeChunk, encodeGather, gatherPipeline, gatherSpec, productSpec, uploadAxChunk, validateXIdx } from './ax-device';
import { type CombinePart, chunkRowRanges, combinePipeline, combineSpec, encodeCombine, uploadCombine } from './axt-partials';
import type { WgslBinding } from '../wgsl/index';

/** Uniforms of every AXT product kernel: units of the chunk, slots of the chunk, columns of x. */
export const AXT_PRODUCT_UNIFORMS = [
  ['count', 'u32'],
  ['slots', 'u32'],
  ['cols', 'u32'],
] as const;

/** Bindings of a product kernel: ax, x_idx, x, [hdr], part (the partials, written). */
export function axtProductBindings(withHdr: boolean): WgslBinding[] {
  const b: WgslBinding[] = [...AX_BINDINGS];
  if (withHdr) b.push({ name: 'hdr', type: 'array<u32>', access: 'r' });
  b.push({ name: 'part', type: 'array<f32>', access: 'w' });
  return b;
}

/**
 * The pipelines of an AX-family kernel, declared so that the tuner compiles them ahead of time
 * (`prewarm.ts`; before session 13 COO and this family still compiled at their upload, on the
 * run's path): `pipelineSpec` is its product (the shader of `wgsl(p)`), `uploadSpecs` the gather
 * (gather = 1) and, for the AXT kernels (`combine`), the combine. O(shader text).
 * @example const k = { ...axPipelines<P>(BINDINGS, (p) => `axtch(thw=${p.thw})`, true), wgsl, upload };
 */
export function axPipelines<P extends { thw: number; gather: number }>(bindings: readonly WgslBinding[], label: (p: P, caps: GpuCaps) => string, combine: boolean) {
  return {
    pipelineSpec(this: { wgsl(p: P, caps: GpuCaps): string }, p: P, caps: GpuCaps): PipelineSpec {
      return productSpec(this.wgsl(p, caps), bindings, label(p, caps));
    },
    uploadSpecs: (p: P): PipelineSpec[] => [...(p.gather === 1 ? [gatherSpec(p.thw)] : []), ...(combine ? [combineSpec()] : [])],
  };
}

/** What a kernel tells {@link uploadAxt} about its variant. */
export interface AxtPlan {
  /** Slots per indivisible unit of a chunk (a tile, or an AXTCH1 block). */
  readonly unit: number;
  /** Slots per tile when a chunk unit is larger (AXTCH1: the last block may be short); default `unit`. */
  readonly tile?: number;
  /** Slots per partial position (THW for AXTUH1, TH for AXTUH, 1 for the compacted variants). */
  readonly slotsPerPartial: number;
  /** Group length G of the combine (1 uncompact; BS or TH compacted). */
  readonly group: number;
  /** Row pointer over partial positions (rows + 1), validated. */
  readonly ptr: Uint32Array;
  /** Per-slot table to upload with ax (hdr[]), if any. */
  readonly aux?: Uint32Array;
  readonly product: PipelineEntry;
  /** Workgroups and the uniform `count` for a chunk of `slots` slots. */
  dispatch(slots: number): { groups: number; count: number };
  readonly gather: number;
  readonly thw: number;
}

/** One chunk of an AXT matrix: its slots (absent when the matrix has none) and its combine. */
export interface AxtDeviceChunk {
  readonly ax?: AxChunk;
  readonly comb: CombinePart;
  /** Product workgroups and the product's `count` uniform. */
  readonly groups: number;
  readonly count: number;
}

/** An AXT matrix on the device. */
export interface AxtDeviceMatrix extends DeviceMatrix {
  readonly chunks: readonly AxtDeviceChunk[];
  readonly gatherPipe?: PipelineEntry;
  readonly product: PipelineEntry;
  readonly combine: PipelineEntry;
  readonly group: number;
}

/**
 * Validate and upload an AXT matrix for one kernel. Cost O(rows + slots) host work; device
 * bytes: 8 (ax) + 4 (xIdx) [+ 4 (hdr)] per slot, 4 per partial, 4 per row (ptr).
 * @throws InvalidMatrixError naming the bad slot / row
 */
export function uploadAxt(
  ctx: GpuContext,
  kernelId: string,
  m: { readonly rows: number; readonly cols: number; readonly nnz: number; readonly ax: Float64Array; readonly xIdx: Int32Array },
  plan: AxtPlan,
  opts: UploadOptions = {},
): AxtDeviceMatrix {
  validateXIdx(m.xIdx, m.cols, kernelId);
  const slots = m.xIdx.length;
  if (m.ax.length !== 2 * slots || slots % (plan.tile ?? plan.unit) !== 0 || (plan.aux && plan.aux.length !== slots)) {
    throw new InvalidMatrixError(kernelId, `expected ax of 2·${slots} entries, hdr of ${slots} and whole tiles of ${plan.tile ?? plan.unit} slots, got ax ${m.ax.length}, hdr ${plan.aux?.length}, ${slots} slots`);
  }
  const cap = chunkCapSlots(opts.maxBindingBytes, ctx.limits.maxStorageBufferBindingSize, plan.unit);
  const ranges: [number, number][] = [];
  for (let s0 = 0; s0 < slots; s0 += cap) ranges.push([s0, Math.min(slots, s0 + cap)]);
  const partRanges: [number, number][] = ranges.map(([a, b]) => [a / plan.slotsPerPartial, b / plan.slotsPerPartial]);
  if (partRanges.length === 0) partRanges.push([0, 0]); // no slots: one combine over all (empty) rows
  const rr = chunkRowRanges(plan.ptr, partRanges);
  const chunks = rr.map((r, j): AxtDeviceChunk => {
    const range = ranges[j];
    const comb = uploadCombine(ctx, r, partRanges[j]![1] - partRanges[j]![0], kernelId);
    if (!range) return { comb, groups: 0, count: 0 };
    const ax = uploadAxChunk(ctx, m, range[0], range[1], plan.aux, kernelId);
    return { ax, comb, ...plan.dispatch(range[1] - range[0]) };
  });
  let deviceBytes = 0;
  for (const c of chunks) deviceBytes += (c.ax ? chunkBytes(c.ax) : 0) + c.comb.ptr.bytes + c.comb.part.bytes;
  return {
    kernelId,
    rows: m.rows,
    cols: m.cols,
    nnz: m.nnz,
    deviceBytes,
    blocks: chunks.length,
    chunks,
    gatherPipe: plan.gather === 1 ? gatherPipeline(ctx, plan.thw) : undefined,
    product: plan.product,
    combine: combinePipeline(ctx),
    group: plan.group,
    dispose() {
      for (const c of chunks) {
        if (c.ax) disposeChunk(c.ax);
        c.comb.ptr.dispose();
        c.comb.part.dispose();
      }
    },
  };
}

/** Record y = α·A·x + β·y: per chunk gather (optional), product, combine. No wait. */
export function encodeAxt(ctx: GpuContext, h: AxtDeviceMatrix, x: GpuBuf, y: GpuBuf, scale: SpmvScale = { alpha: 1, beta: 0 }): void {
  for (const c of h.chunks) {
    if (c.ax) {
      if (h.gatherPipe) encodeGather(ctx, h.gatherPipe, c.ax, x, h.cols);
      const u = new Uniforms();
      u.u[0] = c.count;
      u.u[1] = c.ax.s1 - c.ax.s0;
      u.u[2] = h.cols;
      const refs = [c.ax.ax, c.ax.xIdx, x];
      if (c.ax.aux) refs.push(c.ax.aux);
      refs.push(c.comb.part);
      ctx.recorder.dispatch(h.product, refs, u, c.groups);
    }
    encodeCombine(ctx, h.combine, c.comb, h.group, y, scale.alpha, scale.beta);
  }
}
