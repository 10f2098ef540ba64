/** Shared test setup: a GPU context that FAILS (not skips) when no adapter appears. */
import { createGpuContext, type GpuContext } from '../src/index';

let shared: GpuContext | undefined;

/** The test context (created once per test file; throws NoAdapterError without an adapter). */
export async function testContext(): Promise<GpuContext> {
  if (shared && !shared.isLost) return shared;
  shared = await createGpuContext();
  return shared;
}

/** ε of float32 (unit roundoff 2^-24). */
export const EPS32 = 2 ** -24;

/** Deterministic random values in [-1, 1). */
export function randomVector(n: number, seed: number): Float64Array {
  let a = seed >>> 0;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}

/** Round every entry to float32 (the values the device holds). */
export const f32 = (v: Float64Array): Float64Array => Float64Array.from(Float32Array.from(v));
