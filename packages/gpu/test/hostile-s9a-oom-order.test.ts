/**
 * Session 9: an allocation that runs out of device memory. WebGPU reports it asynchronously
 * (the allocation's 'out-of-memory' error scope), and the failed buffer is an error object whose
 * every later use (a write, a dispatch, a submit) reports a validation error of its own — which
 * can arrive first. The solve must end with the ResourceLimitError naming the allocation (exit
 * 5), never with a GpuValidationError (a "bug", exit 70) for the consequence.
 *
 * The out-of-memory is injected at the Dawn boundary: the buffer labelled 'victim' is created and
 * destroyed at once (so its uses fail validation for real), and its allocation's
 * 'out-of-memory' scope reports an error, late (after the validation errors of its uses).
 */
import { ResourceLimitError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { Blas1, createGpuContext, GpuValidationError, imm } from '../src/index';
import { readF32 } from '../src/memory/readback';

describe('out of memory reported after the validation errors it causes', () => {
  it('the ResourceLimitError of the allocation is thrown, not a GpuValidationError of a later use', async () => {
    const ctx = await createGpuContext();
    const dev = ctx.device;
    const create = dev.createBuffer.bind(dev);
    const pop = dev.popErrorScope.bind(dev);
    let pops = -1; // counts the pops after the victim's creation
    dev.createBuffer = (d: GPUBufferDescriptor) => {
      const buf = create(d);
      if (d.label === 'victim') {
        buf.destroy(); // like an allocation that failed: every use is invalid
        pops = 0;
      }
      return buf;
    };
    dev.popErrorScope = () => {
      const p = pop();
      if (pops < 0 || ++pops !== 2) return p;
      pops = -1;
      // the allocation's 'out-of-memory' scope (popped second), resolved after the uses' errors
      const oom = { message: 'Out of memory (injected): vkAllocateMemory failed' } as GPUError;
      return p.then(() => new Promise<GPUError | null>((r) => setTimeout(() => r(oom), 50)));
    };
    try {
      const n = 1 << 16;
      const v = ctx.buffers.acquire(4 * n, undefined, 'victim');
      const w = ctx.buffers.acquire(4 * n, undefined, 'other');
      Blas1.of(ctx).fill(v, n, imm(1)); // uses of the failed buffer: validation errors at submit
      Blas1.of(ctx).copy(v, w, n);
      const err = await readF32(ctx, w, 4).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ResourceLimitError);
      expect(err).not.toBeInstanceOf(GpuValidationError);
      expect((err as Error).message).toMatch(/buffer 'victim' \(262144 bytes\)/);
      expect((err as Error).message).toMatch(/out of memory .*injected/);
      // the failure's other errors were dropped with it: the context goes on
      dev.createBuffer = create;
      dev.popErrorScope = pop;
      v.dispose();
      const u = ctx.buffers.acquire(16, undefined, 'after');
      Blas1.of(ctx).fill(u, 4, imm(2));
      expect(Array.from(await readF32(ctx, u, 4))).toEqual([2, 2, 2, 2]);
    } finally {
      dev.createBuffer = create;
      dev.popErrorScope = pop;
      ctx.dispose();
    }
  });
});
