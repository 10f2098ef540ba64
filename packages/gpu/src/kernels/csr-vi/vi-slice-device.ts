/**
 * CSR-VI with column windows in a sliced layout (csr-vi-slice): rows in slices of S, each slice's
 * words stored slot-major (slot k of its S rows together: word k of row i at base + k·S + i, rows
 * shorter than the slice's longest padded with 0) and its raw (column, float32 bits) pairs likewise,
 * so that S invocations on S consecutive rows read one contiguous run per slot, and their x gathers
 * at one slot fall on the columns S neighbouring rows share (a CI Hamiltonian's alpha-major rows:
 * 0.25 gather lines per entry at slot k of 32 rows against 0.6 for 32 entries of one row on the N2
 * FCI, bench/RESULTS.md session 12). The row words and segments are csr-vi's (`vi-device.ts`).
 * @module
 */
import { type CsrViMatrix, ResourceLimitError, validateCsrVi } from '@gpusparse/formats';
import type { GpuContext } from '../../device/context';
import type { PipelineEntry } from '../../device/pipelines';
import type { GpuBuf } from '../../memory/buffers';
import { uploadF32 } from '../../memory/upload';
import { blockUniforms } from '../csr/csr-device';
import type { SpmvScale, UploadOptions } from '../types';
import type { WgslBinding } from '../wgsl/index';
import { blockArrays, bufferOf, checkViRange, VI_BINDINGS, type ViDeviceBlock, type ViDeviceMatrix } from './vi-device';

/** The bindings of csr-vi-slice: csr-vi's, then the slices' (word base, raw base) pairs. */
export const VI_SLICE_BINDINGS: readonly WgslBinding[] = [...VI_BINDINGS, { name: 'sl', type: 'array<vec2<u32>>', access: 'r' }];

/** One row block of the sliced layout. */
export interface ViSliceBlock extends ViDeviceBlock {
  readonly slices: GpuBuf;
}

/** A CSR-VI matrix on the device in the sliced layout. */
export interface ViSliceMatrix extends ViDeviceMatrix {
  readonly sliceBlocks: readonly ViSliceBlock[];
}

/** Longest word and raw runs of the rows of slice [r0, r1). */
function widths(m: CsrViMatrix, r0: number, r1: number): [number, number] {
  let wn = 0;
  let wr = 0;
  for (let r = r0; r < r1; r++) {
    wn = Math.max(wn, m.packPtr[r + 1]! - m.packPtr[r]!);
    wr = Math.max(wr, m.rawPtr[r + 1]! - m.rawPtr[r]!);
  }
  return [wn, wr];
}

/** Row ranges of whole slices whose arrays each fit `cap` bytes. O(rows). */
function planSliceBlocks(m: CsrViMatrix, S: number, cap: number): [number, number][] {
  const out: [number, number][] = [];
  let r0 = 0;
  let words = 0;
  let raw = 0;
  for (let s0 = 0; s0 < m.rows; s0 += S) {
    const s1 = Math.min(m.rows, s0 + S);
    const [wn, wr] = widths(m, s0, s1);
    const need = (a: number, b: number, w: number, q: number) => Math.max(12 * (b - a + 1), 4 * w, 8 * (m.segPtr[b]! - m.segPtr[a]!), 8 * q);
    if (need(s0, s1, S * wn, S * wr) > cap) throw new ResourceLimitError(`csr-vi-slice upload: slice of rows ${s0}…${s1 - 1}`, need(s0, s1, S * wn, S * wr), cap, 'use csr-vi (rows laid out one after another) or a smaller sliceHeight');
    if (need(r0, s1, words + S * wn, raw + S * wr) > cap) {
      out.push([r0, s0]);
      [r0, words, raw] = [s0, 0, 0];
    }
    words += S * wn;
    raw += S * wr;
  }
  if (m.rows > 0) out.push([r0, m.rows]);
  return out;
}

/** The slot-major words, raw pairs and slice bases of rows [r0, r1) (r0 a slice start). */
function slicedArrays(m: CsrViMatrix, r0: number, r1: number, S: number): { words: Uint32Array; raw: Uint32Array; slices: Uint32Array } {
  const ns = Math.ceil((r1 - r0) / S);
  const slices = new Uint32Array(2 * ns);
  let nw = 0;
  let nq = 0;
  for (let s = 0; s < ns; s++) {
    const [wn, wr] = widths(m, r0 + s * S, Math.min(r1, r0 + (s + 1) * S));
    slices[2 * s] = nw;
    slices[2 * s + 1] = nq;
    nw += S * wn;
    nq += S * wr;
  }
  const words = new Uint32Array(nw);
  const raw = new Uint32Array(2 * nq);
  const f = new Float32Array(1);
  const bits = new Uint32Array(f.buffer);
  for (let r = r0; r < r1; r++) {
    const s = Math.floor((r - r0) / S);
    const i = (r - r0) % S;
    for (let k = 0, p = m.packPtr[r]!; p < m.packPtr[r + 1]!; k++, p++) words[slices[2 * s]! + k * S + i] = m.packed[p]!;
    for (let k = 0, q = m.rawPtr[r]!; q < m.rawPtr[r + 1]!; k++, q++) {
      const at = 2 * (slices[2 * s + 1]! + k * S + i);
      raw[at] = m.rawCols[q]!;
      f[0] = m.rawValues[q]!;
      raw[at + 1] = bits[0]!;
    }
  }
  return { words, raw, slices };
}

/**
 * Validate `m` and upload it sliced (slices of `sliceHeight` rows, blocks of whole slices within one
 * binding each). Cost: O(rows + nnz) host work; the transfer of 4 bytes per padded word slot, 8 per
 * padded raw slot and per segment, 12 per row, 8 per slice, 4 per table value.
 * @throws InvalidMatrixError from the validation or for a value float32 cannot hold; ResourceLimitError for a slice past one binding
 */
export function uploadViSliced(ctx: GpuContext, m: CsrViMatrix, pipeline: PipelineEntry, sliceHeight: number, workgroupSize: number, opts: UploadOptions = {}): ViSliceMatrix {
  validateCsrVi(m, 'csr-vi-slice upload');
  checkViRange(m, 'csr-vi-slice upload');
  const cap = Math.floor(Math.min(opts.maxBindingBytes ?? Number.POSITIVE_INFINITY, ctx.limits.maxStorageBufferBindingSize) / 4) * 4;
  const plan = planSliceBlocks(m, sliceHeight, cap);
  const table = uploadF32(ctx, m.table.length > 0 ? m.table : new Float64Array(1), 'csr-vi-table');
  const blocks: ViSliceBlock[] = [];
  const release = () => {
    table.dispose();
    for (const b of blocks) for (const buf of [b.rowWords, b.packed, b.segs, b.raw, b.slices]) buf.dispose();
  };
  let deviceBytes = table.bytes;
  try {
    for (const [r0, r1] of plan) {
      const h = blockArrays(m, r0, r1);
      const s = slicedArrays(m, r0, r1, sliceHeight);
      const bufs: GpuBuf[] = [];
      try {
        for (const [data, label] of [
          [h.rowWords, 'rowp'],
          [s.words, 'packed'],
          [h.segs, 'segs'],
          [s.raw, 'raw'],
          [s.slices, 'slices'],
        ] as const)
          bufs.push(bufferOf(ctx, data, `csr-vi-slice-${label}`));
      } catch (e) {
        for (const b of bufs) b.dispose();
        throw e;
      }
      const [rowWords, packed, segs, raw, slices] = bufs as [GpuBuf, GpuBuf, GpuBuf, GpuBuf, GpuBuf];
      blocks.push({ rowStart: r0, rows: r1 - r0, rowWords, packed, segs, raw, slices, groups: Math.ceil((r1 - r0) / workgroupSize) });
      deviceBytes += rowWords.bytes + packed.bytes + segs.bytes + raw.bytes + slices.bytes;
    }
  } catch (e) {
    release();
    throw e;
  }
  return { kernelId: 'csr-vi-slice', rows: m.rows, cols: m.cols, nnz: m.nnz, deviceBytes, blocks: blocks.length, viBlocks: blocks, sliceBlocks: blocks, table, valueBits: m.valueBits, pipeline, dispose: release };
}

/** Record y = alpha·A·x + beta·y, one dispatch per block. */
export function encodeViSliced(ctx: GpuContext, h: ViSliceMatrix, x: GpuBuf, y: GpuBuf, scale: SpmvScale = { alpha: 1, beta: 0 }): void {
  for (const b of h.sliceBlocks) {
    const u = blockUniforms({ rows: b.rows, rowStart: b.rowStart, cont: false }, scale, 32 - h.valueBits);
    ctx.recorder.dispatch(h.pipeline, [b.rowWords, b.packed, b.segs, b.raw, h.table, x, y, b.slices], u, b.groups);
  }
}
