/**
 * The device side of the chunked CI assembly: each row chunk of H (float64 values, 32-bit
 * columns, chunk-local row pointers) is uploaded with a CSR kernel's own upload (float32 values,
 * split over bindings when a chunk exceeds one), and the chunks' binding blocks are joined into
 * one device matrix whose blocks carry their global first row. Every block has its own 32-bit
 * row offsets, so nnz(H) may pass 2^31; the host keeps nothing of a chunk once uploaded.
 * @module
 */
import type { ChunkSink } from '@gpusparse/chem';
import { type CsrMatrix, NotSupportedError } from '@gpusparse/formats';
import type { CsrDeviceMatrix, GpuContext, GpuVector } from '@gpusparse/gpu';

/** Lanes per row of csr-vector for rows of about `perRow` entries. */
function lanesFor(perRow: number): number {
  if (perRow >= 128) return 32;
  if (perRow >= 32) return 8;
  return 4;
}

/**
 * A chunk sink that uploads to `ctx` for the CSR kernel `kernelId` (default 'csr-vector',
 * lanes chosen from the expected row length). Cost per chunk: the kernel's upload (O(chunk)).
 * @throws NotSupportedError when a vector of `rows` float32 does not fit one binding
 * @example
 * const sink = await gpuChunkSink(ctx, n, 500);
 * sink.add(chunk, 0); const op = await sink.finish();
 */
export async function gpuChunkSink(
  ctx: GpuContext,
  rows: number,
  perRow: number,
  kernelId = 'csr-vector',
  /** A lower binding size (tests: force several binding blocks per chunk). */
  maxBindingBytes?: number,
): Promise<ChunkSink<GpuVector> & { readonly deviceBytes: number }> {
  const gpu = await import('@gpusparse/gpu');
  const kernel = gpu.getKernel(kernelId);
  if (kernel.format !== 'csr') throw new NotSupportedError(`chunked CI assembly: expected a CSR kernel, got '${kernelId}' (format ${kernel.format})`);
  const params = { ...kernel.defaults, ...(kernelId === 'csr-vector' ? { lanes: lanesFor(perRow) } : {}) };
  const ok = kernel.supports({ rows, cols: rows }, ctx.limits, params);
  if (ok !== true) throw new NotSupportedError(`chunked CI assembly with ${kernelId}: ${ok}`);
  const handles: CsrDeviceMatrix[] = [];
  const parts: CsrDeviceMatrix['parts'][number][] = [];
  let nnz = 0;
  let deviceBytes = 0;
  let sinceDrain = 0;
  return {
    get deviceBytes() {
      return deviceBytes;
    },
    add(chunk: CsrMatrix, rowStart: number) {
      const h = kernel.upload(ctx, chunk, params, maxBindingBytes === undefined ? {} : { maxBindingBytes }) as CsrDeviceMatrix;
      handles.push(h);
      for (const p of h.parts) parts.push({ ...p, rowStart: p.rowStart + rowStart });
      nnz += h.nnz;
      deviceBytes += h.deviceBytes;
      sinceDrain += h.deviceBytes;
      // let the queue consume the uploads every 256 MB: staging copies must not pile up on the host
      if (sinceDrain >= 2 ** 28) {
        sinceDrain = 0;
        return ctx.finish();
      }
    },
    finish() {
      if (handles.length === 0) throw new NotSupportedError('chunked CI assembly: no chunk was added');
      const joined: CsrDeviceMatrix = {
        kernelId,
        rows,
        cols: rows,
        nnz,
        deviceBytes,
        blocks: parts.length,
        parts,
        pipeline: handles[0]!.pipeline,
        dispose() {
          for (const h of handles) h.dispose();
        },
      };
      return new gpu.GpuOperator(ctx, kernel, joined, params);
    },
  };
}
