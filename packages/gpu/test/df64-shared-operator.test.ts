/**
 * Df64CsrOperator.fromGpuOperator: the df64 product over a float32 CSR operator's own device
 * arrays (hi values shared, lo arrays added only where values are not exact in f32) against
 * the float64 host product, over one and several binding blocks; other formats are declined.
 */
import { type CsrMatrix, generators, HostOperator } from '@gpusparse/formats';
import { eigsMixed } from '../../solvers/src/index';
import { beforeAll, describe, expect, it } from 'vitest';
import { Df64CsrOperator, Df64VectorSpace, type GpuContext, GpuVectorSpace, gpuOperatorFromCsr, lowParts, uploadF32 } from '../src/index';
import { randomVector, testContext } from './helpers';

let ctx: GpuContext;
let s: Df64VectorSpace;
beforeAll(async () => {
  ctx = await testContext();
  s = (await Df64VectorSpace.of(ctx))!;
});

/** max |y − y_ref| / max |y_ref|. */
function relErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.length; i++) {
    num = Math.max(num, Math.abs(a[i]! - b[i]!));
    den = Math.max(den, Math.abs(b[i]!));
  }
  return num / (den || 1);
}

/** A power-law matrix with values scaled by 1/3 (not exact in f32), or rounded to f32 (exact). */
function matrix(exact: boolean): CsrMatrix {
  const a = generators.powerLaw(3000, 3000, { seed: 11, maxLen: 200 });
  return { ...a, values: Float64Array.from(a.values, (v) => (exact ? Math.fround(v / 3) : v / 3)) };
}

describe('Df64CsrOperator.fromGpuOperator', () => {
  for (const [kernel, maxBindingBytes] of [['csr-scalar', undefined], ['csr-vector', 16_384]] as const) {
    it(`${kernel}${maxBindingBytes ? ' over several blocks' : ''}: product to 1e-14 of float64, lo only where needed`, async () => {
      for (const exact of [false, true]) {
        const a = matrix(exact);
        const nnz = a.rowPtr[a.rows]!;
        const op = gpuOperatorFromCsr(ctx, a, { kernel, ...(maxBindingBytes ? { upload: { maxBindingBytes } } : {}) });
        const dop = Df64CsrOperator.fromGpuOperator(s.d, op, a)!;
        expect(dop, `${kernel} exact=${exact}`).toBeDefined();
        if (maxBindingBytes) expect(dop.blocks.length).toBeGreaterThan(1);
        // bytes added: the lo arrays only (4 per non-zero of the blocks that need them)
        expect(dop.deviceBytes).toBe(exact ? 0 : 4 * nnz);
        const x = Float64Array.from(randomVector(a.cols, 5), (v, i) => v + Math.cos(i) / 7);
        const y = s.create(a.rows);
        dop.apply(s.fromArray(x), y);
        const ref = new Float64Array(a.rows);
        HostOperator.fromCsr(a).apply(x, ref);
        expect(relErr(await s.toArray(y), ref)).toBeLessThan(1e-14);
        dop.dispose();
        op.dispose();
      }
    });
  }

  it('declines a non-CSR operator and a matrix that is not the one uploaded', () => {
    const a = matrix(false);
    const ell = gpuOperatorFromCsr(ctx, a, { kernel: 'ell' });
    expect(Df64CsrOperator.fromGpuOperator(s.d, ell, a)).toBeUndefined();
    ell.dispose();
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-scalar' });
    const other = generators.poisson2d(10);
    expect(Df64CsrOperator.fromGpuOperator(s.d, op, other)).toBeUndefined();
    op.dispose();
  });
});

describe('lowParts', () => {
  it('fl32(v − fl32(v)) per value, 0 where fl32 overflows or v is not finite; undefined when all are exact', () => {
    const v = new Float64Array([1, 0.1, -1 / 3, 2 ** 24 + 1, 1e300, -1e300, Number.NaN, Number.POSITIVE_INFINITY, 2 ** -140 / 3]);
    const lo = lowParts(v)!;
    const want = Array.from(v, (x) => (Number.isFinite(Math.fround(x)) ? Math.fround(x - Math.fround(x)) : 0));
    expect(Array.from(lo)).toEqual(want);
    expect(lo[1]).not.toBe(0);
    expect(lowParts(new Float64Array([1, 0.5, -3, 2 ** 24, Number.NaN]))).toBeUndefined();
    // a sub-range: k0..k1 only, exact values before the first inexact one stay 0
    expect(Array.from(lowParts(v, 1, 3)!)).toEqual(want.slice(1, 3));
    expect(lowParts(v, 0, 1)).toBeUndefined();
    expect(lowParts(v, 2, 2)).toBeUndefined();
  });
});

describe('Df64CsrOperator.fromGpuOperatorSliced', () => {
  it('the same product as fromGpuOperator bit for bit, over several blocks and slices, on pooled buffers holding old data', async () => {
    const a = matrix(false);
    // the first 300 rows exact in f32: the lo buffer starts after some all-exact slices (written as zeros)
    for (let k = 0; k < a.rowPtr[300]!; k++) a.values[k] = Math.fround(a.values[k]!);
    expect(a.rowPtr[300]!).toBeGreaterThan(2 * 97);
    for (const maxBindingBytes of [undefined, 16_384]) {
      const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector', ...(maxBindingBytes ? { upload: { maxBindingBytes } } : {}) });
      // leave garbage in pooled buffers of the lo arrays' sizes: the sliced build takes them
      const parts = (op.handle as unknown as { parts: { k0: number; k1: number }[] }).parts;
      const garbage = parts.map((p) => uploadF32(ctx, new Float32Array(p.k1 - p.k0).fill(12345), 'garbage'));
      for (const g of garbage) g.dispose();
      const dop = (await Df64CsrOperator.fromGpuOperatorSliced(s.d, op, a, { slice: 97 }))!;
      const ref = Df64CsrOperator.fromGpuOperator(s.d, op, a)!;
      expect(dop.blocks.length).toBe(ref.blocks.length);
      expect(dop.deviceBytes).toBe(ref.deviceBytes);
      expect(dop.build!.slices).toBeGreaterThan(1);
      // the event loop runs between every two slices, across blocks too
      expect(dop.build!.yields).toBe(parts.reduce((n, p) => n + Math.ceil((p.k1 - p.k0) / 97), 0) - 1);
      const x = s.fromArray(Float64Array.from(randomVector(a.cols, 7), (v, i) => v + Math.sin(i) / 9));
      const y1 = s.create(a.rows);
      const y2 = s.create(a.rows);
      ref.apply(x, y1);
      dop.apply(x, y2);
      expect(Array.from(await s.toArray(y2))).toEqual(Array.from(await s.toArray(y1)));
      for (const o of [dop, ref, op]) o.dispose();
    }
  });

  it('adds no device bytes for an f32-exact matrix and declines a non-CSR operator', async () => {
    const a = matrix(true);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-scalar' });
    const dop = (await Df64CsrOperator.fromGpuOperatorSliced(s.d, op, a, { slice: 1000 }))!;
    expect(dop.deviceBytes).toBe(0);
    expect(dop.blocks.every((b) => b.lo === undefined)).toBe(true);
    expect(dop.build!.slices).toBe(0);
    dop.dispose();
    op.dispose();
    const ell = gpuOperatorFromCsr(ctx, a, { kernel: 'ell' });
    expect(await Df64CsrOperator.fromGpuOperatorSliced(s.d, ell, a)).toBeUndefined();
    ell.dispose();
  });
});

describe("eigsMixed accept 'bound' with the df64 polish on the device", () => {
  it('shifted 2-D Laplacian 20×20 (a double eigenvalue among the wanted): every root certified, no correction, values to 1e-10', async () => {
    const lap = generators.poisson2d(20);
    // A = L + 10·I: eigenvalues 10 + 4 − 2cos(iπ/21) − 2cos(jπ/21), relative 1e-10 within reach of df64
    const a: CsrMatrix = { ...lap, values: Float64Array.from(lap.values) };
    for (let i = 0; i < a.rows; i++) for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) if (a.colIdx[k] === i) a.values[k] = a.values[k]! + 10;
    const ref: number[] = [];
    for (let i = 1; i <= 20; i++) for (let j = 1; j <= 20; j++) ref.push(14 - 2 * Math.cos((i * Math.PI) / 21) - 2 * Math.cos((j * Math.PI) / 21));
    ref.sort((x, y) => x - y);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-scalar' });
    const dop = Df64CsrOperator.fromGpuOperator(s.d, op, a)!;
    const r = await eigsMixed({ method: 'lanczos', k: 4, fastOperator: op, fastSpace: new GpuVectorSpace(ctx), devicePolish: s.polish(dop), accept: 'bound' });
    expect(r.reason, r.detail).toBe('converged');
    expect(r.phases[1]!.space).toBe('webgpu-df64');
    expect(r.bounds!.acceptedBy).toEqual(['bound', 'bound', 'bound', 'bound']);
    expect(r.phases[1]!.innerMatvecs).toBe(0);
    r.values.forEach((v, i) => {
      expect(Math.abs(v - ref[i]!), `root ${i}`).toBeLessThanOrEqual(r.bounds!.bound[i]!);
      expect(Math.abs(v - ref[i]!) / ref[i]!, `root ${i}`).toBeLessThan(1e-10);
    });
    dop.dispose();
    op.dispose();
  });
});
