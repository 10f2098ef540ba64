/**
 * Shared by the examples: open WebGPU when an adapter exists, else fall back to the float64
 * host backend, and say which. (Files starting with '_' are helpers, not examples.)
 */
import { HostVectorSpace } from '@gpusparse/formats';
import { createGpuContext, type GpuContext, GpuVectorSpace } from '@gpusparse/gpu';

export type ExampleBackend =
  | { kind: 'webgpu'; ctx: GpuContext; space: GpuVectorSpace }
  | { kind: 'cpu'; space: HostVectorSpace; reason: string };

export async function exampleBackend(): Promise<ExampleBackend> {
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
