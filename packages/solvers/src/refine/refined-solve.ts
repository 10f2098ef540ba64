/**
 * Mixed-precision iterative refinement (Wilkinson; Carson & Higham 2018): the residual
 * r = b − A·x and the update x = x + d are computed in extended precision — df64 on the device
 * when the inner operator offers it, else float64 on the host — and the correction equation
 * A·d = r is solved loosely in a (possibly float32, GPU) space by any Krylov solver.
 * Each outer step gains about −log10(inner rtol) digits until the residual reaches
 * max(rtol·‖b‖, atol), as long as the inner solver converges (κ(A)·ε_inner < 1 roughly).
 *
 * Per outer iteration: one extended-precision residual product, one inner solve, and either one
 * scalar readback (device path) or one upload of r and one download of d (host path).
 * With inner method 'cg' the inner solves are one CG recurrence with reliable updates
 * (reliable-cg.ts): the outer steps are its residual replacements and p is kept across them.
 * @module
 */
import { type DeviceSolution, DimensionMismatchError, type ExtendedPrecisionResidual, extendedPrecisionOf, InvalidParameterError } from '@gpusparse/formats';
import { bicg } from '../krylov/bicg';
import { bicgstab } from '../krylov/bicgstab';
import { cg } from '../krylov/cg';
import { gmres } from '../krylov/gmres';
import { newStats, type StopReason } from '../common/result';
import { HostRefinement, type OuterState } from './host-refinement';
import { outerLoop } from './outer-loop';
import { isHostArray, type Rhs, rhsOf } from './refined-rhs';
import type { Book, OuterIterationInfo, RefinedSolveDeviceResult, RefinedSolveOptions, RefinedSolveResult } from './refined-types';
import { reliableLoop } from './reliable-loop';
import { assertUsableOperator } from '../common/operator-check';

export { correctionTolerance, LAST_STEP_MARGIN } from './outer-loop';
export { rhsPowerOfTwo } from './refined-rhs';
export * from './refined-types';

/**
 * Solve A·x = b to float64 accuracy with correction solves in a lower-precision space.
 * Stops when ‖b − A·x‖₂ ≤ max(rtol·‖b‖₂, atol) (rtol down to ~1e-13 is meaningful on the host
 * path, ~1e-12 with df64 on the device). When an outer step fails to reduce the residual by
 * 10 % twice in a row, it stops with reason 'breakdown' and returns the best x seen.
 *
 * Where the outer residual is computed: when the inner operator offers an extended-precision
 * residual ({@link extendedPrecisionOf}: a GPU operator built from CSR gives df64), x, b and r
 * stay on the device and the host reads ‖r‖ once per outer step; otherwise on the host in
 * float64 with `hostOperator` (1 host product + 1 upload + 1 download per outer step).
 * @example
 * const res = await refinedSolve({
 *   hostOperator: HostOperator.fromCsr(a), innerOperator: gpuOp, innerSpace: gpuSpace, b,
 *   rtol: 1e-10, inner: { method: 'cg', rtol: 1e-4 },
 * });
 * res.trueResidual / res.bNorm; // ≤ 1e-10
 */
export async function refinedSolve<V, S>(o: RefinedSolveOptions<V, S> & { output: 'device' }): Promise<RefinedSolveDeviceResult>;
export async function refinedSolve<V, S>(o: RefinedSolveOptions<V, S>): Promise<RefinedSolveResult>;
export async function refinedSolve<V, S>(o: RefinedSolveOptions<V, S>): Promise<RefinedSolveResult | RefinedSolveDeviceResult> {
  const t0 = performance.now();
  const n = checkShapes(o);
  const ext = o.extended === false ? undefined : (o.extended ?? (await extendedPrecisionOf(o.innerOperator)));
  const rhs = await rhsOf(o, ext, n);
  // b outside [2^-60, 2^60]: solve for b/s (s a power of two: exact), then x·s. The df64 outer
  // state and the float32 corrections hold only float32's exponent range (b = 1e-300 was
  // "converged" with x = 0, b = 1e38 non-finite)
  const s = rhs.scale;
  if (s !== 1 && o.output === 'device') {
    throw new InvalidParameterError("refinedSolve output 'device'", 'max|b| within [2^-60, 2^60] (the df64 x on the device has float32\'s exponent range)', `max|b| ≈ ${s.toExponential(2)}; use output 'host'`);
  }
  const cb = o.onOuterIteration;
  const res = await refinedSolveInRange(
    {
      ...o,
      ...(o.x0 && s !== 1 ? { x0: o.x0.map((v) => v / s) } : {}),
      atol: (o.atol ?? 0) / s,
      ...(cb && s !== 1 ? { onOuterIteration: (info: OuterIterationInfo) => cb({ ...info, residual: info.residual * s }) } : {}),
    },
    { ...rhs, ext, t0 },
  );
  if (s === 1) return res;
  const x = res.x as Float64Array; // output 'device' was refused above when s ≠ 1
  for (let i = 0; i < x.length; i++) x[i]! *= s;
  for (const h of res.history) h.residual *= s;
  res.bNorm *= s;
  res.trueResidual *= s;
  const note = `solved for b/2^${Math.log2(s)} (max |b| outside float32's comfortable range), x scaled back`;
  res.detail = res.detail ? `${res.detail}; ${note}` : note;
  return res;
}


/** The outer state for b/scale: on the extended backend (b split or copied there), else on the host. */
function startState<V, S>(o: RefinedSolveOptions<V, S>, rhs: Rhs, ext: ExtendedPrecisionResidual<V> | undefined): OuterState<V> {
  const b = rhs.vector ?? rhs.values!;
  if (ext) return ext.start(b, o.x0, { shift: -Math.log2(rhs.scale) });
  const v = rhs.values as Float64Array;
  return new HostRefinement(o.hostOperator!, rhs.scale === 1 ? v : v.map((t) => t / rhs.scale), o.x0, o.innerSpace);
}

async function refinedSolveInRange<V, S>(o: RefinedSolveOptions<V, S>, rhs: Rhs & { ext: ExtendedPrecisionResidual<V> | undefined; t0: number }): Promise<RefinedSolveResult | RefinedSolveDeviceResult> {
  const { ext, t0, bNorm } = rhs;
  const n = o.innerOperator.rows;
  const rtol = o.rtol ?? 1e-10;
  const atol = o.atol ?? 0;
  if (!(rtol >= 0) || !(atol >= 0)) throw new InvalidParameterError('refinedSolve rtol/atol', 'numbers ≥ 0', `${rtol}/${atol}`);
  // −1 ran no outer step ('max-iterations'), 1.5 ran as 2 (session 13); the Krylov solvers refuse both
  const maxOuter = o.maxOuterIterations;
  if (maxOuter !== undefined && !(Number.isSafeInteger(maxOuter) && maxOuter >= 0)) throw new InvalidParameterError('refinedSolve maxOuterIterations', 'an integer ≥ 0', maxOuter);
  const innerOpts = o.inner ?? {};
  const innerMethod = innerOpts.method ?? 'gmres';
  const solver = { cg, gmres, bicgstab, bicg }[innerMethod];
  if (!solver) throw new InvalidParameterError('refinedSolve inner.method', "'cg' | 'gmres' | 'bicgstab' | 'bicg'", innerMethod);
  if (!ext && !o.hostOperator) {
    throw new InvalidParameterError('refinedSolve hostOperator', 'a float64 host operator (the inner operator offers no extended-precision residual)', 'none');
  }
  const base: Book = {
    iterations: 0,
    bNorm,
    history: [],
    stats: newStats(),
    method: `refined(${innerMethod}, ${o.innerSpace.precision})`,
    outerIterations: 0,
    innerIterations: 0,
    inner: [],
    outerPrecision: ext ? ext.precision : 'f64 on the host',
    hostMatvecs: 0,
  };
  base.stats.readbacks += rhs.readbacks;
  const device = o.output === 'device';
  const finish = (x: Float64Array | DeviceSolution, reason: StopReason, trueResidual: number, detail?: string): RefinedSolveResult | RefinedSolveDeviceResult => {
    base.stats.ms = performance.now() - t0;
    const res = { ...base, x, converged: reason === 'converged', reason, trueResidual } as RefinedSolveResult | RefinedSolveDeviceResult;
    if (detail !== undefined) res.detail = detail;
    return res;
  };
  /** x without a solve (b = 0 or non-finite): on the host, or a device vector of it. */
  const early = async (x: Float64Array | undefined): Promise<Float64Array | DeviceSolution> => {
    if (!device) return x?.slice() ?? new Float64Array(n);
    const st = ext!.start(new Float64Array(n), x);
    try {
      // no solve follows to surface an out-of-memory of x: this call reports it, not the caller's next use
      await st.settle?.();
      return st.takeSolution!();
    } finally {
      st.dispose();
    }
  };
  if (!Number.isFinite(bNorm)) return finish(await early(o.x0), 'non-finite', Number.NaN, `refinedSolve: b contains non-finite values (‖b‖ = ${bNorm})`);
  if (bNorm === 0) return finish(await early(undefined), 'converged', 0, 'b = 0, so x = 0');
  const state = startState(o, rhs, ext);
  try {
    const tol = Math.max(rtol * bNorm, atol);
    const reliable = innerMethod === 'cg' && innerOpts.reliable !== false;
    if (reliable) base.method = `refined(cg reliable, ${o.innerSpace.precision})`;
    let out = reliable ? await reliableLoop(o, state, base, tol) : await outerLoop(o, state, base, { solver, tol });
    if (reliable && (out.reason === 'breakdown' || out.reason === 'non-finite') && !o.signal?.aborted) {
      // the one float32 recurrence stagnated (too inaccurate for this matrix, e.g. bcsstk01 at
      // 1e-10) or overflowed (A·1e-30 on the H100: its correction x ~ 1e30 gave NaN, returned as x):
      // go on from the best x with restarted refinement, whose fresh inner solves do not carry
      // the recurrence's drift
      if (out.reason === 'non-finite') state.restoreBest();
      const why = out.detail;
      base.method = `refined(cg reliable → restarted, ${o.innerSpace.precision})`;
      out = await outerLoop(o, state, base, { solver, tol, resume: true });
      if (out.reason !== 'converged' && why) out.detail = `${out.detail ? `${out.detail}; ` : ''}before: ${why}`;
    }
    if (out.reason === 'non-finite') {
      state.restoreBest(); // never a NaN x: the best finite iterate, said in the detail
      out.detail = `${out.detail ? `${out.detail}; ` : ''}x is the best finite iterate`;
    }
    const x = device ? state.takeSolution!() : await state.solution();
    base.stats.readbacks += state.readbacks; // outer-state synchronisations, the final x included
    base.hostMatvecs = state.hostMatvecs ?? 0;
    return finish(x, out.reason, out.rn, out.detail);
  } finally {
    state.dispose();
  }
}

function checkShapes<V, S>(o: RefinedSolveOptions<V, S>): number {
  const n = o.innerOperator.rows;
  if (o.innerOperator.cols !== n) throw new DimensionMismatchError('refinedSolve: square innerOperator, cols', n, o.innerOperator.cols);
  const A = o.hostOperator;
  assertUsableOperator('refinedSolve innerOperator', o.innerOperator);
  if (A) assertUsableOperator('refinedSolve hostOperator', A);
  if (o.inner?.preconditioner) assertUsableOperator('refinedSolve inner.preconditioner', o.inner.preconditioner);
  if (A && (A.rows !== n || A.cols !== n)) throw new DimensionMismatchError('refinedSolve: hostOperator shape', `${n}x${n}`, `${A.rows}x${A.cols}`);
  const bn = isHostArray(o.b) ? o.b.length : o.b.n;
  if (bn !== n) throw new DimensionMismatchError('refinedSolve: b', n, bn);
  if (o.x0 && o.x0.length !== n) throw new DimensionMismatchError('refinedSolve: x0', n, o.x0.length);
  return n;
}
