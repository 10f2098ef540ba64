/**
 * The Lanczos basis block (blas1/lanczos-block, issue 15): the basis in one buffer, so that a
 * CGS2 step is six dispatches for any basis size and the kept vectors of a restart come from
 * one pass over Q. Checked against float64 host arithmetic and against the per-vector path
 * (the same Lanczos answers, fewer dispatches), and its refusals.
 */
import { generators, InvalidParameterError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { lanczos } from '../../solvers/src/index';
import { type GpuContext, type GpuVector, GpuVectorSpace, gpuOperatorFromCsr, LanczosBlock } from '../src/index';
import { f32, randomVector, testContext } from './helpers';

let ctx: GpuContext;
let s: GpuVectorSpace;
beforeAll(async () => {
  ctx = await testContext();
  s = new GpuVectorSpace(ctx);
});

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += a[i]! * b[i]!;
  return d;
};

/** A GPU space without the block: the per-vector path of the same solver. */
function plainSpace(): GpuVectorSpace {
  const p = new GpuVectorSpace(ctx);
  (p as unknown as { lanczosBlock?: unknown }).lanczosBlock = undefined;
  return p;
}

describe('LanczosBlock.step: CGS2 against the block, six dispatches for any basis size', () => {
  for (const [n, m] of [[1, 1], [300, 5], [5000, 13], [5000, 20], [20_000, 30]] as const) {
    it(`n = ${n}, ${m} columns: h1, h2, β and next match float64 Gram–Schmidt; next written to column ${m}`, async () => {
      // an orthonormal basis (host Gram–Schmidt in float64, then float32)
      const host: Float64Array[] = [];
      for (let j = 0; j < m; j++) {
        const v = Float64Array.from(f32(randomVector(n, 40 + j)));
        for (const u of host) {
          const d = dot(u, v);
          for (let i = 0; i < n; i++) v[i] = v[i]! - d * u[i]!;
        }
        const nv = Math.sqrt(dot(v, v));
        host.push(v.map((x) => (nv > 0 ? x / nv : 0)));
      }
      const basis = host.map((v) => s.fromArray(Float32Array.from(v)));
      const w0 = f32(randomVector(n, 7));
      const w = s.fromArray(w0);
      const next = s.createUninitialized(n);
      const block = s.lanczosBlock(n, m + 1, 2)!;
      const d0 = ctx.recorder.dispatches;
      block.step(basis, w, next, 1);
      expect(ctx.recorder.dispatches - d0).toBe(6);
      const [row] = (await block.read([m, m])).slice(1);
      const q32 = host.map((v) => Float64Array.from(Float32Array.from(v)));
      const h = q32.map((u) => dot(u, w0)); // Qᵀw in float64 (exact inputs)
      const scale = Math.sqrt(dot(w0, w0));
      const h1 = row!.slice(0, m);
      const h2 = row!.slice(m, 2 * m);
      h1.forEach((x, j) => {
        expect(Math.abs(x - h[j]!)).toBeLessThanOrEqual(1e-5 * scale);
      });
      // total projection h1 − h2 ≈ h (the second pass removes what the first left)
      h1.forEach((x, j) => {
        expect(Math.abs(x - h2[j]! - h[j]!)).toBeLessThanOrEqual(1e-5 * scale);
      });
      const wRef = Float64Array.from(w0);
      q32.forEach((u, j) => {
        for (let i = 0; i < n; i++) wRef[i] = wRef[i]! - h[j]! * u[i]!;
      });
      const beta = Math.sqrt(dot(wRef, wRef));
      const got = await s.toArray(next);
      if (beta > 1e-3 * scale) {
        expect(Math.abs(row![2 * m]! - beta)).toBeLessThanOrEqual(1e-4 * scale);
        let err = 0;
        for (let i = 0; i < n; i++) err = Math.max(err, Math.abs(got[i]! - wRef[i]! / beta));
        expect(err).toBeLessThanOrEqual(1e-3);
      }
      // the block's column m holds next: a combine from the block gives it back exactly
      const [copy] = block.combineColumns([...basis, next], [[...new Array<number>(m).fill(0), 1]], (len) => s.createUninitialized(len))!;
      expect(Array.from(await s.toArray(copy!))).toEqual(Array.from(got));
      for (const v of [...basis, w, next, copy!]) s.release(v);
      block.dispose();
    });
  }

  it('refuses a basis that leaves no column for next, a row past the history, a wrong length, a disposed block', () => {
    const vs = Array.from({ length: 3 }, (_, j) => s.fromArray(f32(randomVector(64, j))));
    const other = s.fromArray(f32(randomVector(65, 9)));
    const block = s.lanczosBlock(64, 3, 2)!;
    expect(() => block.step(vs, vs[0]!, vs[1]!, 0)).toThrow(InvalidParameterError); // 3 columns + next > 3
    expect(() => block.step(vs.slice(0, 1), vs[1]!, vs[2]!, 2)).toThrow(InvalidParameterError);
    expect(() => block.step(vs.slice(0, 1), other, vs[2]!, 0)).toThrow(/length 64/);
    block.dispose();
    expect(() => block.step(vs.slice(0, 1), vs[1]!, vs[2]!, 0)).toThrow(/disposed/);
    for (const v of [...vs, other]) s.release(v);
  });

  it('no block where it would not fit one storage binding or the counts are out of range (the solver keeps its per-vector path)', () => {
    const big = Math.floor(ctx.deviceLimits.maxStorageBufferBindingSize / 4 / 10) + 1;
    expect(s.lanczosBlock(big, 10, 8)).toBeUndefined();
    expect(s.lanczosBlock(100, 1, 8)).toBeUndefined();
    expect(s.lanczosBlock(100, 300, 8)).toBeUndefined();
    expect(s.lanczosBlock(100, 10, 0)).toBeUndefined();
    expect(LanczosBlock.create(ctx, 0, 10, 8)).toBeUndefined();
  });
});

describe('LanczosBlock.combineColumns: Y = Q·C in one pass over Q', () => {
  it('17 columns, 13 outputs (two dispatches at 12 per pass): the per-vector combine bits; undefined for vectors not in the block', async () => {
    const n = 3000;
    const m = 17;
    const basis = Array.from({ length: m }, (_, j) => s.fromArray(Array.from({ length: n }, (_, i) => ((i * 7 + j * 13) % 11) - 5)));
    const block = s.lanczosBlock(n, m + 1, 1)!;
    const w = s.fromArray(f32(randomVector(n, 3)));
    const next = s.createUninitialized(n);
    block.step(basis.slice(0, m - 1), w, next, 0); // columns 0 … 15 from the basis, 16 := next
    const coeffs = Array.from({ length: 13 }, (_, t) => Array.from({ length: m - 1 }, (_, j) => ((t + j) % 5) - 2 + (j % 2 ? 0.5 : 0)));
    const d0 = ctx.recorder.dispatches;
    const ys = block.combineColumns(basis.slice(0, m - 1), coeffs, (len) => s.createUninitialized(len))!;
    const R = Math.max(1, Math.min(12, ctx.limits.maxStorageBuffersPerShaderStage - 2));
    expect(ctx.recorder.dispatches - d0).toBe(Math.ceil(13 / R));
    const host = await Promise.all(basis.map((v) => s.toArray(v)));
    for (let t = 0; t < coeffs.length; t++) {
      const got = await s.toArray(ys[t]!);
      const want = Array.from({ length: n }, (_, i) => coeffs[t]!.reduce((acc, k, j) => acc + k * host[j]![i]!, 0));
      expect(Array.from(got)).toEqual(want); // small integers and halves: exact in float32
    }
    // basis[16] was never copied into the block (column 16 holds next): no answer, nothing recorded
    expect(block.combineColumns(basis.slice(1), [new Array<number>(m - 1).fill(1)], (len) => s.createUninitialized(len))).toBeUndefined();
    expect(block.combineColumns([basis[0]!, basis[2]!], [[1, 1]], (len) => s.createUninitialized(len))).toBeUndefined();
    for (const v of [...basis, ...ys, w, next]) s.release(v as GpuVector);
    block.dispose();
  });
});

describe('float32 Lanczos with the basis block', () => {
  it('2-D Poisson 20 × 21, k = 4 (basis 20): the per-vector answers, ≤ 7.5 dispatches per product (11.7 per vector)', async () => {
    const a = generators.poisson2d(20, 21);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector', params: { lanes: 4 } });
    const plain = plainSpace();
    const per = async (space: GpuVectorSpace) => {
      const d0 = ctx.recorder.dispatches;
      const r = await lanczos(space, op, { k: 4, tol: 1e-5 });
      const perProduct = (ctx.recorder.dispatches - d0) / r.stats.matvecs;
      for (const v of r.vectors) space.release(v);
      return { r, perProduct };
    };
    const withBlock = await per(s);
    const without = await per(plain);
    expect(withBlock.r.reason, withBlock.r.detail).toBe('converged');
    expect(withBlock.r.stats.matvecs).toBe(without.r.stats.matvecs);
    withBlock.r.values.forEach((v, i) => {
      expect(Math.abs(v - without.r.values[i]!)).toBeLessThanOrEqual(1e-6 * 8);
    });
    expect(withBlock.perProduct).toBeLessThanOrEqual(7.5);
    expect(without.perProduct).toBeGreaterThan(11);
    op.dispose();
  });

  it('record ahead at basis 40 (the next batch recorded while the readback is in flight, history rows overwritten after their copy): the answers of recordAhead false', async () => {
    const a = generators.poisson2d(20, 21);
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector', params: { lanes: 4 } });
    const run = async (recordAhead: boolean) => {
      const r = await lanczos(s, op, { k: 4, tol: 1e-5, maxBasis: 40, recordAhead });
      for (const v of r.vectors) s.release(v);
      return r;
    };
    const ahead = await run(true);
    const turns = await run(false);
    for (const r of [ahead, turns]) expect(r.reason, r.detail).toBe('converged');
    ahead.values.forEach((v, i) => {
      expect(Math.abs(v - turns.values[i]!)).toBeLessThanOrEqual(1e-6 * 8);
    });
    // the same steps in the same order; at most checkEvery − 1 = 7 discarded per run (main + up to 4 checks)
    expect(ahead.stats.matvecs).toBeGreaterThanOrEqual(turns.stats.matvecs);
    expect(ahead.stats.matvecs).toBeLessThanOrEqual(turns.stats.matvecs + 5 * 7);
    expect(ahead.stats.readbacks).toBeLessThanOrEqual(turns.stats.readbacks + 5);
    op.dispose();
  });
});
