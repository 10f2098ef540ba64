/**
 * CSR with every row padded to a whole number of quads (4 entries), so that a kernel reads
 * values as vec4<f32> and column indices as vec4<u32> (or, with 16-bit columns, as
 * vec2<u32> holding four offsets from a per-row base; with 16-bit value indices, the values
 * as vec2<u32> of four indices into the matrix's table of distinct values) from aligned addresses. The
 * padding of a row's last quad repeats a column of the row with value 0 and is masked out
 * in the kernel (the pad count travels in the top two bits of the quad pointer that ends the
 * row), so 0·Inf never enters a sum. Split over bindings like CSR: row blocks of at most one
 * binding of quads; a row longer than that is cut into quad-aligned pieces whose later
 * pieces accumulate into y in later, ordered dispatches (no atomics).
 * @module
 */
import { type CsrMatrix, csrNnz, InvalidParameterError, ResourceLimitError } from '@gpusparse/formats';
import type { GpuContext, GpuLimits } from '../../device/context';
import type { PipelineEntry, PipelineSpec } from '../../device/pipelines';
import type { GpuBuf } from '../../memory/buffers';
import { uploadF32, uploadU32, validateCsrIndices, writeData } from '../../memory/upload';
import { blockUniforms, type CsrBlockPlan, csrVectorsFit, splitCsrPlan } from '../csr/csr-device';
import { signature } from '../wgsl/index';
import { holdQuadsOnDevice, quadBuildApplies } from './quad-build';
import type { DeviceMatrix, SpmvScale, UploadOptions } from '../types';

/** Mask of the quad index in a quad pointer (the top two bits hold the ending row's pad count). */
export const QUAD_MASK = 0x3fffffff;

/**
 * Quad pointers of `a`: q[r] = Σ_{i<r} ⌈len_i / 4⌉. O(rows).
 * @throws ResourceLimitError past 2^31 − 1 quads (8.6·10^9 entries: more than any device holds)
 */
export function quadPointers(a: CsrMatrix): Int32Array {
  const q = new Int32Array(a.rows + 1);
  let t = 0;
  for (let r = 0; r < a.rows; r++) {
    t += Math.ceil((a.rowPtr[r + 1]! - a.rowPtr[r]!) / 4);
    if (t > 0x7fffffff) throw new ResourceLimitError('quad-padded CSR', 16 * t, 16 * 0x7fffffff, 'use csr-vector or csr-scalar, which read the CSR arrays unpadded');
    q[r + 1] = t;
  }
  return q;
}

/**
 * Whether every row of `a` spans fewer than 2^16 columns (max − min), the condition for
 * 16-bit column offsets from a per-row base. O(nnz).
 */
export function rowSpansFit16(a: CsrMatrix): true | string {
  for (let r = 0; r < a.rows; r++) {
    let lo = Number.POSITIVE_INFINITY;
    let hi = -1;
    for (let k = a.rowPtr[r]!; k < a.rowPtr[r + 1]!; k++) {
      const c = a.colIdx[k]!;
      if (c < lo) lo = c;
      if (c > hi) hi = c;
    }
    if (hi - lo >= 65536) return `row ${r} spans columns ${lo}..${hi} (≥ 65 536): 16-bit column offsets need a span below 2^16`;
  }
  return true;
}

/**
 * Whether `a` has at most 65 536 distinct float32 values (by bit pattern), the condition of
 * 16-bit value indices. O(nnz) time, O(distinct) memory; stops at the 65 537th.
 */
export function distinctValuesFit16(a: CsrMatrix): true | string {
  const f = new Float32Array(1);
  const bits = new Uint32Array(f.buffer);
  const seen = new Set<number>();
  for (let k = 0; k < a.values.length; k++) {
    f[0] = a.values[k]!;
    seen.add(bits[0]!);
    if (seen.size > 65536) return `more than 65 536 distinct float32 values (at entry ${k}): 16-bit value indices do not fit`;
  }
  return true;
}

/**
 * The distinct float32 values of `a` (by bit pattern: −0 and NaN payloads kept) and each
 * entry's index into them, or why they do not fit 16-bit indices (more than 65 536 distinct).
 * CSR-VI's value indexing (Kourtis, Goumas and Koziris, 2008): a CI Hamiltonian repeats a few
 * thousand integral combinations over 10^7–10^9 entries. O(nnz).
 */
export function valueTable(a: CsrMatrix): { table: Float32Array; index: Uint16Array } | string {
  const bits = new Uint32Array(Float32Array.from(a.values).buffer);
  const seen = new Map<number, number>();
  const index = new Uint16Array(bits.length);
  for (let k = 0; k < bits.length; k++) {
    let i = seen.get(bits[k]!);
    if (i === undefined) {
      if (seen.size === 65536) return `more than 65 536 distinct float32 values (at entry ${k}): 16-bit value indices do not fit`;
      seen.set(bits[k]!, (i = seen.size));
    }
    index[k] = i;
  }
  const table = new Float32Array(new Uint32Array([...seen.keys()]).buffer);
  return { table, index };
}

/** One uploaded block of a quad matrix. */
export interface QuadDeviceBlock extends CsrBlockPlan {
  readonly rowQuad: GpuBuf;
  readonly values: GpuBuf;
  readonly cols: GpuBuf;
  /** Per-row smallest column (16-bit mode only). */
  readonly base?: GpuBuf;
  readonly groups: number;
}

/** A quad-padded CSR matrix on the device. */
export interface QuadDeviceMatrix extends DeviceMatrix {
  readonly quadBlocks: readonly QuadDeviceBlock[];
  readonly pipeline: PipelineEntry;
  /** 0: f32 values, u32 columns; 1: f32 values, 16-bit column offsets; 2: 16-bit value indices and column offsets. */
  readonly pack: number;
  /** The distinct values (pack 2). */
  readonly table?: GpuBuf;
  /** True when the quads were built on the device from shared CSR arrays (`quad-build.ts`), not packed on the host. */
  readonly builtOnDevice?: boolean;
  /** True when those quads were already on the device, built for another quad kernel of the same shared upload (nothing built for this one). */
  readonly sharedQuads?: boolean;
}

/**
 * The row position of the entry stored at padded position `j` of a row of `len` entries laid out
 * for `lanes` invocations per row (`lanes` = 0: the identity). In each full block of 4·lanes
 * entries, lane l's quad holds the block's entries l, l + lanes, l + 2·lanes, l + 3·lanes, so that
 * one gather instruction of the lane group reads x at consecutive entries of the row (sorted
 * columns: few cache lines) instead of entries 4 apart; the last partial block keeps CSR order.
 * A permutation of 0 … len − 1 (pads, j ≥ len, stay in place). O(1).
 * @example interleavedSource(1, 64, 8) // 8: lane 0's quad holds entries 0, 8, 16, 24
 */
export function interleavedSource(j: number, len: number, lanes: number): number {
  const block = 4 * lanes;
  if (lanes <= 1 || j >= len - (len % block)) return j;
  const w = j % block;
  return j - w + (w % 4) * lanes + (w >> 2);
}

/** Host arrays of one block: quad pointers with pad bits, values (or value indices), packed columns, bases. */
function packBlock(a: CsrMatrix, q: Int32Array, b: CsrBlockPlan, pack: number, vidx?: Uint16Array, lanes = 0): { rowQuad: Uint32Array; vals: Float32Array | Uint32Array; cols: Uint32Array; base?: Uint32Array } {
  const nq = b.k1 - b.k0;
  const rowQuad = new Uint32Array(b.rows + 1);
  const vals = vidx ? new Uint32Array(2 * nq) : new Float32Array(4 * nq);
  const cols = new Uint32Array(pack >= 1 ? 2 * nq : 4 * nq);
  const base = pack >= 1 ? new Uint32Array(b.rows) : undefined;
  // 16-bit halves: entry `local` goes to the low (even) or high (odd) half of word local >> 1
  const put16 = (arr: Uint32Array, local: number, v: number) => {
    arr[local >> 1] = local & 1 ? (arr[local >> 1]! | (v << 16)) >>> 0 : v;
  };
  for (let i = 0; i < b.rows; i++) {
    const r = b.rowStart + i;
    const s = a.rowPtr[r]!;
    const len = a.rowPtr[r + 1]! - s;
    const q0 = Math.max(q[r]!, b.k0);
    const q1 = Math.min(q[r + 1]!, b.k1);
    const ends = q[r + 1]! <= b.k1;
    rowQuad[i + 1] = (q1 - b.k0) | (ends && len > 0 ? ((4 - (len % 4)) % 4) << 30 : 0);
    let lo = 0;
    if (base) {
      lo = len > 0 ? a.colIdx[s]! : 0;
      for (let k = s; k < s + len; k++) lo = Math.min(lo, a.colIdx[k]!);
      base[i] = lo;
    }
    const pad = len > 0 ? a.colIdx[s + len - 1]! : 0; // a column of the row: the masked read stays in range
    for (let e = 4 * q0; e < 4 * q1; e++) {
      const j = interleavedSource(e - 4 * q[r]!, len, lanes); // the row entry stored at this padded position
      const local = e - 4 * b.k0;
      if (vidx) put16(vals as Uint32Array, local, j < len ? vidx[s + j]! : 0);
      else vals[local] = j < len ? a.values[s + j]! : 0;
      const c = j < len ? a.colIdx[s + j]! : pad;
      if (base) put16(cols, local, c - lo);
      else cols[local] = c;
    }
  }
  rowQuad[0] = 0;
  return { rowQuad, vals, cols, base };
}

/** Workgroups of one block: rows / rows-per-workgroup. */
export type QuadGroups = (rows: number) => number;

/**
 * Validate `a`, pad its rows to quads, split over bindings and upload. Cost O(rows + nnz) host
 * work (O(nnz) more for the 16-bit check) plus the transfer of ≈ 8 (or 6) bytes per padded
 * entry + 4 (or 8) per row.
 * @throws InvalidMatrixError naming the first bad row
 * @throws InvalidParameterError when 16-bit columns are asked for a row spanning 2^16 columns or more
 */
export function uploadQuad(ctx: GpuContext, kernelId: string, a: CsrMatrix, pack: number, pipeline: PipelineEntry, groups: QuadGroups, opts: UploadOptions = {}, interleaveLanes = 0): QuadDeviceMatrix {
  if (pack === 0 && interleaveLanes === 0) {
    const built = deviceQuads(ctx, kernelId, a, pipeline, groups, opts);
    if (built) return built;
  }
  validateCsrIndices(a, kernelId);
  if (pack >= 1) {
    const fit = rowSpansFit16(a);
    if (fit !== true) throw new InvalidParameterError(`${kernelId} upload pack ${pack}`, 'rows spanning fewer than 65 536 columns', fit);
  }
  const vt = pack === 2 ? valueTable(a) : undefined;
  if (typeof vt === 'string') throw new InvalidParameterError(`${kernelId} upload pack 2`, 'at most 65 536 distinct values', vt);
  const q = quadPointers(a);
  const capElems = Math.floor(Math.min(opts.maxBindingBytes ?? Number.POSITIVE_INFINITY, ctx.limits.maxStorageBufferBindingSize) / 4);
  const capQuads = Math.max(1, Math.min(QUAD_MASK, Math.floor(capElems / 4)));
  // the planner reads only rows and rowPtr: quad pointers plan quad-aligned blocks and pieces
  const plan = splitCsrPlan({ ...a, rowPtr: q }, capQuads, capElems - 1);
  const blocks: QuadDeviceBlock[] = [];
  const table = vt && uploadF32(ctx, vt.table, `${kernelId}-values`);
  let deviceBytes = table?.bytes ?? 0;
  const release = () => {
    table?.dispose();
    for (const p of blocks) for (const buf of [p.rowQuad, p.values, p.cols, p.base]) buf?.dispose();
  };
  try {
    for (const b of plan) {
      const h = packBlock(a, q, b, pack, vt?.index, interleaveLanes);
      const values = ctx.buffers.acquire(h.vals.length * 4, undefined, `${kernelId}-values`);
      writeData(ctx, values, h.vals);
      const blk: QuadDeviceBlock = { ...b, rowQuad: uploadU32(ctx, h.rowQuad, `${kernelId}-rowquad`), values, cols: uploadU32(ctx, h.cols, `${kernelId}-cols`), base: h.base && uploadU32(ctx, h.base, `${kernelId}-base`), groups: groups(b.rows) };
      blocks.push(blk);
      deviceBytes += blk.rowQuad.bytes + values.bytes + blk.cols.bytes + (blk.base?.bytes ?? 0);
    }
  } catch (e) {
    release();
    throw e;
  }
  return { kernelId, rows: a.rows, cols: a.cols, nnz: csrNnz(a), deviceBytes, blocks: blocks.length, quadBlocks: blocks, pipeline, pack, table, dispose: release };
}

/**
 * The pack-0 quads built on the device from `opts.sharedCsr` (`quad-build.ts`: its arrays were
 * validated at their upload), or undefined when that does not apply (no shared arrays, or
 * more than one binding block either way). O(rows) host work.
 */
function deviceQuads(ctx: GpuContext, kernelId: string, a: CsrMatrix, pipeline: PipelineEntry, groups: QuadGroups, opts: UploadOptions): QuadDeviceMatrix | undefined {
  const shared = opts.sharedCsr;
  if (!shared?.isSourceOf(a)) return undefined;
  const q = quadPointers(a);
  const capElems = Math.floor(Math.min(opts.maxBindingBytes ?? Number.POSITIVE_INFINITY, ctx.limits.maxStorageBufferBindingSize) / 4);
  const plan = splitCsrPlan({ ...a, rowPtr: q }, Math.max(1, Math.min(QUAD_MASK, Math.floor(capElems / 4))), capElems - 1);
  if (!quadBuildApplies(shared, a, plan)) return undefined;
  // one layout for every quad kernel of this upload (csr-vec4 and csr-long, any lanes)
  const hold = holdQuadsOnDevice(ctx, shared, a, q);
  const b = hold.quads;
  const blk: QuadDeviceBlock = { ...plan[0]!, ...b, groups: groups(plan[0]!.rows) };
  const deviceBytes = b.rowQuad.bytes + b.values.bytes + b.cols.bytes;
  return { kernelId, rows: a.rows, cols: a.cols, nnz: csrNnz(a), deviceBytes, blocks: 1, quadBlocks: [blk], pipeline, pack: 0, builtOnDevice: true, sharedQuads: !hold.fresh, dispose: () => hold.release() };
}

/** Record y = alpha·A·x + beta·y block by block (in order: continued rows accumulate). */
export function encodeQuad(ctx: GpuContext, h: QuadDeviceMatrix, x: GpuBuf, y: GpuBuf, scale: SpmvScale = { alpha: 1, beta: 0 }): void {
  for (const p of h.quadBlocks) {
    const refs = [p.rowQuad, p.values, p.cols, x, y];
    if (p.base) refs.push(p.base);
    if (h.table) refs.push(h.table);
    ctx.recorder.dispatch(h.pipeline, refs, blockUniforms(p, scale, 0), p.groups);
  }
}

/** The storage bindings of the quad kernels for `pack` 0, 1 or 2 (see {@link QuadDeviceMatrix.pack}). */
export function quadBindings(pack: number) {
  return [
    { name: 'rowq', type: 'array<u32>', access: 'r' as const },
    { name: 'vals', type: pack === 2 ? 'array<vec2<u32>>' : 'array<vec4<f32>>', access: 'r' as const },
    { name: 'cols', type: pack >= 1 ? 'array<vec2<u32>>' : 'array<vec4<u32>>', access: 'r' as const },
    { name: 'x', type: 'array<f32>', access: 'r' as const },
    { name: 'y', type: 'array<f32>', access: 'w' as const },
    ...(pack >= 1 ? [{ name: 'rbase', type: 'array<u32>', access: 'r' as const }] : []),
    ...(pack === 2 ? [{ name: 'vtab', type: 'array<f32>', access: 'r' as const }] : []),
  ];
}

/**
 * A quad kernel's precheck: x, y and the CSR vectors fit a binding; with `pack` ≥ 1 every row
 * spans < 2^16 columns; with `pack` 2 at most 65 536 distinct values. O(nnz) for pack ≥ 1.
 */
export function quadPrecheck(a: CsrMatrix, limits: GpuLimits, pack: number): true | string {
  const fit = csrVectorsFit(a, limits.maxStorageBufferBindingSize);
  if (fit !== true || pack === 0) return fit;
  const span = rowSpansFit16(a);
  return span !== true || pack !== 2 ? span : distinctValuesFit16(a);
}

/** The pipeline of a quad kernel's shader `text` (what {@link uploadQuadKernel} compiles; for `pipelineSpec`, so that the tuner compiles it ahead of time). */
export const quadPipelineSpec = (label: string, text: string, pack: number): PipelineSpec => ({ key: text, label, bindings: signature(quadBindings(pack)), wgsl: () => text });

/**
 * Compile (or reuse) the pipeline of shader `text` and upload `a` quad-padded for a kernel that
 * gives each row `lanes` of a workgroup's `workgroupSize` invocations (with `interleave` = 1 the
 * rows' full blocks laid out for those lanes: {@link interleavedSource}). See {@link uploadQuad}.
 */
export function uploadQuadKernel(ctx: GpuContext, kernelId: string, label: string, text: string, a: CsrMatrix, p: { pack: number; lanes: number; workgroupSize: number; interleave?: number }, opts?: UploadOptions): QuadDeviceMatrix {
  const pipe = ctx.pipelines.get(quadPipelineSpec(label, text, p.pack));
  const rowsPerGroup = p.workgroupSize / p.lanes;
  return uploadQuad(ctx, kernelId, a, p.pack, pipe, (rows) => Math.ceil(rows / rowsPerGroup), opts, p.interleave ? p.lanes : 0);
}
