/**
 * The CI driver's float64 polish on the device (df64 on lavapipe here) against the float64 host
 * polish: chunked assembly with no float64 row blocks on the host (low parts kept on the device,
 * blocks split over several bindings) and whole assembly, energies to 1e-9 Eh.
 */
import { readFcidump } from '@gpusparse/chem/node';
import { type CiBackend, ciEnergies } from '@gpusparse/chem';
import { InvalidParameterError, NotSupportedError } from '@gpusparse/formats';
import { createGpuContext, type GpuContext, GpuVectorSpace, gpuOperatorFromCsr } from '@gpusparse/gpu';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gpuChunkSink, gpuDevicePolish } from '../src/util/ci-device';
import { dataFile } from '../../../testdata/index';

const file = (name: string) => dataFile('fcidump', name);
let ctx: GpuContext;
// part of the GPU tier (vitest.config.ts): skipped with it when no adapter appears, required in CI
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

beforeAll(async () => {
  if (!gpuTierSkipped) ctx = await createGpuContext();
});
afterAll(() => ctx?.dispose());

function backend(withPolish: boolean): CiBackend<unknown, unknown> {
  return {
    space: new GpuVectorSpace(ctx) as never,
    operator: (m) => gpuOperatorFromCsr(ctx, m, { kernel: 'csr-vector' }) as never,
    // 4 KiB bindings: every chunk spans several binding blocks, each with its own low parts
    chunkSink: (rows, perRow, o) => gpuChunkSink(ctx, rows, perRow, 'csr-vector', 1 << 12, o) as never,
    ...(withPolish ? { devicePolish: () => gpuDevicePolish(ctx) as never } : {}),
  };
}

describe.skipIf(gpuTierSkipped)('CI polish on the device (df64)', () => {
  it('chunked and whole assembly: device polish energies equal the host polish to 1e-9 Eh', async () => {
    const fd = await readFcidump(file('He2_dice.FCIDUMP'));
    const opts = { irrep: 1, nroots: 3, workers: 0, solver: 'davidson' as const };
    const chunked = await ciEnergies(fd, { ...opts, backend: backend(true), assembly: 'chunked', chunkNnz: 400, polish: 'device' });
    const whole = await ciEnergies(fd, { ...opts, backend: backend(true), assembly: 'whole', polish: 'auto' });
    const host = await ciEnergies(fd, { ...opts, backend: backend(true), assembly: 'chunked', chunkNnz: 400, polish: 'host' });
    expect(chunked.notes.join(' ')).toMatch(/low parts of inexact values kept on the device for the df64 polish/);
    expect(chunked.solver.method).toMatch(/df64 .* polish/);
    expect(whole.solver.method).toMatch(/df64 .* polish/);
    expect(host.solver.method).toMatch(/float64 polish/);
    expect(chunked.solver.converged).toBe(true);
    expect(chunked.timings.polish).toBeGreaterThan(0);
    expect(chunked.timings.polish).toBeLessThanOrEqual(chunked.timings.solve);
    // whole: H's low parts built in slices from before the float32 Davidson (solve time, outside the phase)
    const st = whole.timings.polishStages!;
    expect(st.operatorBuild!.slices).toBeGreaterThan(0);
    expect(whole.notes.join(' ')).toMatch(/low parts built during the float32 Davidson/);
    expect(st.prewarmWait + st.operatorWait + st.davidson + st.check).toBeLessThanOrEqual(whole.timings.polish + 1e-6);
    // chunked: the low parts were built during the assembly
    expect(chunked.timings.polishStages).toBeDefined();
    expect(chunked.timings.polishStages!.operatorBuild).toBeUndefined();
    for (let r = 0; r < 3; r++) {
      expect(Math.abs(chunked.energies[r]! - host.energies[r]!)).toBeLessThan(1e-9);
      expect(Math.abs(whole.energies[r]! - host.energies[r]!)).toBeLessThan(1e-9);
      expect(chunked.residualNorms[r]).toBeLessThan(1e-7);
      expect(Math.abs(chunked.s2[r]! - host.s2[r]!)).toBeLessThan(1e-6);
    }
  });

  it("polish 'device' is refused where it cannot run; 'auto' falls back to the host", async () => {
    const fd = await readFcidump(file('He2_dice.FCIDUMP'));
    const opts = { irrep: 1, nroots: 1, workers: 0, solver: 'davidson' as const };
    await expect(ciEnergies(fd, { ...opts, backend: backend(false), polish: 'device' })).rejects.toThrow(NotSupportedError);
    await expect(ciEnergies(fd, { ...opts, backend: backend(true), polish: 'device', spin: { multiplicity: 1 } })).rejects.toThrow(/spin penalty/);
    await expect(ciEnergies(fd, { ...opts, backend: backend(true), polish: 'gpu' as never })).rejects.toThrow(InvalidParameterError);
    const fallback = await ciEnergies(fd, { ...opts, backend: backend(false) });
    expect(fallback.solver.method).toMatch(/float64 polish/);
  });
});
