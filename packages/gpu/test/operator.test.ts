import { csrSpmv, csrTranspose, generators as g, HostOperator } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { type GpuContext, GpuVectorSpace, gpuOperatorFromCsr, kernels } from '../src/index';
import { EPS32, f32, randomVector, testContext } from './helpers';

let ctx: GpuContext;
let gs: GpuVectorSpace;
beforeAll(async () => {
  ctx = await testContext();
  gs = new GpuVectorSpace(ctx);
});

describe.each(kernels.filter((k) => k.format === 'csr').map((k) => [k.id, k] as const))('GpuOperator over %s', (_id, kernel) => {
  it('apply, applyScaled, in place, transpose, diagonal vs the host operator', async () => {
    const a0 = g.banded(300, 2, 4, { seed: 3 });
    const a = { ...a0, values: f32(a0.values) };
    const op = gpuOperatorFromCsr(ctx, a, { kernel });
    const host = HostOperator.fromCsr(a);
    const xv = f32(randomVector(300, 7));
    const x = gs.fromArray(xv);
    const y = gs.create(300);
    op.apply(x, y);
    const want = csrSpmv(a, xv);
    const tol = 20 * EPS32;
    const close = (got: Float64Array, w: Float64Array) => {
      got.forEach((v, i) => {
        expect(Math.abs(v - w[i]!)).toBeLessThanOrEqual(tol * (1 + Math.abs(w[i]!)) * 8);
      });
    };
    close(await gs.toArray(y), want);
    op.applyScaled(2, x, -1, y); // y = 2Ax − y = Ax
    close(await gs.toArray(y), want);
    gs.copy(x, y);
    op.applyScaled(1, y, 0.5, y); // in place: y = Ay + 0.5y
    close(await gs.toArray(y), want.map((v, i) => v + 0.5 * xv[i]!));
    op.applyTranspose!(x, y);
    close(await gs.toArray(y), csrSpmv(csrTranspose(a), xv));
    expect([...op.diagonal!()]).toEqual([...host.diagonal!()]);
    expect(op.label).toContain(kernel.id);
    expect(() => op.apply(gs.create(299), y)).toThrow(/expected length 300/);
    op.dispose();
  });
});

describe('GPU operator + vector space', () => {
  it('CG on a 2-D Poisson matrix converges with the true residual checked in float64', async () => {
    const a = g.poisson2d(24);
    const n = a.rows;
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-adaptive' });
    const bv = randomVector(n, 11);
    const b = gs.fromArray(bv);
    const x = gs.create(n);
    const r = gs.create(n);
    const p = gs.create(n);
    const q = gs.create(n);
    gs.copy(b, r); // r = b − A·0
    gs.copy(r, p); // p = r
    let rho = gs.dot(r, r);
    let it = 0;
    for (; it < 200; it++) {
      op.apply(p, q); // q = A·p
      const alpha = gs.div(rho, gs.dot(p, q)); // alpha = rho / (p·q), fused below
      gs.axpby(alpha, p, 1, x); // x = x + alpha·p
      gs.axpby(gs.neg(alpha), q, 1, r); // r = r − alpha·q
      const rhoNew = gs.dot(r, r);
      if (it % 10 === 9 && Math.sqrt(await gs.read(rhoNew)) < 1e-5) break;
      gs.axpby(1, r, gs.div(rhoNew, rho), p); // p = r + (rhoNew / rho)·p
      rho = rhoNew;
    }
    const xv = await gs.toArray(x);
    const res = csrSpmv(a, xv).map((v, i) => bv[i]! - v);
    const rn = Math.hypot(...res) / Math.hypot(...bv);
    expect(rn).toBeLessThan(1e-4);
    expect(it).toBeLessThan(200);
    op.dispose();
  });
});
