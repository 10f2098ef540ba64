/**
 * Pipelines compiled ahead of time, in parallel on the device's worker threads
 * (createComputePipelineAsync), instead of one by one on the run's path at first use: the
 * statistics kernels and the device builds (DIA, ELL, the quads of csr-vec4 / csr-long) are asked
 * for before the CSR upload on every matrix; the short-list's own kernels as soon as it is drawn
 * ({@link compileAhead}); each stage then waits for what it needs ({@link awaitCompiled}), joining
 * a compile already running instead of compiling the same pipeline again.
 *
 * Why: on the H100 the first matrix of a process paid 13 blocking compiles, 125 ms in one call and
 * 324 ms in another (the driver's own shader cache warm or cold), and its statistics took 37 or
 * 108 ms because their four pipelines compiled inside them (session 10, bench/RESULTS.md): a
 * per-process cost that decided the overhead verdict of whichever matrix came first.
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { PipelineSpec } from '../device/pipelines';
import type { AnySpmvKernel } from '../kernels/types';
import { quadBuildSpec } from '../kernels/csr4/quad-build';
import { DEVICE_DIA_KERNELS } from '../kernels/dia/dia-build';
import { diaDeviceSpecs } from '../kernels/dia/dia-tiled.kernel';
import { DEVICE_ELL_KERNELS, ellBuildSpec } from '../kernels/ell/ell-build';
import { deviceStatsSpecs } from '../profile/device-stats';
import type { Candidate } from './candidates';
import { softwareAdapter } from '../device/probe';

/** Kernels whose pack-0, non-interleaved upload builds its quads on the device (`CSR_RELAYOUT` of cost-model.ts, not imported: cost-model → profile → this file). */
const QUAD_KERNELS: ReadonlySet<string> = new Set(['csr-vec4', 'csr-long']);

/** Whether `ctx` runs on a CPU (lavapipe, SwiftShader): see ../device/probe. */
export { softwareAdapter };

/** Non-zeros from which the tuner also compiles the CSR kernels' likely variants ahead of time (before the short-list is known): the CSR upload's host work (validation, float32 values; ≈ 0.2 s at 2^23 on the H100 host) then hides those compiles (10–30 ms each). */
export const PREWARM_NNZ = 1 << 23;
/** Variants per CSR kernel compiled ahead of time at most (in declared order: the defaults and the floor's neighbours first). */
const PREWARM_PER_KERNEL = 6;

/**
 * Ask for the statistics kernels and the device builds' pipelines ahead of time (no wait), and
 * past `minNnz` non-zeros the CSR kernels' likely variants too: they compile on the device's
 * worker threads while the host validates and uploads the CSR arrays. A stage that needs one
 * waits for it with `awaitCompiled` (internal). Returns how many were asked for and a promise of their
 * end (never rejects). O(kernels · variants) host work.
 * @example const { asked } = prewarmTuner(ctx, a, kernels);
 */
export function prewarmTuner(ctx: GpuContext, a: CsrMatrix, ks: readonly AnySpmvKernel[], minNnz = PREWARM_NNZ): { asked: number; done: Promise<void> } {
  const specs = [...deviceStatsSpecs(), ...diaDeviceSpecs(ctx.caps), quadBuildSpec(), ellBuildSpec()];
  if ((a.rowPtr[a.rows] ?? 0) >= minNnz) {
    for (const k of ks) {
      if (k.format !== 'csr' || !k.pipelineSpec) continue;
      for (const p of enumerateParams(k).slice(0, PREWARM_PER_KERNEL)) specs.push(...kernelSpec(ctx, k, p));
    }
  }
  return { asked: specs.length, done: ctx.pipelines.prewarm(specs) };
}

/** The kernel's own pipelines for `params` — `pipelineSpec` and `uploadSpecs` where declared — when it accepts them on this device. */
function kernelSpec(ctx: GpuContext, k: AnySpmvKernel, params: Record<string, number>): PipelineSpec[] {
  try {
    const p = { ...k.defaults, ...params };
    return [...(k.pipelineSpec ? [k.pipelineSpec(p, ctx.caps)] : []), ...(k.uploadSpecs?.(p, ctx.caps) ?? [])];
  } catch {
    return []; // a combination the kernel refuses on this device (e.g. lanes past the workgroup): its upload says why
  }
}

/**
 * The pipelines candidate `c` compiles on its way through the trials: its device build's (DIA,
 * ELL, the pack-0 quads) and its kernel's, where the kernel declares them (`pipelineSpec`, and
 * `uploadSpecs`: csr-merge's fix-up pass, compiled blocking inside its upload before session 13). O(1).
 */
export function candidateSpecs(ctx: GpuContext, c: Pick<Candidate, 'kernel' | 'params'>): PipelineSpec[] {
  const id = c.kernel.id;
  const p = { ...c.kernel.defaults, ...c.params };
  const build = DEVICE_DIA_KERNELS.has(id) ? diaDeviceSpecs(ctx.caps) : DEVICE_ELL_KERNELS.has(id) ? [ellBuildSpec()] : QUAD_KERNELS.has(id) && !p.pack && !p.interleave ? [quadBuildSpec()] : [];
  return [...build, ...kernelSpec(ctx, c.kernel, p)];
}

/**
 * Ask for every short-listed candidate's pipelines at once (no wait): they compile in parallel
 * while the first candidates convert, upload and run. Not on a software adapter, where the
 * compiles would take the cores the host work needs (each candidate then compiles when it comes,
 * through {@link awaitCompiled}). Returns how many were asked for. O(candidates).
 */
export function compileAhead(ctx: GpuContext, cands: readonly Pick<Candidate, 'kernel' | 'params'>[]): number {
  if (softwareAdapter(ctx)) return 0;
  const specs = cands.flatMap((c) => candidateSpecs(ctx, c));
  void ctx.pipelines.prewarm(specs);
  return specs.length;
}

/**
 * Wait until `specs` are compiled (joining compiles already running, starting the others in
 * parallel), so that the stage after it compiles nothing on its path. Returns the milliseconds
 * waited. Never rejects: a failed compile is left to the blocking get(), which reports it with
 * its label.
 */
export async function awaitCompiled(ctx: GpuContext, specs: readonly PipelineSpec[]): Promise<number> {
  const t0 = performance.now();
  if (specs.some((s) => !ctx.pipelines.has(s.key))) await ctx.pipelines.prewarm(specs);
  return performance.now() - t0;
}

/** Every combination of a kernel's declared parameter values, the first value of each first. O(product of value counts). */
function enumerateParams(k: AnySpmvKernel): Record<string, number>[] {
  let out: Record<string, number>[] = [{}];
  for (const [name, spec] of Object.entries(k.params as Record<string, { values: readonly number[] }>)) out = out.flatMap((p) => spec.values.map((v) => ({ ...p, [name]: v })));
  return out.map((p) => ({ ...k.defaults, ...p }));
}
