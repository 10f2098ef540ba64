/**
 * Shared test setup: the GPU context of a test file. Without an adapter vitest.config.ts skips
 * this whole tier (scripts/test/gpu-skip-runner.ts) unless GPUSPARSE_REQUIRE_GPU=1 (.ci/run):
 * then `testContext()` throws NoAdapterError and the files fail.
 */
import { createGpuContext, type GpuContext } from '../src/index';

// The deterministic vectors and the float32 helpers live with the conformance tier (also used
// by bench/gpu-conformance.ts on the GPU machine); the tests take them from there.
export { EPS32, f32, randomVector } from '../src/testing/conformance';

let shared: GpuContext | undefined;

/** The test context (created once per test file; throws NoAdapterError without an adapter). */
export async function testContext(): Promise<GpuContext> {
  if (shared && !shared.isLost) return shared;
  shared = await createGpuContext();
  return shared;
}
