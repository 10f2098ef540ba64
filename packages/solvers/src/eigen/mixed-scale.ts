/**
 * {@link eigsMixed} on a badly scaled matrix (A·1e-30, A·1e30): the problem is solved as
 * (2^s·A)·v = (2^s·λ)·v, an exact power-of-two scaling — no mantissa bit of A, of a product or of
 * λ changes — chosen so that 2^s·A is of order one, and the eigenvalues, residual norms and
 * bounds are scaled back. Why: float32 norms of a tiny A·v underflow (the fast phase and the
 * 'jd' corrections lose their directions: A·1e-30 ended 'max-iterations' after 50 polish
 * iterations), and a df64 polish operator of a tiny A loses its parts below float32's normal
 * range where the device flushes them (NVIDIA).
 * The scale: `devicePolish.scale` when the polish operator already multiplies by 2^s·A;
 * otherwise one probe product A·1 on the fast space whose norm is read (one scalar readback);
 * when ‖A·1‖/√n reads below 2^-32 (row sums that cancel) a second with v = ±1 (uploaded); only
 * when that is still outside [2^-32, 2^32] (or 0, or overflows) is A·v read back (one vector)
 * for its float64 norm. Within that range nothing is scaled: the solve
 * is the unscaled one, bit for bit.
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import { InvalidParameterError, unverifiedKernelOf, type VerifiedKernelSource } from '@gpusparse/formats';
import { returnedVoid } from '../common/operator-check';
import type { MixedEigenOptions, MixedEigenResult } from './mixed-types';

/** ‖A·v‖/‖v‖ of the probe within [2^-32, 2^32]: no scaling. */
const UNSCALED = 2 ** 32;

/** The probe vector: ±1 by a multiplicative hash of the index (not constant: A·1 = 0 for a Laplacian); 4 bytes per entry on the host. */
function probeValues(n: number): Float32Array {
  const v = new Float32Array(n);
  for (let i = 0; i < n; i++) v[i] = (Math.imul(i + 1, 0x9e3779b1) >>> 31) === 1 ? 1 : -1;
  return v;
}

/** ‖x‖₂ in float64 without overflow or underflow (scaled by max|xᵢ|). */
function norm64(x: Float64Array): number {
  let m = 0;
  for (const t of x) m = Math.max(m, Math.abs(t));
  if (!(m > 0) || !Number.isFinite(m)) return m;
  let s = 0;
  for (const t of x) s += (t / m) ** 2;
  return m * Math.sqrt(s);
}

/** The power of two 2^-round(log2 r) (1 for r = 0 or non-finite). */
function inversePowerOfTwo(r: number): number {
  return r > 0 && Number.isFinite(r) ? 2 ** -Math.round(Math.log2(r)) : 1;
}

/**
 * The power of two eigsMixed solves at (see the module comment) and the products and readbacks
 * it cost. O(n) host work for the probe vector; one product.
 */
export async function problemScale<V, S>(opts: MixedEigenOptions<V, S>): Promise<{ scale: number; matvecs: number; readbacks: number }> {
  const given = opts.devicePolish?.scale;
  if (given !== undefined) {
    if (!(given > 0 && Number.isFinite(given) && 2 ** Math.round(Math.log2(given)) === given)) throw new InvalidParameterError('eigsMixed devicePolish.scale', 'a power of two (the polish operator multiplies by scale·A)', given);
    return { scale: given, matvecs: 0, readbacks: 0 };
  }
  const { fastOperator: a, fastSpace: space } = opts;
  const n = a.rows;
  const v = space.create(n);
  const w = space.create(n);
  const cost = { matvecs: 0, readbacks: 0 };
  const inRange = (r: number) => r >= 1 / UNSCALED && r <= UNSCALED;
  /** ‖A·v‖/√n read in the fast space (w = A·v). */
  const ratio = async (): Promise<number> => {
    returnedVoid(a.apply(v, w), 'eigsMixed fastOperator', 'apply', w); // w = A·v
    cost.matvecs++;
    cost.readbacks++;
    const nrm = space.norm2(w);
    const r = (await space.read(nrm)) / Math.sqrt(n);
    space.release(nrm);
    return r;
  };
  try {
    // v = 1 first: made on the device (the ±1 upload cost 14 ms at n = 1.3 M on the H100 against
    // 1.5 ms for a product); its product vanishes where row sums do (a graph Laplacian), then ±1
    space.fill(v, 1);
    let r = await ratio();
    if (inRange(r)) return { scale: 1, ...cost };
    if (!(r > UNSCALED)) {
      space.write(v, probeValues(n));
      r = await ratio();
      if (inRange(r)) return { scale: 1, ...cost };
    }
    // the fast space's norm may have under- or overflowed: A·v's own float64 norm decides
    cost.readbacks++;
    const r64 = norm64(await space.toArray(w)) / Math.sqrt(n);
    return { scale: inRange(r64) ? 1 : inversePowerOfTwo(r64), ...cost };
  } finally {
    space.release(v);
    space.release(w);
  }
}

/**
 * y = s·A·x: `a` with every product scaled by the power of two s (fused into applyScaled), its
 * diagonal scaled, and, given the operator's `space`, a tuned operator's verified-kernel
 * capability kept (its products scaled there).
 */
export function scaledOperator<V, S>(a: LinearOperator<V>, s: number, where: string, space?: VectorSpace<V, S>): LinearOperator<V> & Partial<VerifiedKernelSource<V>> {
  const diagonal = a.diagonal?.bind(a);
  const op: LinearOperator<V> & Partial<VerifiedKernelSource<V>> = {
    rows: a.rows,
    cols: a.cols,
    label: `2^${Math.log2(s)}·${a.label ?? 'A'}`,
    apply: (x, y) => returnedVoid(a.applyScaled(s, x, 0, y), where, 'applyScaled', y), // y = s·A·x
    applyScaled: (alpha, x, beta, y) => returnedVoid(a.applyScaled(alpha * s, x, beta, y), where, 'applyScaled', y), // y = alpha·s·A·x + beta·y
    ...(diagonal ? { diagonal: () => diagonal().map((d) => d * s) } : {}),
  };
  const src = a as LinearOperator<V> & Partial<VerifiedKernelSource<V>>;
  if (space && typeof src.runsUnverified === 'function') {
    op.runsUnverified = () => unverifiedKernelOf(a) !== undefined;
    op.applyVerified = (x, y) => {
      src.applyVerified!(x, y);
      space.axpby(0, x, s, y); // y = s·(A·x)
    };
    op.fallBackToVerified = (why) => src.fallBackToVerified!(why);
    Object.defineProperty(op, 'verifiedLabel', { get: () => src.verifiedLabel });
    Object.defineProperty(op, 'activeLabel', { get: () => src.activeLabel });
  }
  return op;
}

/**
 * eigsMixed's options for (s·A): every operator scaled (the device polish's only when it does not
 * already multiply by s·A), the diagonal and the absolute tolerances × s; relative ones kept.
 */
export function scaledOptions<V, S>(opts: MixedEigenOptions<V, S>, s: number): MixedEigenOptions<V, S> {
  const dp = opts.devicePolish;
  const out: MixedEigenOptions<V, S> = {
    ...opts,
    fastOperator: scaledOperator(opts.fastOperator, s, 'eigsMixed fastOperator', opts.fastSpace),
  };
  if (opts.hostOperator) out.hostOperator = scaledOperator(opts.hostOperator, s, 'eigsMixed hostOperator');
  if (dp) {
    const { scale: _done, ...rest } = dp;
    out.devicePolish = dp.scale !== undefined ? rest : { ...rest, operator: scaledOperator(dp.operator, s, 'eigsMixed devicePolish.operator', dp.space) };
  }
  if (opts.diagonal) out.diagonal = opts.diagonal.map((d) => d * s);
  if (opts.residualTol !== undefined) out.residualTol = opts.residualTol * s;
  else if (opts.rtol === undefined) out.residualTol = 1e-8 * s; // the absolute default, in A's units
  if (opts.atol !== undefined) out.atol = opts.atol * s;
  if (opts.onIteration) {
    const cb = opts.onIteration;
    out.onIteration = (info) => cb({ ...info, values: info.values.map((x) => x / s), residualNorms: info.residualNorms.map((x) => x / s) });
  }
  return out;
}

/** The scaled problem's result in A's units (values, residual norms, history, phases, bounds ÷ s). */
export function unscaledResult(r: MixedEigenResult, s: number): MixedEigenResult {
  const d = (x: number) => x / s;
  const out: MixedEigenResult = {
    ...r,
    values: r.values.map(d),
    residualNorms: r.residualNorms.map(d),
    history: r.history.map((h) => ({ ...h, values: h.values.map(d), residualNorms: h.residualNorms.map(d) })),
    phases: r.phases.map((p) => ({ ...p, values: p.values.map(d), residualNorms: p.residualNorms.map(d) })),
    method: `${r.method} at 2^${Math.log2(s)}·A`,
  };
  if (r.bounds) out.bounds = { ...r.bounds, bound: r.bounds.bound.map(d), guardValues: r.bounds.guardValues.map(d), guardResidualNorms: r.bounds.guardResidualNorms.map(d), allowance: d(r.bounds.allowance) };
  if (r.tolerance) {
    const t = r.tolerance;
    out.tolerance = { ...t, atol: d(t.atol), threshold: d(t.threshold), ...(t.normEstimate === undefined ? {} : { normEstimate: d(t.normEstimate) }), ...(t.energyTol === undefined ? {} : { energyTol: d(t.energyTol) }) };
  }
  out.detail = `${r.detail ? `${r.detail}; ` : ''}solved as 2^${Math.log2(s)}·A (an exact power-of-two scaling: A's scale is outside float32's comfortable range) and scaled back`;
  return out;
}
