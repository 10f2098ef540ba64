/**
 * The split-row sliced ELL-R kernel (sliced-ell-split, issue 20) beyond the conformance loop:
 * parts × unroll on CI-like rows (the unrolled steps and the remainder both run), on rows of
 * uneven lengths with empty rows and a short last slice, slices split over bindings into slot
 * ranges that accumulate (bench/spmv.ts checks it on the real H10 Hamiltonian the same way).
 * Oracle: the float64 CSR product of the float32-rounded matrix with the conformance tier's
 * per-row bound.
 */
import { generators as g } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { slicedSplitKernel, slicedSplitWgsl } from '../src/kernels/ell/sliced-split.kernel';
import { getKernel, type GpuContext } from '../src/index';
import { checkKernel } from '../src/testing/conformance';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

describe('sliced-ell-split', () => {
  it('is in the registry', () => {
    expect(getKernel('sliced-ell-split')).toBe(slicedSplitKernel);
  });

  const VARIANTS = [
    [32, 8, 4],
    [64, 4, 2],
    [32, 16, 8],
    [32, 1, 1],
    [64, 2, 8],
  ] as const;
  it.each(VARIANTS)('slice %i, parts %i, unroll %i: CI-like and uneven rows, alpha/beta', async (sliceHeight, parts, unroll) => {
    const p = { sliceHeight, parts, unroll, workgroupSize: 256 };
    const ci = g.ciLike(700, { refFraction: 0.1, refDensity: 0.5, expDensity: 0.1, seed: 2 });
    expect(await checkKernel(ctx, slicedSplitKernel, p, ci, 3, 1, 0)).toBe('');
    // rows of 0 … 120 entries (empty rows too), 301 rows: a short last slice
    expect(await checkKernel(ctx, slicedSplitKernel, p, g.powerLaw(301, 400, { seed: 5, maxLen: 120, minLen: 0 }), 5, 2, -0.5)).toBe('');
  });

  it('slices wider than a binding are cut into slot ranges that accumulate', async () => {
    const a = g.oneDenseRow(40, 3001, 3, 3001, 7, 2); // one row of 3001 entries, bindings of 1024 entries
    for (const [sliceHeight, parts, unroll] of [VARIANTS[0], VARIANTS[1]]) {
      const p = { sliceHeight, parts, unroll, workgroupSize: 256 };
      expect(await checkKernel(ctx, slicedSplitKernel, p, a, 7, 1, 0, { maxBindingBytes: 4096 })).toBe('');
      expect(await checkKernel(ctx, slicedSplitKernel, p, a, 7, 2, -0.5, { maxBindingBytes: 4096 })).toBe('');
    }
  });

  it('rejects parts not dividing the workgroup and an unroll outside 1, 2, 4, 8, with the values', () => {
    expect(() => slicedSplitWgsl(3, 4, 256)).toThrow(/parts expected one of 1, 2, 4, 8, 16, 32 dividing 256, got 3/);
    expect(() => slicedSplitWgsl(8, 5, 256)).toThrow(/unroll expected one of 1, 2, 4, 8, got 5/);
  });
});
