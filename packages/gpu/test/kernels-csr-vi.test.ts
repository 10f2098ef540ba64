/**
 * The csr-vi kernel (issue 20, session 13) against the float64 reference: rows spanning several
 * column windows (v = 16 on 300 017 columns: segment boundaries inside every lane's stride), every
 * declared variant, v chosen by the plan and fixed at 1 / 12, empty and one-entry rows, all-raw and
 * all-table matrices, row blocks split over small bindings with alpha / beta, an empty matrix;
 * refusals (a row past one binding, a corrupted matrix). Oracle: the float64 CSR product of the
 * float32-rounded matrix, the conformance tier's per-row bound.
 */
import { type CsrMatrix, csrFromTriplets, csrViFromCsr, generators as g, InvalidMatrixError, ResourceLimitError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { csrViKernel, csrViSliceKernel, experimentalKernels, type GpuContext, getKernel, kernels, kernelVariants, type UploadOptions } from '../src/index';
import { f32, runOnDevice, testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

type ViKernel = typeof csrViKernel | typeof csrViSliceKernel;

/** y = alpha·A·x + beta·y with csr-vi (or `kernel`): the worst error over its bound (∞ past it), the block count, the matrix. */
async function run(a0: CsrMatrix, params: Record<string, number>, opts?: UploadOptions, alpha = 1, beta = 0, kernel: ViKernel = csrViKernel) {
  const a = { ...a0, values: f32(a0.values) };
  const m = csrViFromCsr(a, { valueBits: params.valueBits ?? 0 });
  return { ...(await runOnDevice(ctx, kernel, a, m, params, opts, alpha, beta)), m };
}

describe('csr-vi', () => {
  it('is registered as an experimental kernel of format csr-vi (tested and benchmarked, not a tuner default)', () => {
    expect(experimentalKernels).toContain(csrViKernel);
    expect(kernels).not.toContain(csrViKernel);
    expect(getKernel('csr-vi')).toBe(csrViKernel);
    expect(csrViKernel.format).toBe('csr-vi');
  });

  const wide = g.repeatedValues(700, 300_017, 90, 60, 0.05, 5);
  it('300 017 columns at v = 16 (≥ 4 segments a row): every declared variant within the float32 bound', async () => {
    for (const params of kernelVariants(csrViKernel)) {
      const r = await run(wide, { ...params, valueBits: 16 });
      expect(r.m.segEnd.length / r.m.rows).toBeGreaterThan(3);
      expect(r.worst, JSON.stringify(params)).toBeLessThanOrEqual(1);
    }
  }, 300_000);

  it('v chosen by the plan, v = 12 and v = 1 (almost all raw), lanes 4…256 and unroll 6', async () => {
    for (const params of [{ valueBits: 0 }, { valueBits: 12, lanes: 256, unroll: 6 }, { valueBits: 1, lanes: 4, unroll: 1 }, { valueBits: 16, lanes: 128, unroll: 8 }] as Record<string, number>[]) {
      const r = await run(wide, params);
      expect(r.worst, JSON.stringify(params)).toBeLessThanOrEqual(1);
    }
  }, 300_000);

  it('empty and one-entry rows, columns at the window edges, all-raw and all-table matrices, alpha / beta', async () => {
    const edges = csrFromTriplets(6, 200_000, [0, 0, 0, 2, 3, 3, 5], [65_535, 65_536, 131_071, 131_072, 0, 199_999, 65_535], [1, 1, 2, 2, 1, 2, 1]);
    for (const a of [edges, g.repeatedValues(300, 2000, 33, 1, 1, 3), g.repeatedValues(300, 2000, 33, 3, 0, 4)]) {
      for (const params of [{ valueBits: 16, lanes: 8 }, { valueBits: 0 }] as Record<string, number>[]) {
        const r = await run(a, params, undefined, -0.5, 2);
        expect(r.worst, JSON.stringify(params)).toBeLessThanOrEqual(1);
      }
    }
    const none = await run(csrFromTriplets(0, 0, [], [], []), {});
    expect(none.blocks).toBe(0);
  }, 300_000);

  it('row blocks split over 4 KiB bindings give the one-binding result, with alpha and beta', async () => {
    const small = await run(wide, { valueBits: 16 }, { maxBindingBytes: 4096 }, 1.5, -1);
    expect(small.blocks).toBeGreaterThan(10);
    expect(small.worst).toBeLessThanOrEqual(1);
  }, 300_000);

  it('refuses a row longer than one binding and a corrupted matrix, before any dispatch', () => {
    const m = csrViFromCsr(wide, { valueBits: 16 });
    expect(() => csrViKernel.upload(ctx, m, {}, { maxBindingBytes: 256 })).toThrow(ResourceLimitError);
    expect(() => csrViKernel.upload(ctx, m, {}, { maxBindingBytes: 256 })).toThrow(/csr-vi upload: row 0.*never cut over bindings/);
    expect(() => csrViKernel.upload(ctx, { ...m, segEnd: m.segEnd.map((e, i) => (i === 5 ? 0 : e)) })).toThrow(InvalidMatrixError);
  });

  it('rejects parameters outside its lists, naming them', () => {
    expect(() => csrViKernel.wgsl({ ...csrViKernel.defaults, lanes: 3 }, ctx.caps)).toThrow(/lanes expected one of 4, 8, 16, 32, 64, 128, 256/);
    expect(() => csrViKernel.wgsl({ ...csrViKernel.defaults, unroll: 5 }, ctx.caps)).toThrow(/unroll expected one of 1, 2, 4, 6, 8/);
  });

  it('csr-vi-slice: every declared variant, window edges, empty and one-entry rows, slices over 4 KiB bindings, alpha / beta', async () => {
    expect(experimentalKernels).toContain(csrViSliceKernel);
    for (const params of kernelVariants(csrViSliceKernel)) {
      const r = await run(wide, { ...params, valueBits: 16 }, undefined, 1, 0, csrViSliceKernel);
      expect(r.worst, JSON.stringify(params)).toBeLessThanOrEqual(1);
    }
    const edges = csrFromTriplets(70, 200_000, [0, 0, 0, 2, 3, 3, 5, 69], [65_535, 65_536, 131_071, 131_072, 0, 199_999, 65_535, 7], [1, 1, 2, 2, 1, 2, 1, 3]);
    for (const a of [edges, g.repeatedValues(300, 2000, 33, 1, 1, 3), g.repeatedValues(301, 2000, 33, 3, 0, 4)]) {
      const r = await run(a, { sliceHeight: 8, unroll: 2 }, undefined, -0.5, 2, csrViSliceKernel);
      expect(r.worst).toBeLessThanOrEqual(1);
    }
    const split = await run(wide, { valueBits: 16, sliceHeight: 16, unroll: 8 }, { maxBindingBytes: 8192 }, 1.5, -1, csrViSliceKernel);
    expect(split.blocks).toBeGreaterThan(5);
    expect(split.worst).toBeLessThanOrEqual(1);
    expect(() => csrViSliceKernel.upload(ctx, csrViFromCsr(wide), { sliceHeight: 64 }, { maxBindingBytes: 1024 })).toThrow(/csr-vi-slice upload: slice of rows 0…63/);
    expect(() => csrViSliceKernel.wgsl({ ...csrViSliceKernel.defaults, sliceHeight: 12 }, ctx.caps)).toThrow(/sliceHeight expected one of 8, 16, 32, 64, 128, 256/);
  }, 300_000);
});
