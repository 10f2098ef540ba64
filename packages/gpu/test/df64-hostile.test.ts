/**
 * df64 under extreme scales (session 6 hardening): the float32 hand-over fl32(alpha·x) with alpha
 * beyond the Dekker split's range (4097·alpha overflowed float32 above ≈ 8e34, giving NaN), as
 * `solve --backend webgpu --rtol 0` produced it (scale 1/‖r‖ with ‖r‖ ≈ 1e-36).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Df64Blas, type GpuContext, powerOfTwoNear, readF32 } from '../src/index';
import { testContext } from './helpers';

let ctx: GpuContext;
let d: Df64Blas;
beforeAll(async () => {
  ctx = await testContext();
  d = (await Df64Blas.of(ctx))!;
});

describe('df64 toF32 at extreme scales', () => {
  it('alpha = 1/‖r‖ for ‖r‖ from 1e-37 to 1e30: finite, = fl32(alpha·x) (was NaN above 8e34)', async () => {
    for (const norm of [1e-37, 4.75e-37, 1e-36, 1e-30, 1e-20, 1, 1e30]) {
      const xv = [norm * 0.6, -norm * 0.8, 0, norm * 1e-3];
      const x = d.fromFloat64(xv);
      const out = ctx.buffers.acquire(xv.length * 4);
      d.toF32(1 / norm, x, out);
      const got = await readF32(ctx, out, xv.length);
      const held = await d.toFloat64(x); // the df64 value of x (float32 subnormals may have lost bits)
      for (let i = 0; i < xv.length; i++) {
        expect(Number.isFinite(got[i]!), `‖r‖ = ${norm}, element ${i}`).toBe(true);
        const want = held[i]! / norm;
        expect(Math.abs(got[i]! - want)).toBeLessThanOrEqual(Math.abs(want) * 2 ** -22 + 1e-30);
      }
      out.dispose();
      x.buf.dispose();
    }
  });
  it('elements near float32 max scaled down (1e37·2^-100): finite and exact to float32', async () => {
    const xv = [1e37, -3e38, 2e35];
    const x = d.fromFloat64(xv);
    const out = ctx.buffers.acquire(xv.length * 4);
    d.toF32(2 ** -100, x, out);
    const got = await readF32(ctx, out, xv.length);
    const held = await d.toFloat64(x);
    for (let i = 0; i < xv.length; i++) expect(got[i]).toBe(Math.fround(held[i]! * 2 ** -100));
  });
  it('powerOfTwoNear: nearest power of two within [2^-126, 2^126]; 1 for 0 and non-finite', () => {
    expect(powerOfTwoNear(3e36)).toBe(2 ** 121);
    expect(powerOfTwoNear(-0.75)).toBe(1);
    expect(powerOfTwoNear(1e300)).toBe(2 ** 126);
    expect(powerOfTwoNear(1e-300)).toBe(2 ** -126);
    expect(powerOfTwoNear(0)).toBe(1);
    expect(powerOfTwoNear(Number.NaN)).toBe(1);
  });
});
