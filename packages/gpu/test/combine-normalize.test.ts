/**
 * GpuVectorSpace.combineNormalize (GMRES's Gram–Schmidt tail): y = β·y + Σ c_j·x_j, h = ‖y‖,
 * v = (k/h)·y in two dispatches, bit for bit the unfused combineNorm, div and axpby.
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { type GpuContext, type GpuScalar, type GpuVector, GpuVectorSpace } from '../src/index';
import { f32, randomVector, testContext } from './helpers';

let ctx: GpuContext;
let s: GpuVectorSpace;
beforeAll(async () => {
  ctx = await testContext();
  s = new GpuVectorSpace(ctx);
});

/** The unfused reference: combineNorm, k/h, axpby. */
function unfused(h: GpuScalar[], xs: GpuVector[], y: GpuVector, v: GpuVector, k: number): GpuScalar {
  const hn = s.combineNorm(h, xs, -1, y);
  const inv = s.div(k, hn);
  s.axpby(inv, y, 0, v);
  s.release(inv);
  return hn;
}

describe('combineNormalize', () => {
  for (const n of [1, 257, 100_000]) {
    for (const k of [1, 13, 14, 30]) {
      it(`n = ${n}, ${k} vectors: the same bits as combineNorm + axpby, one dispatch fewer`, async () => {
        const xs = Array.from({ length: k }, (_, j) => s.fromArray(f32(randomVector(n, 10 + j))));
        const yh = f32(randomVector(n, 3));
        const [y1, y2, v1, v2] = [s.fromArray(yh), s.fromArray(yh), s.create(n), s.create(n)];
        const h = s.multiDot(xs, y1); // coefficients as GMRES makes them
        let d0 = ctx.recorder.dispatches;
        const hf = s.combineNormalize(h, xs, -1, y1, v1, -1);
        const fused = ctx.recorder.dispatches - d0;
        d0 = ctx.recorder.dispatches;
        const hu = unfused(h, xs, y2, v2, -1);
        expect(fused).toBe(ctx.recorder.dispatches - d0 - 1);
        const [a, b] = await s.readMany([hf, hu]);
        expect(Object.is(a, b), `h ${a} vs ${b}`).toBe(true);
        expect(a).toBeGreaterThan(0);
        const [gy1, gy2, gv1, gv2] = await Promise.all([y1, y2, v1, v2].map((x) => s.toArray(x)));
        for (let i = 0; i < n; i++) {
          if (!Object.is(gy1[i], gy2[i]) || !Object.is(gv1[i], gv2[i])) throw new Error(`element ${i}: y ${gy1[i]}/${gy2[i]}, v ${gv1[i]}/${gv2[i]}`);
        }
        // v has unit norm (float32 rounding)
        let vv = 0;
        for (let i = 0; i < n; i++) vv += gv1[i]! ** 2;
        expect(Math.abs(Math.sqrt(vv) - 1)).toBeLessThan(1e-5);
        for (const x of [...xs, y1, y2, v1, v2]) s.release(x);
        for (const x of [...h, hf, hu]) s.release(x);
      });
    }
  }

  it('no vectors: y = β·y, then v = (k/‖y‖)·y', async () => {
    const y = s.fromArray([3, 4]);
    const v = s.create(2);
    const h = s.combineNormalize([], [], 2, y, v, 1);
    expect(await s.read(h)).toBe(10);
    expect(Array.from(await s.toArray(v))).toEqual([0.6000000238418579, 0.800000011920929]);
  });

  it('rejects v aliasing y or an x', () => {
    const x = s.fromArray([1, 2]);
    const y = s.fromArray([3, 4]);
    expect(() => s.combineNormalize([1], [x], 1, y, y, 1)).toThrow(InvalidParameterError);
    expect(() => s.combineNormalize([1], [x], 1, y, x, 1)).toThrow(/distinct from y and the xs/);
  });
});
