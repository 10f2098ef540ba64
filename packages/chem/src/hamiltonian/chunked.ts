/**
 * Assembly of H in row chunks handed to a sink as they come (in row order), instead of one
 * whole float64 CSR: the device sink converts each chunk to float32 values + 32-bit columns
 * with its own 32-bit row offsets and uploads it (so no row pointer ever passes 2^31, whatever
 * nnz(H)), and the host keeps only the chunks in flight — plus, when asked, the float64 row
 * blocks that the float64 polish multiplies by (12 bytes per non-zero, no concatenation copy).
 * @module
 */
import { type CsrMatrix, HostOperator, InvalidParameterError, type LinearOperator } from '@gpusparse/formats';
import type { DeterminantSpace } from '../determinants/space';
import type { Fcidump } from '../fcidump/types';
import { defaultWorkers, kernelContext } from './assemble';
import { assembleRowsKernel, type KernelOutput } from './kernel';
import { productContext } from './product';
import { assembleRowsProduct, type ProductScratch } from './product-kernel';
import { type RowChunk, streamOnWorkers } from './workers';

/** Where the chunks go: e.g. an upload to the device (see the CLI's gpuChunkSink). */
export interface ChunkSink<V> {
  /**
   * Rows [rowStart, rowStart + chunk.rows) of H (chunk-local row pointers, global columns). A
   * returned promise holds the assembly back until it settles (e.g. until the device queue has
   * consumed the uploads, so that staging copies do not pile up on the host).
   */
  add(chunk: CsrMatrix, rowStart: number): void | Promise<void>;
  /** The operator over every chunk added, once all are in. */
  finish(): LinearOperator<V> | Promise<LinearOperator<V>>;
  /** Bytes the sink holds on the device so far. */
  readonly deviceBytes?: number;
}

/** Options of {@link assembleChunked}. */
export interface ChunkedOptions {
  /** Target non-zeros per chunk (default 2^24: 200 MB of float64 chunk on the host). */
  chunkNnz?: number;
  /** Expected non-zeros per row (from the sizing), to cut the rows into chunks. */
  perRow: number;
  /** Keep the float64 row blocks on the host for a float64 product (default true). */
  keepHost?: boolean;
  workers?: number | 'auto';
  onProgress?: (rowsDone: number, rows: number) => void;
}

/** A float64 row block kept on the host. */
export interface HostRowBlock {
  rowStart: number;
  rows: number;
  rowPtr: Int32Array;
  colIdx: Int32Array;
  values: Float64Array;
}

/** What {@link assembleChunked} returns (the matrix itself went to the sink). */
export interface ChunkedHamiltonian {
  diagonal: Float64Array;
  nnz: number;
  chunks: number;
  /** The float64 row blocks (when keepHost). */
  blocks: HostRowBlock[];
  stats: { ms: number; rate: number; workers: number; kernel: 'string' | 'hash' };
}

/** Chunk output → chunk-local CSR (row pointers from the row lengths). */
function toCsr(c: RowChunk, n: number): CsrMatrix {
  const rows = c.end - c.start;
  const rowPtr = new Int32Array(rows + 1);
  for (let i = 0; i < rows; i++) rowPtr[i + 1] = rowPtr[i]! + c.out.lengths[i]!;
  return { format: 'csr', rows, cols: n, rowPtr, colIdx: c.out.cols, values: c.out.vals };
}

/**
 * Assemble H_el of `space` in row chunks of about `chunkNnz` non-zeros, each handed to
 * `sink.add` in row order and then dropped (except the float64 blocks kept for the host
 * product). Same rows, bit for bit, as {@link assembleHamiltonian}. Cost: the assembly's,
 * host memory O(chunkNnz · workers) + 12 bytes per kept non-zero.
 * @example
 * const h = await assembleChunked(fd, space, sink, { perRow: 500, chunkNnz: 1 << 22 });
 * const op = await sink.finish();
 */
export async function assembleChunked<V>(fd: Fcidump, space: DeterminantSpace, sink: ChunkSink<V>, o: ChunkedOptions): Promise<ChunkedHamiltonian> {
  const t0 = performance.now();
  const chunkNnz = o.chunkNnz ?? 2 ** 24;
  if (!Number.isInteger(chunkNnz) || chunkNnz < 1) throw new InvalidParameterError('chunkNnz', 'a positive integer', chunkNnz);
  const rows = space.size;
  const ctx = kernelContext(fd, space, 0);
  const pctx = productContext(ctx, space);
  const per = Math.max(1, Math.floor(chunkNnz / Math.max(1, o.perRow)));
  const ranges: [number, number][] = [];
  for (let s = 0; s < rows; s += per) ranges.push([s, Math.min(rows, s + per)]);
  const diagonal = new Float64Array(rows);
  const blocks: HostRowBlock[] = [];
  let nnz = 0;
  let rowsDone = 0;
  const take = (c: RowChunk) => {
    const csr = toCsr(c, rows);
    diagonal.set(c.out.diag, c.start);
    nnz += csr.colIdx.length;
    rowsDone += c.end - c.start;
    const pending = sink.add(csr, c.start);
    if (o.keepHost !== false) blocks.push({ rowStart: c.start, rows: csr.rows, rowPtr: csr.rowPtr as Int32Array, colIdx: csr.colIdx as Int32Array, values: csr.values as Float64Array });
    o.onProgress?.(rowsDone, rows);
    return pending;
  };
  const scratch: ProductScratch = { cols: new Int32Array(0), vals: new Float64Array(0) };
  const run = (s: number, e: number): KernelOutput => (pctx ? assembleRowsProduct(pctx, s, e, scratch) : assembleRowsKernel(ctx, s, e));
  const want = o.workers === undefined || o.workers === 'auto' ? await defaultWorkers(rows) : o.workers;
  let used = 0;
  if (want > 0 && ranges.length > 1) {
    const n = Math.min(want, ranges.length);
    if (await streamOnWorkers(pctx ?? ctx, ranges, n, take, undefined, pctx ? 'product' : 'hash', run)) used = n;
  }
  if (used === 0) {
    for (const [s, e] of ranges) {
      await take({ start: s, end: e, out: run(s, e) });
      await new Promise((r) => setImmediate(r)); // let progress lines and signals through
    }
  }
  const ms = performance.now() - t0;
  return { diagonal, nnz, chunks: ranges.length, blocks, stats: { ms, rate: nnz / Math.max(ms / 1000, 1e-9), workers: used, kernel: pctx ? 'string' : 'hash' } };
}

/**
 * y = H·x in float64 over the kept row blocks (no concatenated CSR). Cost O(nnz) per product.
 * @example const hostH = rowBlockOperator(h.blocks, n);
 */
export function rowBlockOperator(blocks: readonly HostRowBlock[], n: number): HostOperator {
  return HostOperator.fromFunction(
    n,
    n,
    (x, y) => {
      for (const b of blocks) {
        const { rowPtr, colIdx, values } = b;
        for (let i = 0; i < b.rows; i++) {
          let s = 0;
          for (let k = rowPtr[i]!; k < rowPtr[i + 1]!; k++) s += values[k]! * x[colIdx[k]!]!;
          y[b.rowStart + i] = s;
        }
      }
    },
    'host-csr-row-blocks',
  );
}
