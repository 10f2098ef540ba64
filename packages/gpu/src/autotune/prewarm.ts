/**
 * Pipelines compiled ahead of time: on a large matrix, the statistics kernels and the CSR kernels'
 * likely variants are asked for (createComputePipelineAsync, no wait) before the CSR upload, so
 * that they compile on the device's worker threads while the host validates the arrays.
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { AnySpmvKernel } from '../kernels/types';
import { quadBuildSpec } from '../kernels/csr4/quad-build';
import { diaDeviceSpecs } from '../kernels/dia/dia-tiled.kernel';
import { ellBuildSpec } from '../kernels/ell/ell-build';
import { deviceStatsSpecs } from '../profile/device-stats';

/** Whether `ctx` runs on a CPU (lavapipe, SwiftShader): its "device" work and compiles share the host's cores. */
export const softwareAdapter = (ctx: GpuContext): boolean => /llvmpipe|lavapipe|swiftshader|software/i.test(Object.values(ctx.adapterInfo).join(' '));

/** Non-zeros from which the tuner compiles its likely pipelines ahead of time: the CSR upload's host work (validation, float32 values; ≈ 0.2 s at 2^23 on the H100 host) then hides the compiles (10–30 ms each). */
export const PREWARM_NNZ = 1 << 23;
/** Variants per CSR kernel compiled ahead of time at most (in declared order: the defaults and the floor's neighbours first). */
const PREWARM_PER_KERNEL = 6;

/**
 * Ask for the statistics kernels and the CSR kernels' likely variants ahead of time
 * (createComputePipelineAsync, no wait): on a large matrix they compile on the device's worker
 * threads while the host validates and converts the CSR arrays, instead of one by one on the
 * run's path (9 blocking compiles on issue 16's stencil). A get() before one is ready compiles
 * it as before. Returns how many were asked for and a promise of their end (never rejects).
 * O(kernels · variants) host work.
 * @example const { asked } = prewarmTuner(ctx, a, kernels); // 0 below PREWARM_NNZ non-zeros
 */
export function prewarmTuner(ctx: GpuContext, a: CsrMatrix, ks: readonly AnySpmvKernel[], minNnz = PREWARM_NNZ): { asked: number; done: Promise<void> } {
  if ((a.rowPtr[a.rows] ?? 0) < minNnz) return { asked: 0, done: Promise.resolve() };
  // … and csr-vec4 / csr-long's device quad build and ELL's device build (one pipeline each)
  const specs = [...deviceStatsSpecs(), ...diaDeviceSpecs(ctx.caps), quadBuildSpec(), ellBuildSpec()];
  for (const k of ks) {
    if (k.format !== 'csr' || !k.pipelineSpec) continue;
    const combos = enumerateParams(k).slice(0, PREWARM_PER_KERNEL);
    for (const p of combos) {
      try {
        specs.push(k.pipelineSpec(p, ctx.caps));
      } catch {
        // a combination the kernel refuses on this device (e.g. lanes past the workgroup): never timed either
      }
    }
  }
  return { asked: specs.length, done: ctx.pipelines.prewarm(specs) };
}

/** Every combination of a kernel's declared parameter values, the first value of each first. O(product of value counts). */
function enumerateParams(k: AnySpmvKernel): Record<string, number>[] {
  let out: Record<string, number>[] = [{}];
  for (const [name, spec] of Object.entries(k.params as Record<string, { values: readonly number[] }>)) out = out.flatMap((p) => spec.values.map((v) => ({ ...p, [name]: v })));
  return out.map((p) => ({ ...k.defaults, ...p }));
}
