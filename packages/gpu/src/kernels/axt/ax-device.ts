/**
 * The ax[] array of AXC / AXT on the device (seed 004 §2.2–2.3), shared by the five kernels:
 * validated upload of slot ranges ("chunks") of ax[] / xIdx[] / an optional per-slot table, the
 * x gather pass, and the WGSL slot accessors the product kernels use.
 *
 * ax[] interleaves, per run of THW slots, THW matrix entries then their THW x values: slot s is
 * at 2·THW·⌊s/THW⌋ + s mod THW, its x value THW further. x changes between products, so each
 * apply first runs the gather `ax[pos(s) + THW] = xIdx[s] < cols ? x[xIdx[s]] : 0` (one
 * invocation per slot; padding has xIdx = −1 = 0xFFFFFFFF as u32 and gets 0), then the product
 * reads ax[] alone — the paper's path (`gather = 1`). With `gather = 0` the product reads
 * x[xIdx[s]] itself instead of the x slot: one dispatch and 4 bytes per slot of traffic less
 * (no x-slot write + read), but an indirect, uncoalesced load per slot, which is what AXC/AXT
 * were designed to avoid; on a GPU with a large L2 holding x the fused path often wins.
 * @module
 */
import { InvalidMatrixError, InvalidParameterError } from '@gpusparse/formats';
import type { GpuContext } from '../../device/context';
import type { ParamSpec } from '../types';
import type { PipelineEntry, PipelineSpec } from '../../device/pipelines';
import type { GpuBuf } from '../../memory/buffers';
import { Uniforms } from '../../memory/recorder';
import { uploadU32, writeData } from '../../memory/upload';
import { csrVectorsFit } from '../csr/csr-device';
import { entryArgs, preamble, signature, type WgslBinding } from '../wgsl/index';

/** Invocations per workgroup of the gather and combine passes. */
export const AX_WG = 256;

/** One uploaded slot range [s0, s1) of ax[] (s0, s1 multiples of the kernel's unit). */
export interface AxChunk {
  readonly s0: number;
  readonly s1: number;
  /** ax[2·s0 .. 2·s1) as float32. */
  readonly ax: GpuBuf;
  /** xIdx[s0 .. s1) as u32 (−1 → 0xFFFFFFFF). */
  readonly xIdx: GpuBuf;
  /** Optional per-slot table (hdr[] of the compacted variants) for [s0, s1). */
  readonly aux?: GpuBuf;
}

/** The product kernels' view of the matrix arrays (x_idx and x are only read with gather = 0). */
export const AX_BINDINGS: readonly WgslBinding[] = [
  { name: 'ax', type: 'array<f32>', access: 'r' },
  { name: 'x_idx', type: 'array<u32>', access: 'r' },
  { name: 'x', type: 'array<f32>', access: 'r' },
];

/**
 * WGSL slot accessors for half width `thw`: `ax_pos(s)`, `x_of(s, p)` (the x value of slot s
 * whose entry sits at ax[p]: the gathered x slot, or with `gather = 0` x[x_idx[s]] guarded by
 * `idx < u.cols`) and `prod(s)` = entry·x. Needs the bindings of {@link AX_BINDINGS} and a
 * uniform `cols`.
 */
export function axSlotWgsl(thw: number, gather: number): string {
  const xOf =
    gather === 0
      ? `fn x_of(s: u32, p: u32) -> f32 {
  let c = x_idx[s];
  if (c < u.cols) { return x[c]; }
  return 0.0;
}`
      : `fn x_of(s: u32, p: u32) -> f32 { return ax[p + ${thw}u]; }`;
  return `fn ax_pos(s: u32) -> u32 { return ${2 * thw}u * (s / ${thw}u) + (s % ${thw}u); }
${xOf}
fn prod(s: u32) -> f32 { let p = ax_pos(s); return ax[p] * x_of(s, p); }`;
}

/** Check the `gather` kernel parameter (1 = separate gather pass, 0 = fused x[xIdx[s]] reads). */
export function checkGather(id: string, gather: number): void {
  if (gather !== 0 && gather !== 1) throw new RangeError(`${id}: parameter gather expected 0 or 1, got ${gather}`);
}

const GATHER_BINDINGS: readonly WgslBinding[] = [
  { name: 'x_idx', type: 'array<u32>', access: 'r' },
  { name: 'x', type: 'array<f32>', access: 'r' },
  { name: 'ax', type: 'array<f32>', access: 'w' },
];

/** The gather pipeline for half width `thw` (one invocation per slot). */
export function gatherPipeline(ctx: GpuContext, thw: number): PipelineEntry {
  return ctx.pipelines.get(gatherSpec(thw));
}

/** The gather's pipeline spec for half width `thw` (for PipelineCache.prewarm: the tuner compiles it ahead). */
export function gatherSpec(thw: number): PipelineSpec {
  const text = `${preamble([['count', 'u32'], ['cols', 'u32']], GATHER_BINDINGS)}
@compute @workgroup_size(${AX_WG})
fn main(${entryArgs()}) {
  let s = wg_linear(wid, nwg) * ${AX_WG}u + lid;
  if (s >= u.count) { return; }
  let c = x_idx[s];
  var v = 0.0;
  if (c < u.cols) { v = x[c]; } // padding: 0xFFFFFFFF ≥ cols
  ax[${2 * thw}u * (s / ${thw}u) + (s % ${thw}u) + ${thw}u] = v;
}`;
  return { key: text, label: `ax-gather(thw=${thw})`, bindings: signature(GATHER_BINDINGS), wgsl: () => text };
}

/** Record the gather of x into the x slots of one chunk. Cost: one dispatch, 12 bytes per slot. */
export function encodeGather(ctx: GpuContext, pipe: PipelineEntry, c: AxChunk, x: GpuBuf, cols: number): void {
  const u = new Uniforms();
  u.u[0] = c.s1 - c.s0;
  u.u[1] = cols;
  ctx.recorder.dispatch(pipe, [c.xIdx, x, c.ax], u, Math.ceil((c.s1 - c.s0) / AX_WG));
}

/**
 * Check the xIdx of a layout: each entry −1 (padding) or a column in [0, cols). Cost O(slots).
 * @throws InvalidMatrixError naming the slot
 */
export function validateXIdx(xIdx: Int32Array, cols: number, where: string): void {
  for (let s = 0; s < xIdx.length; s++) {
    const c = xIdx[s]!;
    if (c < -1 || c >= cols) throw new InvalidMatrixError(where, `slot ${s}: expected a column in [0, ${cols}) or −1 (padding), got ${c}`);
  }
}

/**
 * The largest chunk, in slots: a whole number of `unit` slots whose ax[] (8 bytes per slot)
 * fits the binding cap. A chunk never holds less than one unit (a block / tile / brick is
 * processed by one workgroup), so a cap below one unit is raised to one unit: only test-sized
 * caps are ever that small. Cost O(1).
 * @example chunkCapSlots(4096, 1 << 27, 1024) // 1024: one AXTCH1 block of 1024 slots
 */
export function chunkCapSlots(capBytes: number | undefined, maxBinding: number, unit: number): number {
  const bytes = Math.min(capBytes ?? Number.POSITIVE_INFINITY, maxBinding);
  return Math.max(unit, Math.floor(bytes / 8 / unit) * unit);
}

/**
 * Upload slots [s0, s1) of a layout: ax (float32), xIdx and the optional per-slot table.
 * Cost: O(s1 − s0) host conversion and 8–16 bytes per slot of transfer.
 */
export function uploadAxChunk(
  ctx: GpuContext,
  m: { readonly ax: Float64Array; readonly xIdx: Int32Array },
  s0: number,
  s1: number,
  aux: Uint32Array | undefined,
  label: string,
): AxChunk {
  const ax = ctx.buffers.acquire(Math.max(1, s1 - s0) * 8, undefined, `${label}-ax`);
  writeData(ctx, ax, Float32Array.from(m.ax.subarray(2 * s0, 2 * s1)));
  const xIdx = uploadU32(ctx, m.xIdx.subarray(s0, s1), `${label}-xidx`);
  const auxBuf = aux ? uploadU32(ctx, aux.subarray(s0, s1), `${label}-hdr`) : undefined;
  return { s0, s1, ax, xIdx, aux: auxBuf };
}

/** Bytes of a chunk's buffers. */
export const chunkBytes = (c: AxChunk): number => c.ax.bytes + c.xIdx.bytes + (c.aux?.bytes ?? 0);

/** Return a chunk's buffers to the pool. */
export function disposeChunk(c: AxChunk): void {
  for (const b of [c.ax, c.xIdx, c.aux]) b?.dispose();
}

/** supports() common to the five kernels: x and y each fit one binding. */
export const axVectorsFit = (m: { rows: number; cols: number }, maxBinding: number): true | string => csrVectorsFit(m, maxBinding);

/**
 * The matrix is authoritative for its layout parameters: throw when a kernel parameter that
 * changes the shader (THW, TH, BS) disagrees with the uploaded matrix. Cost O(1).
 * @throws InvalidParameterError naming the parameter, the kernel and both values
 */
export function matchLayoutParam(id: string, name: string, kernelValue: number, matrixValue: number | undefined): void {
  if (kernelValue !== matrixValue) {
    throw new InvalidParameterError(name, `the matrix's ${name} = ${matrixValue} for kernel ${id} (convert with kernel.formatParams(params))`, kernelValue);
  }
}

/** Parameter specs shared by the five kernels (first value = default). */
export const AX_PARAMS = {
  /** THW: `what` says what it counts in this kernel. */
  thw: (what: string): ParamSpec => ({ description: `tile half width THW = HBRs (${what}; power of two ≤ 64)`, values: [32, 8] }),
  gather: { description: '1: gather x into ax[] first (paper); 0: read x[xIdx] in the product', values: [1, 0] } as ParamSpec,
  workgroupSize: { description: 'invocations per workgroup', values: [256] } as ParamSpec,
};

/** The product pipeline's spec for shader `text` (cached by the context under the text). */
export function productSpec(text: string, bindings: readonly WgslBinding[], label: string): PipelineSpec {
  return { key: text, label, bindings: signature(bindings), wgsl: () => text };
}
