/**
 * CSR-VI with column windows on the device (`@gpusparse/formats` csr-vi): per row block, the
 * row words [word start, segment start, raw start] × (rows + 1), the 32-bit word entries, the
 * segments as (end, window base) pairs, the raw entries as (column, float32 bits) pairs; one
 * float32 value table for every block. Row blocks split where any array would pass one binding;
 * a row is never cut (a row whose own words pass a binding is refused).
 * @module
 */
import { type CsrViMatrix, ResourceLimitError, validateCsrVi } from '@gpusparse/formats';
import type { GpuContext } from '../../device/context';
import type { PipelineEntry } from '../../device/pipelines';
import type { GpuBuf } from '../../memory/buffers';
import { checkFloat32Values } from '../../memory/float32-range';
import { uploadF32, writeData } from '../../memory/upload';
import { blockUniforms } from '../csr/csr-device';
import type { DeviceMatrix, SpmvScale, UploadOptions } from '../types';
import type { WgslBinding } from '../wgsl/index';

/** One row block of a CSR-VI matrix on the device. */
export interface ViDeviceBlock {
  readonly rowStart: number;
  readonly rows: number;
  readonly rowWords: GpuBuf;
  readonly packed: GpuBuf;
  readonly segs: GpuBuf;
  readonly raw: GpuBuf;
  readonly groups: number;
}

/** A CSR-VI matrix on the device. */
export interface ViDeviceMatrix extends DeviceMatrix {
  readonly viBlocks: readonly ViDeviceBlock[];
  readonly table: GpuBuf;
  readonly valueBits: number;
  readonly pipeline: PipelineEntry;
}

/** The storage bindings of the csr-vi kernel, in order. */
export const VI_BINDINGS: readonly WgslBinding[] = (
  [
    ['rowp', 'array<u32>'],
    ['packed', 'array<u32>'],
    ['segs', 'array<vec2<u32>>'],
    ['raw', 'array<vec2<u32>>'],
    ['vtab', 'array<f32>'],
    ['x', 'array<f32>'],
    ['y', 'array<f32>'],
  ] as const
).map(([name, type]) => ({ name, type, access: name === 'y' ? 'w' : 'r' }));

/** Row ranges [r0, r1) whose arrays each fit `cap` bytes. O(rows). */
export function planViBlocks(m: CsrViMatrix, cap: number): [number, number][] {
  const out: [number, number][] = [];
  const bytes = (r0: number, r1: number) =>
    Math.max(12 * (r1 - r0 + 1), 4 * (m.packPtr[r1]! - m.packPtr[r0]!), 8 * (m.segPtr[r1]! - m.segPtr[r0]!), 8 * (m.rawPtr[r1]! - m.rawPtr[r0]!));
  let r0 = 0;
  for (let r = 0; r < m.rows; r++) {
    if (bytes(r, r + 1) > cap) throw new ResourceLimitError(`csr-vi upload: row ${r}`, bytes(r, r + 1), cap, 'a row of csr-vi is never cut over bindings: use csr-long or csr-vector, which split long rows');
    if (bytes(r0, r + 1) > cap) {
      out.push([r0, r]);
      r0 = r;
    }
  }
  if (m.rows > 0) out.push([r0, m.rows]);
  return out;
}

/** Host arrays of rows [r0, r1): row words, segments (block-local ends), raw pairs. */
export function blockArrays(m: CsrViMatrix, r0: number, r1: number): { rowWords: Uint32Array; segs: Uint32Array; raw: Uint32Array } {
  const p0 = m.packPtr[r0]!;
  const s0 = m.segPtr[r0]!;
  const q0 = m.rawPtr[r0]!;
  const rowWords = new Uint32Array(3 * (r1 - r0 + 1));
  for (let r = r0; r <= r1; r++) {
    const i = 3 * (r - r0);
    rowWords[i] = m.packPtr[r]! - p0;
    rowWords[i + 1] = m.segPtr[r]! - s0;
    rowWords[i + 2] = m.rawPtr[r]! - q0;
  }
  const ns = m.segPtr[r1]! - s0;
  const segs = new Uint32Array(2 * ns);
  for (let s = 0; s < ns; s++) {
    segs[2 * s] = m.segEnd[s0 + s]! - p0;
    segs[2 * s + 1] = m.segBase[s0 + s]!;
  }
  const nr = m.rawPtr[r1]! - q0;
  const raw = new Uint32Array(2 * nr);
  const f = new Float32Array(1);
  const bits = new Uint32Array(f.buffer);
  for (let k = 0; k < nr; k++) {
    raw[2 * k] = m.rawCols[q0 + k]!;
    f[0] = m.rawValues[q0 + k]!;
    raw[2 * k + 1] = bits[0]!;
  }
  return { rowWords, segs, raw };
}

/** The row holding entry k of a stream whose row pointers are `ptr` (binary search). */
function rowOfEntry(ptr: Int32Array, k: number): number {
  let [lo, hi] = [0, ptr.length - 2];
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ptr[mid]! <= k) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Where table value t is first used: its row and column (1-based), found by a scan of the words. */
function tableUse(m: CsrViMatrix, t: number): string {
  const sh = 32 - m.valueBits;
  const at = m.packed.findIndex((w) => w >>> sh === t);
  if (at < 0) return `value-table entry ${t} (unused)`;
  const r = rowOfEntry(m.packPtr, at);
  let s = m.segPtr[r]!;
  while (m.segEnd[s]! <= at) s++;
  return `value-table entry ${t}, A(row ${r + 1}, column ${m.segBase[s]! + (m.packed[at]! & (2 ** sh - 1)) + 1})`;
}

/**
 * Refuse a table or raw value past float32's range, or a matrix whose every value underflows it,
 * as gpuOperatorFromCsr refuses a CSR matrix (s14-harden-e: the upload rounded 1e39 to Infinity
 * silently). O(table + raw entries).
 */
export function checkViRange(m: CsrViMatrix, where: string): void {
  checkFloat32Values(where, [m.table, m.rawValues], (i, k) => (i === 0 ? tableUse(m, k) : `raw entry ${k}, A(row ${rowOfEntry(m.rawPtr, k) + 1}, column ${m.rawCols[k]! + 1})`));
}

/** A buffer holding `data` (at least 4 bytes: a block may have no segments or raw entries). */
export function bufferOf(ctx: GpuContext, data: Uint32Array, label: string): GpuBuf {
  const b = ctx.buffers.acquire(Math.max(4, data.byteLength), undefined, label);
  try {
    writeData(ctx, b, data);
  } catch (e) {
    b.dispose();
    throw e;
  }
  return b;
}

/**
 * Validate `m` ({@link validateCsrVi}) and upload it in row blocks of at most one binding each.
 * Cost: O(rows + nnz) host work, the transfer of ≈ 4 bytes per word entry, 8 per raw entry and
 * segment, 12 per row, 4 per table value.
 * @throws InvalidMatrixError from the validation or for a value float32 cannot hold; ResourceLimitError for a row past one binding
 */
export function uploadVi(ctx: GpuContext, m: CsrViMatrix, pipeline: PipelineEntry, rowsPerGroup: number, opts: UploadOptions = {}): ViDeviceMatrix {
  validateCsrVi(m, 'csr-vi upload');
  checkViRange(m, 'csr-vi upload');
  const cap = Math.floor(Math.min(opts.maxBindingBytes ?? Number.POSITIVE_INFINITY, ctx.limits.maxStorageBufferBindingSize) / 4) * 4;
  const plan = planViBlocks(m, cap);
  const table = uploadF32(ctx, m.table.length > 0 ? m.table : new Float64Array(1), 'csr-vi-table');
  const blocks: ViDeviceBlock[] = [];
  const release = () => {
    table.dispose();
    for (const b of blocks) for (const buf of [b.rowWords, b.packed, b.segs, b.raw]) buf.dispose();
  };
  let deviceBytes = table.bytes;
  try {
    for (const [r0, r1] of plan) {
      const h = blockArrays(m, r0, r1);
      const bufs: GpuBuf[] = [];
      try {
        for (const [data, label] of [
          [h.rowWords, 'rowp'],
          [m.packed.subarray(m.packPtr[r0]!, m.packPtr[r1]!), 'packed'],
          [h.segs, 'segs'],
          [h.raw, 'raw'],
        ] as const)
          bufs.push(bufferOf(ctx, data, `csr-vi-${label}`));
      } catch (e) {
        for (const b of bufs) b.dispose();
        throw e;
      }
      const [rowWords, packed, segs, raw] = bufs as [GpuBuf, GpuBuf, GpuBuf, GpuBuf];
      blocks.push({ rowStart: r0, rows: r1 - r0, rowWords, packed, segs, raw, groups: Math.ceil((r1 - r0) / rowsPerGroup) });
      deviceBytes += rowWords.bytes + packed.bytes + segs.bytes + raw.bytes;
    }
  } catch (e) {
    release();
    throw e;
  }
  return { kernelId: 'csr-vi', rows: m.rows, cols: m.cols, nnz: m.nnz, deviceBytes, blocks: blocks.length, viBlocks: blocks, table, valueBits: m.valueBits, pipeline, dispose: release };
}

/** Record y = alpha·A·x + beta·y, one dispatch per row block (the window shift 32 − v in the uniforms' count). */
export function encodeVi(ctx: GpuContext, h: ViDeviceMatrix, x: GpuBuf, y: GpuBuf, scale: SpmvScale = { alpha: 1, beta: 0 }): void {
  for (const b of h.viBlocks) {
    const u = blockUniforms({ rows: b.rows, rowStart: b.rowStart, cont: false }, scale, 32 - h.valueBits);
    ctx.recorder.dispatch(h.pipeline, [b.rowWords, b.packed, b.segs, b.raw, h.table, x, y], u, b.groups);
  }
}
