/**
 * The dia-vec4 kernel (issue 20, session 12) against the float64 reference: banded and stencil
 * matrices (interior and boundary tiles, offsets ≡ 0…3 mod 4), rectangular shapes, rows not a
 * multiple of 4, columns not a multiple of 4 (xvec 0 runs, xvec 1 refused with the reason), every
 * declared variant, several tiles per workgroup, row blocks split over small bindings,
 * alpha / beta, an empty matrix; the same bits as dia-tiled (same summation order); refusals.
 * Oracle: the float64 CSR product of the float32-rounded matrix, the conformance tier's per-row
 * bound 2·(nnz_row [+ 2 with alpha, beta])·ε·(|alpha|·Σ|a_ij x_j| + |beta·y_i|).
 */
import { type CsrMatrix, csrFromTriplets, diaFromCsr, generators as g } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { experimentalKernels, type GpuContext, getKernel, kernels, kernelVariants, type UploadOptions } from '../src/index';
import { deviceDiaForUpload } from '../src/kernels/dia/dia-build';
import { diaTiledKernel } from '../src/kernels/dia/dia-tiled.kernel';
import { type DiaVec4Params, diaVec4Kernel, stageClusters, vec4Interior } from '../src/kernels/dia/dia-vec4.kernel';
import { f32, randomVector, runOnDevice, testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

const dia = (a: CsrMatrix) => diaFromCsr(a, { valueType: 'f32' });

/** y = alpha·A·x + beta·y with `kernel`; y and the worst error over its bound (∞ past it). */
async function run(kernel: typeof diaVec4Kernel | typeof diaTiledKernel, a0: CsrMatrix, params: Record<string, number>, opts?: UploadOptions, alpha = 1, beta = 0) {
  const a = { ...a0, values: f32(a0.values) };
  return runOnDevice(ctx, kernel, a, dia(a), params, opts, alpha, beta);
}

/** A CSR matrix from (row, col) pairs with random values in [-1, 1). */
function fromPairs(rows: number, cols: number, pairs: [number, number][], seed: number): CsrMatrix {
  const v = randomVector(pairs.length, seed);
  return csrFromTriplets(rows, cols, pairs.map((p) => p[0]), pairs.map((p) => p[1]), v);
}

describe('dia-vec4', () => {
  it('is registered as an experimental kernel (tested and benchmarked, not a tuner candidate)', () => {
    expect(experimentalKernels).toContain(diaVec4Kernel);
    expect(kernels).not.toContain(diaVec4Kernel);
    expect(getKernel('dia-vec4')).toBe(diaVec4Kernel);
  });

  // sizes past one 1024-row tile so that interior and boundary tiles both run
  // offsets −4…7 (every residue mod 4), 5 003 rows (≢ 0 mod 4) × 5 004 columns (xvec 1 applies)
  const band = fromPairs(5003, 5004, Array.from({ length: 5003 * 12 }, (_, q): [number, number] => [Math.floor(q / 12), Math.floor(q / 12) + (q % 12) - 4]).filter(([, j]) => j >= 0 && j < 5004), 3);
  const p2 = g.poisson2d(72); // ±1 (shifted x), ±72 (aligned)
  const p3 = g.poisson3d(18); // 5 832 rows, ±1, ±18, ±324
  for (const [name, a] of [['banded 5003 (−4…7)', band], ['poisson2d 72²', p2], ['poisson3d 18³', p3]] as const) {
    it(`${name}: every declared variant within the float32 bound`, async () => {
      // xvec 2 also with tiles of 256 rows (workgroups of 64): the default 1 024-row tiles stage more than 3 072 floats on the stencils
      for (const params of [...kernelVariants(diaVec4Kernel), { ...diaVec4Kernel.defaults, xvec: 2, workgroupSize: 64, unroll: 8 }]) {
        const why = diaVec4Kernel.supports(dia(a), ctx.limits, params as DiaVec4Params);
        if (why !== true) {
          expect(why, JSON.stringify(params)).toMatch(/xvec 2 stages \d+ floats of x per tile of 1024 rows/);
          continue;
        }
        const r = await run(diaVec4Kernel, a, params);
        expect(r.worst, JSON.stringify(params)).toBeLessThanOrEqual(1);
      }
    }, 300_000);
  }

  it('the same bits as dia-tiled (same summation order), unroll 1…8, 2 groups per invocation, 3 tiles', async () => {
    const a = g.poisson3d(20);
    const ref = await run(diaTiledKernel, a, { unroll: 4 });
    for (const unroll of [1, 3, 7, 8]) {
      // staged x at unroll 3 and 8 only: each xvec 2 pipeline takes seconds to compile on lavapipe
      for (const xvec of unroll === 3 || unroll === 8 ? [0, 1, 2] : [0, 1]) {
        const r = await run(diaVec4Kernel, a, { unroll, rowsPerThread: 2, tiles: 3, workgroupSize: 64, xvec });
        expect(Array.from(r.y), `unroll ${unroll}, xvec ${xvec}`).toEqual(Array.from(ref.y));
      }
    }
  }, 300_000);

  it('rectangular: wide and tall shapes, offsets reaching past the other dimension, alpha 1.5, beta −1', async () => {
    const wide = fromPairs(6, 44, [[0, 0], [0, 43], [1, 38], [5, 43], [2, 3], [4, 0], [3, 20]], 1);
    const tall = fromPairs(44, 8, [[0, 0], [43, 0], [38, 1], [43, 7], [3, 2], [0, 4], [20, 3]], 2);
    for (const a of [wide, tall]) {
      for (const xvec of [0, 1]) expect((await run(diaVec4Kernel, a, { xvec }, undefined, 1.5, -1)).worst).toBeLessThanOrEqual(1);
    }
  });

  it('columns not a multiple of 4: xvec 0 runs, xvec 1 and 2 are refused with the reason', async () => {
    const a = g.banded(1001, 3, 2, { seed: 5 });
    expect((await run(diaVec4Kernel, a, { xvec: 0 })).worst).toBeLessThanOrEqual(1);
    for (const xvec of [1, 2]) expect(diaVec4Kernel.supports(dia(a), ctx.limits, { ...diaVec4Kernel.defaults, xvec })).toMatch(new RegExp(`xvec ${xvec} reads x as vec4: expected columns a multiple of 4, got 1001`));
  });

  it('xvec 2: clusters of offsets ≤ 64 apart share a window; windows past 3 072 floats are refused with the reason', () => {
    const st = stageClusters(Int32Array.of(-2000, -1, 0, 1, 2000), 512);
    expect(st.cluster).toEqual([0, -2000, 129, 0, 129, -4, 131, 0, 260, 2000, 129, 0]);
    expect(Array.from(st.at)).toEqual([0, 519, 520, 521, 1040]);
    const m = dia(g.poisson2d(2000 / 25));
    expect(diaVec4Kernel.supports(m, ctx.limits, { ...diaVec4Kernel.defaults, xvec: 2, workgroupSize: 256 })).toMatch(/stages 3092 floats of x per tile of 1024 rows \(5 offsets\), more than 3072/);
    expect(diaVec4Kernel.supports(m, ctx.limits, { ...diaVec4Kernel.defaults, xvec: 2, workgroupSize: 128 })).toBe(true);
  });

  it('split into row blocks over small bindings: same bits as one block (x read, and x staged per tile)', async () => {
    for (const xvec of [1, 2]) {
      const whole = await run(diaVec4Kernel, band, { xvec });
      const split = await run(diaVec4Kernel, band, { xvec }, { maxBindingBytes: 12 * 4 * 400 });
      expect(split.blocks).toBeGreaterThan(10);
      expect(Array.from(split.y)).toEqual(Array.from(whole.y));
    }
  }, 300_000);

  it('an empty matrix stores beta·y; more than 256 diagonals are refused with the reason', async () => {
    const empty = csrFromTriplets(9, 12, [], [], []);
    expect((await run(diaVec4Kernel, empty, {}, undefined, 1, 0.5)).worst).toBeLessThanOrEqual(1);
    const wide = g.banded(600, 150, 150, { seed: 7 });
    const m = dia(wide);
    expect(diaVec4Kernel.supports(m, ctx.limits, { ...diaVec4Kernel.defaults, maxDiagonals: 1024 })).toMatch(/at most 256 diagonals, got 301/);
    expect(() => diaVec4Kernel.upload(ctx, m, { maxDiagonals: 1024 })).toThrow(/at most 256 diagonals/);
  });

  it('a DIA layout built on the device (dia / dia-tiled plan) is refused with the reason', () => {
    const m = deviceDiaForUpload(ctx, g.poisson2d(40), 1024);
    if (typeof m === 'string') throw new Error(`device DIA build did not apply: ${m}`);
    try {
      expect(diaVec4Kernel.supports(m as never, ctx.limits, diaVec4Kernel.defaults)).toMatch(/takes a host-converted DIA matrix/);
    } finally {
      m.release();
    }
  });

  it('a workgroup size past 256 is refused by name (the context keeps the WebGPU default workgroup size limit)', () => {
    expect(() => diaVec4Kernel.wgsl({ ...diaVec4Kernel.defaults, workgroupSize: 512 }, ctx.caps)).toThrow(/workgroupSize expected 32, 64, 128 or 256, got 512/);
  });

  it('the unchecked rows: every offset keeps x and its second vec4 inside the columns', () => {
    expect(vec4Interior(Int32Array.of(-1, 0, 1), 0, 64, 64)).toEqual([4, 56]);
    expect(vec4Interior(Int32Array.of(-8, 8), 16, 64, 96)).toEqual([0, 64]);
    expect(vec4Interior(Int32Array.of(-60, 60), 0, 64, 64)).toEqual([0xffffffff, 0xffffffff]);
  });
});
