/**
 * Session 9 (wave 2): in-solve tuning chose a candidate, cached it, and the solve then dropped it
 * (`fallBackToVerified`: its products disagreed with the verified kernel's after the switch).
 * The cache must not keep naming the dropped kernel: a cache hit is only checked with one
 * product, which a kernel that goes wrong for some x passes, so the next solve on the same
 * matrix would run it again. After a fallback the cache holds the verified kernel (when it was
 * timed) or nothing.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generators as g } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { type CacheEntry, InSolveOperator, MemoryTuneStore, type TuneStore, tunedOperator } from '../src/index';
import { FileTuneStore } from '../src/autotune/cache-fs';
import { testContext } from './helpers';
import { faultTuning, internals, preferCandidate1, runTuningProducts, type Tuned, tunedInSolve } from './support/faults';

afterAll(async () => (await testContext()).dispose());

const a = g.poisson2d(16);
const CANDIDATES = ['csr-scalar', 'csr-vector', 'ell', 'sliced-ell'];

/**
 * An in-solve operator on `store` whose tuning (real products, checked on the device) chose
 * candidate 1; `untimedFirst` leaves the verified candidate without a product time.
 */
async function switched(store: TuneStore, untimedFirst = false): Promise<{ op: Tuned; bad: CacheEntry['kernel']; badParams: Record<string, number> }> {
  const op = (await tunedInSolve(await testContext(), a, CANDIDATES, store)) as Tuned;
  expect(op).toBeInstanceOf(InSolveOperator);
  const inner = internals(op);
  expect(inner.candidates.length).toBeGreaterThanOrEqual(2);
  preferCandidate1(op);
  await runTuningProducts(op);
  expect(op.activeLabel).toBe(inner.others[0]!.label);
  // no product time for the verified kernel (none from the admission, timestamps unusable)
  if (untimedFirst) (inner.candidates[0] as { trial: { ms?: number } }).trial.ms = undefined;
  const w = op.tuning.winner!;
  return { op, bad: w.kernel, badParams: { ...w.params } };
}

const same = (e: CacheEntry | undefined, kernel: string, params: Record<string, number>) => e !== undefined && e.kernel === kernel && JSON.stringify(e.params) === JSON.stringify(params);

describe('in-solve tuning: a winner dropped after the decision leaves the cache', () => {
  it('the cache then names the verified kernel, and the next tunedOperator on the matrix does not choose the dropped one', async () => {
    const ctx = await testContext();
    const store = new MemoryTuneStore();
    const { op, bad, badParams } = await switched(store);
    const key = op.tuning.key;
    expect(same(store.get(key), bad, badParams)).toBe(true); // the switch cached the winner
    op.fallBackToVerified('gave a wrong product (test)');
    expect(op.activeLabel).toBe(op.label);
    const e = store.get(key);
    expect(e).toBeDefined();
    expect(same(e, bad, badParams)).toBe(false);
    expect(e!.kernel).toBe(op.tuning.winner!.kernel);
    op.dispose();

    const again = await tunedOperator(ctx, a, faultTuning(CANDIDATES, store));
    expect(again.tuning.source).toBe('cache');
    const w = again.tuning.winner!;
    expect(w.kernel === bad && JSON.stringify(w.params) === JSON.stringify(badParams)).toBe(false);
    expect(w.kernel).toBe(e!.kernel);
    again.dispose();
  });

  it('a verified kernel that was never timed: the entry is forgotten (the next tuning starts afresh)', async () => {
    const store = new MemoryTuneStore();
    const { op, bad, badParams } = await switched(store, true);
    expect(same(store.get(op.tuning.key), bad, badParams)).toBe(true);
    op.fallBackToVerified('gave a wrong product (test)');
    expect(store.get(op.tuning.key)).toBeUndefined();
    op.dispose();
  });

  it('a caller store without delete(): the entry stays, and the report says so', async () => {
    const m = new MemoryTuneStore();
    const store: TuneStore = { where: 'caller store', get: (k) => m.get(k), set: (k, e) => m.set(k, e) };
    const { op } = await switched(store, true);
    op.fallBackToVerified('gave a wrong product (test)');
    expect(op.tuning.warnings.join('\n')).toMatch(/cache caller store has no delete\(\).*still names the dropped kernel/);
    op.dispose();
  });
});

describe('FileTuneStore.delete', () => {
  it('removes the entry from memory and from the file, keeping entries another process wrote', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s9d-'));
    try {
      const path = join(dir, 'tune.json');
      const e: CacheEntry = { kernel: 'csr-vector', params: {}, productMs: 1, conversionMs: 0, uploadMs: 0, method: 'wall', date: '2026-11-25T00:00:00Z' };
      const s1 = new FileTuneStore(path, () => {});
      s1.set('a', e);
      new FileTuneStore(path, () => {}).set('b', e); // another process
      s1.delete('a');
      expect(s1.get('a')).toBeUndefined();
      expect(s1.get('b')).toEqual(e);
      const onDisk = JSON.parse(readFileSync(path, 'utf8')) as { entries: Record<string, unknown> };
      expect(Object.keys(onDisk.entries)).toEqual(['b']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
