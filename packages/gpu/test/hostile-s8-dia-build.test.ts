/**
 * Session 8: the device DIA build (kernels/dia/dia-build.ts) on hostile and edge-case CSR.
 * A CSR with duplicate columns in a row used to be scattered into DIA slots by plain stores —
 * one duplicate overwrote the other and the product came out wrong without a word (dia and
 * dia-tiled gave 9 where the CSR kernels give 10); it is now refused as the host conversion
 * refuses it. Edge shapes (0×0, empty, 1×1, corner offsets ±(n−1), rectangular, split over
 * bindings, too many diagonals) are checked against the float64 product.
 */
import { csrFromTriplets, type CsrMatrix, csrSpmv, InvalidMatrixError, NotSupportedError } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { gpuOperatorFromCsr, GpuVectorSpace, tunedOperator } from '../src/index';
import { testContext } from './helpers';

afterAll(async () => (await testContext()).dispose());

const KERNELS = ['dia', 'dia-tiled'];

function tridiagonal(n: number): CsrMatrix {
  const r: number[] = [];
  const c: number[] = [];
  const v: number[] = [];
  for (let i = 0; i < n; i++) {
    for (const d of [-1, 0, 1]) {
      const j = i + d;
      if (j < 0 || j >= n) continue;
      r.push(i);
      c.push(j);
      v.push(d === 0 ? 4 : -1 - (i % 3));
    }
  }
  return csrFromTriplets(n, n, r, c, v);
}

async function product(kernel: string, a: CsrMatrix, params: Record<string, number> = {}, upload: { maxBindingBytes?: number } = {}): Promise<number> {
  const ctx = await testContext();
  const space = new GpuVectorSpace(ctx);
  const op = gpuOperatorFromCsr(ctx, a, { kernel, params, upload });
  try {
    const x = new Float64Array(a.cols).map((_, i) => 1 + i);
    const y = space.create(a.rows);
    op.apply(space.fromArray(x), y);
    const got = await space.toArray(y);
    const want = csrSpmv(a, x);
    let err = 0;
    for (let i = 0; i < a.rows; i++) err = Math.max(err, Math.abs(got[i]! - want[i]!));
    return err;
  } finally {
    op.dispose();
  }
}

const dup: CsrMatrix = { format: 'csr', rows: 2, cols: 2, rowPtr: new Int32Array([0, 3, 4]), colIdx: new Int32Array([0, 0, 1, 1]), values: new Float64Array([1, 2, 7, 5]) };
const unsorted: CsrMatrix = { format: 'csr', rows: 2, cols: 2, rowPtr: new Int32Array([0, 2, 3]), colIdx: new Int32Array([1, 0, 1]), values: new Float64Array([7, 1, 5]) };

describe('device DIA build on hostile CSR', () => {
  for (const k of KERNELS) {
    it(`${k}: duplicate columns in a row are an InvalidMatrixError naming the entry (was a silently wrong product)`, async () => {
      const ctx = await testContext();
      expect(() => gpuOperatorFromCsr(ctx, dup, { kernel: k })).toThrow(InvalidMatrixError);
      expect(() => gpuOperatorFromCsr(ctx, dup, { kernel: k })).toThrow(/diaFromCsr \(device build\).*colIdx\[1\] = 0 in row 0/);
    });
    it(`${k}: unsorted columns are refused as the host conversion refuses them`, async () => {
      const ctx = await testContext();
      expect(() => gpuOperatorFromCsr(ctx, unsorted, { kernel: k })).toThrow(InvalidMatrixError);
    });
  }
  it('the tuner refuses its device-built DIA candidates on such a matrix (they were timed, and past 2^20 non-zeros only sampled rows are verified)', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    // a tridiagonal 200×200 whose row 150 repeats its diagonal column
    const n = 200;
    const rowPtr = new Int32Array(n + 1);
    const col: number[] = [];
    const val: number[] = [];
    for (let i = 0; i < n; i++) {
      for (const d of [-1, 0, 1]) {
        const j = i + d;
        if (j < 0 || j >= n) continue;
        col.push(i === 150 && d === 1 ? i : j);
        val.push(d === 0 ? 4 : -1);
      }
      rowPtr[i + 1] = col.length;
    }
    const a: CsrMatrix = { format: 'csr', rows: n, cols: n, rowPtr, colIdx: Int32Array.from(col), values: Float64Array.from(val) };
    const op = await tunedOperator(ctx, a, { warn: () => {}, cache: false, candidates: ['dia', 'dia-tiled', 'csr-scalar'], budgetMs: 1e6 });
    try {
      const dia = op.tuning.trials.filter((t) => t.kernel.startsWith('dia') && t.status !== 'skipped');
      expect(dia.length).toBeGreaterThan(0);
      // refused at the build; a variant the budget left out never ran
      for (const t of dia) expect(t.status).not.toBe('timed');
      const refused = dia.filter((t) => t.status === 'error');
      expect(refused.length).toBeGreaterThan(0);
      for (const t of refused) expect(t.error).toMatch(/diaFromCsr \(device build\).*row 150/);
      expect(op.label).toMatch(/^csr-scalar/);
      const y = space.create(n);
      op.apply(space.fromArray(new Float64Array(n).fill(1)), y);
      expect((await space.toArray(y))[150]).toBe(2); // −1 + 4 + (−1): the repeat is summed
    } finally {
      op.dispose();
    }
  });

  it('the CSR kernels still take the duplicate matrix and sum its entries (10, 5)', async () => {
    expect(await product('csr-scalar', dup)).toBe(0);
  });
});

describe('device DIA build on edge shapes', () => {
  const cases: Array<[string, CsrMatrix, Record<string, number>?, { maxBindingBytes?: number }?]> = [
    ['0×0', csrFromTriplets(0, 0, [], [], [])],
    ['3×3 without entries', csrFromTriplets(3, 3, [], [], [])],
    ['1×1', csrFromTriplets(1, 1, [0], [0], [4])],
    ['5×5 with offsets ±4 (the corners)', csrFromTriplets(5, 5, [0, 4, 2], [4, 0, 2], [1, 2, 3])],
    ['3×7 (offset +6)', csrFromTriplets(3, 7, [0, 2, 1], [6, 0, 3], [1, 2, 3])],
    ['7×3 (offset −6)', csrFromTriplets(7, 3, [6, 0, 5], [0, 2, 2], [1, 2, 3])],
    ['0×5', csrFromTriplets(0, 5, [], [], [])],
    ['5×0', csrFromTriplets(5, 0, [], [], [])],
    ['300×300 split over 256-byte bindings', tridiagonal(300), {}, { maxBindingBytes: 256 }],
  ];
  for (const k of KERNELS) {
    for (const [name, a, params, upload] of cases) {
      it(`${k}: ${name} gives the float64 product`, async () => {
        expect(await product(k, a, params, upload)).toBeLessThan(1e-4);
      });
    }
    it(`${k}: more diagonals than maxDiagonals is a NotSupportedError naming the limit, before the build`, async () => {
      const ctx = await testContext();
      expect(() => gpuOperatorFromCsr(ctx, tridiagonal(10), { kernel: k, params: { maxDiagonals: 2 } })).toThrow(NotSupportedError);
      expect(() => gpuOperatorFromCsr(ctx, tridiagonal(10), { kernel: k, params: { maxDiagonals: 2 } })).toThrow(/more than 2 occupied diagonals/);
    });
  }
});
