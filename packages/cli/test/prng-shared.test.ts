import { generators, HostVectorSpace, mulberry32 } from '@gpusparse/formats';
import { tuneVector } from '@gpusparse/gpu';
import { describe, expect, it } from 'vitest';
import { randomVector } from '../../solvers/src/eigen/common';

describe('one PRNG for every package (formats core/random.ts)', () => {
  it('mulberry32 keeps its sequence (values pinned from the generators before the move)', () => {
    const r = mulberry32(7);
    expect([r(), r(), r()]).toEqual([0.011704753153026104, 0.06195825757458806, 0.97690763277933]);
    const g = generators.rng(20261125);
    expect([g(), g()]).toEqual([0.27387164323590696, 0.34019215404987335]);
  });
  it("the eigensolvers' start vectors and the tuner's test vector are drawn from it", async () => {
    const r = mulberry32(11);
    const want = Array.from({ length: 50 }, () => r() * 2 - 1);
    expect(Array.from(await new HostVectorSpace().toArray(randomVector(new HostVectorSpace(), 50, 11)))).toEqual(want);
    expect(Array.from(tuneVector(50, 11))).toEqual(want.map(Math.fround));
  });
});
