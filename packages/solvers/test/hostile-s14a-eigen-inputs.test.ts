/**
 * Session 14 hardening (s14-harden-e): the eigensolvers and CG given what they cannot solve. A
 * non-symmetric A (6 × 6 upper bidiagonal, diagonal 1…6, superdiagonal 3: eigenvalues 1…6) ended
 * Lanczos 'breakdown' ("basis spans the whole space but residuals 3.44e+0 …"), Davidson
 * 'breakdown' ("every correction was linearly dependent"), LOBPCG 'max-iterations' after 1 000
 * iterations at λ = −8.4e13, CG 'max-iterations' ("x is the best checked iterate") — honest (never 'converged'), but nothing said that A was the cause.
 * Now a non-converged exit probes ⟨x, A·y⟩ − ⟨A·x, y⟩ (2 products) and names a non-symmetric A in
 * `detail`; a symmetric A that did not converge is not blamed, and a converged run pays nothing.
 * Also found: lanczos from v0 = ones on poisson2d(m), k = 2 or 4 ended 'breakdown' (the second value off
 * in the 7th digit, explicit residual 4.6e-4, "did the operator's products change?"): the start has no
 * weight on λ(1,2) = λ(2,1), the first run converged to λ(1,1) and λ(2,2), and the multiplicity check
 * run, whose certificate covers copies of found values only, cleared at a Ritz value ≈ λ(1,2) that it
 * then inserted unconverged. Now a check run whose Ritz value lies before the answer's k-th value
 * converges it instead of clearing.
 * Found fine: k = n converges in lanczos (smallest and largest), davidson and lobpcg; k = n + 1,
 * maxIterations 2.5 / Infinity / NaN / −1 refused by name; maxIterations 0 returns the start.
 */
import { type CsrMatrix, csrFromTriplets, generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { cg, davidson, lanczos, lobpcg } from '../src/index';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';

/** Upper bidiagonal of order m: diagonal 1…m, superdiagonal 3 (eigenvalues 1…m). */
function bidiagonal(m: number): CsrMatrix {
  const [ri, ci, v] = [[], [], []] as number[][];
  for (let i = 0; i < m; i++) {
    [ri.push(i), ci.push(i), v.push(i + 1)];
    if (i + 1 < m) [ri.push(i), ci.push(i + 1), v.push(3)];
  }
  return csrFromTriplets(m, m, ri, ci, v);
}
/** D·A·D with D = diag(10^((i mod 7) − 3)): symmetric when A is, values over 12 decades. */
function graded(a: CsrMatrix): CsrMatrix {
  const d = (i: number) => 10 ** ((i % 7) - 3);
  const values = new Float64Array(a.values.length);
  for (let r = 0; r < a.rows; r++) for (let k = a.rowPtr[r]!; k < a.rowPtr[r + 1]!; k++) values[k] = a.values[k]! * d(r) * d(a.colIdx[k]!);
  return { ...a, values };
}
const n = 6;
const upper = bidiagonal(n);
const diag = Float64Array.from({ length: n }, (_, i) => i + 1);
const NAMED = /A does not look symmetric: ⟨x, A·y⟩ − ⟨A·x, y⟩ = \d\.\d\de[-+]\d+ relative/;

describe('eigensolvers on a non-symmetric A', () => {
  const space = new HostVectorSpace();
  const op = HostOperator.fromCsr(upper);
  const runs = {
    lanczos: () => lanczos(space, op, { k: 2 }),
    'lanczos largest': () => lanczos(space, op, { k: 2, which: 'largest' }),
    davidson: () => davidson(space, op, { k: 2, diagonal: diag }),
    lobpcg: () => lobpcg(space, op, { k: 2, maxIterations: 200 }),
  };
  for (const [name, run] of Object.entries(runs)) {
    it(`${name}: not converged, and the detail names the non-symmetric A (it did not)`, async () => {
      const r = await run();
      expect(r.converged).toBe(false);
      expect(r.detail).toMatch(NAMED);
    });
  }

  it('cg: not converged, and the detail names the non-symmetric A and what to use instead (was "x is the best checked iterate" only)', async () => {
    const r = await cg(space, op, space.fromArray(new Float64Array(n).fill(1)));
    expect(r.converged).toBe(false);
    expect(r.detail).toMatch(NAMED);
    expect(r.detail).toMatch(/use gmres, bicgstab or bicg/);
    const sym = HostOperator.fromCsr(generators.poisson2d(12));
    const short = await cg(space, sym, space.fromArray(new Float64Array(144).fill(1)), { maxIterations: 3 });
    expect(short.reason).toBe('max-iterations');
    expect(short.detail ?? '').not.toMatch(/symmetric/);
  });

  it('float32 vectors: the same words (lanczos)', async () => {
    const r = await lanczos(new Float32HostSpace(), float32CsrOperator(upper), { k: 2 });
    expect(r.converged).toBe(false);
    expect(r.detail).toMatch(NAMED);
  });

  it('a symmetric A that runs out of iterations is not blamed; a converged run makes no probe products', async () => {
    const a = generators.poisson2d(12);
    const sym = HostOperator.fromCsr(a);
    const short = await lanczos(space, sym, { k: 3, maxIterations: 4 });
    expect(short.reason).toBe('max-iterations');
    expect(short.detail ?? '').not.toMatch(/symmetric/);
    const shortLob = await lobpcg(space, sym, { k: 3, maxIterations: 2 });
    expect(shortLob.converged).toBe(false);
    expect(shortLob.detail ?? '').not.toMatch(/symmetric/);
    // a symmetric A with values over 12 decades, float32 vectors, n = 10 000: rounding is not named as asymmetry
    const f32 = await lanczos(new Float32HostSpace(), float32CsrOperator(graded(generators.poisson2d(100))), { k: 2, maxIterations: 3 });
    expect(f32.converged).toBe(false);
    expect(f32.detail ?? '').not.toMatch(/symmetric/);
    // a non-symmetric A of order 40 000 (the asymmetry the probe sees falls as 1/√n): still named
    const big = bidiagonal(40_000);
    const rBig = await cg(space, HostOperator.fromCsr(big), space.fromArray(new Float64Array(40_000).fill(1)), { maxIterations: 20 });
    expect(rBig.detail).toMatch(NAMED);
    let products = 0;
    const counted = {
      rows: a.rows,
      cols: a.cols,
      apply: (x: Float64Array, y: Float64Array) => {
        products++;
        sym.apply(x, y);
      },
      applyScaled: (alpha: number, x: Float64Array, beta: number, y: Float64Array) => {
        products++;
        sym.applyScaled(alpha, x, beta, y);
      },
    };
    const ok = await lanczos(space, counted, { k: 2 });
    expect(ok.converged).toBe(true);
    expect(products).toBe(ok.stats.matvecs);
  });

  it('lanczos from v0 = ones on poisson2d (no weight on the (even, ·) modes): the missed double eigenvalue converges (was breakdown, a 4.6e-4 residual, the operator blamed)', async () => {
    const cases = [
      ...([[5, 2], [5, 4], [6, 2], [8, 2], [20, 2]] as const).map(([m, k]) => [`poisson2d ${m}²`, generators.poisson2d(m), k, 'smallest'] as const),
      ['laplacian1d 50 (simple eigenvalues)', generators.laplacian1d(50), 4, 'smallest'] as const,
      ['poisson3d 6³, largest', generators.poisson3d(6), 2, 'largest'] as const,
    ];
    for (const [name, a, k, which] of cases) {
      const want = (await lanczos(space, HostOperator.fromCsr(a), { k, which })).values;
      const r = await lanczos(space, HostOperator.fromCsr(a), { k, which, v0: new Float64Array(a.rows).fill(1) });
      expect(r.reason, `${name}, k = ${k}: ${r.detail}`).toBe('converged');
      for (let i = 0; i < k; i++) expect(Math.abs(r.values[i]! - want[i]!), `${name}, k = ${k}, value ${i}`).toBeLessThan(1e-8);
    }
  });

  it('k = n converges in every eigensolver; k = n + 1 is refused (found fine)', async () => {
    const a = generators.poisson2d(4);
    const sym = HostOperator.fromCsr(a);
    for (const r of [await lanczos(space, sym, { k: 16 }), await lanczos(space, sym, { k: 16, which: 'largest' }), await davidson(space, sym, { k: 16 , diagonal: new Float64Array(16).fill(4) }), await lobpcg(space, sym, { k: 16 })]) expect(r.converged, r.method).toBe(true);
    await expect(lobpcg(space, sym, { k: 17 })).rejects.toThrow(/lobpcg k: expected an integer in 1..16, got 17/);
  });
});
