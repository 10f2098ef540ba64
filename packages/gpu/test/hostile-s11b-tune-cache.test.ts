/**
 * Session 11: a tuning cache entry that is valid JSON naming a real kernel with integer
 * parameters, but a choice no tuning makes — hand-edited (`sell` C = 2 000 000 on a 256-row
 * matrix: 7 800× padding, used as it stood; larger values exhaust memory), an experimental
 * kernel, a parameter value of another build. Before, such an entry was used when it passed its
 * one-product verification, or (a kernel outside the candidates) ignored without a word. Now it
 * is ignored with a warning naming it, and the tuning runs as on a miss (then overwrites it).
 */
import { generators as g } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { autotune, type CacheEntry, MemoryTuneStore } from '../src/index';
import { entryOutsideSpace } from '../src/autotune/cache';
import { kernels as registry } from '../src/kernels/registry';
import { testContext } from './helpers';

afterAll(async () => (await testContext()).dispose());

const a = g.poisson2d(16);
const BASE = { budgetMs: 1e6, expectedProducts: 1e4, maxTimed: 3 };

/** Tune once into a fresh store, then replace the entry's kernel/params by `edit`'s; tune again. */
async function retune(candidates: NonNullable<Parameters<typeof autotune>[2]>['candidates'], edit: Partial<CacheEntry>) {
  const ctx = await testContext();
  const store = new MemoryTuneStore();
  const first = await autotune(ctx, a, { ...BASE, candidates, cache: store, warn: () => {} });
  const key = first.report.key;
  store.entries.set(key, { ...store.entries.get(key)!, ...edit });
  const warnings: string[] = [];
  const second = await autotune(ctx, a, { ...BASE, candidates, cache: store, warn: (m) => warnings.push(m) });
  return { second, warnings, after: store.entries.get(key)! };
}

describe('cache entries outside the candidate space', () => {
  it('sell with C = 2 000 000 (hand-edited): ignored with a warning, tuned again, overwritten (was a cache hit)', async () => {
    const { second, warnings, after } = await retune(['sell', 'csr-scalar'], { kernel: 'sell', params: { C: 2_000_000, sigmaChunks: 4, lanes: 1, laneMap: 1, workgroupSize: 256 } });
    expect(warnings.join('\n')).toMatch(/ignoring the cached choice in memory \(parameter C = 2000000 is none the tuner tries \(32, 8, 64\)\); tuning again/);
    expect(second.report.source).toBe('tuned');
    expect(second.params.C ?? 32).not.toBe(2_000_000);
    expect(after.params.C ?? 32).not.toBe(2_000_000);
  }, 120000);

  it('an experimental kernel outside the candidates: the warning names it (was ignored without a word)', async () => {
    const { second, warnings } = await retune(['csr-scalar', 'csr-vector'], { kernel: 'csr-stream', params: {} });
    expect(warnings.join('\n')).toMatch(/ignoring the cached choice in memory \(kernel csr-stream is not among this tuning's candidates\)/);
    expect(second.report.source).toBe('tuned');
  }, 120000);

  it("a value the caller's candidates fix is a cache hit (sell C = 16 asked for)", async () => {
    const { second, warnings } = await retune([{ kernel: 'sell', params: { C: 16 } }], {});
    expect(warnings.filter((w) => /ignoring the cached choice/.test(w))).toEqual([]);
    expect(second.report.source).toBe('cache');
    expect(second.params.C).toBe(16);
  }, 120000);
});

describe('entryOutsideSpace', () => {
  const entry = (kernel: string, params: Record<string, number>): CacheEntry => ({ kernel, params, productMs: 1, conversionMs: 0, uploadMs: 0, method: 'wall', date: '' });
  it('declared, extra (axtuh th 8) and hybrid boundaries up to the longest row are inside', () => {
    expect(entryOutsideSpace(entry('csr-vector', { lanes: 16 }), registry, undefined, 5)).toBeUndefined();
    expect(entryOutsideSpace(entry('axtuh', { th: 8 }), registry, undefined, 5)).toBeUndefined();
    expect(entryOutsideSpace(entry('hybrid', { boundary: 3 }), registry, undefined, 5)).toBeUndefined();
  });
  it('a hybrid boundary beyond the longest row, a lanes value not offered, a parameter of no kernel: outside', () => {
    expect(entryOutsideSpace(entry('hybrid', { boundary: 1_000_000 }), registry, undefined, 5)).toMatch(/boundary = 1000000/);
    expect(entryOutsideSpace(entry('csr-vector', { lanes: 512 }), registry, undefined, 5)).toMatch(/lanes = 512 is none the tuner tries/);
    expect(entryOutsideSpace(entry('csr-vector', { warp: 1 }), registry, undefined, 5)).toMatch(/has no parameter 'warp'/);
  });
});
