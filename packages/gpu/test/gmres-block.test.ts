/**
 * GMRES's device basis block (blas1/gmres-block, issue 15): the one-pass Gram–Schmidt step and
 * the cycle start against host float64 arithmetic, its argument checks, and GMRES with the block
 * against the per-vector passes — the same iterations and answer, fewer dispatches per step, ‖b‖
 * read with the first cycle's rows — and b = 0, a non-finite b and a non-finite product caught.
 */
import { csrSpmv, generators, GpuSparseError, InvalidParameterError, type LinearOperator } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { gmres, jacobi } from '../../solvers/src/index';
import { type GpuContext, GmresBlock, gpuOperatorFromCsr, type GpuVector, GpuVectorSpace } from '../src/index';
import { randomVector, testContext, trueRelative } from './helpers';

let ctx: GpuContext;
let space: GpuVectorSpace;
beforeAll(async () => {
  ctx = await testContext();
  space = new GpuVectorSpace(ctx);
});

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};

describe('GmresBlock', () => {
  it('start gives v0 = −r/‖r‖ and ‖r‖; two steps give the projections, the norm and −w′/‖w′‖ of classical Gram–Schmidt', async () => {
    const n = 3001; // not a multiple of the chunk: the tail of the last workgroup is masked
    const blk = space.gmresBlock(n, 4)!;
    expect(blk).toBeInstanceOf(GmresBlock);
    const r = randomVector(n, 1);
    const [rv, v0, w, v1, w2, v2] = [space.fromArray(r), space.create(n), space.fromArray(randomVector(n, 2)), space.create(n), space.fromArray(randomVector(n, 3)), space.create(n)];
    const wHost = await space.toArray(w);
    const w2Host = await space.toArray(w2);
    blk.start(rv, v0);
    blk.step(1, w, v1, 0);
    blk.step(2, w2, v2, 1);
    const got = await blk.read([0, 1], true);
    const rn = Math.sqrt(dot(r, r));
    expect(got.start!).toBeCloseTo(rn, 3);
    const q0 = await space.toArray(v0);
    for (let i = 0; i < n; i += 97) expect(q0[i]!).toBeCloseTo(-r[i]! / rn, 6);
    // step 0: h0 = ⟨v0, w⟩, w' = w − h0·v0, stored v1 = −w'/‖w'‖
    const h0 = dot(q0, wHost);
    const wp = wHost.map((x, i) => x - h0 * q0[i]!);
    const b0 = Math.sqrt(dot(wp, wp));
    expect(got.steps[0]!.length).toBe(2);
    expect(got.steps[0]![0]!).toBeCloseTo(h0, 4);
    expect(got.steps[0]![1]!).toBeCloseTo(b0, 3);
    const q1 = await space.toArray(v1);
    for (let i = 0; i < n; i += 97) expect(q1[i]!).toBeCloseTo(-wp[i]! / b0, 5);
    // step 1 against [v0, v1] (the stored, negated v1)
    expect(got.steps[1]!.length).toBe(3);
    expect(got.steps[1]![0]!).toBeCloseTo(dot(q0, w2Host), 4);
    expect(got.steps[1]![1]!).toBeCloseTo(dot(q1, w2Host), 4);
    const q2 = await space.toArray(v2);
    expect(Math.abs(dot(q2, q0))).toBeLessThan(1e-5);
    expect(Math.abs(dot(q2, q1))).toBeLessThan(1e-5);
    expect(dot(q2, q2)).toBeCloseTo(1, 5);
    blk.dispose();
    for (const v of [rv, v0, w, v1, w2, v2]) space.release(v);
  });

  it('refuses bad arguments and a disposed block; undefined where the block does not fit a binding', () => {
    const blk = space.gmresBlock(100, 3)!;
    const [w, v, short] = [space.create(100), space.create(100), space.create(99)];
    expect(() => blk.step(0, w, v, 0)).toThrow(InvalidParameterError);
    expect(() => blk.step(3, w, v, 0)).toThrow(InvalidParameterError); // columns < capacity
    expect(() => blk.step(1, w, v, 3)).toThrow(InvalidParameterError);
    expect(() => blk.step(1, short, v, 0)).toThrow(/length 100/);
    blk.dispose();
    blk.dispose(); // idempotent
    expect(() => blk.step(1, w, v, 0)).toThrow(GpuSparseError);
    expect(space.gmresBlock(2 ** 30, 31)).toBeUndefined();
    expect(space.gmresBlock(100, 1)).toBeUndefined();
    for (const x of [w, v, short]) space.release(x);
  });
});

describe('gmres with the basis block', () => {
  const a = generators.convectionDiffusion2d(40, 40, 0.8, 0.4);
  const b = csrSpmv(a, new Float64Array(a.cols).fill(1));

  async function run(basisBlock: boolean, op: LinearOperator<GpuVector>, restart = 30) {
    const d0 = ctx.recorder.dispatches;
    const r = await gmres(space, op, space.fromArray(b), { restart, rtol: 1e-5, orthogonalization: 'cgs', checkEvery: restart, basisBlock, maxIterations: 3000 });
    const dispatches = ctx.recorder.dispatches - d0;
    const x = await space.toArray(r.x);
    space.release(r.x);
    return { r, dispatches, rel: trueRelative(a, x, b) };
  }

  it("'cgs' with a read per cycle: the same iterations and answer as the per-vector passes, fewer dispatches, two readbacks fewer (‖b‖, the first step's check)", async () => {
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const per = await run(false, op);
    const blk = await run(true, op);
    for (const x of [per, blk]) {
      expect(x.r.reason, x.r.detail).toBe('converged');
      expect(x.rel).toBeLessThanOrEqual(1.2e-5);
    }
    expect(per.r.iterations).toBeGreaterThan(60); // several cycles: the deferred restart residual is exercised
    expect(Math.abs(blk.r.iterations - per.r.iterations)).toBeLessThanOrEqual(2);
    expect(blk.r.stats.readbacks).toBe(per.r.stats.readbacks - 2);
    expect(blk.r.history[0]!.residual).toBeCloseTo(per.r.history[0]!.residual, 2); // ‖b‖, read with the first cycle's rows
    // per step the product and four dispatches; per vector five up to 13 basis vectors, more past them
    expect(blk.dispatches / blk.r.stats.matvecs).toBeLessThan(5.6);
    expect(blk.dispatches).toBeLessThan(0.9 * per.dispatches);
    op.dispose();
  });

  it('right-preconditioned (Jacobi): the same iterations and answer with and without the block', async () => {
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const preconditioner = jacobi(space, op);
    const solve = async (basisBlock: boolean) => {
      const r = await gmres(space, op, space.fromArray(b), { restart: 20, rtol: 1e-5, orthogonalization: 'cgs', checkEvery: 20, basisBlock, preconditioner, maxIterations: 3000 });
      const rel = trueRelative(a, await space.toArray(r.x), b);
      space.release(r.x);
      return { r, rel };
    };
    const per = await solve(false);
    const blk = await solve(true);
    for (const x of [per, blk]) {
      expect(x.r.reason, x.r.detail).toBe('converged');
      expect(x.rel).toBeLessThanOrEqual(1.2e-5);
    }
    expect(Math.abs(blk.r.iterations - per.r.iterations)).toBeLessThanOrEqual(2);
    op.dispose();
  });

  it('b = 0 and a non-finite b, whose norm comes with the first cycle: x = 0 converged, and non-finite', async () => {
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    for (const [rhs, reason, detail] of [
      [new Float64Array(a.rows), 'converged', /b = 0/],
      [b.map((v, i) => (i === 11 ? Number.NaN : v)), 'non-finite', /b contains non-finite values/],
    ] as const) {
      const r = await gmres(space, op, space.fromArray(rhs), { restart: 30, orthogonalization: 'cgs', checkEvery: 30 });
      expect(r.reason).toBe(reason);
      expect(r.detail).toMatch(detail);
      expect(r.iterations).toBe(0);
      if (reason === 'converged') expect(Array.from(await space.toArray(r.x)).every((v) => v === 0)).toBe(true);
      space.release(r.x);
    }
    op.dispose();
  });

  it('a product that turns NaN in the second cycle ends non-finite, never converged', async () => {
    const inner = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    let products = 0;
    const poison = (y: GpuVector) => {
      if (++products >= 45) space.fill(y, Number.NaN);
    };
    const op: LinearOperator<GpuVector> = {
      rows: a.rows,
      cols: a.cols,
      label: 'nan-after-45',
      apply: (x, y) => {
        inner.apply(x, y);
        poison(y);
      },
      applyScaled: (alpha, x, beta, y) => {
        inner.applyScaled!(alpha, x, beta, y);
        poison(y);
      },
    };
    const got = await run(true, op);
    expect(got.r.converged).toBe(false);
    expect(['non-finite', 'breakdown']).toContain(got.r.reason);
    inner.dispose();
  });
});
