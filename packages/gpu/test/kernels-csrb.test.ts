/**
 * The nnz-balanced CSR kernel (csr-balanced) beyond the conformance loop: blocks where one row
 * of hundreds of entries sits among rows of 1–3 (it crosses many invocations' slices and is
 * completed by the segmented scan's carry), empty rows inside and at the ends of blocks, rows
 * ending exactly on a slice boundary, every perThread, alpha/beta, and splits over bindings.
 * Oracle: float64 CSR product of the float32-rounded matrix, per-row bound of the conformance tier.
 */
import { type CsrMatrix, generators as g } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { csrBalancedKernel } from '../src/kernels/csrb/balanced.kernel';
import type { GpuContext } from '../src/index';
import { checkKernel } from '../src/testing/conformance';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

/** Rows of the given lengths over `cols` columns (distinct sorted columns, values in [-1, 1)). */
function rowsOf(lengths: readonly number[], cols: number, seed: number): CsrMatrix {
  const r = g.rng(seed);
  let total = 0;
  const rowPtr = Int32Array.from([0, ...lengths.map((l) => (total += l))]);
  // row of length l: one column in each of l equal bands of the columns (sorted, distinct)
  const colIdx = Int32Array.from(lengths.flatMap((l) => Array.from({ length: l }, (_, t) => Math.floor((t + r()) * Math.floor(cols / l)))));
  const values = Float64Array.from(colIdx, () => 2 * r() - 1);
  return { format: 'csr', rows: lengths.length, cols, rowPtr, colIdx, values };
}

describe('csr-balanced', () => {
  // 1-3-entry rows, a 700-entry row in the middle of a block, runs of empty rows, rows of exactly 4 and 8
  const lengths = [0, 0, 3, 1, 4, 2, 700, 1, 0, 3, ...Array.from({ length: 150 }, (_, i) => [1, 2, 3, 0, 4, 8][i % 6]!), 300, 0, 0];
  it.each([2, 4, 8])('perThread %i: a long row among short ones, empty rows, slice-aligned rows, alpha/beta', async (perThread) => {
    const p = { perThread, workgroupSize: 256 };
    for (const seed of [1, 2]) {
      expect(await checkKernel(ctx, csrBalancedKernel, p, rowsOf(lengths, 2000, seed), seed, 1, 0)).toBe('');
      expect(await checkKernel(ctx, csrBalancedKernel, p, rowsOf(lengths, 2000, seed), seed, 2, -0.5)).toBe('');
    }
    expect(await checkKernel(ctx, csrBalancedKernel, p, g.powerLaw(3000, 3000, { seed: 9, maxLen: 900 }), 9, 1, 0)).toBe('');
  });

  it('splits over bindings: row blocks and a row cut into pieces accumulate', async () => {
    const opts = { maxBindingBytes: 2048 };
    expect(await checkKernel(ctx, csrBalancedKernel, { perThread: 4, workgroupSize: 256 }, rowsOf(lengths, 2000, 3), 3, 2, -0.5, opts)).toBe('');
  });
});
