/**
 * Matrix statistics on the device (packages/gpu/src/profile): equal to the host's
 * `rowLengthStats` / `diagonalStats` / sliced-ELL slot counts on the testdata matrices and on
 * generated ones (power law, empty rows, rectangular, split over bindings), and the shared CSR
 * upload they read is reference-counted.
 */
import { type CsrMatrix, csrFromDense, csrSpmv, diagonalStats, generators as g, readMatrixMarket, rowLengthStats } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { dataFile } from '../../../testdata/index';
import { uploadCsrArrays } from '../src/kernels/csr/csr-device';
import { csrAdaptiveKernel, csrScalarKernel, csrVectorKernel, readF32, uploadF32 } from '../src/index';
import { type DeviceMatrixStats, deviceMatrixStats } from '../src/profile/device-stats';
import { SCAN_LONG_ROW } from '../src/profile/matrix-stats.kernel';
import { f32, randomVector, testContext } from './helpers';

afterAll(async () => (await testContext()).dispose());

/** Host sliced-ELL slots: Σ over chunks of C rows of C · longest row. */
function hostSlices(a: CsrMatrix, C: number): number {
  let s = 0;
  for (let c = 0; c < a.rows; c += C) {
    let m = 0;
    for (let r = c; r < Math.min(a.rows, c + C); r++) m = Math.max(m, a.rowPtr[r + 1]! - a.rowPtr[r]!);
    s += m * C;
  }
  return s;
}

const SELL = [
  { C: 8, sigma: 32 },
  { C: 32, sigma: 128 },
  { C: 32, sigma: 512 },
  { C: 64, sigma: 1024 },
];

/** Host SELL-C-σ slots: rows sorted by length (descending) inside windows of σ rows, chunks of C. */
function hostSell(a: CsrMatrix, C: number, sigma: number): number {
  let s = 0;
  for (let w = 0; w < a.rows; w += sigma) {
    const lens: number[] = [];
    for (let r = w; r < Math.min(a.rows, w + sigma); r++) lens.push(a.rowPtr[r + 1]! - a.rowPtr[r]!);
    lens.sort((x, y) => y - x);
    for (let c = 0; c < lens.length; c += C) s += C * lens[c]!;
  }
  return s;
}

/** Device statistics equal to the host's; `slices` false: the padded-slot sums are not compared (chunks are cut per binding block, so they are exact only where every block's rows are a multiple of C or all rows are alike). */
async function check(a: CsrMatrix, maxBindingBytes?: number, slices = true): Promise<DeviceMatrixStats> {
  const ctx = await testContext();
  const csr = uploadCsrArrays(ctx, a, 'test', { maxBindingBytes });
  try {
    const d = await deviceMatrixStats(ctx, csr, [1, 8, 32], SELL);
    if (typeof d === 'string') throw new Error(d);
    const { rsd, rsdp, ...exact } = rowLengthStats(a);
    const { rsd: drsd, rsdp: drsdp, ...dexact } = d.stats;
    expect(dexact).toEqual(exact);
    expect(drsd).toBeCloseTo(rsd, 10);
    expect(drsdp).toBeCloseTo(rsdp, 8);
    expect([...d.offsets]).toEqual([...diagonalStats(a).offsets]);
    if (!slices) return d;
    for (const C of [1, 8, 32]) expect(d.sliceSlots.get(C)).toBe(hostSlices(a, C));
    for (const { C, sigma } of SELL) expect(d.sellSlots.get(`${C}:${sigma}`)).toBe(hostSell(a, C, sigma));
    return d;
  } finally {
    csr.release();
  }
}

describe('device matrix statistics', () => {
  it('equal the host statistics on the testdata matrices', async () => {
    for (const f of ['1138_bus.mtx', 'bcsstk05.mtx', 'rajat19.mtx', 'west0479.mtx', 'arc130.mtx', 'LFAT5.mtx']) {
      const a = (await readMatrixMarket(dataFile('matrices', f))).matrix;
      await check(a);
    }
  });

  it('equal them on power-law, rectangular, empty-row and tiny matrices, and over several bindings', async () => {
    await check(g.powerLaw(3000, 3000, { alpha: 1.8, seed: 5, maxLen: 900 }));
    await check(g.uniformRandom(700, 2500, 9, 3));
    await check(csrFromDense([[0, 0, 0], [0, 0, 0]]));
    await check(csrFromDense([[2]]));
    await check({ format: 'csr', rows: 0, cols: 0, rowPtr: new Int32Array(1), colIdx: new Int32Array(0), values: new Float64Array(0) });
    const split = g.banded(5000, 3, 4, { seed: 2 });
    const d = await check(split, 4096 * 4); // 4096 entries per binding: 10 blocks
    expect(d.stats.occupiedDiagonals).toBe(8);
  });

  it('equal them where rows past SCAN_LONG_ROW entries are walked by the whole workgroup (several in one workgroup, at the threshold, over bindings)', async () => {
    // lengths in row order: the threshold itself and one past it, several long rows in the first
    // workgroup of 256 rows, a full row in a later one, short rows between
    const long: Record<number, number> = { 0: 3000, 3: SCAN_LONG_ROW, 4: SCAN_LONG_ROW + 1, 5: 2048, 9: 1100, 255: 1500, 256: 1200, 700: 3000 };
    const rows = 1000;
    const cols = 3000;
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % 2 ** 31) / 2 ** 31;
    const rowPtr = new Int32Array(rows + 1);
    const colIdx: number[] = [];
    for (let r = 0; r < rows; r++) {
      const len = long[r] ?? Math.floor(rand() * 12);
      // distinct columns, ascending: every len-th of a random rotation of 0 … cols − 1
      const start = Math.floor(rand() * cols);
      const picked = Array.from({ length: len }, (_, k) => (start + Math.floor((k * cols) / len)) % cols).sort((x, y) => x - y);
      colIdx.push(...picked);
      rowPtr[r + 1] = colIdx.length;
    }
    const a: CsrMatrix = { format: 'csr', rows, cols, rowPtr, colIdx: Int32Array.from(colIdx), values: Float64Array.from(colIdx, (_, k) => 1 + (k % 5)) };
    const d = await check(a);
    expect(d.stats.max).toBe(3000);
    expect(d.stats.occupiedDiagonals).toBeGreaterThan(3000); // the full rows alone reach every column
    await check(a, 4096 * 4, false); // blocks of ≤ 4096 entries: every long row whole in its block
    await check(g.oneDenseRow(3000, 3000, 8, 2500, 17, 112));
  });

  it('the shared upload is held until its last holder releases it', async () => {
    const ctx = await testContext();
    const csr = uploadCsrArrays(ctx, g.poisson2d(10), 'test');
    csr.retain();
    csr.release();
    expect(csr.holders).toBe(1);
    csr.release();
    expect(() => csr.retain()).toThrow(/still held/);
  });

  it('every CSR kernel runs on one shared upload split over several bindings, and matches the reference', async () => {
    const ctx = await testContext();
    const a = g.powerLaw(3000, 3000, { alpha: 2, minLen: 1, maxLen: 300, seed: 12 });
    const opts = { maxBindingBytes: 2048 * 4 };
    const shared = uploadCsrArrays(ctx, a, 'test', opts);
    expect(shared.blocks.length).toBeGreaterThan(3);
    const x = f32(randomVector(a.cols, 3));
    const ref = csrSpmv({ ...a, values: f32(a.values) }, x);
    const dx = uploadF32(ctx, x);
    const dy = ctx.buffers.acquire(a.rows * 4);
    for (const k of [csrScalarKernel, csrVectorKernel, csrAdaptiveKernel]) {
      const h = k.upload(ctx, a, {}, { ...opts, sharedCsr: shared });
      expect(h.parts.map((p) => p.colIdx)).toEqual(shared.blocks.map((b) => b.colIdx));
      k.encode(ctx, h, dx, dy);
      const y = await readF32(ctx, dy, a.rows);
      let worst = 0;
      for (let i = 0; i < a.rows; i++) worst = Math.max(worst, Math.abs(y[i]! - ref[i]!) / (1e-5 * (1 + Math.abs(ref[i]!))));
      expect(worst, k.id).toBeLessThanOrEqual(1);
      h.dispose();
    }
    expect(shared.holders).toBe(1);
    expect(() => csrScalarKernel.upload(ctx, g.poisson2d(5), {}, { sharedCsr: shared })).toThrow(/shared upload of another/);
    shared.release();
    dx.dispose();
    dy.dispose();
  });
});

/** Every object reachable from `root` through own properties (GPU objects and typed arrays are leaves). */
function reachable(root: unknown, seen = new Set<unknown>()): Set<unknown> {
  if (root === null || typeof root !== 'object' || seen.has(root)) return seen;
  seen.add(root);
  if (ArrayBuffer.isView(root) || root instanceof ArrayBuffer) return seen;
  for (const v of Object.values(root as Record<string, unknown>)) reachable(v, seen);
  return seen;
}

describe('a CSR upload does not keep the host matrix alive', () => {
  // the chunked CI assembly uploads 10^9 non-zeros chunk by chunk and drops each host chunk: a
  // handle that held its source kept 12 B per non-zero on the host (21 GB at N2 CAS(10e,16o))
  it('neither the shared arrays nor a kernel handle reach the matrix or its arrays', async () => {
    const ctx = await testContext();
    const a = g.poisson2d(20);
    const shared = uploadCsrArrays(ctx, a);
    const h = csrVectorKernel.upload(ctx, a, csrVectorKernel.defaults, { sharedCsr: shared });
    const seen = reachable(h);
    for (const x of [a, a.values, a.colIdx]) expect(seen.has(x)).toBe(false);
    expect(shared.isSourceOf(a)).toBe(true);
    expect(shared.isSourceOf(g.poisson2d(20))).toBe(false);
    expect(shared.source).toEqual({ rows: a.rows, cols: a.cols, nnz: a.rowPtr[a.rows] });
    h.dispose();
    shared.release();
  });
});
