/**
 * Restarted GMRES(m) (Saad & Schultz 1986) with right preconditioning: solves A·M⁻¹·u = b,
 * x = x₀ + M⁻¹·V·y, so the minimised residual is the true, unpreconditioned one.
 *
 * Memory traffic of inner step j (0-based; n-vectors), orthogonalisation 'cgs2' (default):
 * - matvecs: 1 (w = A·M⁻¹·v_j); preconditioner applies: 1 when M is set (+1 per cycle for x)
 * - 2 multiDot passes over v_0..v_j and w (2·(j+2) reads), 2 combine passes (2·(j+2) reads + 2 writes),
 *   ‖w‖ (1 read), v_{j+1} = w/‖w‖ (1 read + 1 write): ≈ 4j + 10 reads, 3 writes, 6 kernels, and only
 *   one scalar op (1/‖w‖): the minus signs ride on combine's β = −1
 * - 'mgs': the same data volume in 2·(j+1) separate dot/axpby passes (slow on the GPU)
 * - 'icgs' (the default on host spaces): one multiDot pass that also gives ‖w‖², one combine,
 *   ‖w'‖, v_{j+1} = ±w'/‖w'‖: ≈ 2j + 7 reads, 2 writes; the second pass of 'cgs2' only when the
 *   loss-of-orthogonality bound of ../common/icgs passes √u. It reads its scalars every step
 *   (free on the host).
 * - per cycle: x update (k + 1 reads + 1 write), r = b − A·x (1 matvec)
 * - storage: m + 1 basis vectors + x, w (+ z with M)
 * - 'cgs' with a device basis block (`basisBlock`, WebGPU, `checkEvery` > 1; ./gmres-block): the
 *   cycle's basis also in one device buffer, a step = product + 4 dispatches for any j (dots,
 *   reduce, combine with the norm's partials, normalize), where the per-vector passes take 5 up
 *   to j = 12 and 7–9 past it; lavapipe, ExaSP2_poly_chain.512 refined to 1e-8: 8 216 → 6 618
 *   dispatches for the same 1 285 products and 55 readbacks
 * Hessenberg entries stay on the device and are read in one batch every `checkEvery` steps;
 * the Givens rotations and the triangular solve run on the host in float64 (see givens.ts).
 * With `checkEvery` > 1 the restart residual ‖r‖ of a cycle is read with the next cycle's first
 * batch (one readback per cycle with `checkEvery` = m, not two).
 * @module
 */
import { InvalidParameterError, type LinearOperator, type VectorSpace } from '@gpusparse/formats';
import { SolveContext } from '../common/context';
import { resolveOptions, type SolveOptions } from '../common/options';
import type { SolveResult, StopReason } from '../common/result';
import { IcgsBasis } from '../common/icgs';
import { GivensLeastSquares } from './givens';
import { combineNormalize } from './fused-update';
import { type ArnoldiBlock, arnoldiBlock } from './gmres-block';

type Ortho = 'cgs2' | 'cgs' | 'mgs' | 'icgs';
const ORTHO: readonly Ortho[] = ['cgs2', 'cgs', 'mgs', 'icgs'];

/** Options of {@link gmres}. */
export interface GmresOptions<V> extends SolveOptions<V> {
  /** Restart length m (default 30; at most n, the order of A): m + 1 basis vectors are stored. */
  restart?: number;
  /**
   * 'cgs2' (default): classical Gram–Schmidt applied twice with multiDot/combine — 4 fused passes
   * per step, the fast one on the GPU, orthogonal to working precision.
   * 'cgs': classical Gram–Schmidt once — 2 fused passes per step, half the memory traffic of
   * 'cgs2' (what CuPy's and SciPy's gmres do); the basis can lose orthogonality on hard
   * problems, which GMRES tolerates less well than 'cgs2'.
   * 'mgs': modified Gram–Schmidt — 2·(j+1) dependent passes per step.
   * 'icgs': classical Gram–Schmidt once, and a second time only when the step could have
   * cost orthogonality: the bound on the basis' loss (grown by the norm drop ‖w‖/‖w'‖ of each
   * step) would pass √u (semi-orthogonality; see ../common/icgs). About the cost of 'cgs'
   * with the safety of 'cgs2'. It reads its scalars every step: the default on host spaces
   * when every step is checked (`checkEvery` 1, their default), 'cgs2' elsewhere.
   */
  orthogonalization?: 'cgs2' | 'cgs' | 'mgs' | 'icgs';
  /**
   * 'cgs' where the space offers a device basis block (WebGPU) and the Hessenberg is read in
   * batches (`checkEvery` > 1): keep the cycle's basis in one device buffer, so that a step is
   * the product plus four dispatches for any basis size (per vector: five up to 13 vectors, up
   * to eight past them), the restart residual's norm needs no scalar of its own, and ‖b‖ (with no
   * x0) is read with the first cycle's rows, without a check of its own. Default true;
   * false keeps the per-vector passes (the same arithmetic in another summation order).
   */
  basisBlock?: boolean;
}

/**
 * Solve A·x = b for general square A by restarted GMRES(m), right-preconditioned when
 * `preconditioner` is given. Stops when ‖b − A·x‖ ≤ max(rtol·‖b‖, atol); the least-squares
 * estimate triggers the check and the residual recomputed at the end of the cycle decides.
 * A singular least-squares problem (R[j][j] = 0) before any progress is reported as 'breakdown'.
 * Three false convergences (estimate passed, recomputed residual not 2× better) end it 'breakdown'
 * (stagnation), with the best x seen; after each, the next cycle aims at half the level (≥ tol/16).
 *
 * Cost per iteration: 1 matvec, O(j) vector reads for the orthogonalisation (j ≤ m);
 * per cycle one extra matvec for the residual.
 * @example
 * const res = await gmres(space, HostOperator.fromCsr(a), b, { restart: 20, rtol: 1e-8 });
 * res.method; // 'gmres(20)'
 */
export async function gmres<V, S>(
  space: VectorSpace<V, S>,
  op: LinearOperator<V>,
  b: V,
  options: GmresOptions<V> = {},
): Promise<SolveResult<V>> {
  const requested = options.restart ?? 30;
  if (!Number.isInteger(requested) || requested < 1) throw new InvalidParameterError('gmres restart', 'an integer ≥ 1', requested);
  // a Krylov space of an n×n A has at most n dimensions: a longer cycle only sizes arrays by the
  // request (restart 1e12 failed allocating them), so it is capped at n as SciPy does
  const m = Math.min(requested, Math.max(1, op.rows));
  const method = `gmres(${m})`;
  const opts = resolveOptions(method, space, op, b, options);
  // reads are free on host spaces ('host-…'): there the per-step test of 'icgs' costs nothing
  const ortho = options.orthogonalization ?? (space.name.startsWith('host') && opts.checkEvery === 1 ? 'icgs' : 'cgs2');
  if (!ORTHO.includes(ortho)) throw new InvalidParameterError('gmres orthogonalization', "'cgs2', 'cgs', 'mgs' or 'icgs'", ortho);
  const ctx = new SolveContext(method, space, op, b, opts);
  const n = ctx.n;
  const hasM = opts.preconditioner !== undefined;
  const x = ctx.initialX();

  const block = ortho === 'cgs' && opts.checkEvery > 1 && options.basisBlock !== false ? arnoldiBlock(space, n, m) : undefined;
  try {
    // with the block and no x0, ‖b‖ comes with the first cycle's rows and b is checked there
    if (!lazyNorm(block, opts)) {
      const end = checkB(ctx, x, await ctx.take(space.norm2(b)));
      if (end) return end;
    }
    const V: V[] = [];
    const w = space.create(n);
    const z = hasM ? space.create(n) : w;
    const keep: V[] = []; // the best x at a false convergence (created on the first one)
    try {
      return await cycles(ctx, x, V, w, z, m, ortho, keep, block);
    } finally {
      for (const v of [...V, ...keep]) space.release(v);
      space.release(w);
      if (z !== w) space.release(z);
    }
  } finally {
    block?.dispose();
  }
}

/** ‖b‖ read with the first cycle's rows: with a basis block, no x0, at least one iteration. */
function lazyNorm<V>(block: ArnoldiBlock<V> | undefined, opts: { x0: V | undefined; maxIterations: number }): boolean {
  return block !== undefined && opts.x0 === undefined && opts.maxIterations > 0;
}

/** Fix ‖b‖; the result for a non-finite or zero b (x = 0 for b = 0), else undefined. */
function checkB<V, S>(ctx: SolveContext<V, S>, x: V, bNorm: number): SolveResult<V> | undefined {
  ctx.setBNorm(bNorm);
  if (!Number.isFinite(bNorm)) return ctx.finish(x, 'non-finite', 0, Number.NaN, `${ctx.method}: b contains non-finite values (‖b‖ = ${bNorm})`);
  if (bNorm === 0) {
    ctx.space.fill(x, 0);
    return ctx.finish(x, 'converged', 0, 0, 'b = 0, so x = 0');
  }
  return undefined;
}

/** The restart cycles of {@link gmres} (V, w, z, keep are work vectors owned by the caller). */
async function cycles<V, S>(ctx: SolveContext<V, S>, x: V, V: V[], w: V, z: V, m: number, ortho: Ortho, keep: V[], block: ArnoldiBlock<V> | undefined): Promise<SolveResult<V>> {
  const { space, opts, b, method, n } = ctx;
  const hasM = opts.preconditioner !== undefined;
  const basis = (i: number): V => V[i] ?? (V[i] = space.create(n));
  let k = 0;
  const icgs = new IcgsBasis(space, undefined, () => ctx.stats.readbacks++);

  // r = b − A·x into w; its norm is the true residual (in the space's precision)
  const trueResidual = async (): Promise<number> => {
    if (k === 0 && opts.x0 === undefined) {
      space.copy(b, w); // r = b
      return ctx.bNorm;
    }
    ctx.residual(x, w); // r = b − A·x
    return ctx.take(space.norm2(w));
  };

  // ‖b‖ not read yet (block, no x0): the first cycle starts from v₀ = −b/‖b‖ made in the block
  let lazyB = lazyNorm(block, opts);
  let beta = lazyB ? Number.NaN : await trueResidual();
  if (opts.recordHistory && !lazyB) ctx.history.push({ iteration: 0, residual: beta });
  let falseConvergences = 0;
  let lastTrue = Number.POSITIVE_INFINITY;
  // After a fallback to the verified kernel the solve starts afresh from x: new Krylov space
  // (the next cycle starts from r = b − A·x) and no stagnation record. The false convergences of
  // the wrong kernel's solve must not count: with two of them carried over, the first one on the
  // verified kernel ended the solve 'breakdown' (H100, poisson2d 256², rtol 1e-5: at 1.00e-5).
  // The level the least-squares estimate must reach to end a cycle: the tolerance, halved after
  // each false convergence (the estimate passed, the true residual did not). Near the space's
  // attainable accuracy the true residual of x + V·y sits a rounding gap above the estimate: a
  // cycle that stops as soon as the estimate passes tol leaves the true residual at 1.00x tol,
  // and three such cycles ended the solve 'breakdown' at true rel 1.00e-5 for rtol 1e-5 (H100,
  // poisson2d 256², gmres(30), with or without a fallback; lavapipe the same without any fault).
  let aim = ctx.tol;
  // Aiming lower can also leave x worse where the space's accuracy is exhausted: the stagnation
  // exit returns the best x seen at a false convergence (keep[0], one copy per false convergence).
  let best = { beta: Number.POSITIVE_INFINITY, k: 0 };
  const fresh = () => {
    falseConvergences = 0;
    lastTrue = Number.POSITIVE_INFINITY;
    aim = ctx.tol;
    best = { beta: Number.POSITIVE_INFINITY, k: 0 };
  };
  // Deferred β: where the Hessenberg is read in batches, a cycle that ended without passing does
  // not read its restart residual on its own: v₀ = r/‖r‖ is scaled on the device and ‖r‖ travels
  // with the next cycle's first batch (one readback per cycle instead of two). The checks on β
  // run at that read, before any column is used: a cycle whose start had already converged is
  // discarded (its steps are not counted) and x stays the one β belongs to.
  const deferrable = opts.checkEvery > 1 && ortho !== 'icgs';
  let betaDev: S | undefined;
  // with a basis block, the deferred β is in the block's start row and v₀ = −r/β is made there
  let betaInBlock = false;
  if (lazyB) {
    space.copy(b, w);
    block!.start(w, basis(0));
    betaInBlock = true;
  }
  /**
   * The checks on a β just read (kAt: the iteration it belongs to); a result ends the solve.
   * 'refreshed': a passing β did not pass on the operator's verified kernel ({@link SolveContext.confirm}):
   * the operator runs on that kernel now, and w and β hold the residual it gives.
   */
  const checkBeta = async (kAt: number): Promise<SolveResult<V> | 'refreshed' | undefined> => {
    if (!Number.isFinite(beta)) return ctx.finishExit(x, 'non-finite', kAt, beta, `${method}: ‖b − A·x‖ = ${beta} at iteration ${kAt}`);
    if (beta <= ctx.tol) {
      if (await ctx.confirm(x, beta)) return ctx.finish(x, 'converged', kAt, beta);
      fresh(); // the history of the wrong kernel's solve says nothing of the verified one's
      beta = await trueResidual(); // r = b − A·x into w, on the verified kernel now
      return (await checkBeta(kAt)) ?? 'refreshed';
    }
    return undefined;
  };

  cycle: for (;;) {
    const kStart = k;
    let ls: GivensLeastSquares | undefined;
    if (betaDev === undefined && !betaInBlock) {
      const end = await checkBeta(k);
      if (end && end !== 'refreshed') return end;
      if (k >= opts.maxIterations) return ctx.finishExit(x, 'max-iterations', k, beta);
      if (ctx.aborted()) return ctx.finishExit(x, 'stopped', k, beta, 'signal aborted');
      space.axpby(1 / beta, w, 0, basis(0)); // v₀ = r / β (β was read on the host)
      block?.setStart(basis(0));
      ls = new GivensLeastSquares(m, beta);
    } else if (betaDev !== undefined) {
      const inv = space.div(1, betaDev);
      space.axpby(inv, w, 0, basis(0)); // v₀ = r / β (β still on the device)
      space.release(inv);
    }
    const pending: { s: S[]; col: (vals: number[]) => number[]; row?: number }[] = [];
    let used = 0; // columns usable for the update
    let stop: { reason: StopReason; detail?: string } | undefined;
    let estimate = beta;
    let passed = false;

    for (let j = 0; j < m && k < opts.maxIterations; j++) {
      k++;
      const vj = basis(j);
      if (hasM) {
        ctx.precond(vj, z); // z = M⁻¹·v_j
        ctx.matvec(z, w); // w = A·z
      } else ctx.matvec(vj, w); // w = A·v_j
      const vs = V.slice(0, j + 1);
      // Signs are folded into the passes (combine with β = −1 flips w) so that no scalar op is
      // recorded per coefficient; the Hessenberg column is assembled on the host after the read.
      if (ortho === 'icgs') {
        if (j === 0) icgs.reset(); // v₀ alone is orthonormal
        const st = await icgs.step(vs, w); // sign·w ⟂ V: one pass, two when the loss bound says so
        space.axpby(st.sign / st.norm, w, 0, basis(j + 1)); // v_{j+1} = w' / h_{j+1,j}
        const col = [...st.h, st.norm];
        pending.push({ s: [], col: () => col });
      } else if (ortho === 'cgs2') {
        const h = space.multiDot(vs, w); // h = Vᵀ·w
        space.combine(h, vs, -1, w); // w' = V·h − w = −(w − V·h)
        const h2 = space.multiDot(vs, w); // h₂' = Vᵀ·w' = −h₂ (re-orthogonalisation)
        space.combine(h2, vs, -1, w); // w = V·h₂' − w' = w − V·h − V·h₂
        const hn = space.norm2(w); // h_{j+1,j} = ‖w‖
        const inv = space.div(1, hn);
        space.axpby(inv, w, 0, basis(j + 1)); // v_{j+1} = w / h_{j+1,j}
        space.release(inv);
        pending.push({ s: [...h, ...h2, hn], col: (v) => [...v.slice(0, j + 1).map((hi, i) => hi - v[j + 1 + i]!), v[2 * j + 2]!] });
      } else if (block) {
        block.step(j + 1, w, basis(j + 1), j); // w' = V·h − w, v_{j+1} = w'/‖w'‖ = −(true v_{j+1})
        pending.push({ s: [], row: j, col: (v) => [...v.slice(0, j + 1), -v[j + 1]!] });
      } else if (ortho === 'cgs') {
        const h = space.multiDot(vs, w); // h = Vᵀ·w
        // w' = V·h − w = −(w − V·h); h_{j+1,j} = ‖w'‖; v_{j+1} = −w'/h_{j+1,j} (two passes where the space fuses them)
        const hn = combineNormalize(space, h, vs, -1, w, basis(j + 1), -1);
        pending.push({ s: [...h, hn], col: (v) => v });
      } else {
        const h: S[] = [];
        const signs: number[] = [];
        let sigma = 1; // w holds σ·w_true
        for (let i = 0; i <= j; i++) {
          const hij = space.dot(V[i]!, w); // σ·h_ij = ⟨v_i, σ·w⟩
          space.axpby(hij, V[i]!, -1, w); // σ·w ← −σ·(w − h_ij·v_i)
          h.push(hij);
          signs.push(sigma);
          sigma = -sigma;
        }
        const hn = space.norm2(w); // h_{j+1,j} = ‖w‖
        const inv = space.div(sigma, hn);
        space.axpby(inv, w, 0, basis(j + 1)); // v_{j+1} = w / h_{j+1,j}
        space.release(inv);
        pending.push({ s: [...h, hn], col: (v) => v.map((hi, i) => (i <= j ? signs[i]! * hi : hi)) });
      }

      const last = j === m - 1 || k >= opts.maxIterations;
      // the first step's own check (an early stop) costs a readback per solve: not with the block
      if (!(last || (k === 1 && !block) || k % opts.checkEvery === 0 || ctx.aborted())) continue;
      const got = await readBatch(ctx, block, pending, betaDev, betaInBlock);
      if (betaDev !== undefined || betaInBlock) {
        // v₀ made by the block is −r/β: the least-squares right-hand side is −β·e₁ in its basis
        const sign = betaInBlock ? -1 : 1;
        betaDev = undefined;
        betaInBlock = false;
        beta = got.beta!;
        if (lazyB) {
          lazyB = false;
          const end = checkB(ctx, x, beta);
          if (end) return end;
          // the tolerance exists only now: whatever the cycle state derives from it starts here
          // (a stop level taken from ctx.tol before this point would be NaN and never pass)
          fresh();
        }
        if (opts.recordHistory) ctx.history.push({ iteration: kStart, residual: beta });
        const end = await checkBeta(kStart);
        if (end === 'refreshed') {
          // this cycle was built on the unverified residual: discard it, start again from x
          k = kStart;
          continue cycle;
        }
        if (end) return end;
        ls = new GivensLeastSquares(m, sign * beta);
        estimate = beta;
      }
      for (const vals of got.cols) {
        const c = ls!.columns;
        if (stop || passed) continue;
        const badAt = vals.findIndex((v) => !Number.isFinite(v));
        if (badAt >= 0) {
          stop = { reason: 'non-finite', detail: `${method}: Hessenberg entry H[${badAt}][${c}] = ${vals[badAt]} at iteration ${k - j + c}` };
          continue;
        }
        const st = ls!.addColumn(vals);
        if (st.singular) {
          if (c === 0) stop = { reason: 'breakdown', detail: `${method}: H[0][0] = H[1][0] = 0 at iteration ${k - j} (A·v₀ = 0: A is singular on the residual)` };
          else passed = true; // a singular column adds nothing: use the columns before it
          continue;
        }
        used = c + 1;
        estimate = st.estimate;
        if (estimate <= aim) passed = true;
      }
      pending.length = 0;
      if (!stop && !passed && ctx.report(k, estimate)) stop = { reason: 'stopped', detail: ctx.aborted() ? 'signal aborted' : 'onIteration returned false' };
      if (stop || passed) break;
    }

    // steps past the column that passed (done before the check saw it) are not counted as iterations
    if (passed) k = kStart + Math.max(used, 1);
    if (used > 0) {
      const y = ls!.solve(used);
      const coeffs = Array.from(y);
      const vs = V.slice(0, used);
      if (hasM) {
        space.combine(coeffs, vs, 0, w); // w = V·y
        ctx.precond(w, z); // z = M⁻¹·V·y
        space.axpby(1, z, 1, x); // x = x + M⁻¹·V·y
      } else space.combine(coeffs, vs, 1, x); // x = x + V·y
    }
    const previous = beta;
    if (deferrable && !stop && !passed && used > 0 && k < opts.maxIterations && !ctx.aborted()) {
      ctx.residual(x, w); // r = b − A·x; ‖r‖ is read with the next cycle's first batch
      if (block) {
        block.start(w, basis(0)); // v₀ = −r/‖r‖, ‖r‖ in the block
        betaInBlock = true;
      } else betaDev = space.norm2(w);
      continue;
    }
    beta = await trueResidual();
    if (opts.recordHistory) ctx.history.push({ iteration: k, residual: beta });
    if (stop?.reason === 'breakdown' && (await ctx.recheck(x, beta))) {
      fresh();
      beta = await trueResidual(); // the breakdown came from a tuned kernel that went wrong: go on
      continue;
    }
    if (stop && !(stop.reason === 'stopped' && beta <= ctx.tol)) return ctx.finishExit(x, stop.reason, k, beta, stop.detail);
    const stalled = (used === 0 && beta >= previous) || (passed && beta > ctx.tol && beta > 0.5 * lastTrue && falseConvergences >= 2);
    if (stalled && (await ctx.recheck(x, beta))) {
      // the stall came from a tuned kernel that went wrong: on the verified one now, go on
      fresh();
      beta = await trueResidual();
      continue;
    }
    if (used === 0 && beta >= previous) {
      return ctx.finishExit(x, 'breakdown', k, beta, `${method}: no progress in a cycle at iteration ${k} (singular least-squares problem)`);
    }
    if (passed && beta > ctx.tol) {
      falseConvergences = beta > 0.5 * lastTrue ? falseConvergences + 1 : 0;
      lastTrue = Math.min(lastTrue, beta);
      aim = Math.max(aim / 2, ctx.tol / 16);
      if (beta < best.beta) {
        space.copy(x, (keep[0] ??= space.create(n)));
        best = { beta, k };
      }
      if (falseConvergences >= 3) {
        let detail =
          `${method}: stagnation at iteration ${k}: the least-squares estimate passed the tolerance ${ctx.tol.toExponential(2)} ` +
          `3 times but ‖b − A·x‖ stays at ${beta.toExponential(2)}; the ${space.precision} space cannot resolve this tolerance ` +
          '(use refinedSolve for mixed-precision refinement)';
        if (best.beta < beta) {
          space.copy(keep[0]!, x);
          detail += `; x is the best one, from iteration ${best.k} (‖b − A·x‖ = ${best.beta.toExponential(2)})`;
          beta = best.beta;
        }
        return ctx.finishExit(x, 'breakdown', k, beta, detail);
      }
    }
  }
}

/**
 * One readback of a batch: the deferred β (a device scalar, or the block's start row) and the
 * Hessenberg columns of the pending steps (device scalars, or the block's history rows).
 */
async function readBatch<V, S>(
  ctx: SolveContext<V, S>,
  block: ArnoldiBlock<V> | undefined,
  pending: readonly { s: S[]; col: (vals: number[]) => number[]; row?: number }[],
  betaDev: S | undefined,
  betaInBlock: boolean,
): Promise<{ beta?: number; cols: number[][] }> {
  if (block && pending.every((p) => p.row !== undefined)) {
    ctx.stats.readbacks++;
    const got = await block.read(pending.map((p) => p.row!), betaInBlock);
    const cols = pending.map((p, i) => p.col(got.steps[i]!));
    return got.start === undefined ? { cols } : { beta: got.start, cols };
  }
  const head = betaDev === undefined ? [] : [betaDev];
  const flat = await ctx.takeMany([...head, ...pending.flatMap((p) => p.s)]);
  let off = head.length;
  const cols = pending.map((p) => {
    const vals = p.col(flat.slice(off, off + p.s.length));
    off += p.s.length;
    return vals;
  });
  return head.length ? { beta: flat[0]!, cols } : { cols };
}
