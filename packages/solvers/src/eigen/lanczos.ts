/**
 * Thick-restart Lanczos (Wu & Simon 2000) with full reorthogonalisation, for the k smallest or
 * largest eigenpairs of a symmetric operator.
 *
 * Memory traffic per iteration (basis of m vectors, n rows): one operator application, CGS2
 * against the basis (2·m dots + 2·m axpys: ≈ 8·m·n values read), one norm, one readMany of
 * 2·m + 1 scalars (the only synchronisation). A restart forms the kept Ritz vectors
 * (nKeep·m axpys). The projected matrix H = QᵀAQ (arrowhead + tridiagonal after a restart) is
 * built from the reorthogonalisation coefficients; each iteration takes its eigenvalues and the
 * last components of its eigenvectors (the residual estimates) from ./ritz-estimates, a few µs,
 * and the full eigenvectors (ml-matrix, ≈ 170 µs at m = 20) only when Ritz vectors are formed:
 * at a restart, a convergence check or the end. On the one-pass host path without `onIteration`
 * the estimates themselves are skipped on steps predicted not to converge (estimateGap there:
 * ExaSP2_trpcage_8K, k = 4: 73 estimates in 251 steps, the same 259 products).
 * On float64 host spaces checked every step (checkEvery 1, their default) the step is one
 * Gram–Schmidt pass (`orthogonalization: 'icgs'`, the default there: ≈ 2·m·n values read), the
 * second only when the loss-of-orthogonality bound of ../common/icgs would pass
 * min(√u, tol/100) — the residual of a Ritz vector cannot fall much below loss·‖A‖, so a
 * semi-orthogonal (√u) basis stalls short of tol = 1e-10; the bound is re-measured after each
 * thick restart (a Gram matrix of the kept vectors), where the recombined basis usually proves
 * far more orthogonal. Should an explicit residual check still fail, the rest of the run takes
 * the second pass at every step (CGS2). That path also keeps fewer Ritz vectors at a restart
 * (`keep`: k + 1 plus one per nearly converged wanted pair, ARPACK's rule, instead of half the
 * basis): restarts recombine fewer vectors and the basis the steps orthogonalise against is
 * smaller on average (k = 4, SiH4 / ExaSP2_trpcage_8K: vector passes 15 391 / 22 737 → 9 930 /
 * 13 423, products 181 / 279 → 175 / 259; 2-D Poisson 200²: products 1 906 with k + 4 → 1 100).
 *
 * Single-vector Lanczos sees one copy of each multiple eigenvalue in exact arithmetic; unless
 * `checkMultiplicity` is false, a converged run is followed by deflated runs from fresh random
 * vectors (orthogonal to the converged ones) until none finds a better eigenvalue. A deflated
 * run whose Ritz value drops past the k-th wanted one converges it (a missed copy); one whose
 * Ritz value stays beyond it stops as soon as its residual is ≤ √(thr·‖A‖) and the interval
 * θ ± r lies beyond it, without converging to tol (SiH4 / ExaSP2_trpcage_8K, k = 4: the check's
 * products 245 / 302 → 164 / 131; SiH4's triple still found).
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import { InvalidParameterError } from '@gpusparse/formats';
import { spaceAndOperator } from '../common/argument-order';
import type { EigenResult, StopReason } from '../common/result';
import type { EigenBaseOptions } from './common';
import { type EigenTolerance, eigenTolerance, residualThreshold, toleranceReport } from '../common/eigen-tolerance';
import { allFinite, checkEigenInput, EigenRun, finishEigen, randomVector, readAndRelease } from './common';
import { type DenseEigen, symmetricEigen, zeros } from './dense';
import { IcgsBasis } from '../common/icgs';
import { type EstimatePoint, estimateGap, type RitzEstimates, ritzEstimates } from './ritz-estimates';
import { combineColumns, createForOverwrite, projectOutTwice, projectOutTwiceNormalize } from './ortho';

/** Options of {@link lanczos}. */
export interface LanczosOptions<V> extends EigenBaseOptions {
  /** Which end of the spectrum (default 'smallest'). */
  which?: 'smallest' | 'largest';
  /**
   * Relative residual tolerance: converged when ‖A·v − θ·v‖ ≤ max(tol·‖A‖est, atol), with
   * ‖A‖est the largest |Ritz value| seen (docs/guides/eigen-convergence.md). Default 1e-8 (f64),
   * 1e-5 (f32).
   */
  tol?: number;
  /** Absolute floor of the residual threshold (default 0). */
  atol?: number;
  /** Absolute residual threshold; replaces the relative rule when given. */
  residualTol?: number;
  /** Largest basis before a thick restart (default max(20, 2k + 10), at most n). */
  maxBasis?: number;
  /**
   * Ritz vectors kept at a thick restart, k ≤ keep ≤ maxBasis − 1 (default on the one-pass host
   * path, where vector passes cost as much as products: k + 1 + the wanted pairs within 1000×
   * of the tolerance, at most 2k + 1; otherwise k + ⌊(maxBasis − k)/2⌋, Wu and Simon's half).
   */
  keep?: number;
  /** Start vector (default: a seeded random vector). */
  v0?: V;
  /** Seed of the random start and deflation vectors (default 1). */
  seed?: number;
  /**
   * Look for missed copies of multiple eigenvalues after convergence (default true): runs for one
   * pair on the complement of the found vectors, from fresh random starts, until one finds
   * nothing beyond the k-th value — that last run stops once its Ritz value is loosely converged
   * (residual ≤ √(thr·‖A‖est)) and clear of the k-th value. Host float64, k = 4: SiH4 (a triple
   * eigenvalue; without the check the 4th value is wrong) 175 products without, 339 with;
   * ExaSP2_trpcage_8K 259 / 390 (SciPy's eigsh: 336 / 264). CuPy's and ARPACK's eigsh do no
   * such check.
   */
  checkMultiplicity?: boolean;
  /**
   * Steps recorded between two readbacks of the projections (default 8 in a float32 space —
   * the GPU, where one readback costs about as much as several steps — and 1 in float64 host
   * spaces, where reads are free). The basis is also read before every restart. Convergence
   * is noticed at most `checkEvery − 1` steps late; `onIteration` runs once per readback. On
   * the one-pass host path without `onIteration`, the residual estimates are taken on a
   * schedule (every step near convergence, at most every 4th step far from it).
   */
  checkEvery?: number;
  /**
   * 'cgs2': full reorthogonalisation, two classical passes per step (the default on the GPU and
   * in float32). 'icgs' (default on float64 host spaces with `checkEvery` 1, ignored elsewhere):
   * one pass, the second only when the loss-of-orthogonality bound passes min(√u, tol/100)
   * (../common/icgs), every step after an explicit residual check failed.
   */
  orthogonalization?: 'cgs2' | 'icgs';
}

interface Ctx<V, S> {
  op: LinearOperator<V>;
  space: VectorSpace<V, S>;
  run: EigenRun;
  sign: 1 | -1;
  tolerance: EigenTolerance;
  maxBasis: number;
  maxIterations: number;
  checkEvery: number;
  iterations: number;
  normA: number;
  eps: number;
  /** One-pass Gram–Schmidt with the loss test (host spaces checked every step), else CGS2 batched. */
  icgs?: IcgsBasis<V, S>;
  /** Ritz vectors kept at a restart, given or undefined for the default of the path. */
  keep: number | undefined;
  /** Skip the Ritz estimates of steps predicted not to converge (one-pass host path, no onIteration). */
  scheduleEstimates: boolean;

  /** A·q_j of the batched (CGS2) steps: one vector for the whole run, overwritten by every product. */
  work?: V;
}

interface CoreOut<V> {
  /** A multiplicity-check run that stopped early: its smallest Ritz value is clear of the limit. */
  clear?: boolean;
  values: number[];
  vectors: V[];
  reason: StopReason;
  detail?: string;
}

const threshold = <V, S>(c: Ctx<V, S>): number => residualThreshold(c.tolerance, c.normA);

/** Indices of the Ritz values in wanted order (ascending for smallest, descending for largest). */
function wantedOrder(values: readonly number[], sign: 1 | -1): number[] {
  const idx = values.map((_, i) => i);
  return sign === 1 ? idx : idx.reverse();
}

/** Normalise w to a unit vector orthogonal to `basis`, or return false if it vanished. */
async function orthonormalise<V, S>(c: Ctx<V, S>, basis: readonly V[], w: V): Promise<boolean> {
  const s = c.space;
  const before = s.norm2(w);
  projectOutTwice(s, basis, w); // w ← (I − QQᵀ)²·w
  const [n0, n1] = await readAndRelease(s, [before, s.norm2(w)], c.run.stats);
  if (!(Number.isFinite(n0!) && Number.isFinite(n1!)) || n1! <= 1e3 * c.eps * n0! || n1 === 0) return false;
  s.axpby(1 / n1!, w, 0, w); // w ← w / ‖w‖
  return true;
}

/** A fresh random unit vector orthogonal to `basis` (tries a few seeds). */
async function freshVector<V, S>(c: Ctx<V, S>, basis: readonly V[], seed: number): Promise<V | undefined> {
  const n = c.op.rows;
  for (let t = 0; t < 4; t++) {
    const w = randomVector(c.space, n, seed * 7919 + t);
    if (await orthonormalise(c, basis, w)) return w;
    c.space.release(w);
  }
  return undefined;
}

/**
 * One thick-restart Lanczos run for the nWant wanted pairs of (I − LLᵀ)·A·(I − LLᵀ) on the
 * complement of the locked vectors L, starting from `start` (consumed). With `limit` (a
 * multiplicity check, nWant 1: the k-th wanted eigenvalue) the run also ends, `clear`, as soon
 * as its first Ritz value has a residual within {@link clearOfLimit}'s loose bound and lies,
 * with that residual, beyond the limit; one that drops below the limit converges as usual.
 */
async function lanczosCore<V, S>(c: Ctx<V, S>, locked: readonly V[], nWant: number, start: V, seed: number, limit?: number): Promise<CoreOut<V>> {
  const { op, space, run } = c;
  const n = op.rows;
  const free = n - locked.length;
  const mMax = Math.min(c.maxBasis, free);
  let q0: V | undefined = start;
  if (!(await orthonormalise(c, locked, start))) {
    space.release(start);
    q0 = await freshVector(c, locked, seed);
  }
  if (!q0) return { values: [], vectors: [], reason: 'breakdown', detail: 'lanczos: no start vector orthogonal to the locked ones' };
  let q: V[] = [q0];
  let h = zeros(mMax);
  // eigenpairs of the projected matrix, decomposed fully only when Ritz vectors are formed
  let eig: DenseEigen | undefined;
  let hm: number[][] | undefined; // the projected matrix whose decomposition `eig` is, while stale
  let hmSize = 0; // when > 0: hm is h's leading hmSize × hmSize block, not copied yet (a skipped estimate)
  const fullEig = (): DenseEigen | undefined => {
    if (!eig && !hm && hmSize > 0) hm = h.slice(0, hmSize).map((row) => row.slice(0, hmSize));
    if (!eig && hm) eig = symmetricEigen(hm);
    return eig;
  };
  let recheck = true;
  // host path: the step at which the Ritz estimates are next computed, and the last ones' worst
  let nextEstimate = 0;
  let lastEstimate: EstimatePoint | undefined;
  const ritz = (count: number): { values: number[]; vectors: V[] } => {
    const e = fullEig();
    if (!e) return { values: [], vectors: [] };
    const order = wantedOrder(e.values, c.sign).slice(0, count);
    return { values: order.map((i) => e.values[i]!), vectors: combineColumns(space, q, order.map((i) => e.vectors[i]!)) };
  };
  const out = (reason: StopReason, detail?: string): CoreOut<V> => {
    const r = ritz(nWant);
    for (const v of q) space.release(v);
    return detail === undefined ? { ...r, reason } : { ...r, reason, detail };
  };
  // Steps are recorded without waiting: each step's projections and ‖w‖ stay device scalars,
  // q_{j+1} = w/‖w‖ is normalised on the device, and the host reads a batch of steps back every
  // `checkEvery` steps, before a restart and at the iteration limit (one readback per batch).
  const pending: { j: number; s: S[]; nb: number; vals?: number[] }[] = [];
  c.icgs?.reset(); // [L, q₀]: q₀ was orthogonalised twice against L
  for (;;) {
    if (pending.length === 0) {
      if (c.iterations >= c.maxIterations) return out('max-iterations');
      if (run.aborted()) return out('stopped');
    }
    {
      const j = q.length - 1;
      // CGS2 steps write A·q_j into one reused vector (apply overwrites y, as CG's q = A·p)
      const w = c.icgs ? space.create(n) : (c.work ??= space.create(n));
      op.apply(q[j]!, w); // w = A·q_j
      let next = w;
      run.stats.matvecs++;
      const basis = [...locked, ...q];
      if (c.icgs) {
        // one pass, a second when the loss bound says so; the scalars are read now (free here)
        const st = await c.icgs.step(basis, w);
        pending.push({ j, s: [], nb: basis.length, vals: [...st.h, ...new Array<number>(basis.length).fill(0), st.norm] });
        space.axpby(st.sign / st.norm, w, 0, w); // provisional q_{j+1} = w' / ‖w'‖
      } else {
        // w ← w − [L Q]·([L Q]ᵀ·w) twice; provisional q_{j+1} = w / ‖w‖ (replaced when ‖w‖ turns out negligible)
        next = createForOverwrite(space, n);
        const { h1, h2, hn } = projectOutTwiceNormalize(space, basis, w, next);
        pending.push({ j, s: [...h1, ...h2, hn], nb: basis.length });
      }
      c.iterations++;
      q.push(next);
      const full = j + 1 >= mMax || j + 1 >= free;
      if (!(full || pending.length >= c.checkEvery || c.iterations >= c.maxIterations || run.aborted())) continue;
    }
    // (the one-pass host path has read its scalars already: no readback of an empty list)
    const got = pending.some((p) => !p.vals) ? await readAndRelease(space, pending.flatMap((p) => p.s), run.stats) : [];
    // apply the batch column by column; a negligible ‖w‖ ends it there (later steps discarded)
    let off = 0;
    let beta = 0;
    let last = -1;
    let bad = false;
    for (const p of pending) {
      const vals = p.vals ?? got.slice(off, off + 2 * p.nb + 1);
      if (!p.vals) off += 2 * p.nb + 1;
      if (!allFinite(vals)) {
        bad = true;
        break;
      }
      for (let i = 0; i <= p.j; i++) {
        const alpha = vals[locked.length + i]! - vals[p.nb + locked.length + i]!; // H[i][j] = q_iᵀ·A·q_j
        h[i]![p.j] = alpha;
        h[p.j]![i] = alpha;
      }
      beta = vals[2 * p.nb]!; // β = ‖w‖
      last = p.j;
      c.normA = Math.max(c.normA, Math.abs(h[p.j]![p.j]!));
      if (beta <= 100 * c.eps * Math.max(c.normA, Number.MIN_VALUE)) break;
    }
    pending.length = 0;
    if (bad && last < 0) return out('non-finite', `lanczos: non-finite projection at iteration ${c.iterations}`);
    // q = q_0..q_last, then the next vector (steps past `last` are dropped with their H entries)
    for (const v of q.splice(last + 2)) space.release(v);
    for (let i = last + 1; i < mMax; i++) for (let t = 0; t < mMax; t++) h[i]![t] = h[t]![i] = 0;
    const w = q.pop()!;
    if (bad) {
      space.release(w);
      return out('non-finite', `lanczos: non-finite projection at iteration ${c.iterations}`);
    }
    const m = last + 1;
    if (m < mMax && m < free && c.iterations < nextEstimate && !(beta <= 100 * c.eps * Math.max(c.normA, Number.MIN_VALUE))) {
      // one-pass host path between two scheduled estimates (./ritz-estimates estimateGap): no decomposition
      eig = undefined;
      hm = undefined;
      hmSize = m;
      q.push(w);
      continue;
    }
    hmSize = 0;
    const hNow = h.slice(0, m).map((row) => row.slice(0, m));
    const fast = estimates(hNow, m);
    if (!fast) {
      space.release(w);
      return out('non-finite', 'lanczos: non-finite projected matrix');
    }
    eig = fast.full;
    hm = hNow;
    c.normA = Math.max(c.normA, Math.abs(fast.values[0]!), Math.abs(fast.values[m - 1]!));
    const shown = wantedOrder(fast.values, c.sign).slice(0, Math.min(nWant, m));
    const est = shown.map((i) => Math.abs(beta * fast.last[i]!)); // ‖r_i‖ = |β·s_i(m)|
    const thr = threshold(c);
    // a check run whose Ritz value lies beyond the limit only needs the loose bound
    const aim = limit !== undefined && est.length > 0 && c.sign * (fast.values[shown[0]!]! - limit) > 0 ? looseThreshold(c) : thr;
    if (c.scheduleEstimates) {
      const now = { iteration: c.iterations, logRatio: est.length >= nWant ? Math.log(Math.max(...est) / aim) : 0 };
      nextEstimate = c.iterations + estimateGap(now, lastEstimate);
      lastEstimate = now;
    }
    if (run.record({ iteration: c.iterations, values: shown.map((i) => fast.values[i]!), residualNorms: est, threshold: thr })) {
      space.release(w);
      return out('stopped');
    }
    if (limit !== undefined && est.length > 0 && clearOfLimit(c, fast.values[shown[0]!]!, est[0]!, limit)) {
      space.release(w);
      return { ...out('converged'), clear: true };
    }
    const invariant = beta <= 100 * c.eps * Math.max(c.normA, Number.MIN_VALUE);
    if (m >= nWant && (m === free || (recheck && est.every((r) => r <= thr)))) {
      // estimates say converged: confirm with explicit residuals (nWant matvecs, one readback)
      const cand = ritz(nWant);
      const tmp = space.create(n);
      const norms: S[] = [];
      for (let i = 0; i < cand.vectors.length; i++) {
        op.apply(cand.vectors[i]!, tmp); // tmp = A·y
        run.stats.matvecs++;
        space.axpby(-cand.values[i]!, cand.vectors[i]!, 1, tmp); // tmp = A·y − θ·y
        norms.push(space.norm2(tmp));
      }
      const res = await readAndRelease(space, norms, run.stats);
      space.release(tmp);
      if (res.every((r) => r <= thr)) {
        space.release(w);
        for (const v of q) space.release(v);
        return { ...cand, reason: 'converged' };
      }
      if (m === free) {
        space.release(w);
        return { ...cand, reason: 'breakdown', detail: `lanczos: basis spans the whole space but residuals ${res.map((r) => r.toExponential(2)).join(', ')} exceed ${thr.toExponential(2)} (attainable accuracy of the space)` };
      }
      for (const v of cand.vectors) space.release(v);
      recheck = false; // estimates below the floor of explicit residuals: re-check after the next restart
      // the one-pass basis may be what limits the residuals: orthogonalise twice from now on
      if (c.icgs && c.icgs.tol > 0) c.icgs = strictIcgs(c.icgs, space, run);
    }
    let next: V = w;
    let betaEff = beta;
    if (invariant) {
      // invariant subspace: continue the basis with a random direction (β = 0 in H)
      space.release(w);
      const fresh = await freshVector(c, [...locked, ...q], seed + c.iterations);
      if (!fresh) return out('breakdown', 'lanczos: no new direction after an invariant subspace');
      next = fresh;
      betaEff = 0;
    } // else q_{j+1} = w / β was normalised on the device
    if (m < mMax) {
      q.push(next);
      continue;
    }
    // thick restart (Wu–Simon): keep nKeep Ritz vectors, continue with q_{m+1}
    if (!fullEig()) {
      space.release(next);
      return out('non-finite', 'lanczos: non-finite eigenvectors of the projected matrix');
    }
    const order = wantedOrder(eig!.values, c.sign);
    const nKeep = keepCount(c, nWant, mMax, est.filter((r) => r <= 1e3 * thr).length, limit !== undefined);
    const keep = order.slice(0, nKeep);
    const y = combineColumns(space, q, keep.map((i) => eig!.vectors[i]!)); // y_i = Q·s_i
    for (const v of q) space.release(v);
    q = [...y, next];
    // the bound of the old basis passes to y = Q·S; measured, it is usually far lower
    if (c.icgs && locked.length === 0) await c.icgs.remeasure(q);
    h = zeros(mMax);
    keep.forEach((i, r) => {
      h[r]![r] = eig!.values[i]!; // H = diag(θ) ...
      const s = betaEff * eig!.vectors[i]![m - 1]!; // ... with arrow β·s_i(m)
      h[r]![nKeep] = s;
      h[nKeep]![r] = s;
    });
    // Ritz pairs in the new basis: θ_r with unit coefficient vectors e_r (ascending θ)
    const kept = keep.map((i, r) => ({ theta: eig!.values[i]!, r })).sort((a, b) => a.theta - b.theta);
    eig = { values: kept.map((x) => x.theta), vectors: kept.map((x) => Array.from({ length: nKeep }, (_, t) => (t === x.r ? 1 : 0))) };
    hm = undefined;
    recheck = true;
  }
}

/**
 * Residual bound of an early-stopped multiplicity check: √(thr·‖A‖est), 1e-4·‖A‖ at tol 1e-8 —
 * an eigenvalue error of about thr for a gap of ‖A‖ (Kato–Temple), and a Ritz vector that the
 * Krylov space has amplified by ~10⁴ against the rest of the spectrum, which any lower
 * eigenvalue with a comparable share of the random start would have outpaced.
 */
function looseThreshold<V, S>(c: Ctx<V, S>): number {
  const thr = threshold(c);
  return Math.max(thr, Math.sqrt(thr * Math.max(c.normA, Number.MIN_VALUE)));
}

/**
 * A check run's first Ritz value θ (residual estimate r) is clear of the k-th wanted value λ_k:
 * r within the loose bound, and [θ − r, θ + r] — which holds an eigenvalue of the deflated
 * operator — wholly beyond λ_k by more than the threshold (Ritz values only move towards the
 * wanted end, so a θ below λ_k is kept running: a missed copy).
 */
function clearOfLimit<V, S>(c: Ctx<V, S>, theta: number, r: number, limit: number): boolean {
  return r <= looseThreshold(c) && c.sign * (theta - limit) > r + threshold(c);
}

/**
 * Ritz vectors kept at a thick restart: the given `keep`; on the one-pass host path k + 1 plus
 * one per wanted pair whose residual estimate is within 1000× the threshold (`nearlyConverged`:
 * as ARPACK widens its kept space by the converged count, so the nearly converged pairs do not
 * stall the others); else, and in a multiplicity check (one wanted pair, often in a cluster,
 * where 2–3 kept vectors stall: ExaSP2_trpcage_8K 169 → 131 products), half the basis.
 */
function keepCount<V, S>(c: Ctx<V, S>, nWant: number, mMax: number, nearlyConverged: number, check = false): number {
  const wanted = c.keep ?? (c.icgs && !check ? nWant + 1 + nearlyConverged : nWant + Math.floor((mMax - nWant) / 2));
  return Math.max(nWant, Math.min(mMax - 1, wanted));
}

/** A basis object like `old` (same loss) that takes the second pass at every step whose norm dropped. */
function strictIcgs<V, S>(old: IcgsBasis<V, S>, space: VectorSpace<V, S>, run: EigenRun): IcgsBasis<V, S> {
  const strict = new IcgsBasis(space, 0, () => run.stats.readbacks++);
  strict.reset(old.loss);
  return strict;
}

/**
 * Ritz values and last eigenvector components of the m×m projected matrix (./ritz-estimates);
 * from a full decomposition, returned too, when the QL sweeps there do not converge.
 */
function estimates(h: number[][], m: number): (RitzEstimates & { full?: DenseEigen }) | undefined {
  const fast = ritzEstimates(h, m);
  if (fast) return fast;
  const full = symmetricEigen(h);
  return full && { values: full.values, last: full.vectors.map((v) => v[m - 1]!), full };
}

/**
 * The k smallest or largest eigenpairs of a symmetric operator by thick-restart Lanczos with
 * full (CGS2) reorthogonalisation. Cost per iteration: one matvec, ≈ 4·m vector operations
 * (m = current basis size ≤ maxBasis); one readback per `checkEvery` iterations and per
 * restart; memory maxBasis + 2 vectors.
 * @example
 * const r = await lanczos(new HostVectorSpace(), HostOperator.fromCsr(a), { k: 4, which: 'smallest' });
 * r.values; // 4 smallest eigenvalues, ascending
 */
export function lanczos<V, S>(space: VectorSpace<V, S>, op: LinearOperator<V>, opts: LanczosOptions<V>): Promise<EigenResult<V>>;
/** @deprecated operator-first order: call `lanczos(space, op, opts)` (same behaviour). */
export function lanczos<V, S>(op: LinearOperator<V>, space: VectorSpace<V, S>, opts: LanczosOptions<V>): Promise<EigenResult<V>>;
export async function lanczos<V, S>(
  spaceOrOp: VectorSpace<V, S> | LinearOperator<V>,
  opOrSpace: VectorSpace<V, S> | LinearOperator<V>,
  opts: LanczosOptions<V>,
): Promise<EigenResult<V>> {
  const [space, op] = spaceAndOperator('lanczos', spaceOrOp, opOrSpace);
  const k = opts.k;
  checkEigenInput('lanczos', op, k);
  const n = op.rows;
  const maxBasis = Math.min(n, opts.maxBasis ?? Math.max(20, 2 * k + 10));
  if (!Number.isInteger(maxBasis) || (maxBasis < k + 2 && maxBasis < n)) {
    throw new InvalidParameterError('lanczos maxBasis', `an integer ≥ k + 2 = ${k + 2}`, opts.maxBasis);
  }
  if (opts.keep !== undefined && !(Number.isInteger(opts.keep) && opts.keep >= k && opts.keep <= maxBasis - 1)) {
    throw new InvalidParameterError('lanczos keep', `an integer from k = ${k} to maxBasis − 1 = ${maxBasis - 1}`, opts.keep);
  }
  if (opts.checkEvery !== undefined && !(Number.isInteger(opts.checkEvery) && opts.checkEvery >= 1)) {
    throw new InvalidParameterError('lanczos checkEvery', 'an integer ≥ 1', opts.checkEvery);
  }
  const f32 = space.precision === 'f32';
  const run = new EigenRun(opts);
  const c: Ctx<V, S> = {
    op,
    space,
    run,
    sign: opts.which === 'largest' ? -1 : 1,
    tolerance: eigenTolerance('lanczos', opts, f32 ? 1e-5 : 1e-8),
    maxBasis,
    maxIterations: opts.maxIterations ?? 5000,
    checkEvery: opts.checkEvery ?? (f32 ? 8 : 1),
    iterations: 0,
    normA: 0,
    eps: f32 ? 2 ** -23 : 2 ** -52,
    keep: opts.keep,
    scheduleEstimates: false,
  };
  // float64 host spaces read scalars for free: one Gram–Schmidt pass per step, two only when needed
  const onePass = c.checkEvery === 1 && space.name.startsWith('host');
  const ortho = opts.orthogonalization ?? (onePass && !f32 ? 'icgs' : 'cgs2');
  if (ortho !== 'cgs2' && ortho !== 'icgs') throw new InvalidParameterError('orthogonalization', "'cgs2' or 'icgs'", ortho);
  // a Ritz residual cannot fall much below loss·‖A‖: keep the loss 100× under the tolerance
  c.scheduleEstimates = ortho === 'icgs' && onePass && !opts.onIteration;
  if (ortho === 'icgs' && onePass) c.icgs = new IcgsBasis(space, Math.min(f32 ? 2 ** -12 : 2 ** -26, 0.01 * c.tolerance.tol), () => run.stats.readbacks++);
  const seed = opts.seed ?? 1;
  let start: V;
  if (opts.v0) {
    start = space.create(n);
    space.copy(opts.v0, start);
  } else start = randomVector(space, n, seed);
  const first = await lanczosCore(c, [], k, start, seed);
  let { values, vectors, reason } = first;
  let detail = first.detail;
  if (reason === 'converged' && opts.checkMultiplicity !== false && k < n) {
    for (let attempt = 0; attempt < k; attempt++) {
      const extra = await lanczosCore(c, vectors, 1, randomVector(space, n, seed + 101 * (attempt + 1)), seed + attempt + 1, values[k - 1]!);
      if (extra.reason !== 'converged') {
        for (const v of extra.vectors) space.release(v);
        reason = extra.reason;
        detail = `lanczos: multiplicity check ${attempt + 1} ended with ${extra.reason}${extra.detail ? ` (${extra.detail})` : ''}`;
        break;
      }
      const theta = extra.values[0]!;
      if (!(c.sign * theta < c.sign * values[k - 1]! - threshold(c))) {
        for (const v of extra.vectors) space.release(v);
        break;
      }
      // a missed (multiple) eigenvalue: insert it, drop the last wanted pair
      let pos = 0;
      while (pos < k && c.sign * values[pos]! <= c.sign * theta) pos++;
      values = [...values.slice(0, pos), theta, ...values.slice(pos, k - 1)];
      space.release(vectors[k - 1]!);
      vectors = [...vectors.slice(0, pos), extra.vectors[0]!, ...vectors.slice(pos, k - 1)];
    }
  }
  while (values.length < k) {
    // an early exit before k Ritz pairs existed: pad with NaN / zero vectors (reason is not 'converged')
    values = [...values, Number.NaN];
    vectors = [...vectors, space.create(n)];
  }
  if (c.work) space.release(c.work);
  return finishEigen(op, space, run, { values, vectors, reason, iterations: c.iterations, method: `lanczos(${opts.which ?? 'smallest'}, maxBasis=${maxBasis})`, tolerance: toleranceReport(c.tolerance, c.normA), ...(detail ? { detail } : {}) });
}

