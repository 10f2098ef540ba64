/**
 * The autotuner on lavapipe: pruning with reasons, timing, verification against the float64
 * product, the cache (hit with nothing timed, a changed matrix misses, a corrupt file is ignored),
 * the budget, fixed and disabled tuning, and the tuned operator against the reference.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CsrMatrix, csrFromDense, csrSpmv, generators as g, rowLengthStats } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultCachePath } from '../src/autotune/cache-fs';
import {
  type AnySpmvKernel,
  autotune,
  type CandidateSpec,
  csrScalarKernel,
  csrVectorKernel,
  defaultPruneRules,
  enumerateCandidates,
  kernels,
  LocalStorageTuneStore,
  MemoryTuneStore,
  matrixFingerprint,
  profileMatrix,
  readF32,
  reportJson,
  reportTable,
  tunedOperator,
  uploadF32,
} from '../src/index';
import { EPS32, f32, randomVector, testContext } from './helpers';
import { expectOnlyBudgetLimited, expectSoundDecision } from './support/decision';

const dir = mkdtempSync(join(tmpdir(), 'gpusparse-tune-'));
const quiet = { warn: () => {} };
/** A few cheap kernels keep the GPU tests short on lavapipe. */
const FEW: CandidateSpec[] = ['csr-scalar', 'csr-vector', 'ell', 'ell-r', { kernel: 'sell', params: { lanes: 1, laneMap: 1, workgroupSize: 256 } }, 'dia'];

afterAll(async () => (await testContext()).dispose());

/** max over rows of |y − y_ref| / (2·nnz_row·ε·Σ|a x|) for the operator's product on a random x. */
async function errorOverBound(op: { apply(x: never, y: never): void }, a: CsrMatrix): Promise<number> {
  const ctx = await testContext();
  const { GpuVector } = await import('../src/index');
  const x = f32(randomVector(a.cols, 7));
  const a32 = { ...a, values: f32(a.values) };
  const ref = csrSpmv(a32, x);
  const dx = new GpuVector(uploadF32(ctx, x), a.cols);
  const dy = new GpuVector(ctx.buffers.acquire(a.rows * 4), a.rows);
  op.apply(dx as never, dy as never);
  const y = await readF32(ctx, dy.buf, a.rows);
  let worst = 0;
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) s += Math.abs(a32.values[k]! * x[a.colIdx[k]!]!);
    const bound = 2 * (a.rowPtr[i + 1]! - a.rowPtr[i]!) * EPS32 * s;
    const e = Math.abs(y[i]! - ref[i]!);
    worst = Math.max(worst, bound > 0 ? e / bound : e === 0 ? 0 : Number.POSITIVE_INFINITY);
  }
  dx.buf.dispose();
  dy.buf.dispose();
  return worst;
}

describe('autotune: candidates and pruning (no timing)', () => {
  it('prunes ELL on a power-law matrix with a huge max row, with the padding in the reason', () => {
    const a = g.powerLaw(2000, 2000, { alpha: 2.2, minLen: 2, maxLen: 1500, seed: 5 });
    const p = profileMatrix(a, 1024);
    const list = enumerateCandidates(a, p, kernels, defaultPruneRules, 1000);
    const ell = list.filter((c) => c.kernel.id === 'ell');
    expect(ell.length).toBeGreaterThan(0);
    for (const c of ell) {
      // 2000 rows × a max row near 1500 over ~10^4 nnz: padding far past 32, never built, not even by an exhaustive sweep
      expect(c.pruned?.reason).toMatch(/ELL rows·max\/nnz padding \d+\.\d > 32: explodes/);
      expect(c.pruned?.hard).toBe(true);
      expect(c.estimatedBytes).toBeGreaterThan(8 * p.stats.rows * p.stats.max);
    }
    // CSR kernels are not pruned for padding, and unpruned candidates come first
    expect(list.some((c) => c.kernel.id === 'csr-vector' && !c.pruned)).toBe(true);
    const firstPruned = list.findIndex((c) => c.pruned);
    expect(list.slice(firstPruned).every((c) => c.pruned)).toBe(true);
  });

  it('prunes DIA/HM on a random matrix (many diagonals) and keeps them on a banded one', () => {
    const rnd = g.uniformRandom(1500, 1500, 8, 3);
    const pr = profileMatrix(rnd, 1024);
    for (const c of enumerateCandidates(rnd, pr, kernels, defaultPruneRules, 1000).filter((c) => c.kernel.id === 'dia' || c.kernel.id === 'hm')) {
      expect(c.pruned?.reason).toMatch(/diagonals/);
    }
    const band = g.banded(1500, 2, 2, { seed: 1 });
    const pb = profileMatrix(band, 1024);
    const dia = enumerateCandidates(band, pb, kernels, defaultPruneRules, 1000).filter((c) => c.kernel.id === 'dia');
    expect(dia.length).toBeGreaterThan(0);
    expect(dia.every((c) => c.pruned === undefined)).toBe(true);
  });

  it('offers hybrid BOUNDARY values around the 33rd-percentile row length and prunes idle lanes', () => {
    const a = g.powerLaw(3000, 3000, { alpha: 2, minLen: 3, maxLen: 400, seed: 9 });
    const s = rowLengthStats(a);
    const list = enumerateCandidates(a, profileMatrix(a, 1024), kernels, defaultPruneRules, 1000);
    const bounds = new Set(list.filter((c) => c.kernel.id === 'hybrid').map((c) => c.params.boundary));
    expect(bounds.has(s.p33)).toBe(true);
    expect(bounds.has(2 * s.p33)).toBe(true);
    expect([...bounds].every((b) => b! >= 0 && b! <= s.max)).toBe(true);
    // 5-point stencil: rows of ≤ 5 entries, so 32 (and 16) lanes per row are mostly idle; 8 is kept
    const st = g.poisson2d(30);
    const sl = enumerateCandidates(st, profileMatrix(st, 1024), kernels, defaultPruneRules, 1000).filter((c) => c.kernel.id === 'csr-vector');
    expect(sl.find((c) => c.params.lanes === 32)?.pruned?.reason).toMatch(/lanes = 32 > 2·max\(2, p90 row length 5\): most lanes idle/);
    expect(sl.find((c) => c.params.lanes === 8)?.pruned).toBeUndefined();
  });

  it('fingerprints: same structure same key; a changed row-length histogram or content (with contentHash) changes it', () => {
    const a = g.poisson2d(12);
    const b = { ...a, values: a.values.map((v) => v * 2) };
    const fa = matrixFingerprint(a, rowLengthStats(a));
    expect(matrixFingerprint(b, rowLengthStats(b)).key).toBe(fa.key);
    expect(matrixFingerprint(b, rowLengthStats(b), { content: true }).key).not.toBe(matrixFingerprint(a, rowLengthStats(a), { content: true }).key);
    const c = g.poisson2d(13);
    expect(matrixFingerprint(c, rowLengthStats(c)).key).not.toBe(fa.key);
  });

  it('localStorage store: round trip, corrupt content ignored with a warning', () => {
    const items = new Map<string, string>();
    const storage = { getItem: (k: string) => items.get(k) ?? null, setItem: (k: string, v: string) => void items.set(k, v) };
    const entry = { kernel: 'csr-vector', params: { lanes: 4 }, productMs: 0.5, conversionMs: 0, uploadMs: 1, method: 'wall' as const, date: '2026-01-01' };
    new LocalStorageTuneStore(storage).set('k1', entry);
    expect(new LocalStorageTuneStore(storage).get('k1')).toEqual(entry);
    items.set('gpusparse-tune', '[1, 2');
    const warnings: string[] = [];
    const broken = new LocalStorageTuneStore(storage, 'gpusparse-tune', (m) => warnings.push(m));
    expect(broken.get('k1')).toBeUndefined();
    expect(warnings[0]).toMatch(/ignoring the cache localStorage\[gpusparse-tune\]: expected JSON/);
    items.set('gpusparse-tune', JSON.stringify({ version: 1, entries: { k2: { ...entry, params: { lanes: 'x' } } } }));
    const w2: string[] = [];
    expect(new LocalStorageTuneStore(storage, 'gpusparse-tune', (m) => w2.push(m)).get('k2')).toBeUndefined();
    expect(w2[0]).toMatch(/parameter lanes expected an integer, got x/);
  });

  it('default cache path honours GPUSPARSE_CACHE_DIR, then XDG_CACHE_HOME', () => {
    expect(defaultCachePath({ GPUSPARSE_CACHE_DIR: '/x/y' })).toBe(join('/x/y', 'tune.json'));
    expect(defaultCachePath({ XDG_CACHE_HOME: '/c' })).toBe(join('/c', 'gpusparse', 'tune.json'));
  });
});

describe('autotune on the device', () => {
  it('times the survivors, records pruned ones with reasons, verifies the winner, and the tuned operator matches the reference', async () => {
    const ctx = await testContext();
    const a = g.powerLaw(1500, 1500, { alpha: 2.2, minLen: 2, maxLen: 900, seed: 2 });
    const r = await autotune(ctx, a, { cache: false, budgetMs: 1e7, candidates: FEW, reps: 5, ...quiet });
    const rep = r.report;
    expect(rep.source).toBe('tuned');
    expect(rep.timed).toBeGreaterThanOrEqual(3); // csr-scalar and csr-vector (the CSR scouts) and sell
    const ell = rep.trials.filter((t) => t.kernel === 'ell');
    expect(ell.every((t) => t.status === 'pruned' && /padding/.test(t.reason ?? ''))).toBe(true);
    expect(rep.trials.filter((t) => t.kernel === 'dia').every((t) => t.status === 'pruned')).toBe(true);
    for (const t of rep.trials.filter((t) => t.status === 'timed')) {
      expect(t.ms).toBeGreaterThan(0);
      expect(t.gflops).toBeCloseTo((2 * rep.nnz) / (t.ms! * 1e6), 6);
      expect(t.bytes).toBeGreaterThan(0);
      expect(t.conversionMs).toBeGreaterThanOrEqual(0);
      expect(t.uploadMs).toBeGreaterThan(0);
      expect(t.objectiveMs).toBeCloseTo(t.conversionMs! + t.uploadMs! + rep.expectedProducts * t.ms!, 6);
    }
    const win = rep.trials.find((t) => t.verified)!;
    expect(win.kernel).toBe(r.kernel);
    expect(win.maxErrOverBound).toBeLessThanOrEqual(1);
    // the winner has the least objective among the ranked candidates — unless the spreads overlap
    // (uncertain) and a cheaper-to-build one was taken (support/decision.ts: whatever the timing)
    expect(expectSoundDecision(rep).win).toBe(win);
    expect(['timestamp', 'wall']).toContain(rep.method);
    expect(reportTable(rep)).toContain('winner:');
    expect(JSON.parse(reportJson(rep)).trials.length).toBe(rep.trials.length);
    const op = r.operator();
    expect(await errorOverBound(op, a)).toBeLessThanOrEqual(1);
    op.dispose();
  });

  it('caches: a second call is a hit with nothing timed, a changed matrix misses, a corrupt file is ignored', async () => {
    const ctx = await testContext();
    const path = join(dir, 'tune.json');
    const a = g.poisson2d(20);
    const opts = { cache: path, budgetMs: 1e6, candidates: ['csr-vector', 'csr-scalar'] as CandidateSpec[], reps: 3, ...quiet };
    const first = await autotune(ctx, a, opts);
    expect(first.report.source).toBe('tuned');
    expect(first.report.timed).toBeGreaterThan(1);
    const saved = JSON.parse(readFileSync(path, 'utf8'));
    expect(Object.keys(saved.entries)).toContain(first.report.key);
    const second = await autotune(ctx, a, opts);
    expect(second.report.source).toBe('cache');
    expect(second.report.timed).toBe(0);
    expect(second.report.trials.map((t) => t.status)).toEqual(['cached']);
    expect(second.report.trials[0]!.verified).toBe(true);
    expect([second.kernel, second.params]).toEqual([first.kernel, first.params]);
    const changed = await autotune(ctx, g.poisson2d(21), opts);
    expect(changed.report.source).toBe('tuned');
    expect(changed.report.timed).toBeGreaterThan(0);
    writeFileSync(path, '{ this is not json');
    const warnings: string[] = [];
    const third = await autotune(ctx, a, { ...opts, warn: (m: string) => warnings.push(m) });
    expect(third.report.source).toBe('tuned');
    expect(warnings.some((w) => /ignoring the cache .*parse error/.test(w))).toBe(true);
    expect(JSON.parse(readFileSync(path, 'utf8')).version).toBe(1); // rewritten valid
    // an entry naming an unknown kernel is dropped with a warning, not used
    const doc = JSON.parse(readFileSync(path, 'utf8'));
    doc.entries[third.report.key] = { ...doc.entries[third.report.key], kernel: 'no-such-kernel' };
    writeFileSync(path, JSON.stringify(doc));
    const w2: string[] = [];
    const fourth = await autotune(ctx, a, { ...opts, warn: (m: string) => w2.push(m) });
    expect(fourth.report.source).toBe('tuned');
    expect(w2.some((w) => /unknown kernel 'no-such-kernel'/.test(w))).toBe(true);
  });

  it('respects the budget: a tiny budget times fewer candidates and reports the spend', async () => {
    const ctx = await testContext();
    const a = g.uniformRandom(2000, 2000, 12, 4);
    const cands: CandidateSpec[] = ['csr-vector', 'csr-scalar', 'csr-adaptive'];
    const big = await autotune(ctx, a, { cache: false, budgetMs: 1e7, candidates: cands, reps: 3, ...quiet });
    const tiny = await autotune(ctx, a, { cache: false, budgetMs: 1, fraction: 0.1, candidates: cands, reps: 3, ...quiet });
    expect(tiny.report.budgetMs).toBeCloseTo(0.1, 12);
    expect(tiny.report.timed).toBe(1); // the first candidate is always timed
    expect(tiny.report.timed).toBeLessThan(big.report.timed);
    expect(tiny.report.trials.some((t) => t.status === 'budget' && /budget: needs/.test(t.reason ?? ''))).toBe(true);
    expect(tiny.report.spentMs).toBeGreaterThan(0);
    // (not compared with tiny.spentMs: the floor alone, paid by both, varies by more than the rest on a loaded CI machine)
    expect(big.report.costs.timingMs).toBeGreaterThan(0);
    // without a stated budget: fraction · expectedProducts · first product time, at least minBudgetMs (default 500)
    const byProducts = await autotune(ctx, a, { cache: false, expectedProducts: 50, candidates: cands, reps: 3, minBudgetMs: 1e-9, ...quiet });
    const first = byProducts.report.firstProductMs!;
    expect(first).toBeGreaterThan(0);
    expect(byProducts.report.budgetMs).toBeCloseTo(0.1 * 50 * first, 9);
    const floored = await autotune(ctx, a, { cache: false, expectedProducts: 50, candidates: cands, reps: 3, ...quiet });
    expect(floored.report.budgetMs).toBe(Math.max(500, 0.1 * 50 * floored.report.firstProductMs!));
  });

  it('times the CSR baseline first: with room for one trial on a band of 17 (DIA/ELL predicted best) CSR is the one timed', async () => {
    const ctx = await testContext();
    const a = g.banded(3600, 8, 8, { seed: 3 });
    const cands: CandidateSpec[] = ['dia', 'ell', 'csr-scalar'];
    const model = enumerateCandidates(a, profileMatrix(a, 1024), kernels, defaultPruneRules, 1000, cands);
    expect(model[0]!.kernel.format).not.toBe('csr'); // the static model prefers another format here
    const tiny = await autotune(ctx, a, { cache: false, budgetMs: 1, fraction: 0.1, candidates: cands, reps: 3, ...quiet });
    expect(tiny.report.timed).toBe(1);
    expect(tiny.report.trials.find((t) => t.status === 'timed')!.kernel).toBe('csr-scalar');
    expect(tiny.kernel).toBe('csr-scalar');
  });

  it('a fixed choice or tune: false skips tuning', async () => {
    const ctx = await testContext();
    const a = g.poisson2d(10);
    const fixed = await autotune(ctx, a, { fixed: { kernel: 'csr-scalar', params: { workgroupSize: 64 } }, cache: false });
    expect(fixed.report.source).toBe('fixed');
    expect(fixed.report.trials).toHaveLength(0);
    expect(fixed.params.workgroupSize).toBe(64);
    const off = await tunedOperator(ctx, a, { tune: false, cache: false });
    expect(off.tuning.source).toBe('off');
    expect(off.kernel.id).toBe('csr-vector');
    expect(await errorOverBound(off, a)).toBeLessThanOrEqual(1);
    off.dispose();
  });

  it('tunedOperator on a banded matrix (DIA among the candidates) matches the reference; a memory store hits', async () => {
    const ctx = await testContext();
    const a = g.banded(3000, 3, 3, { seed: 8 });
    const store = new MemoryTuneStore();
    const op = await tunedOperator(ctx, a, { cache: store, budgetMs: 1e7, candidates: ['csr-vector', 'dia', 'hm', 'ell'], reps: 3, ...quiet });
    expect(op.tuning.trials.filter((t) => t.kernel === 'dia').every((t) => t.status === 'timed')).toBe(true);
    // the winner's upload is the operator: the builds are spent, so the fastest median product wins
    // (never "cheaper to build"), whatever each one's conversion cost
    const ranked = op.tuning.trials.filter((t) => t.status === 'timed' && t.loMs !== undefined && t.verified !== false);
    expect(op.tuning.winner!.ms).toBe(Math.min(...ranked.map((t) => t.ms!)));
    expect(op.tuning.decision!.cheaperToBuild).toBe(false);
    expect(await errorOverBound(op, a)).toBeLessThanOrEqual(1);
    op.dispose();
    const again = await tunedOperator(ctx, a, { cache: store, budgetMs: 1e7, candidates: ['csr-vector', 'dia', 'hm', 'ell'], ...quiet });
    expect(again.tuning.source).toBe('cache');
    expect(again.label).toBe(op.label);
    expect(await errorOverBound(again, a)).toBeLessThanOrEqual(1);
    again.dispose();
  });

  it('over the whole registry (default candidates, budget from expected products) the choice matches the reference', async () => {
    const ctx = await testContext();
    const a = g.blockStructured(150, 150, 4, 4, 3, 6);
    const op = await tunedOperator(ctx, a, { cache: false, expectedProducts: 20_000, reps: 3, ...quiet });
    const rep = op.tuning;
    // more than the floor — unless the budget (500 ms here) went to the fixed costs of a loaded machine
    expect(rep.timed).toBeGreaterThanOrEqual(1);
    expectOnlyBudgetLimited(rep);
    expect(rep.spentMs).toBeGreaterThan(0);
    expect(new Set(rep.trials.map((t) => t.kernel)).size).toBe(kernels.length);
    expect(rep.trials.filter((t) => t.status === 'timed').every((t) => t.gflops! > 0)).toBe(true);
    expect(await errorOverBound(op, a)).toBeLessThanOrEqual(1);
    op.dispose();
  });

  it('handles n = 0, n = 1 and a matrix of empty rows', async () => {
    const ctx = await testContext();
    for (const a of [csrFromDense([], 0), csrFromDense([[3]]), csrFromDense([[0, 0], [0, 0], [0, 0]])]) {
      const op = await tunedOperator(ctx, a, { cache: false, budgetMs: 1e5, candidates: FEW, reps: 2, ...quiet });
      expect(op.tuning.timed).toBeGreaterThan(0);
      if (a.rows > 0) expect(await errorOverBound(op, a)).toBeLessThanOrEqual(1);
      op.dispose();
    }
  });

  it('tries TH = 8 for AXTUH/AXTCH (seed 004) and the result verifies', async () => {
    const ctx = await testContext();
    const a = g.powerLaw(800, 800, { alpha: 2.2, minLen: 2, maxLen: 300, seed: 4 });
    const r = await autotune(ctx, a, { cache: false, budgetMs: 1e6, candidates: [{ kernel: 'axtch', params: { th: 8, gather: 1 } }, { kernel: 'axtuh', params: { th: 8, gather: 1 } }], reps: 2, ...quiet });
    expect(r.report.trials.map((t) => t.params.th)).toEqual([8, 8, 8, 8]);
    expect(r.report.trials.filter((t) => t.status === 'timed').length).toBe(4);
    expect(r.params.th).toBe(8);
    expect(r.report.trials.find((t) => t.verified)?.maxErrOverBound).toBeLessThanOrEqual(1);
  });

  it('a winner that fails verification is rejected and the next best is taken', async () => {
    const ctx = await testContext();
    // 'wrong': csr-vector scaling the product by 1.5 (fast, incorrect); 'slow': csr-vector run
    // four times over (correct, about 4× slower) — the wrong one wins the timing and must be rejected
    const wrong: AnySpmvKernel = { ...csrVectorKernel, id: 'test-wrong', encode: (c, h, x, y, sc) => csrVectorKernel.encode(c, h, x, y, { alpha: 1.5 * (sc?.alpha ?? 1), beta: sc?.beta ?? 0 }) };
    const slow: AnySpmvKernel = {
      ...csrVectorKernel,
      id: 'test-slow',
      encode: (c, h, x, y, sc) => {
        for (let r = 0; r < 4; r++) csrVectorKernel.encode(c, h, x, y, sc);
      },
    };
    const a = g.uniformRandom(3000, 3000, 10, 6);
    const r = await autotune(ctx, a, { cache: false, budgetMs: 1e7, kernels: [wrong, slow], candidates: [{ kernel: 'test-wrong', params: { lanes: 8 } }, { kernel: 'test-slow', params: { lanes: 8 } }], reps: 3, ...quiet });
    const w = r.report.trials.find((t) => t.kernel === 'test-wrong')!;
    const sl = r.report.trials.find((t) => t.kernel === 'test-slow')!;
    // whatever the timing, the wrong kernel is never the answer: the right one is verified and taken
    expect(r.kernel).toBe('test-slow');
    expect(sl.verified).toBe(true);
    // session 13: on a loaded CI machine neither a 4× product-time gap nor a build cost made of
    // wall time (a 250 ms busy upload lost to a 1.5 s upload of the other) forces the ranking — when
    // spreads overlap the cheaper to build is taken — so the rejection is asserted where it happened
    if (w.verified === false) {
      expect(w.error).toMatch(/verification failed: error\/bound/);
      expect(r.report.rejected).toBe(1);
    } else {
      // ranked second, never tried: the decision put test-slow first by its own rule
      expect(w.verified).toBeUndefined();
      expect(r.report.rejected).toBe(0);
      expectSoundDecision(r.report);
    }
    const op = r.operator();
    expect(await errorOverBound(op, a)).toBeLessThanOrEqual(1);
    op.dispose();
    // the rejection forced, whatever the timing: the wrong kernel alone on the short-list (maxTimed 1;
    // rows of 20 ask the floor rule for csr-vector, of which it is a copy), csr-scalar the floor behind it
    const b = g.uniformRandom(2000, 2000, 20, 5);
    const f = await autotune(ctx, b, { cache: false, budgetMs: 1e6, kernels: [wrong, csrScalarKernel], candidates: [{ kernel: 'test-wrong', params: { lanes: 8 } }, 'csr-scalar'], maxTimed: 1, ...quiet });
    const fw = f.report.trials.find((t) => t.kernel === 'test-wrong')!;
    expect(fw.verified).toBe(false);
    expect(fw.error).toMatch(/verification failed: error\/bound/);
    expect(f.report.rejected).toBe(1);
    expect(f.kernel).toBe('csr-scalar');
    expect(f.report.trials.find((t) => t.kernel === 'csr-scalar' && t.verified)).toBeDefined();
  });

  it('rejects bad options with the expected range', async () => {
    const ctx = await testContext();
    await expect(autotune(ctx, g.poisson2d(4), { fraction: 2 })).rejects.toThrow(/autotune fraction: expected a number in \(0, 1\], got 2/);
    await expect(autotune(ctx, g.poisson2d(4), { budgetMs: -1 })).rejects.toThrow(/autotune budgetMs: expected a number > 0, got -1/);
  });
});
