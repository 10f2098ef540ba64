/**
 * The fused CG iteration (cgIteration: ⟨p, q⟩, α, x, r, ⟨r, r⟩ and p = r + β·p in three
 * dispatches) against the unfused sequence bit for bit, on one and many workgroups, and reliable
 * CG with a lagged (asynchronous) check on the device: 1e-10 in float64 terms, the dispatches per
 * iteration, and readbacks awaited only after the following iterations are recorded.
 */
import { csrSpmv, generators } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { refinedSolve } from '../../solvers/src/index';
import { type GpuContext, gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';
import { f32, randomVector, testContext, trueRelative } from './helpers';

let ctx: GpuContext;
let s: GpuVectorSpace;
beforeAll(async () => {
  ctx = await testContext();
  s = new GpuVectorSpace(ctx);
});

describe.each([1, 2049, 100_003])('cgIteration on n = %i', (n) => {
  it('3 dispatches, the bits of cgStep + div + axpby (x, r, p, ⟨p, q⟩, ⟨r, r⟩)', async () => {
    const [ph, qh, xh, rh] = [31, 32, 33, 34].map((seed) => f32(randomVector(n, seed)));
    const rho = s.dot(s.fromArray(rh), s.fromArray(rh));
    const [p, q, x, r, p2, x2, r2] = [ph, qh, xh, rh, ph, xh, rh].map((v) => s.fromArray(v));
    const before = ctx.recorder.dispatches;
    const { pq, rr } = s.cgIteration(rho, p, q, x, r);
    expect(ctx.recorder.dispatches - before).toBe(3);
    const ref = s.cgStep(rho, p2, q, x2, r2);
    const beta = s.div(ref.rr, rho);
    s.axpby(1, r2, beta, p2);
    expect(await s.readMany([pq, rr])).toEqual(await s.readMany([ref.pq, ref.rr]));
    for (const [a, b] of [
      [p, p2],
      [x, x2],
      [r, r2],
    ] as const) {
      expect(Array.from(await s.toArray(a))).toEqual(Array.from(await s.toArray(b)));
    }
    // p really moved: p = r + β·p with β = ⟨r, r⟩/ρ ≠ 0
    expect(Array.from(await s.toArray(p))).not.toEqual(Array.from(ph));
    for (const v of [p, q, x, r, p2, x2, r2]) s.release(v);
  });
});

describe('cgIteration arguments', () => {
  it('refuses aliased vectors and mismatched lengths, naming the operation', () => {
    const [a, b, c] = [s.create(8), s.create(8), s.create(8)];
    const short = s.create(7);
    const rho = s.scalar(1);
    expect(() => s.cgIteration(rho, a, b, c, a)).toThrow(/cgIteration p, q, x, r/);
    expect(() => s.cgIteration(rho, a, b, c, short)).toThrow(/cgIteration/);
    for (const v of [a, b, c, short]) s.release(v);
  });
});

describe('reliable CG with a lagged check on the device', () => {
  it('3-D Poisson 14³ to 1e-10: 1 + 3 dispatches per iteration between checks, readbacks awaited after later iterations are queued', async () => {
    const a = generators.poisson3d(14);
    const b = csrSpmv(a, new Float64Array(a.cols).fill(1));
    for (let i = 0; i < b.length; i++) b[i] = b[i]! + Math.cos(i) / 4;
    const op = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-vector' });
    const space = new GpuVectorSpace(ctx);
    // count the products recorded when each readback starts and when its value is taken
    const seen: { start: number; awaited: number }[] = [];
    let products = 0;
    const counted = new Proxy(op, {
      get(t, k) {
        if (k === 'apply') {
          return (x: never, y: never) => {
            products++;
            t.apply(x, y);
          };
        }
        const v = Reflect.get(t, k);
        return typeof v === 'function' ? v.bind(t) : v;
      },
    });
    const watchedSpace = new Proxy(space, {
      get(t, k) {
        if (k === 'readMany') {
          return (xs: never) => {
            const rec = { start: products, awaited: -1 };
            seen.push(rec);
            // the solver records synchronously between awaits: the continuation runs at its await
            return t.readMany(xs).then((v) => {
              rec.awaited = products;
              return v;
            });
          };
        }
        const v = Reflect.get(t, k);
        return typeof v === 'function' ? v.bind(t) : v;
      },
    });
    const d0 = ctx.recorder.dispatches;
    const res = await refinedSolve({ innerOperator: counted, innerSpace: watchedSpace, b, rtol: 1e-10, inner: { method: 'cg', checkEvery: 8, checkLag: 3 } });
    const dispatches = ctx.recorder.dispatches - d0;
    console.log(`poisson3d(14), lag 3: ${res.innerIterations} iterations, ${res.outerIterations} replacements, ${res.stats.readbacks} readbacks, ${dispatches} dispatches; readbacks (products at start → at await): ${seen.map((r) => `${r.start}→${r.awaited}`).join(" ")}`);
    expect(res.reason, res.detail).toBe('converged');
    expect(trueRelative(a, res.x, b)).toBeLessThanOrEqual(1e-10);
    // csr-vector is one dispatch: 4 per iteration, plus per check (copy of x_c, √ρ) and per replacement
    expect(dispatches).toBeLessThanOrEqual(4 * res.innerIterations + 2 * res.stats.readbacks + 12 * res.outerIterations + 8);
    const lagged = seen.filter((r) => r.awaited - r.start >= 3);
    expect(lagged.length).toBeGreaterThanOrEqual(2);
    // only the checks are lagged: a replacement's tail check is read at once
    expect(seen.filter((r) => r.awaited >= 0 && r.awaited - r.start < 3).length).toBeLessThanOrEqual(res.outerIterations + 1);
    op.dispose();
  });
});
