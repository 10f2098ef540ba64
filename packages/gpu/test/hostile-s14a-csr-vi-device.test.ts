/**
 * Session 14 hardening (s14-harden-e): csr-vi and csr-vi-slice on lavapipe with any matrix a user
 * may pass (hostile-s14a-vi-cases.ts: NaN, ±Inf, −0, subnormals, ±3e38, values that round to one
 * float32, all-distinct values, the table at and past its capacity, empty and rectangular shapes,
 * rows over several windows, row blocks over 512-byte and 1 KiB bindings): each product against the
 * float64 reference. Found: a value float32 cannot hold reached the device — `csrViKernel.upload`
 * (the kernels' documented call) and `gpuOperatorFromFormat` rounded 1e39 to Infinity and kept an
 * all-subnormal matrix (zeros on GPUs that flush) without a word, where gpuOperatorFromCsr refuses
 * both. Now both uploads refuse them, naming the table entry or raw entry with its row and column.
 */
import { csrViFromCsr, InvalidMatrixError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { type GpuContext, gpuOperatorFromCsr, gpuOperatorFromFormat } from '../src/index';
import { testContext } from './helpers';
import { VI_KERNELS, VI_OUT_OF_RANGE, viCases, viProduct } from './hostile-s14a-vi-cases';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

describe('csr-vi kernels on hostile matrices', () => {
  for (const kernel of VI_KERNELS) {
    it(`${kernel.id}: every case's product matches the float64 reference (non-finite rows exactly, the rest within the float32 bound)`, async () => {
      for (const c of viCases()) {
        const r = await viProduct(ctx, kernel, c);
        expect(r.pass, `${c.name}: ${r.detail}`).toBe(true);
      }
    }, 300_000);

    it(`${kernel.id}: a value float32 cannot hold is refused at the upload, naming where (was rounded to ±Infinity / kept all-subnormal)`, () => {
      for (const c of VI_OUT_OF_RANGE) {
        const m = csrViFromCsr(c.a);
        expect(() => kernel.upload(ctx, m), c.name).toThrow(InvalidMatrixError);
        expect(() => kernel.upload(ctx, m), c.name).toThrow(c.where);
        expect(() => gpuOperatorFromFormat(ctx, kernel, m), c.name).toThrow(c.where);
        // the CSR route already refused them (checkFloat32Range): the same words now on both
        expect(() => gpuOperatorFromCsr(ctx, c.a, { kernel: kernel.id }), c.name).toThrow(InvalidMatrixError);
      }
    });
  }
});
