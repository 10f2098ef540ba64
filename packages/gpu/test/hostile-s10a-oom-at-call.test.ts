/**
 * Session 10: an out-of-memory of an allocation made by an async call is reported by that call.
 * WebGPU reports it asynchronously (the allocation's 'out-of-memory' error scope); session 9
 * made it surface at the next check or readback, naming the allocation — for tunedOperator that
 * was the caller's solve, after tunedOperator had resolved with an operator that does not work.
 * Now tunedOperator awaits its error scopes before it resolves (one popErrorScope round trip).
 * The out-of-memory is injected at the Dawn boundary: the in-solve timestamp query set's
 * allocation reports an 'out-of-memory' error.
 */
import { generators as g, ResourceLimitError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { createGpuContext, InSolveOperator, tunedOperator } from '../src/index';

describe('out of memory in tunedOperator is thrown by tunedOperator', () => {
  it('the in-solve query set runs out of memory: ResourceLimitError naming it, from the tunedOperator call', async () => {
    const ctx = await createGpuContext();
    if (!ctx.caps.timestampQuery) {
      ctx.dispose();
      return; // no timestamps: no query set (lavapipe has them)
    }
    const dev = ctx.device;
    const createQuerySet = dev.createQuerySet.bind(dev);
    const pop = dev.popErrorScope.bind(dev);
    let pops = -1;
    dev.createQuerySet = (d: GPUQuerySetDescriptor) => {
      // only the in-solve operator's query set (the tuner times its rounds with query sets too)
      if (/InSolveOperator/.test(new Error().stack ?? '')) pops = 0;
      return createQuerySet(d);
    };
    dev.popErrorScope = () => {
      const p = pop();
      if (pops < 0 || ++pops !== 2) return p;
      pops = -1;
      // the allocation's 'out-of-memory' scope (popped second)
      return p.then(() => ({ message: 'Out of memory (injected): query set' }) as GPUError);
    };
    try {
      const a = g.poisson2d(16);
      const call = tunedOperator(ctx, a, { warn: () => {}, cache: false, inSolve: true, candidates: ['csr-scalar', 'csr-vector', 'ell'], maxTimed: 3, budgetMs: 1e6, expectedProducts: 1e4 });
      const e = await call.then(
        (op) => {
          const kind = op instanceof InSolveOperator ? 'an InSolveOperator' : op.label;
          op.dispose();
          return new Error(`expected a ResourceLimitError, got ${kind}`);
        },
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(ResourceLimitError);
      expect((e as Error).message).toMatch(/timestamp query set/);
      // the context is usable afterwards: the error was taken by the call
      expect(() => ctx.check()).not.toThrow();
    } finally {
      ctx.dispose();
    }
  });
});
