/**
 * Session 10: an out-of-memory of the device direct σ's tables is reported by the build
 * (gpuDirectHamiltonian's factory), not by the first σ readback after it resolved. The OOM is
 * injected at the Dawn boundary: the 'direct-eri' table's allocation scope reports an error.
 */
import { ResourceLimitError } from '@gpusparse/formats';
import { createGpuContext } from '@gpusparse/gpu';
import { describe, expect, it } from 'vitest';
import { buildCiSpace } from '../src/determinants/build';
import { gpuDirectHamiltonian } from '../src/direct/gpu/ci';
import { readFcidump } from '../src/fcidump/node';
import { data } from './helpers/vectors';

const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

describe.skipIf(gpuTierSkipped)('out of memory in the device direct σ tables', () => {
  it('ResourceLimitError naming the table, from the gpuDirectHamiltonian build', async () => {
    const ctx = await createGpuContext();
    const dev = ctx.device;
    const create = dev.createBuffer.bind(dev);
    const pop = dev.popErrorScope.bind(dev);
    let pops = -1;
    dev.createBuffer = (d: GPUBufferDescriptor) => {
      if (d.label === 'direct-eri') pops = 0;
      return create(d);
    };
    dev.popErrorScope = () => {
      const p = pop();
      if (pops < 0 || ++pops !== 2) return p;
      pops = -1;
      return p.then(() => ({ message: 'Out of memory (injected): direct-eri' }) as GPUError);
    };
    try {
      const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
      const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep: 1 });
      const e = await gpuDirectHamiltonian(ctx)(fcidump, space).then(
        (h) => {
          (h.host as { dispose?: () => void } | undefined)?.dispose?.();
          return new Error('expected a ResourceLimitError, got a Hamiltonian');
        },
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(ResourceLimitError);
      expect((e as Error).message).toMatch(/direct-eri/);
      expect(() => ctx.check()).not.toThrow();
    } finally {
      ctx.dispose();
    }
  });
});
