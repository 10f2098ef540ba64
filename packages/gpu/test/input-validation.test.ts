/**
 * Issue 13, point 5 on the device: the malformed CSR that the COO kernel used to accept (a
 * non-monotone rowPtr; its product was off by up to 5) and an out-of-range column are refused
 * before anything is uploaded, with the same InvalidMatrixError as on the host; so are diagonal
 * offsets outside the matrix on the DIA and HM kernels (they used to be dropped).
 */
import { type CooMatrix, type CsrMatrix, cooFromCsr, csrSpmv, diaFromCsr, generators as g, hmFromCsr, InvalidMatrixError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../src/index';
import { gpuOperatorFromCsr } from '../src/index';
import { cooKernel } from '../src/kernels/coo/coo.kernel';
import { diaKernel } from '../src/kernels/dia/dia.kernel';
import { hmKernel } from '../src/kernels/hm/hm.kernel';
import { GpuVectorSpace } from '../src/vector-space';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

const raw = (rows: number, cols: number, rowPtr: number[], colIdx: number[]): CsrMatrix => ({
  format: 'csr',
  rows,
  cols,
  rowPtr: Int32Array.from(rowPtr),
  colIdx: Int32Array.from(colIdx),
  values: Float64Array.from(colIdx, (_, k) => k + 1),
});

function thrown(f: () => unknown): InvalidMatrixError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidMatrixError);
    return e as InvalidMatrixError;
  }
  throw new Error('expected an InvalidMatrixError, nothing was thrown');
}

describe('COO kernel path: malformed input is refused before upload', () => {
  it('the non-monotone rowPtr of the audit: same error as csrSpmv on the host', () => {
    const a = raw(3, 3, [0, 3, 1, 4], [0, 1, 2, 0]);
    const host = thrown(() => csrSpmv(a, new Float64Array(3)));
    const gpu = thrown(() => gpuOperatorFromCsr(ctx, raw(3, 3, [0, 3, 1, 4], [0, 1, 2, 0]), { kernel: 'coo' }));
    expect(gpu.message).toBe('cooFromCsr: CSR rowPtr[2] = 1 < rowPtr[1] = 3: row pointers must not decrease');
    expect(gpu.message.slice(gpu.where.length)).toBe(host.message.slice(host.where.length));
  });

  it('an out-of-range column, and a hand-built COO with a row past the matrix', () => {
    expect(thrown(() => gpuOperatorFromCsr(ctx, raw(2, 3, [0, 1, 2], [0, 3]), { kernel: 'coo' })).message).toMatch(/CSR colIdx\[1\] = 3 in row 1: expected a column in \[0, 3\)/);
    const m = cooFromCsr(g.laplacian1d(4));
    const rowIdx = m.rowIdx.slice();
    rowIdx[m.nnz - 1] = 4; // still sorted by row: only the range check can catch it
    const bad: CooMatrix = { ...m, rowIdx };
    expect(thrown(() => cooKernel.upload(ctx, bad)).message).toBe(`coo upload: COO rowIdx[${m.nnz - 1}] = 4: expected a row in [0, 4)`);
  });

  it('a valid matrix still multiplies correctly on the same path', async () => {
    const a = g.laplacian1d(9);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'coo' });
    const x = Float64Array.from({ length: 9 }, (_, i) => i + 1);
    const space = new GpuVectorSpace(ctx);
    const xv = space.fromArray(x);
    const yv = space.create(9);
    op.apply(xv, yv);
    const y = await space.toArray(yv);
    const ref = csrSpmv(a, x);
    for (let i = 0; i < 9; i++) expect(Math.abs(y[i]! - ref[i]!)).toBeLessThan(1e-5 * (1 + Math.abs(ref[i]!)));
    op.dispose();
    space.release(xv);
    space.release(yv);
  });
});

describe('DIA and HM kernels: offsets outside the matrix are refused, not dropped', () => {
  const a = g.laplacian1d(4);
  it('dia upload', () => {
    const d = diaFromCsr(a);
    const e = thrown(() => diaKernel.upload(ctx, { ...d, offsets: Int32Array.of(-1, 0, 1000) }));
    expect(e.message).toBe('dia upload: DIA offsets[2] = 1000: expected a diagonal offset inside the 4x4 matrix, in [-3, 3]');
  });
  it('hm upload', () => {
    const h = hmFromCsr(a);
    const e = thrown(() => hmKernel.upload(ctx, { ...h, offsets: Int32Array.of(0, 1, -9) }));
    expect(e.message).toMatch(/^hm upload: HM offsets\[2\] = -9: expected a diagonal offset inside the 4x4 matrix/);
  });
});
