/**
 * The CI driver prewarms the df64 polish while the float32 Davidson runs (issue 15): the
 * polish's pipelines are compiled ahead of time (createComputePipelineAsync) and none is
 * compiled blocking inside the float64 phase, and H in df64 is started before the float32 solve;
 * the energies are those of a run without prewarm.
 */
import { readFcidump } from '@gpusparse/chem/node';
import { type CiBackend, type CiDevicePolish, ciEnergies } from '@gpusparse/chem';
import { createGpuContext, type GpuContext, GpuVectorSpace, gpuOperatorFromCsr } from '@gpusparse/gpu';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpuDevicePolish } from '../src/util/ci-device';
import { dataFile } from '../../../testdata/index';

let ctx: GpuContext;
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

beforeAll(async () => {
  if (!gpuTierSkipped) ctx = await createGpuContext();
});
afterAll(() => ctx?.dispose());

/**
 * A backend whose device polish records where the float64 phase starts in the compile log: at
 * the first hand-over of a float32 Ritz vector (H in df64 is started before the float32 solve).
 */
async function backend(c: GpuContext, prewarm: boolean, phase: { start: number; events?: string[] }): Promise<CiBackend<unknown, unknown>> {
  const dp = (await gpuDevicePolish(c))!;
  const { prewarm: warm, ...rest } = dp;
  const polish: CiDevicePolish<unknown, unknown> = {
    ...(rest as CiDevicePolish<unknown, unknown>),
    ...(prewarm && warm ? { prewarm: warm } : {}),
    operator: (m, sink, fast) => {
      phase.events?.push('operator');
      return dp.operator(m, sink as never, fast as never) as never;
    },
    fromFast: (v) => {
      if (phase.start < 0) phase.start = c.pipelines.log.length;
      return dp.fromFast(v as never);
    },
  };
  return {
    space: new GpuVectorSpace(c) as never,
    operator: (m) => gpuOperatorFromCsr(c, m, { kernel: 'csr-vector' }) as never,
    devicePolish: async () => polish,
  };
}

describe.skipIf(gpuTierSkipped)('CI device polish prewarm', () => {
  it('no df64 pipeline is compiled inside the float64 phase; energies as without prewarm', async () => {
    const fd = await readFcidump(dataFile('fcidump', 'H4_sto6g_R1.8_block2.FCIDUMP'));
    const opts = { nroots: 2, workers: 0, solver: 'davidson' as const, assembly: 'whole' as const, polish: 'device' as const, tol: 1e-8 };
    const phase = { start: -1, events: [] as string[] };
    const onProgress = (p: { stage: string }) => void (p.stage === 'solve' || p.stage === 'polish' ? phase.events.push(p.stage) : undefined);
    const warm = await ciEnergies(fd, { ...opts, onProgress, backend: await backend(ctx, true, phase) });
    // H in df64 is started before the float32 Davidson's first iteration (its low parts build during the solve)
    expect(phase.events[0]).toBe('operator');
    expect(phase.events).toContain('solve');
    expect(phase.start).toBeGreaterThanOrEqual(0);
    const log = ctx.pipelines.log;
    const before = log.slice(0, phase.start).filter((e) => e.key.startsWith('df64:') && e.mode === 'async');
    expect(before.length).toBeGreaterThanOrEqual(10); // the space's kernels and the product's
    const inPhase = log.slice(phase.start).filter((e) => e.key.startsWith('df64:') && e.mode === 'sync');
    expect(inPhase.map((e) => e.key)).toEqual([]);

    // a fresh context without prewarm compiles them inside the phase, and gives the same energies
    const cold = await createGpuContext();
    try {
      const p2 = { start: -1 };
      const r = await ciEnergies(fd, { ...opts, backend: await backend(cold, false, p2) });
      expect(cold.pipelines.log.slice(p2.start).filter((e) => e.key.startsWith('df64:') && e.mode === 'sync').length).toBeGreaterThan(0);
      for (const [i, e] of r.energies.entries()) expect(Math.abs(e - warm.energies[i]!)).toBeLessThan(1e-10);
    } finally {
      cold.dispose();
    }
  });
});
