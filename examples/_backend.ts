/**
 * Shared by the examples: open WebGPU when an adapter exists, else fall back to the float64
 * host backend, and say which. GPUSPARSE_EXAMPLES_BACKEND=cpu (`pnpm examples --backend cpu`)
 * takes the CPU backend without asking for an adapter, as on a machine without a GPU.
 * (Files starting with '_' are helpers, not examples.)
 */
import { HostVectorSpace } from '@gpusparse/formats';
import { createGpuContext, type GpuContext, GpuVectorSpace } from '@gpusparse/gpu';

export type ExampleBackend =
  | { kind: 'webgpu'; ctx: GpuContext; space: GpuVectorSpace }
  | { kind: 'cpu'; space: HostVectorSpace; reason: string };

/** The exit code of an example that cannot run here (it needs WebGPU): counted as skipped, not failed. */
export const EXIT_SKIPPED = 77;

/** Why WebGPU is not to be asked for, when GPUSPARSE_EXAMPLES_BACKEND=cpu says so. */
function cpuForced(): string | undefined {
  const v = process.env.GPUSPARSE_EXAMPLES_BACKEND;
  if (v === undefined || v === '' || v === 'auto') return undefined;
  if (v === 'cpu') return 'GPUSPARSE_EXAMPLES_BACKEND=cpu';
  throw new Error(`GPUSPARSE_EXAMPLES_BACKEND: expected cpu or auto, got '${v}'`);
}

/** A GPU context for an example that needs one; without it, says why and exits as skipped. */
export async function requireGpuContext(what: string): Promise<GpuContext> {
  const forced = cpuForced();
  try {
    if (forced) throw new Error(`CPU backend asked for (${forced})`);
    return await createGpuContext();
  } catch (e) {
    console.log(`skipped: ${what} needs a WebGPU adapter (${(e as Error).message.split('\n')[0]})`);
    process.exit(EXIT_SKIPPED);
  }
}

export async function exampleBackend(): Promise<ExampleBackend> {
  const forced = cpuForced();
  if (forced) {
    console.log(`running on the CPU (${forced})`);
    return { kind: 'cpu', space: new HostVectorSpace(), reason: forced };
  }
  try {
    const ctx = await createGpuContext();
    console.log(`WebGPU: ${ctx.describe().adapter.device || ctx.describe().adapter.description}, subgroup size ${ctx.caps.subgroupSize}`);
    return { kind: 'webgpu', ctx, space: new GpuVectorSpace(ctx) };
  } catch (e) {
    const reason = (e as Error).message.split('\n')[0]!;
    console.log(`no WebGPU adapter (${reason}): running on the CPU`);
    return { kind: 'cpu', space: new HostVectorSpace(), reason };
  }
}

/** ../shared/data/<sub>/<file> next to the checkout, or undefined when it is not there. */
export async function sharedData(sub: string, file: string): Promise<string | undefined> {
  const { existsSync } = await import('node:fs');
  const p = new URL(`../../shared/data/${sub}/${file}`, import.meta.url).pathname;
  return existsSync(p) ? p : undefined;
}
