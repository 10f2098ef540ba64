import { csrFromTriplets, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { symmetricEigen } from '../src/eigen/dense';
import { certificatePoint, CHECK_BASIS, confirmNow, COPY_EARLY, COPY_WAIT, CopyBound } from '../src/eigen/lanczos-check';
import { keepCount, thickRestart } from '../src/eigen/lanczos-restart';
import { KrylovState, type LanczosCtx } from '../src/eigen/lanczos-step';
import { IcgsBasis } from '../src/common/icgs';
import { lanczos } from '../src/index';
import { ciLike, csrToDense, denseEigenvalues, denseToCsr } from './eigen-matrices';
import { loadShared } from './krylov-matrices';

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
      expect(r.residualNorms.every((x) => x <= 1e-8 * 4.5)).toBe(true); // tol·‖A‖est, ‖A‖ < 4.5
    });
  }
  it('k = 4: the last deflated run stops on its certificate, before its Ritz value converges to tol', async () => {
    const space = new HostVectorSpace();
    const records: { values: readonly number[]; residualNorms: readonly number[]; threshold?: number }[] = [];
    const r = await lanczos(space, op, { k: 4, tol: 1e-8, checkFilter: false, onIteration: (it) => void records.push(it) }); // the Lanczos check runs' certificate (the filter's: lanczos-filter.test.ts)
    expect(r.reason).toBe('converged');
    const last = records[records.length - 1]!;
    const thr = last.threshold ?? Number.NaN;
    // a check run (one pair) beyond the triple, ended with a residual well above the threshold
    expect(last.values.length).toBe(1);
    expect(last.values[0]!).toBeGreaterThan(block[0]!);
    expect(last.residualNorms[0]!).toBeGreaterThan(10 * thr);
  });
  it('k = 3: the triple; k = 1: no check run (a copy of the one value changes nothing)', async () => {
    const three = await lanczos(new HostVectorSpace(), op, { k: 3, tol: 1e-8 });
    expect(three.reason).toBe('converged');
    for (const x of three.values) expect(Math.abs(x - block[0]!)).toBeLessThan(4e-9);
    const one = await lanczos(new HostVectorSpace(), op, { k: 1, tol: 1e-8 });
    const unchecked = await lanczos(new HostVectorSpace(), op, { k: 1, tol: 1e-8, checkMultiplicity: false });
    expect(Math.abs(one.values[0]! - block[0]!)).toBeLessThan(4e-9);
    expect(one.stats.matvecs).toBe(unchecked.stats.matvecs);
  });
  it('a stricter miss chance costs more products and finds the same values; a bad one is rejected', async () => {
    const loose = await lanczos(new HostVectorSpace(), op, { k: 4, tol: 1e-8, checkMultiplicity: 1e-2 });
    const strict = await lanczos(new HostVectorSpace(), op, { k: 4, tol: 1e-8, checkMultiplicity: 1e-12 });
    expect(strict.stats.matvecs).toBeGreaterThan(loose.stats.matvecs);
    for (const r of [loose, strict]) for (const [i, x] of r.values.entries()) expect(Math.abs(x - spectrum[i]!)).toBeLessThan(4e-9);
    await expect(lanczos(new HostVectorSpace(), op, { k: 4, checkMultiplicity: 2 })).rejects.toThrow(/checkMultiplicity/);
  });
});

/** A CI-like matrix (./eigen-matrices ciLike) repeated `copies` times on the diagonal: every eigenvalue planted `copies` times. */
function planted(n: number, copies: number, seed: number) {
  const b = csrToDense(ciLike(n, seed));
  const a = Array.from({ length: n * copies }, () => new Array<number>(n * copies).fill(0));
  for (let c = 0; c < copies; c++) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) a[c * n + i]![c * n + j] = b[i]![j]!;
  const values = denseEigenvalues(b).flatMap((x) => new Array<number>(copies).fill(x));
  return { a: denseToCsr(a), values };
}

describe('lanczos multiplicity check on CI-like matrices with planted multiplicities', () => {
  // whether one sequence misses a copy depends on rounding (the copy can grow out of roundoff):
  // seeds where it does with the QR Rayleigh–Ritz of ./dense-qr (seed 3 of 2 copies no longer bites)
  for (const [copies, seed] of [
    [2, 4],
    [3, 1],
    [3, 3],
  ] as const) {
    it(`multiplicity ${copies} (seed ${seed}): k = 6 finds every copy; without the check a copy is missed`, async () => {
      const { a, values } = planted(150, copies, seed);
      const op = HostOperator.fromCsr(a);
      const want = values.slice(0, 6);
      const err = (got: readonly number[]) => Math.max(...got.map((x, i) => Math.abs(x - want[i]!)));
      const r = await lanczos(new HostVectorSpace(), op, { k: 6, tol: 1e-8 });
      expect(r.reason).toBe('converged');
      expect(err(r.values)).toBeLessThan(1e-10);
      // the matrix bites: one Krylov sequence alone returns a wrong set of eigenvalues here
      const single = await lanczos(new HostVectorSpace(), op, { k: 6, tol: 1e-8, checkMultiplicity: false });
      expect(err(single.values)).toBeGreaterThan(1e-4);
    });
  }
});

describe('lanczos on SiH4 (data tier): the triple 2nd–4th eigenvalue', () => {
  it('k = 4 returns SciPy eigsh\'s values; without the check the 4th is the 5th eigenvalue', async () => {
    const a = await loadShared('SiH4.mtx.gz');
    const op = HostOperator.fromCsr(a);
    const scipy = [-0.9955665288, -0.6251586546, -0.6251586546, -0.6251586546]; // SciPy eigsh (bench/RESULTS.md)
    const r = await lanczos(new HostVectorSpace(), op, { k: 4, tol: 1e-8 });
    expect(r.reason).toBe('converged');
    for (const [i, x] of r.values.entries()) expect(Math.abs(x - scipy[i]!)).toBeLessThan(1e-9);
    const single = await lanczos(new HostVectorSpace(), op, { k: 4, tol: 1e-8, checkMultiplicity: false });
    expect(single.values[3]!).toBeGreaterThan(0.03);
  });
});

describe('CopyBound (the certificate of a check run)', () => {
  // A = diag(d): the polynomial p_q of each Lanczos vector q = p_q(A)·x is seen in its components, q_i = p_q(d_i)·x_i
  const n = 60;
  const d = Array.from({ length: n }, (_, i) => 1 + i + 0.3 * Math.sin(3 * i));
  const mu0 = d[0]!; // the point of evaluation is the eigenvalue of e_0
  const dot = (u: Float64Array, v: Float64Array) => u.reduce((s, x, i) => s + x * v[i]!, 0);
  const x0 = Float64Array.from({ length: n }, (_, i) => Math.cos(1.7 * i + 0.4));
  const x = x0.map((v) => v / Math.sqrt(dot(x0, x0)));
  /** One full-orthogonalisation step of column j of h; returns β_j and pushes q_{j+1}. */
  function step(q: Float64Array[], h: number[][], j: number): number {
    const w = q[j]!.map((v, i) => d[i]! * v);
    for (let pass = 0; pass < 2; pass++) {
      for (let i = 0; i < q.length; i++) {
        const c = dot(q[i]!, w);
        if (pass === 0) h[i]![j] = h[j]![i] = c;
        else h[i]![j] = h[j]![i] = h[i]![j]! + c;
        for (let t = 0; t < n; t++) w[t] = w[t]! - c * q[i]![t]!;
      }
    }
    const beta = Math.sqrt(dot(w, w));
    q.push(w.map((v) => v / beta));
    h[j + 1]![j] = h[j]![j + 1] = beta;
    return beta;
  }
  it('tracks p(μ₀) of the next vector through steps and a thick restart', () => {
    const m = 10;
    const bound = new CopyBound(mu0 - 0.5, 1, n); // evaluated at d_0 − 0.5: compare with a shifted copy below
    const exact = new CopyBound(mu0, 1, n);
    let q = [x];
    let h = Array.from({ length: m + 1 }, () => new Array<number>(m + 1).fill(0));
    for (let j = 0; j < m; j++) {
      const beta = step(q, h, j);
      exact.extend(h, j, beta);
      bound.extend(h, j, beta);
      expect(exact.logValue(j + 1)).toBeCloseTo(Math.log(Math.abs(q[j + 1]![0]! / x[0]!)), 8);
    }
    // thick restart: keep the 4 smallest Ritz vectors of H_m, continue with q_m
    const e = symmetricEigen(h.slice(0, m).map((r) => r.slice(0, m)))!;
    const kept = e.vectors.slice(0, 4);
    exact.restart(kept, m);
    const y = kept.map((s) => q[0]!.map((_, t) => s.reduce((acc, c, i) => acc + c * q[i]![t]!, 0)));
    q = [...y, q[m]!];
    h = Array.from({ length: m + 1 }, () => new Array<number>(m + 1).fill(0));
    for (let j = 4; j < m; j++) {
      const beta = step(q, h, j);
      exact.extend(h, j, beta);
      expect(exact.logValue(j + 1)).toBeCloseTo(Math.log(Math.abs(q[j + 1]![0]! / x[0]!)), 6);
    }
    expect(bound.logValue(m)).toBeGreaterThan(0);
  });
  it('extends a batch of columns at once (β from H) as step by step', () => {
    const m = 8;
    const q = [x];
    const h = Array.from({ length: m + 1 }, () => new Array<number>(m + 1).fill(0));
    const one = new CopyBound(mu0, 1, n);
    let beta = 0;
    for (let j = 0; j < m; j++) {
      beta = step(q, h, j);
      one.extend(h, j, beta);
    }
    const batch = new CopyBound(mu0, 1, n);
    batch.extend(h, m - 1, beta);
    expect(batch.logValue(m)).toBeCloseTo(one.logValue(m), 10);
  });
  it('certifies only when the Ritz value lies beyond μ₀ and |p(μ₀)| beats √(2N/π)/missChance', () => {
    const h = [
      [0, 1e-3],
      [1e-3, 0],
    ];
    const b = new CopyBound(1, 1, 100, 1e-4); // needs ln|p| ≥ ln(√(200/π)·1e4) ≈ 13.2
    b.extend(h, 0, 1e-6); // p_1(1) = (1·1 − 0)/1e-6 = 1e6: ln 13.8
    expect(b.certifies(1.5, 1)).toBe(true);
    expect(b.certifies(0.5, 1)).toBe(false); // a Ritz value past μ₀: the polynomial may vanish below
    expect(new CopyBound(1, 1, 1e6, 1e-4).certifies(1.5, 0)).toBe(false);
    b.invalidate();
    expect(b.certifies(1.5, 1)).toBe(false);
  });
  it('keepCount: a check run keeps 5 Ritz vectors on the one-pass host path, whatever keep says; the batched path half the basis', () => {
    const onePass = { keep: undefined, icgs: {} } as unknown as LanczosCtx<Float64Array, unknown>;
    const batched = { keep: undefined } as unknown as LanczosCtx<Float64Array, unknown>;
    const given = { keep: 30 } as unknown as LanczosCtx<Float64Array, unknown>;
    expect(keepCount(onePass, 1, CHECK_BASIS, 0, true)).toBe(5);
    expect(keepCount(onePass, 4, 20, 2, false)).toBe(7); // k + 1 + nearly converged
    expect(keepCount(batched, 1, 40, 0, true)).toBe(20); // the H100: 16 keeping 5 cost 830 check products against 515
    expect(keepCount(batched, 4, 40, 0, false)).toBe(22);
    const givenHost = { keep: 30, icgs: {} } as unknown as LanczosCtx<Float64Array, unknown>;
    expect(keepCount(givenHost, 1, CHECK_BASIS, 0, true)).toBe(5); // keep = 30 would restart a 16-vector check basis every step
    expect(keepCount(given, 4, 40, 0, false)).toBe(30);
  });
  it('the kernel certificate: y = Σ φᵢ·qᵢ/‖φ‖ has |p_y| ≥ ‖φ‖ at and below μ₀ — through a thick restart — and ‖φ‖ ≥ |φ_m|', () => {
    // A = diag(dd): a missed copy at dd_0 below μ₀ and a probe at dd_1 = μ₀, both with tiny weight (the Ritz values stay beyond μ₀)
    const dd = d.map((v, i) => (i === 0 ? 0.2 : i === 1 ? 0.5 : v + 1));
    const mu = dd[1]!;
    const x1 = Float64Array.from(x, (v, i) => (i < 2 ? 1e-9 : v));
    const xn = x1.map((v) => v / Math.sqrt(dot(x1, x1)));
    const stepD = (q: Float64Array[], h: number[][], j: number): number => {
      const w = q[j]!.map((v, i) => dd[i]! * v);
      for (let pass = 0; pass < 2; pass++) {
        for (let i = 0; i < q.length; i++) {
          const c = dot(q[i]!, w);
          h[i]![j] = h[j]![i] = (pass === 0 ? 0 : h[i]![j]!) + c;
          for (let t = 0; t < n; t++) w[t] = w[t]! - c * q[i]![t]!;
        }
      }
      const beta = Math.sqrt(dot(w, w));
      q.push(w.map((v) => v / beta));
      h[j + 1]![j] = h[j]![j + 1] = beta;
      return beta;
    };
    const m = 12;
    const b = new CopyBound(mu, 1, n);
    let q = [xn];
    let h = Array.from({ length: m + 1 }, () => new Array<number>(m + 1).fill(0));
    for (let j = 0; j < m; j++) b.extend(h, j, stepD(q, h, j));
    const e = symmetricEigen(h.slice(0, m).map((r) => r.slice(0, m)))!;
    const kept = e.vectors.slice(0, 5);
    b.restart(kept, m);
    q = [...kept.map((s) => q[0]!.map((_, t) => s.reduce((acc, c, i) => acc + c * q[i]![t]!, 0))), q[m]!];
    h = Array.from({ length: m + 1 }, () => new Array<number>(m + 1).fill(0));
    for (let r = 0; r < 5; r++) h[r]![r] = e.values[r]!;
    for (let j = 5; j < m; j++) b.extend(h, j, stepD(q, h, j)); // (the arrow column of H is rebuilt by the steps' projections)
    const ritz = symmetricEigen(h.slice(0, m).map((r) => r.slice(0, m)))!.values;
    expect(Math.min(...ritz)).toBeGreaterThan(mu); // the certificate's condition holds here
    const phi = q.map((v) => v[1]! / xn[1]!); // p_q(μ₀) of each basis vector and the next one
    const norm = Math.sqrt(phi.reduce((acc, v) => acc + v * v, 0));
    expect(b.logKernel(m)).toBeCloseTo(Math.log(norm), 6);
    expect(b.logKernel(m)).toBeGreaterThanOrEqual(b.logValue(m));
    const y = q[0]!.map((_, t) => phi.reduce((acc, f, i) => acc + (f * q[i]![t]!) / norm, 0));
    expect(Math.abs(y[1]! / xn[1]!)).toBeCloseTo(norm, 3); // p_y(μ₀) = ‖φ‖
    expect(Math.abs(y[0]! / xn[0]!)).toBeGreaterThan(norm); // |p_y| grows below μ₀: the missed copy's weight ≤ 1/‖φ‖
    expect(Math.abs(dot(y, y) - 1)).toBeLessThan(1e-10);
  });
  it('thickRestart with locked vectors measures the loss of [L, kept vectors] (was left at its old bound: second passes at every step of a check run)', async () => {
    const space = new HostVectorSpace();
    const nn = 30;
    const m = 6;
    const icgs = new IcgsBasis(space, 1e-8);
    const c = { space, icgs, sign: 1, keep: undefined, eps: 2 ** -52, run: { stats: { readbacks: 0 } } } as unknown as LanczosCtx<Float64Array, unknown>;
    const locked = [Float64Array.from({ length: nn }, (_, i) => (i === 0 ? 1 : 0))];
    // Q: e_1..e_m, the first tilted by 1e-6 towards the locked e_0 (Q alone stays orthonormal to 1e-12)
    const q = Array.from({ length: m }, (_, j) => Float64Array.from({ length: nn }, (_, i) => (i === j + 1 ? 1 : 0)));
    q[0]![0] = 1e-6;
    q[0]![1] = Math.sqrt(1 - 1e-12);
    const st = new KrylovState(c, q[0]!, m);
    st.q = q;
    st.hm = Array.from({ length: m }, (_, i) => Array.from({ length: m }, (_, j) => (i === j ? 1 + i : Math.abs(i - j) === 1 ? 0.1 : 0)));
    icgs.reset(0.5); // an old, pessimistic bound
    const next = Float64Array.from({ length: nn }, (_, i) => (i === m + 1 ? 1 : 0));
    const kept = await thickRestart(c, st, 1, 0, true, next, 0.01, locked);
    expect(kept).toHaveLength(5);
    // the kept Ritz vectors carry the tilt: ⟨e_0, y⟩ = 1e-6·s_0 for each; the measured loss says so, not 0.5
    const tilt = Math.max(...kept!.map((s) => Math.abs(1e-6 * s[0]!)));
    expect(icgs.loss).toBeLessThan(1e-5);
    expect(icgs.loss).toBeGreaterThanOrEqual(tilt);
  });
  it('confirmNow: a check run confirms a converging pair at COPY_EARLY of the threshold, or after COPY_WAIT looks below it', () => {
    const look = { early: COPY_EARLY, waited: 0 };
    expect(confirmNow(look, [0.05], 1)).toBe(COPY_EARLY >= 0.05);
    const lingering = { early: COPY_EARLY, waited: 0 };
    const answers = Array.from({ length: COPY_WAIT + 1 }, () => confirmNow(lingering, [0.5], 1));
    expect(answers).toEqual([...new Array<boolean>(COPY_WAIT).fill(false), true]); // estimates level off: confirmed anyway
    expect(confirmNow({ early: 1, waited: 0 }, [0.9], 1)).toBe(true); // a first run: at the threshold, as always
  });
  it('certificatePoint: the last found value more than thr before the k-th, one thr towards it', () => {
    expect(certificatePoint([1, 2, 2, 3], 1, 1e-3)).toBeCloseTo(2.001, 12);
    expect(certificatePoint([-1, 2, 3, 3], 1, 1e-3)).toBeCloseTo(2.001, 12); // copies of the k-th are skipped
    expect(certificatePoint([5, 4, 4], -1, 1e-3)).toBeCloseTo(4.999, 12); // largest
    expect(certificatePoint([2, 2, 2], 1, 1e-3)).toBeUndefined();
    expect(certificatePoint([2], 1, 1e-3)).toBeUndefined();
  });
});
