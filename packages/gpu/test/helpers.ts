/**
 * Shared test setup: the GPU context of a test file. Without an adapter vitest.config.ts skips
 * this whole tier (scripts/test/gpu-skip-runner.ts) unless GPUSPARSE_REQUIRE_GPU=1 (.ci/run):
 * then `testContext()` throws NoAdapterError and the files fail.
 */
import { type CsrMatrix, csrSpmv } from '@gpusparse/formats';
import { expect } from 'vitest';
import { type AnySpmvKernel, createGpuContext, type GpuContext, readF32, type UploadOptions, uploadF32 } from '../src/index';
import { f32, randomVector, rowBounds } from '../src/testing/conformance';

// The deterministic vectors and the float32 helpers live with the conformance tier (also used
// by bench/gpu-conformance.ts on the GPU machine); the tests take them from there.
export { EPS32, f32, randomVector } from '../src/testing/conformance';

let shared: GpuContext | undefined;

/** The test context (created once per test file; throws NoAdapterError without an adapter). */
export async function testContext(): Promise<GpuContext> {
  if (process.env.GPUSPARSE_GPU_TIER === 'skip') return skippedTierContext();
  if (shared && !shared.isLost) return shared;
  shared = await createGpuContext();
  return shared;
}

/**
 * The GPU tier is skipped (vitest.config.ts found no adapter): files that take a context while
 * being collected (solvers-gpu.test.ts) still register their tests, which the skip runner then
 * skips; any use of this placeholder would throw.
 */
function skippedTierContext(): GpuContext {
  return new Proxy({} as GpuContext, {
    get(_target, key) {
      if (key === 'then') return undefined; // not a thenable: `await` hands the proxy back
      throw new Error(`GPU tier skipped (no WebGPU adapter): the test context has no '${String(key)}'`);
    },
  });
}

/** The true float64 relative residual ‖b − A·x‖ / ‖b‖, recomputed on the host. */
export function trueRelative(a: CsrMatrix, x: Float64Array, b: Float64Array): number {
  const ax = csrSpmv(a, x);
  let r = 0;
  let bb = 0;
  for (let i = 0; i < b.length; i++) {
    r += (b[i]! - ax[i]!) ** 2;
    bb += b[i]! ** 2;
  }
  return Math.sqrt(r / bb);
}

/**
 * The worst error of the device's y = alpha·A·x + beta·y0 over the conformance tier's per-row
 * float32 bound ({@link rowBounds}; ∞ where a row passes its bound), against the float64 CSR product.
 */
export function worstOverBound(a: CsrMatrix, x: Float64Array, y0: Float64Array, y: ArrayLike<number>, alpha: number, beta: number): number {
  const ax = csrSpmv(a, x);
  const bound = rowBounds(a, x, alpha, beta, y0);
  let worst = 0;
  for (let i = 0; i < a.rows; i++) {
    const err = Math.abs(y[i]! - (alpha * ax[i]! + beta * y0[i]!));
    worst = Math.max(worst, err <= bound[i]! ? (bound[i]! > 0 ? err / bound[i]! : 0) : Number.POSITIVE_INFINITY);
  }
  return worst;
}

/**
 * y = alpha·A·x + beta·y0 on the device with `kernel` over `m` (the format of `a`, whose values are
 * float32 already): x and y0 the deterministic vectors of seeds 11 and 12; checks that the kernel
 * supports `m`, releases every buffer; returns y, the worst error over the per-row bound
 * ({@link worstOverBound}) and the number of binding blocks.
 */
export async function runOnDevice(ctx: GpuContext, kernel: AnySpmvKernel, a: CsrMatrix, m: unknown, params: Record<string, number>, opts?: UploadOptions, alpha = 1, beta = 0) {
  expect(kernel.supports(m, ctx.limits, { ...kernel.defaults, ...params })).toBe(true);
  const x = f32(randomVector(a.cols, 11));
  const y0 = f32(randomVector(a.rows, 12));
  const [dx, dy, h] = [uploadF32(ctx, x), uploadF32(ctx, y0), kernel.upload(ctx, m, params, opts)];
  kernel.encode(ctx, h, dx, dy, { alpha, beta });
  const y = await readF32(ctx, dy, a.rows);
  const blocks = h.blocks;
  for (const b of [h, dx, dy]) b.dispose();
  return { y, worst: worstOverBound(a, x, y0, y, alpha, beta), blocks };
}
