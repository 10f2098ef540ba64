import { afterAll, describe, expect, it, vi } from 'vitest';
import type { CdmMatrix } from '../src/cdm/cdm';
import { cdmFromCsr, cdmToCsr } from '../src/cdm/index';
import { DimensionMismatchError, InvalidParameterError } from '../src/core/errors';
import type { CsrMatrix } from '../src/core/types';
import { csrFromDense, csrTranspose } from '../src/csr/csr';
import { banded, laplacian1d, uniformRandom } from '../src/generators/index';
import type { HmMatrix } from '../src/hm/hm';
import { hmFromCsr, hmToCsr } from '../src/hm/index';
import { cdmSpgemm, hmSpgemm } from '../src/spgemm/index';
import { cdmSpgemmParallel, hmSpgemmParallel, type ParallelSpgemmRun, shutdownSpgemmPool } from '../src/spgemm/parallel';
import { acquireSpgemmPool } from '../src/spgemm/parallel-node';
import { diagonalMatrix, withExplicitZeros } from './format-cases';

afterAll(() => shutdownSpgemmPool());


/** Bit-for-bit equality of two float64 arrays (tells −0 from +0, NaN payloads aside). */
function expectBitIdentical(got: Float64Array, ref: Float64Array): void {
  expect(got.length).toBe(ref.length);
  const g = new Uint32Array(got.buffer, got.byteOffset, got.length * 2);
  const r = new Uint32Array(ref.buffer, ref.byteOffset, ref.length * 2);
  let diff = -1;
  for (let t = 0; t < g.length && diff < 0; t++) if (g[t] !== r[t]) diff = t >>> 1;
  expect(diff, diff < 0 ? '' : `slot ${diff}: ${got[diff]} vs ${ref[diff]}`).toBe(-1);
}

function expectSameMatrix(got: HmMatrix | CdmMatrix, ref: HmMatrix | CdmMatrix, shared = false): void {
  expect(got.format).toBe(ref.format);
  expect([got.rows, got.cols, got.nnz, got.numDiagonals]).toEqual([ref.rows, ref.cols, ref.nnz, ref.numDiagonals]);
  expect(Array.from(got.offsets)).toEqual(Array.from(ref.offsets));
  if (got.format === 'hm' && ref.format === 'hm') expect(Array.from(got.starts)).toEqual(Array.from(ref.starts));
  expect(Array.from(got.present)).toEqual(Array.from(ref.present));
  expect(got.values.buffer instanceof SharedArrayBuffer).toBe(shared);
  expect(got.present.buffer instanceof SharedArrayBuffer).toBe(shared);
  expectBitIdentical(got.values, ref.values);
}

// seed-002-shaped pairs (spgemm-diagonal.test.ts), larger where the split needs rows; float values
// (ints = false) so that a changed summation order would show in the low bits
const pairs: { name: string; a: CsrMatrix; b: CsrMatrix }[] = [
  { name: 'tridiagonal²', a: laplacian1d(9), b: laplacian1d(9) },
  { name: 'banded × banded', a: banded(120, 2, 1, { seed: 3 }), b: banded(120, 1, 3, { seed: 4 }) },
  { name: 'structured, scattered diagonals', a: diagonalMatrix(160, 160, [-57, -17, -3, 0, 5, 22, 90], 1, false), b: diagonalMatrix(160, 160, [-130, -30, -1, 2, 9, 39, 70], 2, false) },
  { name: 'structured with explicit zeros', a: withExplicitZeros(diagonalMatrix(90, 90, [-4, 0, 6, 31], 5, false)), b: diagonalMatrix(90, 90, [-6, 1, 3, -40], 6, false) },
  { name: 'random pattern', a: uniformRandom(80, 80, 6, 7), b: uniformRandom(80, 80, 6, 8) },
  { name: 'cancellation to an explicit zero', a: csrFromDense([[1, 1], [0, 0]]), b: csrFromDense([[1, 0], [-1, 0]]) },
  { name: 'n = 1', a: csrFromDense([[3]]), b: csrFromDense([[-2]]) },
  { name: 'n = 0', a: uniformRandom(0, 0, 0), b: uniformRandom(0, 0, 0) },
];

const workerCounts = [1, 2, 4];

describe('hmSpgemmParallel: bit-identical to hmSpgemm', () => {
  for (const { name, a, b } of pairs) {
    it(name, async () => {
      const ha = hmFromCsr(a);
      const hb = hmFromCsr(b);
      const ref = hmSpgemm(ha, hb);
      for (const workers of workerCounts) {
        const runs: ParallelSpgemmRun[] = [];
        const c = await hmSpgemmParallel(ha, hb, { workers, minWork: 0, onRun: (r) => runs.push(r) });
        expectSameMatrix(c, ref);
        expect(runs.length).toBe(1);
        expect(runs[0]).toMatchObject({ mode: 'workers', workers });
      }
    });
  }
  it('rectangular operands (m×k)(k×n), both orientations', async () => {
    const a = hmFromCsr(diagonalMatrix(70, 110, [-25, -5, 0, 3, 14, 60], 9, false));
    const b = hmFromCsr(diagonalMatrix(110, 37, [-73, -13, -2, 0, 4, 20], 10, false));
    for (const workers of workerCounts) expectSameMatrix(await hmSpgemmParallel(a, b, { workers, minWork: 0 }), hmSpgemm(a, b));
    const at = hmFromCsr(csrTranspose(hmToCsr(b)));
    const bt = hmFromCsr(csrTranspose(hmToCsr(a)));
    for (const workers of workerCounts) expectSameMatrix(await hmSpgemmParallel(at, bt, { workers, minWork: 0 }), hmSpgemm(at, bt));
  });
  it('rejects what hmSpgemm rejects, on both paths', async () => {
    const a = hmFromCsr(uniformRandom(40, 50, 2, 1));
    await expect(hmSpgemmParallel(a, a, { minWork: 0, workers: 2 })).rejects.toThrow(DimensionMismatchError);
    await expect(hmSpgemmParallel(a, a)).rejects.toThrow(DimensionMismatchError);
    const r = hmFromCsr(uniformRandom(30, 30, 5, 1));
    await expect(hmSpgemmParallel(r, r, { maxDiagonals: 10, minWork: 0, workers: 2 })).rejects.toThrow(InvalidParameterError);
    await expect(hmSpgemmParallel(r, r, { workers: 0 })).rejects.toThrow(InvalidParameterError);
    await expect(hmSpgemmParallel(r, r, { workers: 1.5 })).rejects.toThrow(InvalidParameterError);
    await expect(hmSpgemmParallel(r, r, { minWork: -1 })).rejects.toThrow(InvalidParameterError);
  });
});

describe('cdmSpgemmParallel: bit-identical to cdmSpgemm', () => {
  for (const { name, a, b } of pairs) {
    it(name, async () => {
      const ca = cdmFromCsr(a);
      const cb = cdmFromCsr(b);
      const ref = cdmSpgemm(ca, cb);
      for (const workers of workerCounts) expectSameMatrix(await cdmSpgemmParallel(ca, cb, { workers, minWork: 0 }), ref);
    });
  }
  it('transposed operands: AᵀB, ABᵀ, AᵀBᵀ, AAᵀ, and the CSR product of the transposes', async () => {
    const a = cdmFromCsr(diagonalMatrix(97, 97, [-39, -9, -1, 0, 4, 50], 11, false));
    const b = cdmFromCsr(diagonalMatrix(97, 97, [-2, 3, 12, 70], 12, false));
    const cases: [CdmMatrix, CdmMatrix, boolean, boolean][] = [[a, b, true, false], [a, b, false, true], [a, b, true, true], [a, a, false, true]];
    for (const [x, y, transposeA, transposeB] of cases) {
      const ref = cdmSpgemm(x, y, { transposeA, transposeB });
      for (const workers of workerCounts) expectSameMatrix(await cdmSpgemmParallel(x, y, { workers, minWork: 0, transposeA, transposeB }), ref);
    }
    // and Aᵀ·B read through reverse diagonals equals the product of an explicit transpose
    const explicit = cdmSpgemm(cdmFromCsr(csrTranspose(cdmToCsr(a))), b);
    const viaT = await cdmSpgemmParallel(a, b, { workers: 2, minWork: 0, transposeA: true });
    expect(Array.from(cdmToCsr(viaT).colIdx)).toEqual(Array.from(cdmToCsr(explicit).colIdx));
    expect(Array.from(viaT.offsets)).toEqual(Array.from(explicit.offsets));
  });
  it('rejects different orders', async () => {
    const x = cdmFromCsr(laplacian1d(4));
    const y = cdmFromCsr(laplacian1d(5));
    await expect(cdmSpgemmParallel(x, y, { minWork: 0 })).rejects.toThrow(DimensionMismatchError);
  });
});

describe('serial fallback', () => {
  it('runs the serial function below minWork (default threshold) and in parallel above it', async () => {
    const small = hmFromCsr(laplacian1d(50)); // 148 stored × 3 diagonals = 444 candidates
    const runs: ParallelSpgemmRun[] = [];
    const c = await hmSpgemmParallel(small, small, { workers: 2, onRun: (r) => runs.push(r) });
    expectSameMatrix(c, hmSpgemm(small, small));
    expect(runs[0]).toMatchObject({ mode: 'serial', reason: 'small', work: 444 });
    // 20 diagonals −9 … 10 of order 1000: Σ(1000 − |d|) = 19 900 stored × 20 = 398 000 ≥ 200 000
    const big = hmFromCsr(diagonalMatrix(1000, 1000, Array.from({ length: 20 }, (_, t) => t - 9), 3, false));
    expectSameMatrix(await hmSpgemmParallel(big, big, { workers: 2, onRun: (r) => runs.push(r) }), hmSpgemm(big, big));
    expect(runs[1]).toMatchObject({ mode: 'workers', reason: 'parallel', workers: 2, work: 398_000 });
    // C's 39 diagonals cut into ranges of about equal cost, about 8 per worker
    expect(runs[1].chunks).toBeGreaterThanOrEqual(8);
    expect(runs[1].chunks).toBeLessThanOrEqual(17);
  });
  it('runs the serial function when worker threads are unavailable (as in a browser bundle)', async () => {
    vi.resetModules();
    vi.doMock('node:worker_threads', () => ({}));
    try {
      const mod = await import('../src/spgemm/parallel');
      const a = hmFromCsr(diagonalMatrix(60, 60, [-3, 0, 2, 9], 4, false));
      const runs: ParallelSpgemmRun[] = [];
      const c = await mod.hmSpgemmParallel(a, a, { workers: 2, minWork: 0, onRun: (r) => runs.push(r) });
      expectSameMatrix(c, hmSpgemm(a, a));
      expect(runs[0]).toMatchObject({ mode: 'serial', reason: 'no-workers' });
      const x = cdmFromCsr(diagonalMatrix(60, 60, [-3, 0, 2, 9], 5, false));
      const d = await mod.cdmSpgemmParallel(x, x, { workers: 2, minWork: 0, transposeB: true, onRun: (r) => runs.push(r) });
      expectSameMatrix(d, cdmSpgemm(x, x, { transposeB: true }));
      expect(runs[1]).toMatchObject({ mode: 'serial', reason: 'no-workers' });
    } finally {
      vi.doUnmock('node:worker_threads');
      vi.resetModules();
    }
  });
});

describe('worker pool', () => {
  it('sharedResult: C stays in the workers\' SharedArrayBuffers, same bits', async () => {
    const a = hmFromCsr(diagonalMatrix(50, 50, [-7, 0, 1, 12], 15, false));
    expectSameMatrix(await hmSpgemmParallel(a, a, { workers: 2, minWork: 0, sharedResult: true }), hmSpgemm(a, a), true);
    const x = cdmFromCsr(diagonalMatrix(50, 50, [-7, 0, 1, 12], 16, false));
    expectSameMatrix(await cdmSpgemmParallel(x, x, { workers: 2, minWork: 0, sharedResult: true }), cdmSpgemm(x, x), true);
  });
  it('rejects (does not hang or crash) when a worker fails, and the next product starts fresh threads', async () => {
    const pool = await acquireSpgemmPool(2);
    expect(pool).toBeDefined();
    // a job whose arrays are missing: the kernel throws a TypeError inside the worker
    const broken = { kind: 'hm', m: 4, n: 4, aOffsets: new Int32Array([0]), aStarts: new Int32Array([0]), aLens: new Int32Array([4]) };
    await expect(pool!.run(broken as never, [[0, 2], [2, 4]], 2)).rejects.toThrow(/spgemm worker failed on chunk/);
    const a = hmFromCsr(banded(64, 3, 2, { seed: 9 }));
    expectSameMatrix(await hmSpgemmParallel(a, a, { workers: 2, minWork: 0 }), hmSpgemm(a, a));
  });
  it('runs concurrent products one after another, each correct', async () => {
    const a = cdmFromCsr(diagonalMatrix(120, 120, [-30, -2, 0, 1, 17], 13, false));
    const b = cdmFromCsr(diagonalMatrix(120, 120, [-5, 0, 3, 44], 14, false));
    const [x, y] = await Promise.all([cdmSpgemmParallel(a, b, { workers: 2, minWork: 0 }), cdmSpgemmParallel(b, a, { workers: 4, minWork: 0, transposeA: true })]);
    expectSameMatrix(x, cdmSpgemm(a, b));
    expectSameMatrix(y, cdmSpgemm(b, a, { transposeA: true }));
  });
});
