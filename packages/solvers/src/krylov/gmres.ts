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
import type { SolveResult } from '../common/result';
import { arnoldiBlock } from './gmres-block';
import { cycles, type Ortho } from './gmres-cycles';
import { checkB, lazyNorm } from './gmres-reads';
import { assertFloat32Resolves } from '../common/f32-range';

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
 * @throws InvalidParameterError for a restart that is not an integer ≥ 1, an unknown
 *   orthogonalization, a bad rtol / atol / maxIterations or an operator whose products are async;
 *   DimensionMismatchError when A is not square or b, x0 or the preconditioner do not match it.
 *   Not converging is no error: `converged` is false, with the `reason`.
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
      const bNorm = await ctx.take(space.norm2(b));
      ctx.setBNorm(bNorm);
      await assertFloat32Resolves(ctx, bNorm);
      const end = checkB(ctx, x, bNorm);
      if (end) return end;
    }
    const V: V[] = [];
    const w = space.create(n);
    const z = hasM ? space.create(n) : w;
    const keep: V[] = []; // the best x at a false convergence, x before a preconditioned update (created on first use)
    try {
      return await cycles(ctx, x, V, w, z, m, ortho, keep, block);
    } finally {
      for (const v of [...V, ...keep]) if (v !== undefined) space.release(v);
      space.release(w);
      if (z !== w) space.release(z);
    }
  } finally {
    block?.dispose();
  }
}
