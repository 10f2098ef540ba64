/**
 * LOBPCG (Knyazev 2001) for the k smallest eigenpairs of a symmetric operator, block size
 * k + guard, optional preconditioner, with the stabilised Rayleigh–Ritz step: the basis
 * [X, W, P] is orthonormalised (CGS2 against the earlier blocks + SVQB, Duersch et al. 2018),
 * so that the projected problem is a standard symmetric one; P is dropped for an iteration when
 * its orthogonalised block is numerically dependent on [X, W]. Converged columns are soft-locked
 * (no W or P for them).
 *
 * Memory traffic per iteration (b = block size, a = active columns, n rows): a matvecs (A·W),
 * a preconditioner applications, residuals (b axpys), the projection of W against X and of P
 * against [X, W] (with the same combinations on A·P: one classical pass in float64 unless its
 * SVQB kept < 1 % of a norm or was ill-conditioned, then a CGS2 round; CGS2 in float32), SVQB
 * passes, the 3b×3b projected matrix ((3b)²/2 dots), the new X, A·X (b combines of 3b vectors;
 * b + 1 for an active column, whose x = X·C_x + p), P, A·P (a combines of 2b). Readbacks per
 * iteration: residual norms, 1 SVQB for W, 1 for P (2 each when the first is not enough, and
 * always in float32), 1 projected matrix. Memory ≈ 8·b vectors. multiDot + combine vector
 * passes per product (float64, k = 4): ExaSP2_trpcage_8K 178 → 134, 2-D Laplacian 30² 157 → 110.
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import { DimensionMismatchError, InvalidParameterError } from '@gpusparse/formats';
import { spaceAndOperator } from '../common/argument-order';
import type { EigenResult, StopReason } from '../common/result';
import type { EigenBaseOptions } from './common';
import type { EigenTolerance } from '../common/eigen-tolerance';
import { eigenTolerance, residualThreshold, toleranceReport } from '../common/eigen-tolerance';
import { EigenRun, allFinite, checkEigenInput, finishEigen, confirmedEigen, noIteration, randomVector, readAndRelease } from './common';
import { symmetricEigen } from './dense';
import { SECOND_PASS_BELOW, orthonormalAgainst, updateBlocks } from './lobpcg-blocks';
import { combineColumns, projectOutTwice, svqb } from './ortho';
import { returnedVoid } from '../common/operator-check';

/** Options of {@link lobpcg}. */
export interface LobpcgOptions<V> extends EigenBaseOptions {
  /**
   * Relative residual tolerance: converged when ‖A·x − θ·x‖ ≤ max(tol·‖A‖est, atol), with
   * ‖A‖est the largest |Ritz value| of the [X, W, P] subspaces seen (docs/guides/eigen-convergence.md).
   * Default 1e-8 (f64), 1e-5 (f32).
   */
  tol?: number;
  /** Absolute floor of the residual threshold (default 0). */
  atol?: number;
  /** Absolute residual threshold; replaces the relative rule when given. */
  residualTol?: number;
  /** T ≈ A⁻¹ (or (A − σI)⁻¹), applied to the residuals. */
  preconditioner?: LinearOperator<V>;
  /** Extra block columns that speed up convergence of the k-th pair (default 0). */
  guard?: number;
  /** Initial block (copied; missing columns are filled with random vectors). */
  initialVectors?: readonly V[];
  /** Seed of the random initial vectors (default 1). */
  seed?: number;
  /** Squared relative norm below which an orthogonalised direction counts as dependent (default 1e-14 f64, 1e-8 f32). */
  lindep?: number;
}

/**
 * The k smallest eigenpairs of a symmetric operator by LOBPCG with stabilised Rayleigh–Ritz.
 * Cost per iteration: ≤ k + guard matvecs and preconditioner applications, O(b²·n) vector work,
 * 6 readbacks.
 * @example
 * const r = await lobpcg(space, op, { k: 4, preconditioner: jacobi });
 * r.values; // 4 smallest eigenvalues, ascending
 */
export function lobpcg<V, S>(space: VectorSpace<V, S>, op: LinearOperator<V>, opts: LobpcgOptions<V>): Promise<EigenResult<V>>;
/** @deprecated operator-first order: call `lobpcg(space, op, opts)` (same behaviour). */
export function lobpcg<V, S>(op: LinearOperator<V>, space: VectorSpace<V, S>, opts: LobpcgOptions<V>): Promise<EigenResult<V>>;
export async function lobpcg<V, S>(
  spaceOrOp: VectorSpace<V, S> | LinearOperator<V>,
  opOrSpace: VectorSpace<V, S> | LinearOperator<V>,
  opts: LobpcgOptions<V>,
): Promise<EigenResult<V>> {
  const [space, op] = spaceAndOperator('lobpcg', spaceOrOp, opOrSpace);
  return confirmedEigen(space, () => lobpcgRun(space, op, opts));
}

/** What the steps of one {@link lobpcg} run share: its settings, the blocks and their products, the bookkeeping. */
interface LobpcgState<V, S> {
  readonly space: VectorSpace<V, S>;
  readonly op: LinearOperator<V>;
  readonly pre: LinearOperator<V> | undefined;
  readonly k: number;
  readonly n: number;
  /** Block size k + guard (≤ n). */
  readonly nx: number;
  /** Settings of {@link orthonormalAgainst}. */
  readonly ortho: { lindep: number; secondBelow: number; onePass: boolean; stats: EigenRun['stats'] };
  readonly tolerance: EigenTolerance;
  readonly maxIterations: number;
  readonly run: EigenRun;
  readonly method: string;
  readonly seed: number;
  x: V[];
  ax: V[];
  /** The previous direction of each column (undefined: none, or dropped). */
  p: (V | undefined)[];
  ap: (V | undefined)[];
  theta: number[];
  /** Largest |Ritz value| seen: the ‖A‖ estimate of the relative residual rule. */
  normA: number;
  iterations: number;
  reason: StopReason;
  detail: string | undefined;
}

/** One run of {@link lobpcg} (rerun by confirmedEigen when the operator's tuned kernel failed the final check). */
async function lobpcgRun<V, S>(space: VectorSpace<V, S>, op: LinearOperator<V>, opts: LobpcgOptions<V>): Promise<EigenResult<V>> {
  const st = lobpcgSetup(space, op, opts);
  const { k, n, run, method } = st;
  const x = await initialBlock(st, opts.initialVectors ?? []);
  if (!x) {
    return finishEigen(op, space, run, { values: new Array(k).fill(Number.NaN), vectors: Array.from({ length: k }, () => space.create(n)), reason: 'non-finite', iterations: 0, method, detail: 'lobpcg: non-finite initial vectors' });
  }
  if (st.maxIterations === 0) return noIteration(op, space, run, x, k, method);
  st.x = x;
  st.ax = applyOperator(st, x); // A·X
  if (await initialRayleighRitz(st)) while (await lobpcgIteration(st));
  return finishLobpcg(st);
}

/** The checked options of one run, with empty blocks. */
function lobpcgSetup<V, S>(space: VectorSpace<V, S>, op: LinearOperator<V>, opts: LobpcgOptions<V>): LobpcgState<V, S> {
  const k = opts.k;
  checkEigenInput('lobpcg', op, k, opts.maxIterations);
  const n = op.rows;
  const guard = opts.guard ?? 0;
  if (!Number.isInteger(guard) || guard < 0) throw new InvalidParameterError('lobpcg guard', 'an integer ≥ 0', guard);
  const nx = Math.min(n, k + guard);
  const pre = opts.preconditioner;
  if (pre && (pre.rows !== n || pre.cols !== n)) throw new DimensionMismatchError('lobpcg preconditioner', `${n}×${n}`, `${pre.rows}×${pre.cols}`);
  const f32 = space.precision === 'f32';
  const tolerance = eigenTolerance('lobpcg', opts, f32 ? 1e-5 : 1e-8);
  const lindep = opts.lindep ?? (f32 ? 1e-8 : 1e-14);
  // a second CGS2 + SVQB pass when the first SVQB's block had λmin/λmax below this (f32: always)
  const secondBelow = f32 ? Infinity : SECOND_PASS_BELOW;
  const onePass = !f32;
  const maxIterations = opts.maxIterations ?? 1000;
  const run = new EigenRun(opts, op);
  const stats = run.stats;
  const method = `lobpcg(k=${k}, guard=${nx - k}${pre ? `, precond=${pre.label ?? 'user'}` : ''})`;
  const seed = opts.seed ?? 1;
  return {
    space, op, pre, k, n, nx, ortho: { lindep, secondBelow, onePass, stats }, tolerance, maxIterations, run, method, seed,
    x: [], ax: [], p: new Array<V | undefined>(nx).fill(undefined), ap: new Array<V | undefined>(nx).fill(undefined),
    theta: new Array<number>(nx).fill(Number.NaN), normA: 0, iterations: 0, reason: 'max-iterations', detail: undefined,
  };
}

/** The initial block X, orthonormal: copies of the given vectors, filled up with random ones; undefined when non-finite. */
async function initialBlock<V, S>(st: LobpcgState<V, S>, given: readonly V[]): Promise<V[] | undefined> {
  const { space, n, nx, seed } = st;
  let x: V[] = [];
  const init = given.map((v) => {
    if (space.length(v) !== n) throw new DimensionMismatchError('lobpcg initialVectors', n, space.length(v));
    const c = space.create(n);
    space.copy(v, c);
    return c;
  });
  for (let attempt = 0; x.length < nx && attempt < 5; attempt++) {
    const cand = attempt === 0 ? init : [];
    while (cand.length < nx - x.length) cand.push(randomVector(space, n, seed * 1009 + attempt * 131 + cand.length));
    const refNorms = cand.map((c) => space.norm2(c));
    for (const c of cand) projectOutTwice(space, x, c); // c ← (I − XXᵀ)²·c
    const o = await svqb(space, cand, { dropTol: st.ortho.lindep, refNorms }, st.ortho.stats);
    if (o.nonFinite) return undefined;
    x = [...x, ...o.block];
  }
  return x.slice(0, nx);
}

/** A·v for each v, counted as matvecs. */
function applyOperator<V, S>(st: LobpcgState<V, S>, vs: readonly V[]): V[] {
  return vs.map((v) => {
    const y = st.space.create(st.n);
    returnedVoid(st.op.apply(v, y), 'lobpcg', 'apply', y); // y = A·v
    st.ortho.stats.matvecs++;
    return y;
  });
}

/**
 * Rayleigh–Ritz on the orthonormal basis `s` (A·s in `as`): the Ritz values (θ, first nx) and the
 * coefficients of the first nx Ritz vectors; updates ‖A‖est. Undefined when non-finite.
 */
async function rayleighRitz<V, S>(st: LobpcgState<V, S>, s: V[], as: V[]): Promise<number[][] | undefined> {
  const { space, nx } = st;
  const dots: S[] = [];
  for (let j = 0; j < s.length; j++) dots.push(...space.multiDot(s.slice(0, j + 1), as[j]!)); // G[0..j][j] = Sᵀ·A·s_j
  const got = await readAndRelease(space, dots, st.ortho.stats);
  if (!allFinite(got)) return undefined;
  const g: number[][] = s.map(() => new Array<number>(s.length).fill(0));
  let q = 0;
  for (let j = 0; j < s.length; j++) {
    for (let i = 0; i <= j; i++) {
      g[i]![j] = got[q]!;
      g[j]![i] = got[q++]!;
    }
  }
  const eig = symmetricEigen(g);
  if (!eig) return undefined;
  st.normA = Math.max(st.normA, Math.abs(eig.values[0]!), Math.abs(eig.values[s.length - 1]!));
  st.theta = eig.values.slice(0, nx);
  return eig.vectors.slice(0, nx);
}

/** Rayleigh–Ritz of X alone before the first iteration; false (and the exit reason set) when non-finite. */
async function initialRayleighRitz<V, S>(st: LobpcgState<V, S>): Promise<boolean> {
  const { space } = st;
  const c = await rayleighRitz(st, st.x, st.ax);
  if (!c) {
    st.reason = 'non-finite';
    st.detail = 'lobpcg: non-finite initial Rayleigh quotient';
    return false;
  }
  const nxv = combineColumns(space, st.x, c); // X ← X·C
  const nax = combineColumns(space, st.ax, c); // A·X ← A·X·C
  st.x.forEach((v) => { space.release(v); });
  st.ax.forEach((v) => { space.release(v); });
  st.x = nxv;
  st.ax = nax;
  return true;
}

/** One iteration after the residuals' readback: W, P, Rayleigh–Ritz of [X, W, P], the new blocks. False when the run ends. */
async function lobpcgIteration<V, S>(st: LobpcgState<V, S>): Promise<boolean> {
  const res = await residualsAndExits(st);
  if (!res) return false;
  const wb = await searchDirections(st, res);
  if (!wb) return false;
  const pb = await previousDirections(st, res.active, wb);
  return rayleighRitzUpdate(st, res.active, wb, pb);
}

/**
 * Residuals r_i = A·x_i − θ_i·x_i and their norms (one readback), the history point and the exit
 * checks (non-finite, converged, stopped, max-iterations); undefined (reason set, R released) on
 * exit. Otherwise R and the active (not yet converged: soft-locking) columns.
 */
async function residualsAndExits<V, S>(st: LobpcgState<V, S>): Promise<{ r: V[]; rn: number[]; active: number[] } | undefined> {
  const { space, n, k } = st;
  const r = st.x.map((xi, i) => {
    const ri = space.create(n);
    space.copy(st.ax[i]!, ri); // r = A·x
    space.axpby(-st.theta[i]!, xi, 1, ri); // r ← r − θ·x
    return ri;
  });
  const rn = await readAndRelease(space, r.map((ri) => space.norm2(ri)), st.ortho.stats);
  st.iterations++;
  const iterations = st.iterations;
  const thr = residualThreshold(st.tolerance, st.normA);
  const stop = await st.run.record({ iteration: iterations, values: st.theta.slice(0, k), residualNorms: rn.slice(0, k), threshold: thr });
  const done = (why: StopReason, what?: string) => {
    r.forEach((v) => { space.release(v); });
    st.reason = why;
    st.detail = what;
    return undefined;
  };
  if (!allFinite(rn)) return done('non-finite', `lobpcg: non-finite residual at iteration ${iterations}`);
  if (rn.slice(0, k).every((z) => z <= thr)) return done('converged');
  if (stop) return done('stopped');
  if (iterations >= st.maxIterations) return done('max-iterations');
  const active = rn.map((z, i) => (z > thr ? i : -1)).filter((i) => i >= 0);
  return { r, rn, active };
}

/**
 * W = T·R_active (R itself without a preconditioner), orthonormal and ⟂ X, and A·W; releases
 * the residuals not used as W. Undefined (reason set) when non-finite or every column dependent.
 */
async function searchDirections<V, S>(st: LobpcgState<V, S>, res: { r: V[]; rn: number[]; active: number[] }): Promise<{ w: V[]; aw: V[] } | undefined> {
  const { space, n, pre, iterations } = st;
  const { r, rn, active } = res;
  let w: V[] = active.map((i) => {
    if (!pre) return r[i]!;
    const wi = space.create(n);
    returnedVoid(pre.apply(r[i]!, wi), 'lobpcg', 'preconditioner apply', wi); // w = T·r
    st.ortho.stats.precondApplies++;
    return wi;
  });
  r.forEach((v, i) => {
    if (pre || !active.includes(i)) space.release(v);
  });
  const wo = await orthonormalAgainst(space, st.x, undefined, w, undefined, st.ortho);
  w = wo.block;
  if (wo.nonFinite) {
    st.reason = 'non-finite';
    st.detail = `lobpcg: non-finite search directions at iteration ${iterations}`;
    return undefined;
  }
  if (w.length === 0) {
    st.reason = 'breakdown';
    st.detail = `lobpcg: every preconditioned residual is dependent on X at iteration ${iterations} (residuals ${rn.map((z) => z.toExponential(2)).join(', ')})`;
    return undefined;
  }
  return { w, aw: applyOperator(st, w) }; // A·w
}

/**
 * P of the active columns (A·P alike), orthonormal and ⟂ [X, W]; the directions of the other
 * columns are released, and all of P when its orthogonalised block is ill-conditioned. Clears st.p.
 */
async function previousDirections<V, S>(st: LobpcgState<V, S>, active: readonly number[], wb: { w: V[]; aw: V[] }): Promise<{ pb: V[]; apb: V[] }> {
  const { space, nx, p, ap } = st;
  let pb: V[] = [];
  let apb: V[] = [];
  const pIdx = active.filter((i) => p[i] !== undefined);
  for (let i = 0; i < nx; i++) {
    if (pIdx.includes(i)) {
      pb.push(p[i]!);
      apb.push(ap[i]!);
    } else if (p[i] !== undefined) {
      space.release(p[i]!);
      space.release(ap[i]!);
    }
  }
  st.p = new Array<V | undefined>(nx).fill(undefined);
  st.ap = new Array<V | undefined>(nx).fill(undefined);
  if (pb.length > 0) {
    const xw = [...st.x, ...wb.w];
    const axw = [...st.ax, ...wb.aw];
    const po = await orthonormalAgainst(space, xw, axw, pb, apb, st.ortho);
    if (po.nonFinite || po.dropped > 0) {
      po.block.forEach((v) => { space.release(v); }); // ill-conditioned: restart without P
      po.mirror.forEach((v) => { space.release(v); });
      pb = [];
      apb = [];
    } else {
      pb = po.block;
      apb = po.mirror;
    }
  }
  return { pb, apb };
}

/**
 * Rayleigh–Ritz on S = [X, W, P] (orthonormal: a standard symmetric problem), then X ← S·C,
 * A·X ← A·S·C and P = [W, P]·C_wp of the active columns (x = X·C_x + p there). False (reason
 * set) when the projected matrix is non-finite.
 */
async function rayleighRitzUpdate<V, S>(st: LobpcgState<V, S>, active: readonly number[], wb: { w: V[]; aw: V[] }, pd: { pb: V[]; apb: V[] }): Promise<boolean> {
  const { space, nx } = st;
  const { w, aw } = wb;
  const { pb, apb } = pd;
  const s = [...st.x, ...w, ...pb];
  const as = [...st.ax, ...aw, ...apb];
  const c = await rayleighRitz(st, s, as);
  if (!c) {
    [...w, ...aw, ...pb, ...apb].forEach((v) => { space.release(v); });
    st.reason = 'non-finite';
    st.detail = `lobpcg: non-finite projected matrix at iteration ${st.iterations}`;
    return false;
  }
  const upd = updateBlocks(space, s, as, c, nx, active);
  for (const [i, v] of upd.p) {
    st.p[i] = v.p;
    st.ap[i] = v.ap;
  }
  s.forEach((v) => { space.release(v); });
  as.forEach((v) => { space.release(v); });
  st.x = upd.x;
  st.ax = upd.ax;
  return true;
}

/** Releases P, A·P, A·X and the guard columns; the result with the first k Ritz pairs. */
function finishLobpcg<V, S>(st: LobpcgState<V, S>): Promise<EigenResult<V>> {
  const { space, k, reason, detail } = st;
  st.p.forEach((v) => { v !== undefined && space.release(v); });
  st.ap.forEach((v) => { v !== undefined && space.release(v); });
  st.ax.forEach((v) => { space.release(v); });
  st.x.slice(k).forEach((v) => { space.release(v); });
  return finishEigen(st.op, space, st.run, { values: st.theta.slice(0, k), vectors: st.x.slice(0, k), reason, iterations: st.iterations, method: st.method, tolerance: toleranceReport(st.tolerance, st.normA), ...(detail ? { detail } : {}) });
}
