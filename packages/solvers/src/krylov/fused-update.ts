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
