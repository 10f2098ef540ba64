import { generators as g, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it, vi } from 'vitest';
import { estimateGap, MAX_ESTIMATE_GAP } from '../src/eigen/ritz-estimates';
import { lanczos } from '../src/index';

// count the projected-matrix estimates Lanczos takes (the real function runs underneath)
const calls = vi.hoisted(() => ({ n: 0 }));
vi.mock('../src/eigen/ritz-estimates', async (importOriginal) => {
  const mod = await importOriginal<typeof import('../src/eigen/ritz-estimates')>();
  const counted = (...a: Parameters<typeof mod.ritzEstimates>) => {
    calls.n++;
    return mod.ritzEstimates(...a);
  };
  return { ...mod, ritzEstimates: counted };
});

describe('estimateGap (the Ritz-estimate schedule of the one-pass host Lanczos)', () => {
  it('estimates every step at or below the threshold and when the ratio is not finite', () => {
    expect(estimateGap({ iteration: 10, logRatio: 0 }, { iteration: 9, logRatio: 1 })).toBe(1);
    expect(estimateGap({ iteration: 10, logRatio: -3 }, undefined)).toBe(1);
    expect(estimateGap({ iteration: 10, logRatio: Number.NaN }, undefined)).toBe(1);
    expect(estimateGap({ iteration: 10, logRatio: Number.POSITIVE_INFINITY }, undefined)).toBe(1);
  });
  it('skips half the predicted steps to convergence, at most MAX_ESTIMATE_GAP', () => {
    // falling 1 per step with 4 to go: 2 steps; with 40 to go: the cap; stagnating: the cap
    expect(estimateGap({ iteration: 20, logRatio: 4 }, { iteration: 18, logRatio: 6 })).toBe(2);
    expect(estimateGap({ iteration: 20, logRatio: 40 }, { iteration: 19, logRatio: 41 })).toBe(MAX_ESTIMATE_GAP);
    expect(estimateGap({ iteration: 20, logRatio: 5 }, { iteration: 19, logRatio: 4 })).toBe(MAX_ESTIMATE_GAP);
    expect(estimateGap({ iteration: 20, logRatio: 1 }, { iteration: 19, logRatio: 5 })).toBe(1);
  });
  it('far from convergence waits up to 8 steps (s10: was 4; an estimate costs ≈ 40 % of a small step)', () => {
    // falling 0.5 per step with 20 to go: 20 predicted steps to skip, capped at 8; 12 to go at 1 per step: 6
    expect(MAX_ESTIMATE_GAP).toBe(8);
    expect(estimateGap({ iteration: 30, logRatio: 20 }, { iteration: 28, logRatio: 21 })).toBe(8);
    expect(estimateGap({ iteration: 30, logRatio: 12 }, { iteration: 29, logRatio: 13 })).toBe(6);
  });
});

describe('lanczos on the one-pass host path takes fewer Ritz estimates', () => {
  const a = g.poisson2d(30); // n = 900, ‖A‖ ≈ 8
  const op = HostOperator.fromCsr(a);
  it('without onIteration: fewer estimates than steps, the same products and eigenvalues as estimating every step', async () => {
    const space = new HostVectorSpace();
    calls.n = 0;
    const free = await lanczos(space, op, { k: 4, tol: 1e-8, checkMultiplicity: false });
    const scheduled = calls.n;
    calls.n = 0;
    let records = 0;
    const every = await lanczos(space, op, { k: 4, tol: 1e-8, checkMultiplicity: false, onIteration: () => void records++ });
    const everyCalls = calls.n;
    expect(free.converged && every.converged).toBe(true);
    expect(everyCalls).toBeGreaterThanOrEqual(every.iterations - 1); // one per step with a callback
    expect(records).toBe(everyCalls);
    expect(scheduled).toBeLessThan(0.6 * free.iterations);
    expect(free.stats.matvecs).toBeLessThanOrEqual(every.stats.matvecs + 2);
    for (let i = 0; i < 4; i++) expect(Math.abs(free.values[i]! - every.values[i]!)).toBeLessThan(1e-9);
    for (const v of [...free.vectors, ...every.vectors]) space.release(v);
  });
});

describe('lanczos on the one-pass host path counts the readbacks it makes', () => {
  it('one per step plus its second Gram–Schmidt passes (before: a second, empty readback per step, ≥ 2 per step)', async () => {
    const space = new HostVectorSpace();
    const r = await lanczos(space, HostOperator.fromCsr(g.poisson2d(30)), { k: 4, tol: 1e-8, checkMultiplicity: false });
    expect(r.converged).toBe(true);
    expect(r.stats.readbacks).toBeGreaterThanOrEqual(r.iterations);
    expect(r.stats.readbacks).toBeLessThan(1.5 * r.iterations);
    for (const v of r.vectors) space.release(v);
  });
});
