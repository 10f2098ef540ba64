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
 * `checkMultiplicity` is false, a converged run is followed by deflated runs that look for a
 * missed copy (./lanczos-check).
 *
 * This file is the driver: options, one run (lanczosCore) and the check after it. The steps and
 * the projected matrix are in ./lanczos-step, the thick restart, its kept count and the estimate
 * schedule in ./lanczos-restart, the explicit residual and multiplicity checks in ./lanczos-check.
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import { DimensionMismatchError, InvalidParameterError } from '@gpusparse/formats';
import { spaceAndOperator } from '../common/argument-order';
import type { EigenResult } from '../common/result';
import type { EigenBaseOptions } from './common';
import { eigenTolerance, toleranceReport } from '../common/eigen-tolerance';
import { checkEigenInput, EigenRun, finishEigen, confirmedEigen, randomVector } from './common';
import { IcgsBasis } from '../common/icgs';
import { CHECK_BASIS, checkMultiplicity, confirmNow, COPY_EARLY, confirmResiduals, CopyBound, MISS_CHANCE } from './lanczos-check';
import { EstimateSchedule, thickRestart } from './lanczos-restart';
import { chebyshevFilter, filterInterval } from './lanczos-filter';
import type { RitzEstimates } from './ritz-estimates';
import { type CoreOut, estimates, freshVector, KrylovState, type LanczosCtx, negligible, readBatch, recordStep, releaseWork, startVector, strictIcgs, threshold, wantedOrder } from './lanczos-step';

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
   * Look for missed copies of multiple eigenvalues after convergence (default true; a number in
   * (0, 1) is the accepted miss chance, default 1e-4): runs for one pair on the complement of
   * the found vectors, from fresh random starts, until one finds nothing better than the k-th
   * value — that last run stops, without converging, once its Krylov polynomial proves that its
   * random start had less weight on any missed copy of a found value than a random vector has
   * with the miss chance (./lanczos-check CopyBound). Host float64, k = 4: SiH4 (a triple
   * eigenvalue; without the check the 4th value is wrong) 175 products without, 295 with;
   * ExaSP2_trpcage_8K 261 / 368 (SciPy's eigsh: 297 / 278) — with `checkFilter` (the host
   * default) 261 / 391 products (session 12: 303 / 391) for about half the check's CPU time.
   * CuPy's and ARPACK's eigsh do no such check. k = 1 needs none (a copy of the one value
   * changes nothing).
   */
  checkMultiplicity?: boolean | number;
  /**
   * Start each multiplicity-check run with a Chebyshev filter (./lanczos-filter; default true on
   * float64 host spaces checked every step, ignored elsewhere): a polynomial of the interval the
   * main run saw past its answer, applied to the random start with no basis and no Gram–Schmidt,
   * proves the same bound on the start's weight on a missed copy (same miss chance) in cheaper
   * steps; where it stalls (a copy, a spectrum not where the main run saw it) a Lanczos check run
   * goes on from the filtered vector and the bound reached — for a copy once the filter has made
   * the rest negligible (s13) — and a filtered start that gave a copy may clear the next check
   * (./lanczos-residue). No filter where a cluster just past the check point would slow it
   * (./lanczos-filter NEAR_CLUSTER). false: Lanczos check runs only.
   */
  checkFilter?: boolean;
  /**
   * Steps recorded between two readbacks of the projections (default 8 in a float32 space —
   * the GPU, where one readback costs about as much as several steps — and 1 in float64 host
   * spaces, where reads are free). The basis is also read before every restart. Convergence
   * is noticed at most `checkEvery − 1` steps late; `onIteration` runs once per readback. On
   * the one-pass host path without `onIteration`, the residual estimates are taken on a
   * schedule (every step near convergence, at most every 8th step far from it).
   */
  checkEvery?: number;
  /**
   * 'cgs2': full reorthogonalisation, two classical passes per step (the default on the GPU and
   * in float32). 'icgs' (default on float64 host spaces with `checkEvery` 1, ignored elsewhere):
   * one pass, the second only when the loss-of-orthogonality bound passes min(√u, tol/100)
   * (../common/icgs), every step after an explicit residual check failed.
   */
  orthogonalization?: 'cgs2' | 'icgs';
  /**
   * Record the next batch's steps while a batch's readback is in flight (default true; GPU
   * block path only): host recording overlaps GPU execution; up to checkEvery − 1 steps are
   * discarded, their products counted, when a run ends, restarts early or replaces its next
   * vector (./lanczos-step recordAhead).
   */
  recordAhead?: boolean;
}

/**
 * One thick-restart Lanczos run for the nWant wanted pairs of (I − LLᵀ)·A·(I − LLᵀ) on the
 * complement of the locked vectors L, starting from `start` (consumed). With `check` (a
 * multiplicity check, nWant 1) the run also ends, `clear`, as soon as ./lanczos-check CopyBound
 * certifies at μ₀ that its start holds no missed copy (up to the miss chance); one whose Ritz
 * value drops past μ₀ converges as usual.
 */
async function lanczosCore<V, S>(c: LanczosCtx<V, S>, locked: readonly V[], nWant: number, start: V, seed: number, check?: { mu0: number; missChance: number; logStart?: number; kth?: number }): Promise<CoreOut<V>> {
  const { space, run } = c;
  const free = c.op.rows - locked.length;
  const mMax = Math.min(check && c.icgs ? Math.min(c.maxBasis, CHECK_BASIS) : c.maxBasis, free); // (s10-eig15) host check runs: a narrower basis
  const q0 = await startVector(c, locked, start, seed);
  if (!q0) return { values: [], vectors: [], reason: 'breakdown', detail: 'lanczos: no start vector orthogonal to the locked ones' };
  const st = new KrylovState(c, q0, mMax);
  const schedule = new EstimateSchedule(c.scheduleEstimates);
  // a check run tracks its certificate at μ₀ (./lanczos-check certificatePoint)
  const bound = check && new CopyBound(check.mu0, c.sign, free, check.missChance, check.logStart);
  const look: Look = { recheck: true, schedule, bound, kth: check?.kth, early: check ? COPY_EARLY : 1, waited: 0, main: locked.length === 0 && !check }; // (s10-eig15) early, waited
  c.icgs?.reset(); // [L, q₀]: q₀ was orthogonalised twice against L
  for (;;) {
    if (st.pending.length === 0) {
      if (c.iterations >= c.maxIterations) return st.finish(nWant, 'max-iterations');
      if (run.aborted()) return st.finish(nWant, 'stopped');
    }
    const j = await recordStep(c, locked, st);
    const full = j + 1 >= mMax || j + 1 >= free;
    if (!(full || st.pending.length >= c.checkEvery || c.iterations >= c.maxIterations || run.aborted())) continue;
    const { beta, last, bad } = await readBatch(c, locked, st);
    if (bad && last < 0) return st.finish(nWant, 'non-finite', `lanczos: non-finite projection at iteration ${c.iterations}`);
    const w = st.truncate(last);
    if (bad) {
      space.release(w);
      return st.finish(nWant, 'non-finite', `lanczos: non-finite projection at iteration ${c.iterations}`);
    }
    const m = last + 1;
    bound?.extend(st.h, last, beta);
    if (m < mMax && m < free && schedule.skips(c.iterations) && !negligible(c, beta) && !bound?.ready(m)) {
      // one-pass host path between two scheduled estimates (./ritz-estimates estimateGap), and a check run's
      // certificate not yet large enough: no decomposition
      st.defer(m);
      st.q.push(w);
      st.reattachAhead(true); // (s9-eig15) steps recorded ahead from w go on
      continue;
    }
    const seen = await examine(c, st, look, { m, free, beta, nWant, w });
    if ('done' in seen) return seen.done;
    let next: V = w;
    let betaEff = beta;
    if (negligible(c, beta)) {
      // invariant subspace: continue the basis with a random direction (β = 0 in H)
      space.release(w);
      const fresh = await freshVector(c, [...locked, ...st.q], seed + c.iterations);
      if (!fresh) return st.finish(nWant, 'breakdown', 'lanczos: no new direction after an invariant subspace');
      next = fresh;
      betaEff = 0;
      bound?.invalidate();
    } // else q_{j+1} = w / β was normalised on the device
    if (m < mMax) {
      st.q.push(next);
      st.reattachAhead(next === w); // (s9-eig15) steps recorded ahead during the readback: kept unless q_m was replaced
      continue;
    }
    st.dropAhead(); // (s9-eig15)
    const kept = await thickRestart(c, st, nWant, seen.nearlyConverged, check !== undefined, next, betaEff, locked); // (s10-eig15) locked
    if (!kept) {
      space.release(next);
      return st.finish(nWant, 'non-finite', 'lanczos: non-finite eigenvectors of the projected matrix');
    }
    bound?.restart(kept, m);
    look.recheck = true;
  }
}

/** Per-run state of {@link examine}: whether estimates may trigger an explicit check, and the schedule. */
interface Look {
  recheck: boolean;
  schedule: EstimateSchedule;
  /** The certificate of a multiplicity-check run (./lanczos-check CopyBound). */
  bound: CopyBound | undefined;
  kth: number | undefined; // the answer's k-th value: a check run's Ritz value before it is a missed value, not a copy (a v0 without weight on it): converged, never cleared (s14-harden-e)
  /** A check run looks at explicit residuals once its estimates are this fraction of the threshold (./lanczos-check COPY_EARLY)... */
  early: number;
  /** ... or after COPY_WAIT examinations with every estimate below the threshold itself. */
  waited: number;
  /** The first run of a call: it records what it sees of the spectrum past its answer (c.hint, ./lanczos-filter). */
  main: boolean;
}

/**
 * After a batch of steps (basis of m vectors, last β): Ritz estimates of H, `onIteration`, the
 * early stop of a multiplicity check, and the explicit residual check once the estimates say
 * converged. Returns the run's end (`done`: the next vector w released first) or the count of
 * nearly converged wanted pairs for a restart.
 */
async function examine<V, S>(c: LanczosCtx<V, S>, st: KrylovState<V, S>, look: Look, at: { m: number; free: number; beta: number; nWant: number; w: V }): Promise<{ done: CoreOut<V> } | { nearlyConverged: number }> {
  const { space, run } = c;
  const { m, free, beta, nWant } = at;
  const done = (end: () => CoreOut<V>): { done: CoreOut<V> } => {
    st.dropAhead(); // (s9-eig15) steps recorded ahead of this batch
    space.release(at.w);
    return { done: end() };
  };
  // (s10-host18) H's leading m × m block, read in place: it stays as it is until the restart, so
  // the copy for a full decomposition is made only when one is needed (KrylovState.fullEig)
  const fast = estimates(st.h, m);
  if (!fast) return done(() => st.finish(nWant, 'non-finite', 'lanczos: non-finite projected matrix'));
  st.defer(m);
  st.eig = fast.full;
  c.normA = Math.max(c.normA, Math.abs(fast.values[0]!), Math.abs(fast.values[m - 1]!));
  const shown = wantedOrder(fast.values, c.sign).slice(0, Math.min(nWant, m));
  const est = shown.map((i) => Math.abs(beta * fast.last[i]!)); // ‖r_i‖ = |β·s_i(m)|
  const thr = threshold(c);
  if (look.main) noteFar(c, fast, m, beta);
  look.schedule.update(c.iterations, est, nWant, thr);
  if (await run.record({ iteration: c.iterations, values: shown.map((i) => fast.values[i]!), residualNorms: est, threshold: thr })) {
    return done(() => st.finish(nWant, 'stopped'));
  }
  const theta = est.length > 0 ? fast.values[shown[0]!]! : Number.NaN;
  if (look.bound?.certifies(theta, m) && !(look.kth !== undefined && c.sign * theta < c.sign * look.kth - thr)) {
    return done(() => ({ ...st.finish(nWant, 'converged'), clear: true }));
  }
  if (m >= nWant && (m === free || (look.recheck && est.every((r) => r <= thr) && confirmNow(look, est, thr)))) {
    // estimates say converged: confirm with explicit residuals (nWant matvecs, one readback)
    const { cand, res, ok } = await confirmResiduals(c, st, nWant, thr);
    if (ok && look.main) noteNext(c, fast, m, beta, nWant);
    if (ok) {
      return done(() => {
        for (const v of st.q) space.release(v);
        return { ...cand, reason: 'converged' };
      });
    }
    if (m === free) {
      return done(() => ({ ...cand, reason: 'breakdown', detail: `lanczos: basis spans the whole space but residuals ${res.map((r) => r.toExponential(2)).join(', ')} exceed ${thr.toExponential(2)} (attainable accuracy of the space)` }));
    }
    for (const v of cand.vectors) space.release(v);
    look.recheck = false; // estimates below the floor of explicit residuals: re-check after the next restart
    // the one-pass basis may be what limits the residuals: orthogonalise twice from now on
    if (c.icgs && c.icgs.tol > 0) c.icgs = strictIcgs(c.icgs, space, run);
  }
  return { nearlyConverged: est.filter((r) => r <= 1e3 * thr).length };
}

/** (s12-eig18) The farthest Ritz value from the wanted end seen so far, with its residual estimate then. */
function noteFar<V, S>(c: LanczosCtx<V, S>, fast: RitzEstimates, m: number, beta: number): void {
  const i = c.sign === 1 ? m - 1 : 0;
  const value = fast.values[i]!;
  const far = c.hint.far;
  if (!far || c.sign * value > c.sign * far.value) c.hint.far = { value, residual: Math.abs(beta * fast.last[i]!) };
}

/** (s12-eig18) The first Ritz value past the nWant wanted ones of the converged main run, with its residual estimate. */
function noteNext<V, S>(c: LanczosCtx<V, S>, fast: RitzEstimates, m: number, beta: number, nWant: number): void {
  if (m <= nWant) return;
  const at = (i: number) => ({ value: fast.values[i]!, residual: Math.abs(beta * fast.last[i]!) });
  const order = wantedOrder(fast.values, c.sign);
  c.hint.next = at(order[nWant]!);
  c.hint.beyond = order.slice(nWant + 1, nWant + 4).map(at); // (s13-eig13) ./lanczos-filter NEAR_CLUSTER
}

/**
 * (s12-eig18) One multiplicity-check run: the Chebyshev filter on the start where `filter` and an
 * interval are at hand (./lanczos-filter), then, unless it cleared the check, a Lanczos check run
 * from the filtered vector with the certificate reached.
 */
async function checkRun<V, S>(c: LanczosCtx<V, S>, r: { locked: readonly V[]; start: V; seed: number; mu0: number; missChance: number; filter: boolean }, answer: { values: readonly number[]; dropped: readonly number[] }): Promise<CoreOut<V>> {
  const { locked, seed, mu0, missChance } = r;
  const iv = r.filter ? filterInterval(c.hint, c.sign, mu0, answer.values, answer.dropped, threshold(c)) : undefined;
  const kth = answer.values.at(-1);
  if (!iv) return lanczosCore(c, locked, 1, r.start, seed, { mu0, missChance, kth });
  const x0 = await startVector(c, locked, r.start, seed);
  if (!x0) return { values: [], vectors: [], reason: 'breakdown', detail: 'lanczos: no start vector orthogonal to the locked ones' };
  const f = await chebyshevFilter(c, locked, x0, iv, mu0, missChance);
  if (f.kind === 'cleared') return { values: [], vectors: [], reason: 'converged', clear: true };
  const out = await lanczosCore(c, locked, 1, f.start, seed, { mu0, missChance, logStart: f.logStart, kth });
  // (s13-eig13) a copy found from the filtered start: the start may clear the next attempt
  if (f.residue && out.reason === 'converged' && !out.clear && out.values.length > 0) return { ...out, residue: f.residue };
  f.residue?.release();
  return out;
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
  return confirmedEigen(space, () => lanczosRun(space, op, opts));
}

/** One run of {@link lanczos} (rerun by confirmedEigen when the operator's tuned kernel failed the final check). */
async function lanczosRun<V, S>(space: VectorSpace<V, S>, op: LinearOperator<V>, opts: LanczosOptions<V>): Promise<EigenResult<V>> {
  const k = opts.k;
  checkEigenInput('lanczos', op, k, opts.maxIterations);
  // a v0 of the wrong length surfaced as "copy: expected length 35, got 36"
  if (opts.v0 !== undefined && space.length(opts.v0) !== op.rows) throw new DimensionMismatchError('lanczos v0', op.rows, space.length(opts.v0));
  // anything but 'largest' ran as smallest: SciPy's 'LA' gave the smallest eigenvalues, silently
  if (opts.which !== undefined && opts.which !== 'smallest' && opts.which !== 'largest') throw new InvalidParameterError('lanczos which', "'smallest' or 'largest'", opts.which);
  const n = op.rows;
  const maxBasis = Math.min(n, opts.maxBasis ?? Math.max(20, 2 * k + 10));
  if (!Number.isInteger(maxBasis) || (maxBasis < k + 2 && maxBasis < n)) {
    throw new InvalidParameterError('lanczos maxBasis', `an integer ≥ k + 2 = ${k + 2}`, opts.maxBasis);
  }
  if (opts.keep !== undefined && !(Number.isInteger(opts.keep) && opts.keep >= k && opts.keep <= maxBasis - 1)) {
    throw new InvalidParameterError('lanczos keep', `an integer from k = ${k} to maxBasis − 1 = ${maxBasis - 1}`, opts.keep);
  }
  const cm = opts.checkMultiplicity;
  if (cm !== undefined && typeof cm !== 'boolean' && !(typeof cm === 'number' && cm > 0 && cm < 1)) {
    throw new InvalidParameterError('lanczos checkMultiplicity', 'true, false or a miss chance in (0, 1)', cm);
  }
  if (opts.checkFilter !== undefined && typeof opts.checkFilter !== 'boolean') throw new InvalidParameterError('lanczos checkFilter', 'true or false', opts.checkFilter);
  if (opts.checkEvery !== undefined && !(Number.isInteger(opts.checkEvery) && opts.checkEvery >= 1)) {
    throw new InvalidParameterError('lanczos checkEvery', 'an integer ≥ 1', opts.checkEvery);
  }
  const f32 = space.precision === 'f32';
  const run = new EigenRun(opts, op);
  const c: LanczosCtx<V, S> = {
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
    recordAhead: opts.recordAhead ?? true,
    hint: {},
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
    const missChance = typeof opts.checkMultiplicity === 'number' ? opts.checkMultiplicity : MISS_CHANCE;
    const filter = (opts.checkFilter ?? true) && c.icgs !== undefined;
    const checked = await checkMultiplicity(c, k, seed, first, (locked, v, s, mu0, answer) => checkRun(c, { locked, start: v, seed: s, mu0, missChance, filter }, answer));
    ({ values, vectors, reason, detail } = checked);
  }
  while (values.length < k) {
    // an early exit before k Ritz pairs existed: pad with NaN / zero vectors (reason is not 'converged')
    values = [...values, Number.NaN];
    vectors = [...vectors, space.create(n)];
  }
  releaseWork(c); // the product vector and the basis block of the batched steps
  return finishEigen(op, space, run, { values, vectors, reason, iterations: c.iterations, method: `lanczos(${opts.which ?? 'smallest'}, maxBasis=${maxBasis})`, tolerance: toleranceReport(c.tolerance, c.normA), ...(detail ? { detail } : {}) });
}

