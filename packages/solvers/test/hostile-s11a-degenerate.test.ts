/**
 * Session 11 hunt: Davidson on exactly degenerate lowest eigenvalues spread over invariant blocks.
 * A = four identical 6×6 tridiagonal blocks: every eigenvalue is 4-fold and the diagonal ties at
 * 2.0 in 20 places. The unit start vectors at the lowest diagonal entries all lay in block 0, and
 * A and the diagonal preconditioner keep a subspace there: davidson k = 2 returned 0.217808,
 * 0.821738 'converged' (the lowest two are 0.217808 twice), k = 5 one copy of each of the five
 * lowest distinct values; eigsMixed 'davidson' the same. Now a tie at the k-th diagonal value
 * gives the unit starts a small seeded random part; distinct diagonals are untouched.
 */
import { csrDiagonal, csrFromTriplets, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { davidson, eigsMixed, lanczos } from '../src/index';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';

const blocks = 4;
const m = 6;
const t: [number, number, number][] = [];
for (let b = 0; b < blocks; b++) {
  for (let i = 0; i < m; i++) {
    const r = b * m + i;
    t.push([r, r, i === 0 ? 2.5 : 2]);
    if (i + 1 < m) t.push([r, r + 1, -1], [r + 1, r, -1]);
  }
}
const a = csrFromTriplets(blocks * m, blocks * m, t.map((x) => x[0]), t.map((x) => x[1]), t.map((x) => x[2]));
const space = new HostVectorSpace();

describe('davidson with a 4-fold lowest eigenvalue over identical blocks', () => {
  it('k = 2, 5, 6: every copy, as the dense spectrum (was one copy per distinct value, converged)', async () => {
    const all = (await lanczos(space, HostOperator.fromCsr(a), { k: blocks * m })).values;
    expect(all[3]! - all[0]!).toBeLessThan(1e-12); // the 4-fold lowest value
    for (const k of [2, 5, 6]) {
      const r = await davidson(space, HostOperator.fromCsr(a), { k, diagonal: csrDiagonal(a) });
      expect(r.converged, `k=${k}`).toBe(true);
      r.values.forEach((v, i) => {
        expect(Math.abs(v - all[i]!), `k=${k} root ${i}`).toBeLessThan(1e-8);
      });
    }
  });
  it("eigsMixed method 'davidson' (float32 fast phase, float64 polish): the same copies", async () => {
    const all = (await lanczos(space, HostOperator.fromCsr(a), { k: 8 })).values;
    const r = await eigsMixed({ method: 'davidson', k: 5, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a), diagonal: csrDiagonal(a) });
    expect(r.converged).toBe(true);
    r.values.forEach((v, i) => {
      expect(Math.abs(v - all[i]!), `root ${i}`).toBeLessThan(1e-8);
    });
  });
});
