/**
 * Specific cases of the DIA, tiled DIA, HM, BCSR, CMRS and COO kernels beyond the conformance
 * loop: rectangular diagonal matrices (offsets reaching past the other dimension), the tiled DIA
 * kernel on a 27-point stencil (interior and boundary tiles, a remainder after its 4-diagonal
 * unroll, every variant) and past one workgroup table of diagonals, BCSR and CMRS with
 * rows (and columns) not divisible by the block / strip, COO rows spanning several chunks and
 * several binding pieces, refusals with a reason, bad input, determinism. Oracle: the float64
 * CSR product of the float32-rounded matrix, per-row bound 2·(nnz_row + 2)·ε·Σ|a_ij x_j|.
 */
import { bcsrFromCsr, type CsrMatrix, cmrsFromCsr, cooFromCsr, csrFromTriplets, csrSpmv, diaFromCsr, generators as g, hmFromCsr, InvalidMatrixError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { type AnySpmvKernel, type GpuContext, kernelVariants, readF32, type UploadOptions, uploadF32 } from '../src/index';
import { bcsrKernel } from '../src/kernels/bcsr/bcsr.kernel';
import { cmrsKernel } from '../src/kernels/cmrs/cmrs.kernel';
import { cooKernel } from '../src/kernels/coo/coo.kernel';
import { diaKernel } from '../src/kernels/dia/dia.kernel';
import { diaTiledKernel, pieceInterior, pieceVecInterior, TILED_MAX_DIAGONALS } from '../src/kernels/dia/dia-tiled.kernel';
import { hmKernel } from '../src/kernels/hm/hm.kernel';
import { EPS32, f32, randomVector, testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

/** A CSR matrix from (row, col) pairs with random values in [-1, 1). */
function fromPairs(rows: number, cols: number, pairs: [number, number][], seed: number): CsrMatrix {
  const v = randomVector(pairs.length, seed);
  return csrFromTriplets(rows, cols, pairs.map((p) => p[0]), pairs.map((p) => p[1]), v);
}

/** Run `kernel` on `a` (converted with `convert`), y = alpha·A·x + beta·y; returns y and the worst bound ratio. */
async function run(kernel: AnySpmvKernel, a0: CsrMatrix, convert: (a: CsrMatrix) => unknown, params: Record<string, number>, opts?: UploadOptions, alpha = 1, beta = 0): Promise<{ y: Float64Array; worst: number; blocks: number }> {
  const a = { ...a0, values: f32(a0.values) };
  const m = convert(a);
  expect(kernel.supports(m, ctx.limits, { ...kernel.defaults, ...params })).toBe(true);
  const x = f32(randomVector(a.cols, 11));
  const y0 = f32(randomVector(a.rows, 12));
  const dx = uploadF32(ctx, x);
  const dy = uploadF32(ctx, y0);
  const h = kernel.upload(ctx, m, params, opts);
  kernel.encode(ctx, h, dx, dy, { alpha, beta });
  const y = await readF32(ctx, dy, a.rows);
  const blocks = h.blocks;
  h.dispose();
  dx.dispose();
  dy.dispose();
  const ax = csrSpmv(a, x);
  let worst = 0;
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) s += Math.abs(a.values[k]! * x[a.colIdx[k]!]!);
    const nnz = a.rowPtr[i + 1]! - a.rowPtr[i]!;
    const bound = 2 * (nnz + 2) * EPS32 * (Math.abs(alpha) * s + Math.abs(beta * y0[i]!));
    const err = Math.abs(y[i]! - (alpha * ax[i]! + beta * y0[i]!));
    if (!(err <= bound)) return { y, worst: Number.POSITIVE_INFINITY, blocks };
    worst = Math.max(worst, bound > 0 ? err / bound : 0);
  }
  return { y, worst, blocks };
}

describe('DIA and HM kernels', () => {
  // wide: diagonals up to cols − 1; tall: down to −(rows − 1); corners only on some rows
  const wide = fromPairs(5, 40, [[0, 0], [0, 39], [1, 38], [4, 39], [2, 3], [4, 0], [3, 20]], 1);
  const tall = fromPairs(40, 5, [[0, 0], [39, 0], [38, 1], [39, 4], [3, 2], [0, 4], [20, 3]], 2);
  const band = g.banded(333, 4, 7, { seed: 3 });
  for (const [name, a] of [['wide 5×40', wide], ['tall 40×5', tall], ['banded 333', band]] as const) {
    it(`dia: ${name}, alpha 1.5, beta -1`, async () => {
      expect((await run(diaKernel, a, (m) => diaFromCsr(m), {}, undefined, 1.5, -1)).worst).toBeLessThanOrEqual(1);
    });
    it(`hm: ${name}, alpha 1.5, beta -1`, async () => {
      expect((await run(hmKernel, a, (m) => hmFromCsr(m), {}, undefined, 1.5, -1)).worst).toBeLessThanOrEqual(1);
    });
  }
  it('split over bindings: 64-byte table bindings force diagonal ranges and row blocks; same result', async () => {
    const whole = await run(diaKernel, band, (m) => diaFromCsr(m), {});
    const split = await run(diaKernel, band, (m) => diaFromCsr(m), {}, { maxBindingBytes: 64 });
    expect(split.worst).toBeLessThanOrEqual(1);
    expect(split.blocks).toBeGreaterThan(2 * Math.ceil(333 / 4)); // 3 diagonal ranges × row blocks of 4 (empty ones dropped)
    const hm = await run(hmKernel, tall, (m) => hmFromCsr(m), {}, { maxBindingBytes: 32 });
    expect(hm.worst).toBeLessThanOrEqual(1);
    expect(hm.blocks).toBeGreaterThan(1);
    // diagonal ranges change the order of the sum only across ranges: still within the bound
    expect(whole.worst).toBeLessThanOrEqual(1);
  });
  it('refuses more diagonals than maxDiagonals, with the reason', () => {
    const a = g.uniformRandom(300, 300, 9, 4);
    const m = diaFromCsr(a, diaKernel.formatParams?.(diaKernel.defaults) as { maxDiagonals: number });
    const r = diaKernel.supports(m, ctx.limits, { workgroupSize: 256, maxDiagonals: 16 });
    expect(r).toMatch(/occupied diagonals, more than maxDiagonals = 16/);
    expect(hmKernel.supports(hmFromCsr(a), ctx.limits, { workgroupSize: 256, maxDiagonals: 16 })).toMatch(/hm matrix has \d+ occupied diagonals/);
  });
});

/** 27-point stencil on an n³ grid, random values (every neighbour inside the grid). */
function stencil27(n: number, seed: number): CsrMatrix {
  const ri: number[] = [];
  const ci: number[] = [];
  for (let p = 0; p < n ** 3; p++) {
    const [i, j, k] = [p % n, Math.floor(p / n) % n, Math.floor(p / (n * n))];
    for (let dk = -1; dk <= 1; dk++)
      for (let dj = -1; dj <= 1; dj++)
        for (let di = -1; di <= 1; di++) {
          const [a, b, c] = [i + di, j + dj, k + dk];
          if (a < 0 || a >= n || b < 0 || b >= n || c < 0 || c >= n) continue;
          ri.push(p);
          ci.push(a + n * (b + n * c));
        }
  }
  return csrFromTriplets(n ** 3, n ** 3, ri, ci, randomVector(ri.length, seed));
}

/** DIA with unbounded maxDiagonals: the kernel's `supports` decides. */
const dia = (m: CsrMatrix) => diaFromCsr(m, { maxDiagonals: 2 ** 28 });

describe('dia-tiled kernel', () => {
  // 12³ = 1728 rows, diagonals up to ±157: tiles of 128–1024 rows, interior and boundary ones
  const st = stencil27(12, 1);
  for (const params of kernelVariants(diaTiledKernel)) {
    it(`27-point stencil 12³, ${JSON.stringify(params)}, alpha 1.5, beta -1`, async () => {
      expect((await run(diaTiledKernel, st, dia, params, undefined, 1.5, -1)).worst).toBeLessThanOrEqual(1);
    });
  }
  it('more diagonals than one workgroup table: accumulating pieces, same bound', async () => {
    const wide = g.banded(700, 160, 150, { seed: 5 }); // 311 diagonals > 256
    const r = await run(diaTiledKernel, wide, dia, { rowsPerThread: 2 }, undefined, -2, 0.5);
    expect(r.blocks).toBe(2);
    expect(r.worst).toBeLessThanOrEqual(1);
  });
  it('split by the binding size into row blocks and diagonal ranges', async () => {
    const r = await run(diaTiledKernel, st, dia, {}, { maxBindingBytes: 16_384 });
    expect(r.blocks).toBeGreaterThan(4);
    expect(r.worst).toBeLessThanOrEqual(1);
  });
  it('rectangular matrices: diagonals reaching past the other dimension', async () => {
    const wide = fromPairs(5, 40, [[0, 0], [0, 39], [1, 38], [4, 39], [2, 3], [4, 0], [3, 20]], 3);
    const tall = fromPairs(700, 5, [[0, 0], [699, 0], [698, 1], [699, 4], [3, 2], [0, 4], [20, 3]], 4);
    expect((await run(diaTiledKernel, wide, dia, {})).worst).toBeLessThanOrEqual(1);
    expect((await run(diaTiledKernel, tall, dia, { rowsPerThread: 1, workgroupSize: 256 })).worst).toBeLessThanOrEqual(1);
  });
  it("the kernels' own conversion (float32 values straight from CSR, issue 16) gives the bits of the float64 one, whole and split", async () => {
    const f32dia = (m: CsrMatrix) => diaFromCsr(m, diaTiledKernel.formatParams!(diaTiledKernel.defaults));
    expect((f32dia(st) as { data: unknown }).data).toBeInstanceOf(Float32Array);
    expect(diaKernel.formatParams!(diaKernel.defaults)).toEqual(diaTiledKernel.formatParams!(diaTiledKernel.defaults));
    for (const opts of [undefined, { maxBindingBytes: 16_384 }]) {
      const [p, q] = [await run(diaTiledKernel, st, dia, {}, opts, 1.5, -1), await run(diaTiledKernel, st, f32dia, {}, opts, 1.5, -1)];
      expect(q.worst).toBeLessThanOrEqual(1);
      expect(q.blocks).toBe(p.blocks);
      expect(Array.from(q.y)).toEqual(Array.from(p.y));
      const [u, w] = [await run(diaKernel, st, dia, {}, opts), await run(diaKernel, st, f32dia, {}, opts)];
      expect(Array.from(w.y)).toEqual(Array.from(u.y));
    }
  });
  it('deterministic: two products give the same bits', async () => {
    const a = g.poisson3d(11);
    const [p, q] = [await run(diaTiledKernel, a, dia, {}), await run(diaTiledKernel, a, dia, {})];
    expect(p.worst).toBeLessThanOrEqual(1);
    expect(Array.from(q.y)).toEqual(Array.from(p.y));
  });
  it('interior range: rows valid on every diagonal, or none', () => {
    // offsets -1 (rows 1..9) and +1 (rows 0..8) of a 10 × 10 matrix
    expect(pieceInterior(Int32Array.of(-1, 0, 1, 10, 1, 10, 0, 9), 2, 10)).toEqual([1, 9]);
    expect(pieceInterior(new Int32Array(0), 0, 7)).toEqual([0, 7]);
    expect(pieceInterior(Int32Array.of(-5, 0, 5, 6, 5, 6, 0, 1), 2, 6)).toEqual([0xffffffff, 0xffffffff]);
    expect(TILED_MAX_DIAGONALS).toBe(256);
  });
  it('refuses more diagonals than maxDiagonals, with the reason', () => {
    const m = diaFromCsr(g.uniformRandom(300, 300, 9, 4), { maxDiagonals: 2 ** 28 });
    expect(diaTiledKernel.supports(m, ctx.limits, { ...diaTiledKernel.defaults, maxDiagonals: 16 })).toMatch(/occupied diagonals, more than maxDiagonals = 16/);
  });
  it('rejects a rowsPerThread outside 1…8 with the value', () => {
    expect(() => diaTiledKernel.wgsl({ ...diaTiledKernel.defaults, rowsPerThread: 0 }, ctx.caps)).toThrow(/rowsPerThread expected an integer in 1…8, got 0/);
  });
  // the vec4 variant (issue 20): groups of 4 rows, shifted vec4 loads, unroll 1…8
  for (const [rowsPerThread, unroll, workgroupSize] of [[1, 4, 256], [2, 2, 64], [4, 8, 128], [1, 1, 64]]) {
    it(`vec 1, rowsPerThread ${rowsPerThread}, unroll ${unroll}, wg ${workgroupSize}: stencil and banded, alpha 1.5, beta -1`, async () => {
      const p = { vec: 1, rowsPerThread, unroll, workgroupSize };
      expect((await run(diaTiledKernel, st, dia, p, undefined, 1.5, -1)).worst).toBeLessThanOrEqual(1);
      // 4 000 rows: the base of diagonal d is d·4000 (aligned), x shifts by every offset mod 4
      expect((await run(diaTiledKernel, g.banded(4000, 5, 6, { seed: 2 }), dia, p, undefined, -1, 0.5)).worst).toBeLessThanOrEqual(1);
      // the time is lavapipe's LLVM compiling the unrolled variants at their first dispatch: with a
      // cold Mesa shader cache (a fresh CI machine) rowsPerThread 4 × unroll 8 took 71 s on its own
      // core and past 120 s pinned beside busy loops (session 14); 2 s warm
    }, 300_000);
  }
  // unroll = the diagonal count (issue 20, 5-point stencil): the whole diagonal set in one interior step, no remainder
  for (const [name, a, unroll, vec] of [['5-point 40²', g.poisson2d(40), 5, 0], ['7-point 12³', g.poisson3d(12), 7, 0], ['7-point 12³', g.poisson3d(12), 3, 0]] as const) {
    it(`${name}, unroll ${unroll}, vec ${vec}: within the bound, alpha 2, beta -0.5`, async () => {
      const r = await run(diaTiledKernel, a, dia, { vec, rowsPerThread: 1, unroll, workgroupSize: 64 }, undefined, 2, -0.5);
      expect(r.worst).toBeLessThanOrEqual(1);
    });
  }
  // skew (issue 20): diagonal t's block t·skew·256 bytes later; same products, same bits as skew 0
  it('skew 3 on a 5-point stencil and a banded matrix split over bindings: the bits of skew 0, more device bytes', async () => {
    for (const [a, opts] of [[g.poisson2d(40), undefined], [g.banded(3000, 4, 4, { seed: 3 }), { maxBindingBytes: 16384 }]] as const) {
      const base = { vec: 0, rowsPerThread: 1, unroll: 5, workgroupSize: 64 };
      const [p, q] = [await run(diaTiledKernel, a, dia, { ...base, skew: 0 }, opts, 2, -0.5), await run(diaTiledKernel, a, dia, { ...base, skew: 3 }, opts, 2, -0.5)];
      expect(q.worst).toBeLessThanOrEqual(1);
      expect(Array.from(q.y)).toEqual(Array.from(p.y));
      if (opts) expect(q.blocks).toBeGreaterThan(2);
    }
    const m = dia(g.poisson2d(40));
    const bytes = (skew: number) => {
      const h = diaTiledKernel.upload(ctx, m, { skew });
      const b = h.deviceBytes;
      h.dispose();
      return b;
    };
    expect(bytes(3) - bytes(0)).toBe(4 * 3 * 64 * 4); // 4 gaps of 3·64 floats between 5 diagonals
  });
  it('skew: refused with vec 1, outside 0…64, with the reason', () => {
    const m = dia(g.poisson2d(8));
    expect(diaTiledKernel.supports(m, ctx.limits, { ...diaTiledKernel.defaults, vec: 1, skew: 1 })).toMatch(/skew > 0 takes vec 0 and a host-converted layout/);
    expect(() => diaTiledKernel.upload(ctx, m, { skew: 65 })).toThrow(/skew expected an integer in 0…64, got 65/);
  });
  it('vec 1 with bases not multiples of 4 (rows 1 003 × 1 004 columns) and split pieces', async () => {
    const pairs: [number, number][] = [];
    for (let i = 0; i < 1003; i++) for (const k of [-7, -2, 0, 1, 3, 9]) if (i + k >= 0 && i + k < 1004) pairs.push([i, i + k]);
    const a = fromPairs(1003, 1004, pairs, 7);
    for (const opts of [undefined, { maxBindingBytes: 4096 }]) {
      const r = await run(diaTiledKernel, a, dia, { vec: 1, rowsPerThread: 1, workgroupSize: 64 }, opts, 2, 0.25);
      expect(r.worst).toBeLessThanOrEqual(1);
      if (opts) expect(r.blocks).toBeGreaterThan(2);
    }
  });
  it('vec 1 gives the bits of vec 0 (same summation order)', async () => {
    // 4 096 rows, offsets ±256, tiles of 256 rows: most tiles take the vec4 fast path
    const a = g.poisson3d(16);
    const [p, q] = [await run(diaTiledKernel, a, dia, { vec: 0, rowsPerThread: 4, workgroupSize: 64 }), await run(diaTiledKernel, a, dia, { vec: 1, rowsPerThread: 1, workgroupSize: 64 })];
    expect(q.worst).toBeLessThanOrEqual(1);
    expect(Array.from(q.y)).toEqual(Array.from(p.y));
  });
  it('vec 1 refuses columns not a multiple of 4, and the fast-path range keeps vec4 loads inside whole vec4s', () => {
    const m = diaFromCsr(g.banded(10, 1, 1, { seed: 1 }), { maxDiagonals: 2 ** 28 });
    expect(diaTiledKernel.supports(m, ctx.limits, { ...diaTiledKernel.defaults, vec: 1 })).toMatch(/expected columns a multiple of 4, got 10/);
    expect(diaTiledKernel.supports(m, ctx.limits, { ...diaTiledKernel.defaults, vec: 0 })).toBe(true);
    // offsets -1 (base 0, rows 1..15) and +1 (base 16, rows 0..14) of 16 × 16: values bound 32 − 7 − 16 = 9, x bound 16 − 7 − 1 = 8
    expect(pieceVecInterior(Int32Array.of(-1, 0, 1, 16, 1, 16, 0, 15), 2, 16, 32, 0, 16)).toEqual([1, 8]);
    expect(pieceVecInterior(Int32Array.of(-1, 0, 1, 16, 1, 16, 0, 15), 2, 16, 32, 12, 16)).toEqual([0xffffffff, 0xffffffff]);
    expect(() => diaTiledKernel.wgsl({ ...diaTiledKernel.defaults, vec: 1, rowsPerThread: 8 }, ctx.caps)).toThrow(/rowsPerThread expected an integer in 1…4 with vec 1, got 8/);
    expect(() => diaTiledKernel.wgsl({ ...diaTiledKernel.defaults, unroll: 9 }, ctx.caps)).toThrow(/unroll expected one of 1, 2, 3, 4, 5, 6, 7, 8, got 9/);
  });
});

describe('BCSR kernel', () => {
  // 103 × 98: neither divisible by 2, 4 or 8; a dense corner block and scattered entries
  const pairs: [number, number][] = [];
  for (let i = 96; i < 103; i++) for (let j = 90; j < 98; j++) pairs.push([i, j]);
  for (let i = 0; i < 96; i++) pairs.push([i, (i * 7) % 98], [i, 97]);
  const a = fromPairs(103, 98, pairs, 5);
  for (const r of [2, 4, 8]) {
    it(`r = ${r}: rows and columns not divisible by r`, async () => {
      expect((await run(bcsrKernel, a, (m) => bcsrFromCsr(m, { blockSize: r }), { blockSize: r }, undefined, -2, 0.5)).worst).toBeLessThanOrEqual(1);
    });
  }
  it('a block row longer than a binding is cut into accumulating pieces', async () => {
    const wideRow = g.oneDenseRow(9, 3000, 2, 3000, 4, 6);
    const r = await run(bcsrKernel, wideRow, (m) => bcsrFromCsr(m, { blockSize: 4 }), { blockSize: 4 }, { maxBindingBytes: 1024 });
    expect(r.worst).toBeLessThanOrEqual(1);
    expect(r.blocks).toBeGreaterThan(3);
  });
  it('refuses a matrix blocked with another block size', () => {
    expect(bcsrKernel.supports(bcsrFromCsr(a, { blockSize: 2 }), ctx.limits, { blockSize: 4, workgroupSize: 256 })).toMatch(/4×4 blocks, matrix has 2×2/);
  });
});

describe('CMRS kernel', () => {
  const a = g.powerLaw(203, 150, { seed: 7, maxLen: 140 });
  for (const [h, lanes] of [[8, 32], [16, 8], [4, 8], [2, 32]] as const) {
    it(`h = ${h}, lanes = ${lanes}: 203 rows (last strip partial)`, async () => {
      expect((await run(cmrsKernel, a, (m) => cmrsFromCsr(m, { stripHeight: h }), { stripHeight: h, lanes })).worst).toBeLessThanOrEqual(1);
    });
  }
  it('a strip longer than a binding is cut into accumulating pieces', async () => {
    const r = await run(cmrsKernel, a, (m) => cmrsFromCsr(m, { stripHeight: 8 }), {}, { maxBindingBytes: 256 }, 1, 1);
    expect(r.worst).toBeLessThanOrEqual(1);
    expect(r.blocks).toBeGreaterThan(10);
  });
});

describe('COO kernel', () => {
  // row 1 spans ~12 chunks of 64; rows 0 and 2 sit at chunk edges; empty rows between
  const pairs: [number, number][] = [[0, 5]];
  for (let j = 0; j < 770; j++) pairs.push([1, j]);
  for (let i = 2; i < 60; i += 3) pairs.push([i, i], [i, i + 100]);
  const a = fromPairs(64, 800, pairs, 8);
  for (const wg of [64, 256]) {
    it(`workgroupSize ${wg}: a row spanning several chunks, empty rows, beta ≠ 0`, async () => {
      expect((await run(cooKernel, a, cooFromCsr, { workgroupSize: wg }, undefined, 0.5, 3)).worst).toBeLessThanOrEqual(1);
    });
  }
  it('chunk-sized runs: every row exactly one chunk long, and rows of 63 and 65', async () => {
    const p2: [number, number][] = [];
    for (let i = 0; i < 6; i++) for (let j = 0; j < [64, 64, 63, 65, 1, 128][i]!; j++) p2.push([i, j]);
    expect((await run(cooKernel, fromPairs(6, 200, p2, 9), cooFromCsr, { workgroupSize: 64 })).worst).toBeLessThanOrEqual(1);
  });
  it('split into binding pieces (a row crossing pieces) and bit-identical on repeat', async () => {
    const r1 = await run(cooKernel, a, cooFromCsr, { workgroupSize: 64 }, { maxBindingBytes: 1024 });
    const r2 = await run(cooKernel, a, cooFromCsr, { workgroupSize: 64 }, { maxBindingBytes: 1024 });
    expect(r1.worst).toBeLessThanOrEqual(1);
    expect(r1.blocks).toBe(Math.ceil(cooFromCsr(a).nnz / 256));
    expect(Array.from(r2.y)).toEqual(Array.from(r1.y));
  });
  it('rejects triplets not sorted by row, naming the entry', () => {
    const m = cooFromCsr(a);
    const bad = { ...m, rowIdx: Int32Array.from(m.rowIdx).reverse() };
    expect(() => cooKernel.upload(ctx, bad)).toThrow(InvalidMatrixError);
    expect(() => cooKernel.upload(ctx, bad)).toThrow(/sorted by row/);
  });
});
