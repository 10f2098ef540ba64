/**
 * The device side of the chunked CI assembly: each row chunk of H (float64 values, 32-bit
 * columns, chunk-local row pointers) is uploaded with a CSR kernel's own upload (float32 values,
 * split over bindings when a chunk exceeds one), and the chunks' binding blocks are joined into
 * one device matrix whose blocks carry their global first row. Every block has its own 32-bit
 * row offsets, so nnz(H) may pass 2^31; the host keeps nothing of a chunk once uploaded.
 * With `keepLo` (the df64 polish on the device) each binding block also keeps, on the device,
 * the f32 low parts of its values where some value is not exact in f32 (4 bytes per non-zero
 * of those blocks), and `df64Operator` gives the df64 product over the same blocks.
 * @module
 */
import type { ChunkSink, CiDevicePolish } from '@gpusparse/chem';
import { type CsrMatrix, type LinearOperator, NotSupportedError } from '@gpusparse/formats';
import type { CsrDeviceMatrix, Df64Blas, Df64CsrOperator, Df64Vector, GpuBuf, GpuContext, GpuVector } from '@gpusparse/gpu';

/** The sink of {@link gpuChunkSink}. */
export type GpuChunkSink = ChunkSink<GpuVector> & {
  readonly deviceBytes: number;
  /** Host milliseconds spent on the low parts (scan and upload) during the assembly (keepLo). */
  readonly lowPartMs: number;
  /** The df64 operator over the uploaded blocks and their low parts (sink opened with keepLo). */
  df64Operator(d: Df64Blas): Df64CsrOperator;
};

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
  opts: { keepLo?: boolean } = {},
): Promise<GpuChunkSink> {
  const gpu = await import('@gpusparse/gpu');
  const kernel = gpu.getKernel(kernelId);
  if (kernel.format !== 'csr') throw new NotSupportedError(`chunked CI assembly: expected a CSR kernel, got '${kernelId}' (format ${kernel.format})`);
  const params = { ...kernel.defaults, ...(kernelId === 'csr-vector' ? { lanes: lanesFor(perRow) } : {}) };
  const ok = kernel.supports({ rows, cols: rows }, ctx.limits, params);
  if (ok !== true) throw new NotSupportedError(`chunked CI assembly with ${kernelId}: ${ok}`);
  const handles: CsrDeviceMatrix[] = [];
  const parts: CsrDeviceMatrix['parts'][number][] = [];
  const lo: (GpuBuf | undefined)[] = []; // per part, with keepLo
  const range = gpu.emptyValueRange(); // the values' max and subnormal parts (the df64 operator checks them)
  let nnz = 0;
  let deviceBytes = 0;
  let sinceDrain = 0;
  let lowPartMs = 0;
  return {
    get deviceBytes() {
      return deviceBytes;
    },
    get lowPartMs() {
      return lowPartMs;
    },
    add(chunk: CsrMatrix, rowStart: number) {
      const h = kernel.upload(ctx, chunk, params, maxBindingBytes === undefined ? {} : { maxBindingBytes }) as CsrDeviceMatrix;
      handles.push(h);
      for (const p of h.parts) {
        parts.push({ ...p, rowStart: p.rowStart + rowStart });
        if (!opts.keepLo) continue;
        const t0 = performance.now();
        const l = gpu.lowParts(chunk.values, p.k0, p.k1, range);
        lo.push(l ? gpu.uploadF32(ctx, l, 'ci-h-lo') : undefined);
        lowPartMs += performance.now() - t0;
        deviceBytes += l ? l.length * 4 : 0;
        sinceDrain += l ? l.length * 4 : 0;
      }
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
    df64Operator(d: Df64Blas) {
      if (!opts.keepLo) throw new NotSupportedError('chunked CI assembly: the df64 operator needs a sink opened with keepLo');
      // the lo buffers stay the sink's until here; the operator returns them on dispose. H's
      // values lying below float32's normal range (flushed on NVIDIA): InvalidMatrixError
      return gpu.Df64CsrOperator.fromDeviceBlocks(d, rows, rows, parts, lo, range);
    },
  };
}

/**
 * The df64 polish of the CI driver on `ctx`, or undefined when the device fails the df64
 * self-test. H in df64: the chunk sink's blocks (float32 values shared with the solve) plus
 * their low parts (built during the assembly), the float32 operator's CSR upload plus low parts
 * built in slices that yield to the float32 solve (the driver starts it before the solve), or
 * an upload of the whole CSR.
 * @example const dp = await gpuDevicePolish(ctx); // ciEnergies(fd, { backend: { ..., devicePolish: async () => dp } })
 */
export async function gpuDevicePolish(ctx: GpuContext): Promise<CiDevicePolish<GpuVector, Df64Vector> | undefined> {
  const gpu = await import('@gpusparse/gpu');
  const space = await gpu.Df64VectorSpace.of(ctx);
  if (!space) return undefined;
  return {
    space,
    precision: `df64 (≈48 bits, TwoProd by ${space.d.mode})`,
    async operator(matrix: CsrMatrix | undefined, sink: ChunkSink<GpuVector> | undefined, fast?: LinearOperator<GpuVector>) {
      if (sink && 'df64Operator' in sink) return (sink as GpuChunkSink).df64Operator(space.d);
      if (!matrix) throw new NotSupportedError('CI device polish: expected the whole CSR or a chunk sink opened with keepLo, got neither');
      // the float32 operator's CSR arrays when it has them (+ lo parts only, scanned and uploaded
      // in slices that yield: the driver starts this before its float32 solve), else an own copy
      const shared = fast instanceof gpu.GpuOperator ? await gpu.Df64CsrOperator.fromGpuOperatorSliced(space.d, fast, matrix) : undefined;
      return shared ?? gpu.Df64CsrOperator.fromCsr(space.d, matrix);
    },
    unitRoundoff: 2 ** -44,
    prewarm: (o) => space.prewarm(o),
    fromFast: (v) => space.fromGpu(v),
    toFast: (p, scale) => space.toNewGpu(p, scale),
  };
}
