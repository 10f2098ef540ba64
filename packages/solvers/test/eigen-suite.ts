/**
 * The eigensolver test suite, parameterised by a backend (a vector space and a way to build an
 * operator from CSR), so that the host (float64), the float32 emulation and the GPU package run
 * the same checks. Every check compares against a float64 reference: ml-matrix's dense solver
 * or a closed form; eigenvector residuals are recomputed in float64 on the host.
 * @module
 */
import type { CsrMatrix, LinearOperator, VectorSpace } from '@gpusparse/formats';
import { csrDiagonal, DimensionMismatchError, generators, InvalidParameterError } from '@gpusparse/formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EigenResult } from '../src/common/result';
import { davidson } from '../src/eigen/davidson';
import { lanczos } from '../src/eigen/lanczos';
import { lobpcg } from '../src/eigen/lobpcg';
import { denseEigenvalues, denseToCsr, laplacian1dEigenvalues, orthonormalityError, poisson2dEigenvalues, randomSymmetric, residualF64 } from './eigen-matrices';

/** What the suite needs from a backend. */
export interface EigenSuiteBackend<V, S> {
  name: string;
  space: VectorSpace<V, S>;
  /** An operator over `a` in this backend (float32 values on an f32 backend). */
  operator(a: CsrMatrix): LinearOperator<V>;
  dispose?(): void | Promise<void>;
}

interface Tolerances {
  /** Solver tol (relative residual) used by the suite. */
  solverTol: number;
  /** Accepted |λ − λref| / max|λref|. */
  value: number;
  /** Accepted ‖A·v − λ·v‖ / ‖A‖ recomputed in float64. */
  residual: number;
  /** Accepted |VᵀV − I|. */
  ortho: number;
}

const TOL: Record<'f32' | 'f64', Tolerances> = {
  f64: { solverTol: 1e-9, value: 1e-9, residual: 1e-8, ortho: 1e-8 },
  f32: { solverTol: 1e-5, value: 2e-5, residual: 1e-4, ortho: 1e-4 },
};

/** Suite options. */
export interface EigenSuiteOptions {
  /**
   * Problem sizes: 'full' (default) or 'small' for slow backends (a software WebGPU adapter
   * runs the full suite in ~100 s): every check stays, the matrices shrink.
   */
  sizes?: 'full' | 'small';
}

/**
 * Register the eigensolver tests for one backend.
 * @example
 * eigenSuite(() => ({ name: 'host-f64', space: new HostVectorSpace(), operator: (a) => HostOperator.fromCsr(a) }));
 */
export function eigenSuite<V, S>(makeBackend: () => EigenSuiteBackend<V, S> | Promise<EigenSuiteBackend<V, S>>, opts: EigenSuiteOptions = {}): void {
  const small = opts.sizes === 'small';
  const n1d = small ? 80 : 200; // 1-D Laplacian
  const g2d = small ? 10 : 20; // 2-D Laplacian grid (Lanczos)
  const g2dBlock = small ? 10 : 16; // 2-D Laplacian grid (Davidson, LOBPCG)
  const nRand = small ? 60 : 100; // random symmetric (Davidson, LOBPCG)
  let b: EigenSuiteBackend<V, S>;
  let t: Tolerances;
  beforeAll(async () => {
    b = await makeBackend();
    t = TOL[b.space.precision];
  });
  afterAll(async () => {
    await b?.dispose?.();
  });

  /**
   * Check values against `ref` (wanted order) relative to ‖A‖ = normA, and vectors in float64
   * on the host: ‖A·v − λ·v‖ ≤ max(residual·‖A‖, absResidual), VᵀV ≈ I.
   */
  async function check(a: CsrMatrix, r: EigenResult<V>, ref: number[], normA: number, absResidual = 0): Promise<void> {
    expect(r.reason, r.detail).toBe('converged');
    expect(r.converged).toBe(true);
    expect(r.values.length).toBe(ref.length);
    r.values.forEach((v, i) => { expect(Math.abs(v - ref[i]!) / normA, `value ${i}: ${v} vs ${ref[i]}`).toBeLessThan(t.value); });
    const resBound = Math.max(t.residual * normA, absResidual);
    const vs = await Promise.all(r.vectors.map((v) => b.space.toArray(v)));
    vs.forEach((v, i) => { expect(residualF64(a, r.values[i]!, v), `residual ${i}`).toBeLessThan(resBound); });
    expect(orthonormalityError(vs)).toBeLessThan(t.ortho);
    expect(r.residualNorms.length).toBe(ref.length);
    r.residualNorms.forEach((x) => { expect(x).toBeLessThan(resBound); });
    expect(r.stats.matvecs).toBeGreaterThan(0);
    expect(r.stats.readbacks).toBeGreaterThan(0);
    expect(r.history.length).toBeGreaterThan(0);
  }

  const rand = (n: number, seed: number) => randomSymmetric(n, seed);
  const norm = (all: number[]) => Math.max(Math.abs(all[0]!), Math.abs(all[all.length - 1]!));
  const diagDominant = (n: number, seed: number) => randomSymmetric(n, seed, { offScale: 0.02, diag: (i) => (10 * i) / n });

  describe('lanczos', () => {
    for (const k of [1, 4]) {
      for (const which of ['smallest', 'largest'] as const) {
        it(`random symmetric n=80, k=${k}, ${which}, against ml-matrix`, async () => {
          const dense = rand(80, 11 + k);
          const a = denseToCsr(dense);
          const all = denseEigenvalues(dense);
          const ref = which === 'smallest' ? all.slice(0, k) : all.slice(-k).reverse();
          const r = await lanczos(b.operator(a), b.space, { k, which, tol: t.solverTol });
          await check(a, r, ref, norm(all));
        });
      }
    }
    it(`1-D Laplacian n=${n1d}, k=4 largest and k=1 smallest, closed form`, async () => {
      const a = generators.laplacian1d(n1d);
      const ex = laplacian1dEigenvalues(n1d);
      await check(a, await lanczos(b.operator(a), b.space, { k: 4, which: 'largest', tol: t.solverTol, maxBasis: 40 }), ex.slice(-4).reverse(), 4);
      await check(a, await lanczos(b.operator(a), b.space, { k: 1, tol: t.solverTol, maxBasis: 40 }), ex.slice(0, 1), 4);
    });
    it(`2-D Laplacian ${g2d}×${g2d}, k=4: the double eigenvalue appears twice`, async () => {
      const a = generators.poisson2d(g2d);
      const ex = poisson2dEigenvalues(g2d).slice(0, 4);
      expect(Math.abs(ex[1]! - ex[2]!)).toBeLessThan(1e-12); // degenerate pair
      await check(a, await lanczos(b.operator(a), b.space, { k: 4, tol: t.solverTol }), ex, 8);
    });
    it('k = n on a 6×6 matrix (the basis spans the space)', async () => {
      const dense = rand(6, 3);
      const a = denseToCsr(dense);
      const all = denseEigenvalues(dense);
      await check(a, await lanczos(b.operator(a), b.space, { k: 6, tol: t.solverTol }), all, norm(all));
    });
  });

  describe('davidson', () => {
    for (const k of [1, 4]) {
      it(`diagonally dominant n=150, k=${k}, against ml-matrix (energy tol 1e-10 in f64)`, async () => {
        const dense = diagDominant(150, 5 + k);
        const a = denseToCsr(dense);
        const all = denseEigenvalues(dense);
        const ref = all.slice(0, k);
        const f64 = b.space.precision === 'f64';
        const r = await davidson(b.operator(a), b.space, { k, diagonal: csrDiagonal(a), ...(f64 ? {} : { tol: 1e-6, residualTol: 1e-4 }) });
        await check(a, r, ref, norm(all), f64 ? 1e-5 : 1e-4); // default residualTol = √1e-10
        if (f64) r.values.forEach((v, i) => { expect(Math.abs(v - ref[i]!)).toBeLessThan(1e-10); });
        expect(r.iterations).toBeLessThan(30);
      });
    }
    it(`random symmetric n=${nRand}, k=4, against ml-matrix`, async () => {
      const dense = rand(nRand, 21);
      const a = denseToCsr(dense);
      const f64 = b.space.precision === 'f64';
      const r = await davidson(b.operator(a), b.space, { k: 4, diagonal: csrDiagonal(a), maxIterations: 400, ...(f64 ? { residualTol: 1e-8 } : { tol: 1e-5, residualTol: 2e-4 }) });
      const all = denseEigenvalues(dense);
      await check(a, r, all.slice(0, 4), norm(all), f64 ? 0 : 2e-4);
    });
    it(`2-D Laplacian ${g2dBlock}×${g2dBlock}, k=4 (degenerate, constant diagonal), closed form`, async () => {
      const a = generators.poisson2d(g2dBlock);
      const f64 = b.space.precision === 'f64';
      const r = await davidson(b.operator(a), b.space, { k: 4, diagonal: csrDiagonal(a), maxIterations: 400, ...(f64 ? { residualTol: 1e-7 } : { tol: 1e-6, residualTol: 2e-4 }) });
      await check(a, r, poisson2dEigenvalues(g2dBlock).slice(0, 4), 8, f64 ? 0 : 2e-4);
    });
    it('an exactly degenerate diagonal block and duplicated initial vectors', async () => {
      // A = diag(1, 1, 1, 2, 3, ...) + small coupling of the tail only: λ = 1 three times
      const n = 60;
      const dense = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? (i < 3 ? 1 : i) : i >= 3 && j >= 3 && Math.abs(i - j) === 1 ? 0.1 : 0)));
      const a = denseToCsr(dense);
      const e0 = new Float64Array(n);
      e0[0] = 1;
      const init = [b.space.fromArray(e0), b.space.fromArray(e0), b.space.fromArray(e0.map((_, i) => (i === 1 ? 1 : 0)))];
      const f64 = b.space.precision === 'f64';
      const r = await davidson(b.operator(a), b.space, { k: 3, diagonal: csrDiagonal(a), initialVectors: init, ...(f64 ? {} : { tol: 1e-6, residualTol: 1e-4 }) });
      const all = denseEigenvalues(dense);
      await check(a, r, all.slice(0, 3), norm(all), f64 ? 1e-5 : 1e-4);
    });
  });

  describe('lobpcg', () => {
    for (const k of [1, 4]) {
      it(`random symmetric n=${nRand}, k=${k}, against ml-matrix`, async () => {
        const dense = rand(nRand, 31 + k);
        const a = denseToCsr(dense);
        const r = await lobpcg(b.operator(a), b.space, { k, tol: t.solverTol, guard: k > 1 ? 2 : 0 });
        const all = denseEigenvalues(dense);
        await check(a, r, all.slice(0, k), norm(all));
      });
    }
    it(`2-D Laplacian ${g2dBlock}×${g2dBlock}, k=4 (degenerate), closed form`, async () => {
      const a = generators.poisson2d(g2dBlock);
      await check(a, await lobpcg(b.operator(a), b.space, { k: 4, tol: t.solverTol, guard: 2 }), poisson2dEigenvalues(g2dBlock).slice(0, 4), 8);
    });
    it('an exact-inverse preconditioner converges in a few iterations', async () => {
      const a = generators.laplacian1d(60);
      const inv = denseToCsr(Array.from({ length: 60 }, (_, i) => Array.from({ length: 60 }, (_, j) => ((Math.min(i, j) + 1) * (60 - Math.max(i, j))) / 61))); // (tridiag(−1,2,−1))⁻¹
      const plain = await lobpcg(b.operator(a), b.space, { k: 2, tol: t.solverTol });
      const pre = await lobpcg(b.operator(a), b.space, { k: 2, tol: t.solverTol, preconditioner: b.operator(inv) });
      await check(a, pre, laplacian1dEigenvalues(60).slice(0, 2), 4);
      expect(pre.stats.precondApplies).toBeGreaterThan(0);
      expect(pre.iterations).toBeLessThan(plain.iterations / 2);
    });
  });

  describe('stopping and failures', () => {
    const a = generators.poisson2d(12);
    const d = () => csrDiagonal(a);
    const solvers = {
      // checkEvery 1: a callback per step, as the counts below assume (float32 spaces default to 8)
      lanczos: (o: object) => lanczos(b.operator(a), b.space, { k: 2, checkEvery: 1, ...o }),
      davidson: (o: object) => davidson(b.operator(a), b.space, { k: 2, diagonal: d(), ...o }),
      lobpcg: (o: object) => lobpcg(b.operator(a), b.space, { k: 2, ...o }),
    };
    for (const [name, solve] of Object.entries(solvers)) {
      it(`${name}: onIteration returning false stops with 'stopped'`, async () => {
        const r = await solve({ onIteration: (info: { iteration: number }) => info.iteration < 3 });
        expect(r.reason).toBe('stopped');
        expect(r.converged).toBe(false);
        expect(r.iterations).toBe(3);
        expect(r.history.length).toBe(3);
        expect(r.values.length).toBe(2);
      });
      it(`${name}: an AbortSignal stops with 'stopped'`, async () => {
        const ctl = new AbortController();
        const r = await solve({ signal: ctl.signal, onIteration: (info: { iteration: number }) => void (info.iteration === 2 && ctl.abort()) });
        expect(r.reason).toBe('stopped');
        expect(r.iterations).toBe(2);
        const pre = new AbortController();
        pre.abort();
        const r2 = await solve({ signal: pre.signal });
        expect(r2.reason).toBe('stopped');
        expect(r2.iterations).toBeLessThanOrEqual(1);
      });
      it(`${name}: NaN in the operator gives 'non-finite', not an exception`, async () => {
        const bad = { ...a, values: a.values.slice() };
        bad.values[7] = Number.NaN;
        const op = b.operator(bad);
        const r = name === 'lanczos' ? await lanczos(op, b.space, { k: 2 }) : name === 'davidson' ? await davidson(op, b.space, { k: 2, diagonal: d() }) : await lobpcg(op, b.space, { k: 2 });
        expect(r.reason).toBe('non-finite');
        expect(r.converged).toBe(false);
        expect(r.values.length).toBe(2);
      });
      it(`${name}: max-iterations is a reason`, async () => {
        const r = await solve({ maxIterations: 2 });
        expect(r.reason).toBe('max-iterations');
        expect(r.values.every(Number.isFinite)).toBe(true);
        expect(r.residualNorms.every(Number.isFinite)).toBe(true);
      });
    }
    it('bad input throws typed errors', async () => {
      await expect(lanczos(b.operator(a), b.space, { k: 0 })).rejects.toThrow(InvalidParameterError);
      await expect(lobpcg(b.operator(a), b.space, { k: a.rows + 1 })).rejects.toThrow(InvalidParameterError);
      await expect(davidson(b.operator(a), b.space, { k: 1, diagonal: new Float64Array(3) })).rejects.toThrow(DimensionMismatchError);
      await expect(davidson(b.operator(a), b.space, { k: 1, diagonal: undefined as unknown as Float64Array })).rejects.toThrow(InvalidParameterError);
      await expect(lanczos(b.operator(a), b.space, { k: 4, maxBasis: 5 })).rejects.toThrow(/maxBasis/);
      await expect(davidson(b.operator(a), b.space, { k: 1, diagonal: d(), tol: -1 })).rejects.toThrow(/tol/);
    });
  });
}
