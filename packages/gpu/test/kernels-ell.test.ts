/**
 * ELL-family and hybrid kernels beyond the conformance loop: hybrid BOUNDARY = 0 (all CSR) and
 * BOUNDARY ≥ the longest row (all ELL) for every lane count 2…32; SELL-C-σ with real sorting
 * and C not dividing the rows for lanes 1…32; every split path (row blocks, slot ranges of a
 * row or slice wider than a binding, the hybrid's ELL-then-CSR pieces of one row) with
 * alpha/beta; bad input rejected at upload; sizes in uniforms, not in the pipeline key.
 * Oracle: float64 CSR product of the float32-rounded matrix, per-row bound
 * 2·(nnz_row + 2)·ε·(|α|·Σ|a_ij x_j| + |β y0_i|).
 */
import {
  type CsrMatrix,
  csrSpmv,
  ellFromCsr,
  ellRFromCsr,
  generators as g,
  hybridFromCsr,
  InvalidMatrixError,
  type SparseMatrix,
  sellFromCsr,
  slicedEllFromCsr,
  slicedEllRFromCsr,
} from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EllDeviceMatrix } from '../src/kernels/ell/ell-device';
import { type AnySpmvKernel, type GpuContext, getKernel, readF32, type UploadOptions, uploadF32 } from '../src/index';
import { EPS32, f32, randomVector, testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

const round32 = (a: CsrMatrix): CsrMatrix => ({ ...a, values: f32(a.values) });

/** Run `kernel` on `m` (converted from the rounded `a`); returns the number of pieces and the worst bound ratio. */
async function run(
  kernel: AnySpmvKernel,
  a: CsrMatrix,
  m: SparseMatrix,
  params: Record<string, number>,
  opts?: UploadOptions,
  alpha = 1,
  beta = 0,
): Promise<{ blocks: number; worst: number; bad: string }> {
  const x = f32(randomVector(a.cols, 7));
  const y0 = f32(randomVector(a.rows, 8));
  const dx = uploadF32(ctx, x);
  const dy = uploadF32(ctx, y0);
  const h = kernel.upload(ctx, m, params, opts);
  kernel.encode(ctx, h, dx, dy, { alpha, beta });
  const y = await readF32(ctx, dy, a.rows);
  h.dispose();
  dx.dispose();
  dy.dispose();
  const ax = csrSpmv(a, x);
  let worst = 0;
  let bad = '';
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) s += Math.abs(a.values[k]! * x[a.colIdx[k]!]!);
    const nnz = a.rowPtr[i + 1]! - a.rowPtr[i]!;
    const bound = 2 * (nnz + 2) * EPS32 * (Math.abs(alpha) * s + Math.abs(beta * y0[i]!));
    const ref = alpha * ax[i]! + beta * y0[i]!;
    const err = Math.abs(y[i]! - ref);
    if (!(err <= bound) && !bad) bad = `row ${i}: got ${y[i]}, want ${ref}, |err| ${err} > ${bound}`;
    if (bound > 0) worst = Math.max(worst, err / bound);
  }
  return { blocks: h.blocks, worst, bad };
}

const hybrid = getKernel('hybrid');
const sell = getKernel('sell');
const LANES = [2, 4, 8, 16, 32];

describe('hybrid ELL + CSR (seed 001 Algorithm 7)', () => {
  const a = round32(g.powerLaw(300, 300, { seed: 3, maxLen: 120 }));
  const maxLen = Math.max(...Array.from({ length: a.rows }, (_, i) => a.rowPtr[i + 1]! - a.rowPtr[i]!));

  const laneMaps = LANES.flatMap((lanes) => [0, 1].map((ellMap) => [lanes, ellMap] as const));

  it.each(laneMaps)('BOUNDARY = 0 (all entries in the CSR part), lanes %i, ellMap %i', async (lanes, ellMap) => {
    const m = hybridFromCsr(a, { boundary: 0 });
    expect(m.ellNnz).toBe(0);
    const r = await run(hybrid, a, m, { lanes, ellMap });
    expect(r.bad).toBe('');
  });

  it.each(laneMaps)('BOUNDARY ≥ the longest row (CSR part empty), lanes %i, ellMap %i', async (lanes, ellMap) => {
    const m = hybridFromCsr(a, { boundary: maxLen + 3 });
    expect(m.csrNnz).toBe(0);
    const r = await run(hybrid, a, m, { lanes, ellMap }, undefined, 2, -0.5);
    expect(r.bad).toBe('');
  });

  it.each(laneMaps)('BOUNDARY 12 (both regions used), lanes %i, ellMap %i', async (lanes, ellMap) => {
    const m = hybridFromCsr(a, { boundary: 12 });
    expect(m.csrNnz).toBeGreaterThan(0);
    expect(m.ellNnz).toBeGreaterThan(0);
    const r = await run(hybrid, a, m, { lanes, ellMap }, undefined, -1, 0.5);
    expect(r.bad).toBe('');
  });

  it('a CI-like matrix (dense reference block + sparse expansion) with the auto BOUNDARY, every lane count', async () => {
    const c = round32(g.ciLike(400, { seed: 2 }));
    const m = hybridFromCsr(c);
    expect(m.boundary).toBeGreaterThan(0);
    for (const lanes of LANES) for (const ellMap of [0, 1]) expect((await run(hybrid, c, m, { lanes, ellMap })).bad).toBe('');
  });

  it('split: row blocks, and one row wider than a binding as ELL slot ranges then CSR ranges (alpha 2, beta −0.5)', async () => {
    const d = round32(g.oneDenseRow(60, 3000, 4, 2500, 11, 5));
    const m = hybridFromCsr(d, { boundary: 1500 }); // row 11: 1500 ELL slots + 1000 CSR entries
    const r = await run(hybrid, d, m, { lanes: 8, ellMap: 1 }, { maxBindingBytes: 2048 }, 2, -0.5);
    expect(r.bad).toBe('');
    expect(r.blocks).toBeGreaterThan(4);
    const r0 = await run(hybrid, d, hybridFromCsr(d, { boundary: 0 }), { lanes: 4 }, { maxBindingBytes: 1024 }, 2, -0.5);
    expect(r0.bad).toBe('');
    expect(r0.blocks).toBeGreaterThan(3);
  });

  it('BOUNDARY travels in uniforms: one pipeline per lane count, whatever the BOUNDARY', async () => {
    await run(hybrid, a, hybridFromCsr(a, { boundary: 2 }), { lanes: 16 });
    const before = ctx.pipelines.compiled;
    await run(hybrid, a, hybridFromCsr(a, { boundary: 9 }), { lanes: 16 });
    expect(ctx.pipelines.compiled).toBe(before);
  });

  it('rejects a corrupt matrix at upload (column out of range) instead of reading past x', () => {
    const m = hybridFromCsr(a, { boundary: 2 });
    const bad = { ...m, csrColIdx: Int32Array.from(m.csrColIdx, (c, k) => (k === 3 ? a.cols + 5 : c)) };
    expect(() => hybrid.upload(ctx, bad, { lanes: 8 })).toThrow(InvalidMatrixError);
  });
});

describe('SELL-C-σ', () => {
  const a = round32(g.powerLaw(203, 250, { seed: 9, maxLen: 90 })); // 203 rows: C ∈ {8, 32, 64} does not divide
  it.each([
    [8, 32],
    [32, 128],
    [64, 64],
  ])('C = %i, σ = %i: sorted rows scattered back through rowPerm, lanes 1…32, both lane maps', async (C, sigma) => {
    const m = sellFromCsr(a, { C, sigma });
    expect(Array.from(m.rowPerm).some((r, p) => r !== p)).toBe(true); // the sort really permutes
    for (const lanes of [1, 2, 4, 8, 16, 32]) {
      for (const laneMap of [0, 1]) {
        const r = await run(sell, a, m, { lanes, laneMap }, undefined, -1.5, 0.25);
        expect(r.bad, `lanes ${lanes}, laneMap ${laneMap}`).toBe('');
      }
    }
  });

  it('split over bindings keeps the permutation; a chunk wider than a binding goes in slot ranges', async () => {
    const d = round32(g.oneDenseRow(150, 4000, 5, 3000, 70, 4));
    const m = sellFromCsr(d, { C: 8, sigma: 32 });
    for (const laneMap of [0, 1]) {
      const r = await run(sell, d, m, { lanes: 4, laneMap }, { maxBindingBytes: 4096 }, 2, -0.5);
      expect(r.bad).toBe('');
      expect(r.blocks).toBeGreaterThan(3);
    }
  });

  it('rejects a rowPerm that is not a permutation (two positions would write one y[i])', () => {
    const m = sellFromCsr(a, { C: 8, sigma: 32 });
    const perm = Int32Array.from(m.rowPerm);
    perm[1] = perm[0]!;
    expect(() => sell.upload(ctx, { ...m, rowPerm: perm }, { lanes: 1 })).toThrow(InvalidMatrixError);
  });
});

describe('ELL, ELL-R, sliced ELL(-R): split paths', () => {
  const a = round32(g.oneDenseRow(90, 1500, 3, 1400, 40, 6)); // width 1400 > a 1024-element binding
  const cases: [string, () => SparseMatrix][] = [
    ['ell', () => ellFromCsr(a)],
    ['ell-r', () => ellRFromCsr(a)],
    ['sliced-ell', () => slicedEllFromCsr(a, { sliceHeight: 8 })],
    ['sliced-ell-r', () => slicedEllRFromCsr(a, { sliceHeight: 8 })],
  ];
  it.each(cases)('%s: slot ranges of a row wider than a binding, row blocks, alpha/beta', async (id, make) => {
    const r = await run(getKernel(id), a, make(), {}, { maxBindingBytes: 4096 }, 2, -0.5);
    expect(r.bad).toBe('');
    expect(r.blocks).toBeGreaterThan(2);
    const whole = await run(getKernel(id), a, make(), {});
    expect(whole.bad).toBe('');
    expect(whole.blocks).toBe(1);
  });

  it('ELL row blocks only (every row fits a binding)', async () => {
    const u = round32(g.uniformRandom(700, 300, 6, 2));
    const r = await run(getKernel('ell'), u, ellFromCsr(u), {}, { maxBindingBytes: 4096 });
    expect(r.bad).toBe('');
    expect(r.blocks).toBe(Math.ceil(700 / Math.floor(1024 / ellFromCsr(u).width)));
  });

  it('ELL rejects corrupt padding at upload', () => {
    const m = ellFromCsr(round32(g.oneDenseRow(20, 20, 3, 10, 0, 1))); // width 10, row 19 has 3 entries
    const values = Float64Array.from(m.values);
    values[values.length - 1] = 0.5; // row 19, slot 9: padding given a value (the kernel would add it)
    expect(() => getKernel('ell').upload(ctx, { ...m, values })).toThrow(InvalidMatrixError);
  });
});

describe('length-stopping kernels never touch padding', () => {
  it('ELL-R, sliced ELL-R and hybrid give 0 for an empty row even when x[0] = +Inf', async () => {
    const a = round32(g.withEmptyRows(64, 64, 4, 0.3, 3));
    const empty = Array.from({ length: a.rows }, (_, i) => i).filter((i) => a.rowPtr[i + 1] === a.rowPtr[i]);
    expect(empty.length).toBeGreaterThan(0);
    const x = f32(randomVector(a.cols, 1));
    x[0] = Number.POSITIVE_INFINITY;
    const dx = uploadF32(ctx, x);
    const dy = ctx.buffers.acquire(a.rows * 4);
    const cases: [string, SparseMatrix, Record<string, number>][] = [
      ['ell-r', ellRFromCsr(a), {}],
      ['sliced-ell-r', slicedEllRFromCsr(a, { sliceHeight: 8 }), {}],
      ['hybrid', hybridFromCsr(a, { boundary: 2 }), { lanes: 4, ellMap: 1 }],
    ];
    for (const [id, m, p] of cases) {
      const k = getKernel(id);
      const h = k.upload(ctx, m, p);
      k.encode(ctx, h, dx, dy);
      const y = await readF32(ctx, dy, a.rows);
      h.dispose();
      for (const i of empty) expect(y[i], `${id} row ${i}`).toBe(0);
    }
    dx.dispose();
    dy.dispose();
  });
});

describe('a dispatch past 65 535 workgroups (lanes 32: 8 rows per workgroup)', () => {
  it('hybrid (lane-group map) and SELL (coalesced map) on 524 289 rows', async () => {
    const rows = 65_536 * 8 + 1;
    const rowPtr = new Int32Array(rows + 1);
    const colIdx = new Int32Array(3 * rows);
    const values = new Float64Array(3 * rows);
    let nnz = 0;
    for (let i = 0; i < rows; i++) {
      const len = 1 + (i % 3); // lengths 1, 2, 3: SELL sorting permutes, BOUNDARY 1 leaves a CSR part
      for (let t = 0; t < len; t++) {
        colIdx[nnz] = (i + t * 1009) % rows;
        values[nnz++] = ((i + t) % 7) - 3;
      }
      colIdx.subarray(nnz - len, nnz).sort();
      rowPtr[i + 1] = nnz;
    }
    const a: CsrMatrix = { format: 'csr', rows, cols: rows, rowPtr, colIdx: colIdx.slice(0, nnz), values: values.slice(0, nnz) };
    const hm = hybridFromCsr(a, { boundary: 1 });
    const h: EllDeviceMatrix = hybrid.upload(ctx, hm, { lanes: 32 });
    expect(h.parts[0]!.groups).toBeGreaterThan(65_535);
    h.dispose();
    expect((await run(hybrid, a, hm, { lanes: 32, ellMap: 0 })).bad).toBe('');
    expect((await run(sell, a, sellFromCsr(a, { C: 32, sigma: 128 }), { lanes: 32, laneMap: 1 })).bad).toBe('');
  });
});
