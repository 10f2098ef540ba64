/**
 * Uploads (f64 → f32 values, Int32/Uint32 indices) with validation of index arrays, so that
 * kernels may run without bounds checks (`unsafe` contexts) and bad input never reaches them.
 * @module
 */
import { type CsrMatrix, DimensionMismatchError, InvalidMatrixError } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import { UseAfterDisposeError } from '../device/errors';
import { type GpuBuf, STORAGE_USAGE } from './buffers';

/** The first place where a row's columns do not strictly increase (unsorted, or a repeated column). */
export interface UnsortedEntry {
  readonly row: number;
  /** Index into colIdx of the offending entry. */
  readonly entry: number;
  readonly col: number;
  /** The column before it in the same row. */
  readonly prev: number;
}

/**
 * Check the CSR index arrays a kernel will read: lengths consistent, rowPtr[0] = 0, row pointers
 * monotone, columns in [0, cols). Returns the first entry whose column does not strictly exceed
 * the one before it in its row (undefined for canonical rows): the CSR kernels sum such entries
 * correctly, layouts that give each (row, column) one slot cannot (one compare per entry in the
 * same loop, instead of a second pass over the columns). Cost O(rows + nnz).
 * @throws InvalidMatrixError naming the first bad row
 * @example validateCsrIndices(a, 'gpuOperatorFromCsr');
 */
export function validateCsrIndices(a: CsrMatrix, where = 'gpu upload'): UnsortedEntry | undefined {
  const { rows, cols, rowPtr, colIdx, values } = a;
  if (!Number.isInteger(rows) || rows < 0 || !Number.isInteger(cols) || cols < 0) {
    throw new InvalidMatrixError(where, `expected non-negative integer shape, got ${rows}×${cols}`);
  }
  if (rowPtr.length !== rows + 1) throw new DimensionMismatchError(`${where} rowPtr`, rows + 1, rowPtr.length);
  if (rowPtr[0] !== 0) throw new InvalidMatrixError(where, `expected rowPtr[0] = 0, got ${rowPtr[0]}`);
  const nnz = rowPtr[rows]!;
  if (colIdx.length !== nnz) throw new DimensionMismatchError(`${where} colIdx (rowPtr[rows])`, nnz, colIdx.length);
  if (values.length !== nnz) throw new DimensionMismatchError(`${where} values (rowPtr[rows])`, nnz, values.length);
  let unsorted: UnsortedEntry | undefined;
  for (let i = 0; i < rows; i++) {
    const s = rowPtr[i]!;
    const e = rowPtr[i + 1]!;
    if (e < s) throw new InvalidMatrixError(where, `row ${i}: expected rowPtr non-decreasing, got rowPtr[${i}] = ${s} > rowPtr[${i + 1}] = ${e}`);
    let prev = -1;
    for (let k = s; k < e; k++) {
      const c = colIdx[k]!;
      if (c < 0 || c >= cols) throw new InvalidMatrixError(where, `row ${i}: expected column in [0, ${cols}), got ${c} at entry ${k}`);
      if (c <= prev && unsorted === undefined) unsorted = { row: i, entry: k, col: c, prev };
      prev = c;
    }
  }
  return unsorted;
}

/** Check that every index of `idx` lies in [0, bound) (generic validation for other formats). */
export function validateIndexRange(idx: Int32Array | Uint32Array, bound: number, where: string): void {
  for (let k = 0; k < idx.length; k++) {
    const c = idx[k]!;
    if (c < 0 || c >= bound) throw new InvalidMatrixError(where, `expected index in [0, ${bound}), got ${c} at position ${k}`);
  }
}

/**
 * How {@link writeData} moves bytes to the device (bench/transfer.ts measures the options per
 * device): `write`, one queue.writeBuffer; `chunks`, writeBuffer in pieces of `chunkBytes`;
 * `staging`, a buffer created mapped (MAP_WRITE | COPY_SRC), filled, unmapped and copied on
 * the GPU, in pieces of `chunkBytes`; `ring` (from `minRingBytes` on), pieces of
 * `ringBytes` through up to {@link RING_BUFFERS} staging buffers kept mapped between uploads (re-mapped with
 * mapAsync after each copy), writeBuffer for pieces that find none ready (a synchronous burst
 * of uploads, before the event loop has run). All give the same bytes in queue order. Measured
 * on the H100 host (session 9): writeBuffer 1.1–1.5 GB/s from 16 MiB to 1 GiB, a reused mapped
 * 16 MiB staging buffer 6.7–7.7 GB/s, a fresh one per upload 1.1–1.5 GB/s; on lavapipe (host
 * memory is device memory) writeBuffer was the faster (5.8–8.7 against 1.4–1.9 GB/s). `auto`
 * (the default): `ring` on NVIDIA and AMD adapters, `write` elsewhere, for float32 data; float64
 * values ({@link writeValues}: uploadF32, the vector space, CSR values) take the ring everywhere.
 */
export const uploadTuning: { method: 'auto' | 'write' | 'chunks' | 'staging' | 'ring'; chunkBytes: number; minRingBytes: number; ringBytes: number } = {
  method: 'auto',
  chunkBytes: 64 * 2 ** 20,
  minRingBytes: 64 * 1024,
  ringBytes: 16 * 2 ** 20,
};

/** Staging buffers of the upload ring per context (host memory: 4 × 16 MiB by default). */
export const RING_BUFFERS = 4;

/** The upload ring of a context: staging buffers mapped and ready, and how many exist. */
interface UploadRing {
  readonly ready: GPUBuffer[];
  made: number;
}
const rings = new WeakMap<GpuContext, UploadRing>();

/** Overwrite `buf` from element `first` with `data` (flushes pending work first: ordering). */
export function writeData(ctx: GpuContext, buf: GpuBuf, data: Float32Array | Uint32Array | Int32Array, first = 0): void {
  if (data.length === 0) return;
  if (buf.isDisposed) throw new UseAfterDisposeError('write', buf.id, buf.buffer.label);
  ctx.recorder.flush();
  const method = uploadTuning.method === 'auto' ? autoMethod(ctx) : uploadTuning.method;
  if (method === 'ring' && data.byteLength >= uploadTuning.minRingBytes) {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    ringWrite(
      ctx,
      buf,
      first * 4,
      bytes.byteLength,
      (dst, at, len) => new Uint8Array(dst, 0, len).set(bytes.subarray(at, at + len)),
      (at, len) => ctx.device.queue.writeBuffer(buf.buffer, first * 4 + at, bytes.buffer, bytes.byteOffset + at, len),
    );
    return;
  }
  const chunk = Math.max(4, Math.floor(uploadTuning.chunkBytes / 4) * 4);
  if (method === 'write' || method === 'ring' || (data.byteLength <= chunk && method === 'chunks')) {
    ctx.device.queue.writeBuffer(buf.buffer, first * 4, data.buffer, data.byteOffset, data.byteLength);
    return;
  }
  for (let at = 0; at < data.byteLength; at += chunk) {
    const len = Math.min(chunk, data.byteLength - at);
    if (method === 'chunks') ctx.device.queue.writeBuffer(buf.buffer, first * 4 + at, data.buffer, data.byteOffset + at, len);
    else stagedWrite(ctx, buf, first * 4 + at, new Uint8Array(data.buffer, data.byteOffset + at, len));
  }
}

/** The `auto` method of a context: the ring on discrete-GPU vendors (NVIDIA, AMD), writeBuffer elsewhere. */
function autoMethod(ctx: GpuContext): 'ring' | 'write' {
  const v = ctx.adapterInfo.vendor.toLowerCase();
  return v.includes('nvidia') || v === 'amd' || v === 'ati' ? 'ring' : 'write';
}

/**
 * A `ring` upload of `total` bytes at byte `offset` of `buf`: each piece (a ring buffer's size)
 * goes through a ready staging buffer of the ring (`fill` writes source bytes [at, at + len)
 * into its mapped range, which is unmapped, copied on the GPU, submitted, mapped again
 * asynchronously), or a new one while the ring has fewer than {@link RING_BUFFERS}, else
 * through `direct` (writeBuffer). The GPU copies piece i while the host fills piece i + 1.
 * O(bytes) host work.
 */
function ringWrite(ctx: GpuContext, buf: GpuBuf, offset: number, total: number, fill: (dst: ArrayBuffer, at: number, len: number) => void, direct: (at: number, len: number) => void): void {
  ctx.check(); // a disposed or lost context says so here, before any ring buffer is touched
  let ring = rings.get(ctx);
  if (!ring) rings.set(ctx, (ring = { ready: [], made: 0 }));
  const size = ringPieceBytes();
  for (let at = 0; at < total; ) {
    let staging = ring.ready.pop();
    if (!staging && ring.made < RING_BUFFERS) {
      staging = ctx.scoped(`upload ring buffer (${size} bytes)`, () => ctx.device.createBuffer({ size, usage: 0x02 | 0x04, mappedAtCreation: true, label: 'upload-ring' }), { bytes: size }); // MAP_WRITE | COPY_SRC
      ring.made++;
    }
    const len = Math.min(staging ? staging.size : size, total - at);
    if (!staging) {
      direct(at, len);
      at += len;
      continue;
    }
    fill(staging.getMappedRange(0, len), at, len);
    staging.unmap();
    ctx.recorder.commandEncoder().copyBufferToBuffer(staging, 0, buf.buffer, offset + at, len);
    ctx.recorder.flush();
    at += len;
    const s = staging;
    const r = ring;
    s.mapAsync(GPUMapMode.WRITE).then(
      () => r.ready.push(s),
      () => {
        r.made--; // device lost or destroyed: the buffer is gone, the ring may make another
      },
    );
  }
}

/** Bytes of one ring piece (uploadTuning.ringBytes, a multiple of 4). */
function ringPieceBytes(): number {
  return Math.max(4, Math.floor(uploadTuning.ringBytes / 4) * 4);
}

/** One piece of a `staging` upload: a mapped buffer filled and copied into `buf` at `offset`, submitted at once. */
function stagedWrite(ctx: GpuContext, buf: GpuBuf, offset: number, bytes: Uint8Array): void {
  const size = Math.ceil(bytes.byteLength / 4) * 4;
  const staging = ctx.scoped(`upload staging buffer (${size} bytes)`, () => ctx.device.createBuffer({ size, usage: 0x02 | 0x04, mappedAtCreation: true, label: 'upload-staging' }), { bytes: size }); // MAP_WRITE | COPY_SRC
  new Uint8Array(staging.getMappedRange(0, size)).set(bytes);
  staging.unmap();
  ctx.recorder.commandEncoder().copyBufferToBuffer(staging, 0, buf.buffer, offset, size);
  ctx.recorder.flush();
  staging.destroy(); // freed once the submitted copy has run
}

/**
 * `values` as a Float32Array: itself when it is one, else rounded to float32 — through the
 * typed-array constructor for typed arrays (a conversion loop in V8, ~3× faster than
 * `Float32Array.from`, which goes through the iterator protocol), through `from` for other
 * array-likes (the constructor is slower for plain arrays). O(n).
 * @example toFloat32(new Float64Array([1, 0.1])) // Float32Array [1, 0.1 rounded]
 */
export function toFloat32(values: ArrayLike<number>): Float32Array {
  if (values instanceof Float32Array) return values;
  if (ArrayBuffer.isView(values)) return new Float32Array(values as unknown as Float64Array);
  return Float32Array.from(values);
}

/**
 * A new device buffer holding `values` rounded to float32 ({@link writeValues}). Cost: O(n)
 * host conversion + transfer.
 * @example const x = uploadF32(ctx, new Float64Array([1, 2, 3]));
 */
export function uploadF32(ctx: GpuContext, values: ArrayLike<number>, label = 'f32'): GpuBuf {
  const buf = ctx.buffers.acquire(values.length * 4, STORAGE_USAGE, label);
  writeValues(ctx, buf, values);
  return buf;
}

/** Per context: a host Float32Array of one ring piece, reused by the writeBuffer pieces of {@link writeValues}. */
const scratches = new WeakMap<GpuContext, Float32Array>();

/**
 * Overwrite `buf` from element `first` with `values` rounded to float32 (as Math.fround). On
 * the `ring` method — what `auto` takes here on every adapter, lavapipe included — a
 * Float64Array (or other non-float32 input) is converted
 * piece by piece straight into the ring's mapped staging memory — one pass, no full-size
 * Float32Array (on the H100 host, converting into fresh memory ran at ~1.4 GB/s, a copy into
 * a reused mapped buffer at ~7 GB/s) — and the GPU copies piece i while the host converts
 * piece i + 1; pieces that find no ready ring buffer are converted into one reused piece-sized
 * array and written with writeBuffer. On lavapipe this beat toFloat32 + one writeBuffer (what
 * `auto` does for a Float32Array there) in six of seven runs of bench/transfer.ts (16 MiB:
 * 8–23 against 18–31 ms; 64 MiB: 37–66 against 143–220 ms; 128 MiB: 521 against 441 ms, the
 * ring's 64 MiB passed). Other methods: {@link toFloat32} and {@link writeData}. O(n).
 * @example writeValues(ctx, v.buf, new Float64Array([0.1, 2]));
 */
export function writeValues(ctx: GpuContext, buf: GpuBuf, values: ArrayLike<number>, first = 0): void {
  const n = values.length;
  const method = uploadTuning.method === 'auto' ? 'ring' : uploadTuning.method; // see the note: auto takes the ring for converted input on every adapter
  if (values instanceof Float32Array || method !== 'ring' || n * 4 < uploadTuning.minRingBytes) {
    writeData(ctx, buf, toFloat32(values), first);
    return;
  }
  if (buf.isDisposed) throw new UseAfterDisposeError('write', buf.id, buf.buffer.label);
  ctx.recorder.flush();
  const typed = ArrayBuffer.isView(values) ? (values as unknown as Float64Array) : undefined;
  /** Round elements [from, from + count) of `values` into `dst`. */
  const convert = (dst: Float32Array, from: number, count: number): void => {
    if (typed) dst.set(typed.subarray(from, from + count));
    else for (let i = 0; i < count; i++) dst[i] = values[from + i]!;
  };
  ringWrite(
    ctx,
    buf,
    first * 4,
    n * 4,
    (dst, at, len) => convert(new Float32Array(dst, 0, len / 4), at / 4, len / 4),
    (at, len) => {
      let scratch = scratches.get(ctx);
      if (!scratch || scratch.byteLength < len) scratches.set(ctx, (scratch = new Float32Array(Math.max(len, ringPieceBytes()) / 4)));
      const piece = scratch.subarray(0, len / 4);
      convert(piece, at / 4, len / 4);
      ctx.device.queue.writeBuffer(buf.buffer, first * 4 + at, piece.buffer, piece.byteOffset, len); // copied at once: the scratch may be reused
    },
  );
}

/** A new device buffer holding the indices `idx` as u32 (validate before calling). */
export function uploadU32(ctx: GpuContext, idx: Int32Array | Uint32Array, label = 'u32'): GpuBuf {
  const buf = ctx.buffers.acquire(idx.length * 4, STORAGE_USAGE, label);
  writeData(ctx, buf, idx);
  return buf;
}
