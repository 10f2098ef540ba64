/**
 * The merge-path CSR kernel (csr-merge, issue 20) beyond the conformance cases: the host plan
 * (every row in exactly one tile or unit, tiles within their item and row caps, long rows cut into
 * chunks of at most the cap with one fix-up segment each), and on the device every conformance
 * case at each perThread × workgroup size and with every long row cut (chunkTiles 1); rows of
 * exactly the tile and long-row thresholds, runs of empty rows at the ends and inside tiles, a
 * row of 10^5 entries cut into 49 units summed by the fix-up pass, a row cut over bindings and
 * then into chunks, n = 1 013 (a multiple of nothing the kernel uses), alpha/beta. The kernel uses
 * no subgroup operation, so lavapipe's 8-wide subgroups and NVIDIA's 32 run the same code.
 * Oracle: the float64 CSR product of the float32-rounded matrix with the conformance tier's
 * per-row bound.
 */
import { type CsrMatrix, generators as g } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { experimentalKernels, type GpuContext, getKernel, kernels, readF32, uploadF32 } from '../src/index';
import { csrMergeKernel } from '../src/kernels/csr-merge/merge.kernel';
import { NO_SLOT, planMerge } from '../src/kernels/csr-merge/merge-plan';
import { blockScanUsesSubgroups } from '../src/kernels/wgsl/scan';
import { CASES, checkKernel, SEEDS } from '../src/testing/conformance';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

/** A matrix with the given row lengths: row i's columns are a random start plus a stride (distinct, sorted). */
function byLengths(lengths: readonly number[], cols: number, seed: number): CsrMatrix {
  const r = g.rng(seed);
  const rowPtr = new Int32Array(lengths.length + 1);
  lengths.forEach((l, i) => {
    rowPtr[i + 1] = rowPtr[i]! + l;
  });
  const colIdx = new Int32Array(rowPtr[lengths.length]!);
  const values = new Float64Array(colIdx.length);
  lengths.forEach((l, i) => {
    const step = Math.max(1, Math.floor(cols / Math.max(1, l)));
    const start = Math.floor(r() * (cols - (l - 1) * step));
    for (let t = 0; t < l; t++) {
      colIdx[rowPtr[i]! + t] = start + t * step;
      values[rowPtr[i]! + t] = 2 * r() - 1;
    }
  });
  return { format: 'csr', rows: lengths.length, cols, rowPtr, colIdx, values };
}

const ptr = (lengths: readonly number[]) => Int32Array.from([0, ...lengths.map((_, i) => lengths.slice(0, i + 1).reduce((s, l) => s + l, 0))]);

// empty runs at both ends and inside, rows at the thresholds of perThread 8 × 256 (tile 2048 items,
// long rows ≥ 1024 entries) and of perThread 4 × 128 (512 / 256), 1 013 short rows, one of 5 000
const MIXED = [0, 0, 0, 3, 1, 5000, 2, 0, 1, 2047, 2046, 1023, 1024, 255, 256, 511, 512, ...Array.from({ length: 1013 }, (_, i) => (i * 7) % 6), 0, 700, 0, 0];

describe('csr-merge plan', () => {
  const shape = { tileItems: 64, tileRows: 32, longMin: 32, chunkMax: 100 };
  it('covers every row once: tiles of consecutive short rows within both caps, long rows as units, cut rows with one segment', () => {
    const lengths = [0, 0, 5, 31, 32, 250, 1, 0, 63, ...Array.from({ length: 90 }, (_, i) => i % 3), 101, 0];
    const rp = ptr(lengths);
    const p = planMerge(rp, lengths.length, shape);
    const seen = new Int32Array(lengths.length);
    for (let t = 0; t < p.tiles.length; t += 2) {
      const [r0, r1] = [p.tiles[t]!, p.tiles[t + 1]!];
      expect(r1).toBeGreaterThan(r0);
      expect(r1 - r0).toBeLessThanOrEqual(shape.tileRows);
      expect(rp[r1]! - rp[r0]! + (r1 - r0)).toBeLessThanOrEqual(shape.tileItems);
      for (let r = r0; r < r1; r++) seen[r]!++;
    }
    const entries = new Map<number, number>();
    for (let u = 0; u < p.units.length; u += 4) {
      const [row, k0, k1] = [p.units[u]!, p.units[u + 1]!, p.units[u + 2]!];
      expect(lengths[row]).toBeGreaterThanOrEqual(shape.longMin);
      expect(k1 - k0).toBeLessThanOrEqual(shape.chunkMax);
      entries.set(row, (entries.get(row) ?? 0) + k1 - k0);
    }
    for (const [row, n] of entries) {
      expect(n).toBe(lengths[row]);
      seen[row]!++;
    }
    expect(Array.from(seen).every((s) => s === 1)).toBe(true);
    // 250 → 3 chunks (slots 0–2), 101 → 2 chunks (slots 3–4): one segment each, in row order
    expect(Array.from(p.segments)).toEqual([5, 0, 3, 99, 3, 5]);
    expect(p.slots).toBe(5);
    expect(Array.from(p.units.filter((_, i) => i % 4 === 3)).filter((s) => s === NO_SLOT).length).toBe(2); // the rows of 32 and 63 (31 is short)
  });

  it('refuses a shape that cannot hold a row', () => {
    expect(() => planMerge(ptr([1]), 1, { ...shape, tileItems: 1 })).toThrow(/tileItems expected an integer ≥ 2, got 1/);
    expect(() => planMerge(ptr([1]), 1, { ...shape, chunkMax: 0 })).toThrow(/chunkMax/);
  });
});

describe('csr-merge on the device', () => {
  it('is a registered kernel (conformance tier, tuner candidate: a scout on power-law rows)', () => {
    expect(getKernel('csr-merge')).toBe(csrMergeKernel);
    expect(kernels).toContain(csrMergeKernel);
    expect(experimentalKernels).not.toContain(csrMergeKernel);
    // the H100's best on the bench power law (session 12: 0.210 ms against cuSPARSE's 0.230–0.248)
    expect(csrMergeKernel.defaults).toEqual({ perThread: 4, workgroupSize: 128, chunkTiles: 16, unrolled: 1, scan: 0 });
  });

  const VARIANTS = [
    { perThread: 4, workgroupSize: 128, chunkTiles: 16, unrolled: 1, scan: 0 }, // the defaults
    { perThread: 8, workgroupSize: 256, chunkTiles: 16, unrolled: 1, scan: 1 },
    { perThread: 4, workgroupSize: 128, chunkTiles: 16, unrolled: 0, scan: 0 },
    { perThread: 8, workgroupSize: 128, chunkTiles: 1, unrolled: 0, scan: 1 },
    { perThread: 4, workgroupSize: 256, chunkTiles: 1, unrolled: 1, scan: 0 },
    // the H100 grid's large tiles (27.7 KB and 10.8 KB of workgroup memory; lavapipe offers 32 KB)
    { perThread: 16, workgroupSize: 256, chunkTiles: 16, unrolled: 1, scan: 1 },
    { perThread: 12, workgroupSize: 128, chunkTiles: 1, unrolled: 1, scan: 0 },
  ] as const;
  it.each(VARIANTS)('every conformance case: %o', async (p) => {
    for (const [name, gen, opts] of CASES) {
      const r = await checkKernel(ctx, csrMergeKernel, p, gen(SEEDS[0]!), SEEDS[0]!, 2, -0.5, opts);
      expect(r, `${name}: ${r}`).toBe('');
    }
  });

  it.each(VARIANTS)('rows at the tile and long-row thresholds among short and empty ones, alpha/beta: %o', async (p) => {
    for (const seed of [1, 2]) {
      expect(await checkKernel(ctx, csrMergeKernel, p, byLengths(MIXED, 6000, seed), seed, 1, 0)).toBe('');
      expect(await checkKernel(ctx, csrMergeKernel, p, byLengths(MIXED, 6000, seed), seed, -1.5, 0.25)).toBe('');
    }
    expect(await checkKernel(ctx, csrMergeKernel, p, g.powerLaw(20_000, 20_000, { seed: 5, minLen: 2, maxLen: 6000, alpha: 2.2 }), 5, 1, 0)).toBe('');
  });

  it('a row of 10^5 entries cut into 49 units: two dispatches, the fix-up sums them', async () => {
    const a = byLengths([3, 0, 100_000, 1, 0], 100_000, 4);
    const p = { perThread: 8, workgroupSize: 256, chunkTiles: 1, unrolled: 1, scan: 1 };
    const h = csrMergeKernel.upload(ctx, a, p);
    expect(h.merge[0]).toMatchObject({ units: 49, tiles: 2, segments: 1 });
    const x = uploadF32(ctx, new Float64Array(a.cols).fill(1));
    const y = ctx.buffers.acquire(a.rows * 4);
    const before = ctx.recorder.dispatches;
    csrMergeKernel.encode(ctx, h, x, y);
    expect(ctx.recorder.dispatches - before).toBe(2);
    h.dispose();
    x.dispose();
    y.dispose();
    expect(await checkKernel(ctx, csrMergeKernel, p, a, 4, 2, -0.5)).toBe('');
    // chunkTiles 16: units of 32 768 entries (4 units, the same fix-up)
    expect(await checkKernel(ctx, csrMergeKernel, { ...p, chunkTiles: 16 }, a, 4, 1, 0)).toBe('');
  });

  it('slots past a row\'s end multiply nothing: x[0] = Inf, column 0 unused, rows not a multiple of any step', async () => {
    // rows of 1 500 and 3 001 entries (long-row units of perThread 8 × 256: 8 slots × 256 per step) among short ones
    const a = byLengths([2, 1500, 3, 0, 3001, 1], 3500, 8);
    for (let k = 0; k < a.colIdx.length; k++) a.colIdx[k] = Math.max(1, a.colIdx[k]!);
    const xs = Float64Array.from({ length: a.cols }, (_, j) => (j === 0 ? Number.POSITIVE_INFINITY : 1));
    for (const chunkTiles of [16, 1]) {
      const h = csrMergeKernel.upload(ctx, a, { perThread: 8, workgroupSize: 256, chunkTiles, unrolled: 1, scan: 0 });
      const x = uploadF32(ctx, xs);
      const y = ctx.buffers.acquire(a.rows * 4);
      csrMergeKernel.encode(ctx, h, x, y);
      const got = await readF32(ctx, y, a.rows);
      h.dispose();
      x.dispose();
      y.dispose();
      for (let i = 0; i < a.rows; i++) {
        let want = 0;
        for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) want += Math.fround(a.values[k]!);
        expect(Math.abs(got[i]! - want), `chunkTiles ${chunkTiles}, row ${i}: got ${got[i]}, want ${want}`).toBeLessThan(1e-3);
      }
    }
  });

  it('a dispatch past 65 535 workgroups: 16 777 217 mostly empty rows in tiles of 256 rows (perThread 4 × 128)', async () => {
    const rows = 65_536 * 256 + 1;
    const rowPtr = new Int32Array(rows + 1);
    for (let i = 0; i < rows; i++) rowPtr[i + 1] = rowPtr[i]! + (i % 4099 === 0 ? 2 : 0);
    const nnz = rowPtr[rows]!;
    const a: CsrMatrix = { format: 'csr', rows, cols: nnz, rowPtr, colIdx: Int32Array.from({ length: nnz }, (_, k) => k), values: Float64Array.from({ length: nnz }, (_, k) => (k % 5) - 2) };
    const p = { perThread: 4, workgroupSize: 128, chunkTiles: 16, unrolled: 1, scan: 1 };
    const h = csrMergeKernel.upload(ctx, a, p);
    expect(h.merge[0]!.tiles).toBeGreaterThan(65_535);
    const x = uploadF32(ctx, Float64Array.from({ length: nnz }, (_, k) => 1 + (k % 3)));
    const y = ctx.buffers.acquire(rows * 4);
    csrMergeKernel.encode(ctx, h, x, y);
    const got = await readF32(ctx, y, rows);
    h.dispose();
    x.dispose();
    y.dispose();
    let bad = -1;
    for (let i = 0; i < rows && bad < 0; i++) {
      let want = 0;
      for (let k = rowPtr[i]!; k < rowPtr[i + 1]!; k++) want += ((k % 5) - 2) * (1 + (k % 3));
      if (got[i] !== want) bad = i;
    }
    expect(bad, `row ${bad}: got ${got[bad]}`).toBe(-1);
  });

  it('splits over bindings: a row cut over two bindings, then into chunks, accumulates in order', async () => {
    const opts = { maxBindingBytes: 4096 }; // 1 024 entries per binding
    for (const p of VARIANTS) {
      expect(await checkKernel(ctx, csrMergeKernel, p, byLengths([2, 0, 3000, 5, ...Array.from({ length: 300 }, (_, i) => i % 4), 1500, 0], 4000, 6), 6, 2, -0.5, opts)).toBe('');
    }
  });

  it('unrolled 1 writes the search and the items out (no loop for Tint to guard); 0 keeps the loops', () => {
    const text = (unrolled: number) => csrMergeKernel.wgsl({ perThread: 8, workgroupSize: 256, chunkTiles: 16, unrolled, scan: 0 }, ctx.caps);
    const tile = (w: string) => w.slice(w.indexOf('fn tile('), w.indexOf('@compute'));
    expect(tile(text(1))).not.toMatch(/\bwhile\b|for \(var j/);
    expect(tile(text(1)).match(/if \(lo < hi\)/g)).toHaveLength(11); // tile rows ≤ 1 024: 11 halvings
    expect(tile(text(1)).match(/u < cnt\)/g)).toHaveLength(8);
    expect(tile(text(0))).toContain('while (lo < hi)');
    expect(tile(text(0))).toContain('for (var j = 0u; j < cnt; j++)');
  });

  it('scan 1 takes the carries by subgroup shuffles where subgroups are usable (lavapipe: 8 wide), scan 0 by the workgroup-memory scan', () => {
    const text = (scan: number) => csrMergeKernel.wgsl({ perThread: 8, workgroupSize: 256, chunkTiles: 16, unrolled: 1, scan }, ctx.caps);
    expect(blockScanUsesSubgroups(ctx.caps)).toBe(true);
    expect(text(1)).toContain('subgroupShuffleUp(s, off)');
    expect(text(1)).toContain('sgp_lane = sg_lane;');
    expect(text(0)).not.toContain('subgroup');
    // without usable subgroups scan 1 falls back to scan 0's text
    expect(csrMergeKernel.wgsl({ perThread: 8, workgroupSize: 256, chunkTiles: 16, unrolled: 1, scan: 1 }, { ...ctx.caps, subgroups: false })).toBe(text(0));
  });

  it('refuses parameters outside their declared values or past the workgroup memory', () => {
    const a = byLengths([1, 2], 4, 1);
    expect(() => csrMergeKernel.wgsl({ perThread: 5, workgroupSize: 256, chunkTiles: 1, unrolled: 1, scan: 0 }, ctx.caps)).toThrow(/perThread expected one of 4, 8, 12, 16, got 5/);
    expect(csrMergeKernel.supports(a, { ...ctx.limits, maxComputeWorkgroupStorageSize: 8192 }, { perThread: 8, workgroupSize: 256, chunkTiles: 1, unrolled: 1, scan: 0 })).toMatch(/needs 15376 bytes of workgroup memory, more than the device's 8192/);
  });
});
