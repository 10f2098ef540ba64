/**
 * Optional fused kernels a vector space may offer beyond {@link VectorSpace}: solvers look for
 * them at run time and fall back to the plain operations (same arithmetic) when absent.
 * @module
 */
import type { ScalarLike, VectorSpace } from '@gpusparse/formats';

/** CG's update in one pass: x += α·p, r −= α·q, returning ⟨r, r⟩ of the updated r. */
export interface CgUpdateSpace<V, S> {
  cgUpdate(alpha: ScalarLike<S>, p: V, q: V, x: V, r: V): S;
}

/**
 * x += α·p, r −= α·q and ⟨r, r⟩: fused when the space offers `cgUpdate` (the WebGPU space: two
 * dispatches instead of four), else two axpby and a dot. p, q, x, r distinct.
 * @example const rr = cgUpdate(space, alpha, p, q, x, r);
 */
export function cgUpdate<V, S>(space: VectorSpace<V, S>, alpha: S, p: V, q: V, x: V, r: V): S {
  const f = (space as Partial<CgUpdateSpace<V, S>>).cgUpdate;
  if (typeof f === 'function') return f.call(space, alpha, p, q, x, r);
  const minusAlpha = space.neg(alpha);
  space.axpby(alpha, p, 1, x);
  space.axpby(minusAlpha, q, 1, r);
  space.release(minusAlpha);
  return space.dot(r, r);
}

/** y = β·y + Σ c_j·x_j and ‖y‖ after it, in one pass over y. */
export interface CombineNormSpace<V, S> {
  combineNorm(coeffs: readonly ScalarLike<S>[], xs: readonly V[], beta: ScalarLike<S>, y: V): S;
}

/**
 * y = β·y + Σ c_j·x_j, returning ‖y‖: fused when the space offers `combineNorm` (the WebGPU
 * space: one dispatch and one read of y fewer), else combine and norm2. No x may alias y.
 * @example const hn = combineNorm(space, h, vs, -1, w);
 */
export function combineNorm<V, S>(space: VectorSpace<V, S>, coeffs: readonly ScalarLike<S>[], xs: readonly V[], beta: ScalarLike<S>, y: V): S {
  const f = (space as Partial<CombineNormSpace<V, S>>).combineNorm;
  if (typeof f === 'function') return f.call(space, coeffs, xs, beta, y);
  space.combine(coeffs, xs, beta, y);
  return space.norm2(y);
}
