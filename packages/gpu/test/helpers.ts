/** Shared test setup: a GPU context that FAILS (not skips) when no adapter appears. */
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
