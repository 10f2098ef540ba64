/**
 * The GPU tier's set-up shared by the chem device tests (direct-gpu, direct-gpu-spin,
 * direct-gpu-parity): skipped with the tier when no adapter appears (vitest.config.ts), else one
 * GPU context and vector space for the file, opened before its tests and released after.
 */
import { createGpuContext, type GpuContext, GpuVectorSpace } from '@gpusparse/gpu';
import { afterAll, beforeAll } from 'vitest';

/** True when the GPU tier is skipped (no adapter, GPUSPARSE_REQUIRE_GPU not set). */
export const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

/** The file's GPU context and vector space, set in its beforeAll. */
export interface GpuTier {
  ctx: GpuContext;
  vs: GpuVectorSpace;
}

/** Registers the file's beforeAll / afterAll; the returned object holds ctx and vs once the tests run. */
export function gpuTier(): GpuTier {
  const t = {} as GpuTier;
  beforeAll(async () => {
    if (gpuTierSkipped) return;
    t.ctx = await createGpuContext();
    t.vs = new GpuVectorSpace(t.ctx);
  });
  afterAll(() => t.ctx?.dispose());
  return t;
}
