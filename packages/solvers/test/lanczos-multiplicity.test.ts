import { csrFromTriplets, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { symmetricEigen } from '../src/eigen/dense';
import { lanczos } from '../src/index';

// three identical tridiagonal blocks (distinct eigenvalues within a block): every eigenvalue is a triple
const nb = 120;
const copies = 3;
const diag = (i: number) => 2 + 0.5 * Math.sin(i);
function blockDiagonal() {
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  for (let b = 0; b < copies; b++) {
    for (let i = 0; i < nb; i++) {
      const r = b * nb + i;
      ri.push(r);
      ci.push(r);
      v.push(diag(i));
      if (i + 1 === nb) continue;
      ri.push(r, r + 1);
      ci.push(r + 1, r);
      v.push(-1, -1);
    }
  }
  return csrFromTriplets(nb * copies, nb * copies, ri, ci, v);
}
const block = symmetricEigen(Array.from({ length: nb }, (_, i) => Array.from({ length: nb }, (_, j) => (i === j ? diag(i) : Math.abs(i - j) === 1 ? -1 : 0))))!.values; // ascending
const spectrum = block.flatMap((x) => [x, x, x]).sort((x, y) => x - y);

describe('lanczos multiplicity check (early-stopped deflated runs)', () => {
  const op = HostOperator.fromCsr(blockDiagonal());
  for (const which of ['smallest', 'largest'] as const) {
    it(`finds all three copies of the ${which} eigenvalue of a block-diagonal matrix`, async () => {
      const space = new HostVectorSpace();
      const r = await lanczos(space, op, { k: 4, tol: 1e-8, which });
      const want = which === 'smallest' ? spectrum.slice(0, 4) : spectrum.slice(-4).reverse();
      expect(r.reason).toBe('converged');
      for (const [i, x] of r.values.entries()) expect(Math.abs(x - want[i]!)).toBeLessThan(1e-9 * 4);
      expect(r.residualNorms.every((x) => x <= 1e-8 * 4)).toBe(true);
    });
  }
  it('k = 3: the last deflated run, whose Ritz value is clear of the triple, stops before converging to tol', async () => {
    const space = new HostVectorSpace();
    const records: { residualNorms: readonly number[]; threshold?: number }[] = [];
    const r = await lanczos(space, op, { k: 3, tol: 1e-8, onIteration: (it) => void records.push(it) });
    expect(r.reason).toBe('converged');
    for (const x of r.values) expect(Math.abs(x - block[0]!)).toBeLessThan(4e-9);
    const last = records[records.length - 1]!;
    const thr = last.threshold ?? Number.NaN;
    // the clear run ends at a residual well above the threshold (the old check converged it to tol)
    expect(last.residualNorms[0]!).toBeGreaterThan(thr);
    expect(last.residualNorms[0]!).toBeLessThanOrEqual(Math.sqrt(thr * 4.5)); // √(thr·‖A‖), ‖A‖ < 4.5
  });
});
