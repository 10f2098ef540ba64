/**
 * Session 7 hardening: the device SpGEMM outside float32's range. Before the fix A·B with
 * values 1e20 (products 1e40) returned C(1,1) = Infinity and values 1e-30 (products 1e-60)
 * dropped those entries of C (flushed to 0), both without an error; a NaN in a library CSR
 * operand went through. Now the operands are scaled by powers of two and C scaled back, and what
 * no scaling saves is refused with InvalidMatrixError.
 */
import { type CsrMatrix, csrFromTriplets, csrSpgemmReference, InvalidMatrixError, spgemmMaxRelError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../src/index';
import { spgemmScaling } from '../src/spgemm/range';
import { spgemmCsr } from '../src/spgemm/spgemm';
import { EPS32, testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

/** A tridiagonal n × n matrix with values v(i, j). */
function tri(n: number, v: (i: number, j: number) => number): CsrMatrix {
  const ri: number[] = [];
  const ci: number[] = [];
  const vals: number[] = [];
  for (let i = 0; i < n; i++) {
    for (const j of [i - 1, i, i + 1]) {
      if (j < 0 || j >= n) continue;
      ri.push(i);
      ci.push(j);
      vals.push(v(i, j));
    }
  }
  return csrFromTriplets(n, n, ri, ci, vals);
}

async function expectExact(a: CsrMatrix, b: CsrMatrix) {
  const ref = csrSpgemmReference(a, b);
  for (const format of ['hm', 'cdm'] as const) {
    const r = await spgemmCsr(ctx, a, b, { format });
    expect(r.c.values.length, format).toBe(ref.c.values.length);
    expect(r.c.values.every(Number.isFinite)).toBe(true);
    expect(spgemmMaxRelError(r.c, ref), format).toBeLessThanOrEqual(4 * EPS32 * 4);
  }
}

describe('spgemmCsr outside float32', () => {
  it('values 1e20 (products 1e40 > 3.4e38): C finite and within float32 rounding (was Infinity)', async () => {
    await expectExact(tri(40, (i, j) => 1e20 * (1 + ((i + 2 * j) % 5))), tri(40, (i, j) => 3e19 * (1 + ((2 * i + j) % 3))));
  });
  it('values 1e-30 (products 1e-60, below float32): every entry kept (was flushed and dropped)', async () => {
    await expectExact(tri(40, (i, j) => 1e-30 * (1 + ((i + j) % 4))), tri(40, (i, j) => -2e-31 * (1 + ((i * j) % 3))));
  });
  it('A huge, B tiny (1e300 · 1e-300): C = A·B in float64 terms', async () => {
    await expectExact(tri(17, (i, j) => 1e300 * (2 + i - j)), tri(17, (i, j) => 1e-300 * (2 + i + j)));
  });
  it('operands whose products span more than float32 even scaled: InvalidMatrixError naming both ranges and --backend cpu', async () => {
    const a = tri(8, (i) => (i === 3 ? 1e-30 : 1));
    const b = tri(8, (i) => (i === 5 ? 1e-12 : 1));
    expect(spgemmScaling(a, b).refusal).toBeInstanceOf(InvalidMatrixError);
    await expect(spgemmCsr(ctx, a, b)).rejects.toThrow(/spgemm: A and B: expected .*got A from 1\.00e-30 to 1\.00e\+0 and B from 1\.00e-12 to 1\.00e\+0.*--backend cpu/);
  });
  it('a NaN or Infinity in an operand: InvalidMatrixError naming the operand, row and column (1-based)', async () => {
    const a = tri(6, (i, j) => (i === 2 && j === 3 ? Number.NaN : 1));
    await expect(spgemmCsr(ctx, a, tri(6, () => 1))).rejects.toThrow(/spgemm: A\(row 3, column 4\): expected a finite value, got NaN/);
    await expect(spgemmCsr(ctx, tri(6, () => 1), tri(6, (i) => (i === 0 ? Number.POSITIVE_INFINITY : 1)))).rejects.toThrow(/spgemm: B\(row 1, column 1\)/);
  });
  it('a product beyond float64 (1e200 · 1e200): InvalidMatrixError on C, not Infinity', async () => {
    await expect(spgemmCsr(ctx, tri(5, () => 1e200), tri(5, () => 1e200))).rejects.toThrow(/spgemm: C: expected entries within float64.*exceeds 1\.8e308/);
  });
  it('ordinary operands are not copied (no scaling inside float32)', () => {
    expect(spgemmScaling(tri(5, () => 3), tri(5, () => 0.25))).toEqual({ expA: 0, expB: 0 });
  });
});
