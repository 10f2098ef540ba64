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

/** A CG step after q = A·p: ⟨p, q⟩, α = ρ/⟨p, q⟩, x += α·p, r −= α·q and ⟨r, r⟩ in one pass. */
export interface CgStepSpace<V, S> {
  cgStep(rho: ScalarLike<S>, p: V, q: V, x: V, r: V): { pq: S; rr: S };
}

/**
 * After q = A·p: π = ⟨p, q⟩, α = ρ/π, x += α·p, r −= α·q; returns π and ⟨r, r⟩ (the caller
 * owns both). Fused when the space offers `cgStep` (WebGPU: three dispatches instead of six),
 * else dot, div and {@link cgUpdate}. The update is recorded whatever π is: a caller that
 * must not update on a vanishing π checks it first with dot and cgUpdate instead.
 * @example const { pq, rr } = cgStep(space, rho, p, q, x, r);
 */
export function cgStep<V, S>(space: VectorSpace<V, S>, rho: S, p: V, q: V, x: V, r: V): { pq: S; rr: S } {
  const f = (space as Partial<CgStepSpace<V, S>>).cgStep;
  if (typeof f === 'function') return f.call(space, rho, p, q, x, r);
  const pq = space.dot(p, q);
  const alpha = space.div(rho, pq);
  const rr = cgUpdate(space, alpha, p, q, x, r);
  space.release(alpha);
  return { pq, rr };
}

/** A whole unpreconditioned CG iteration after q = A·p: {@link CgStepSpace.cgStep}, then p = r + (⟨r, r⟩/ρ)·p. */
export interface CgIterationSpace<V, S> {
  cgIteration(rho: S, p: V, q: V, x: V, r: V): { pq: S; rr: S };
}

/**
 * After q = A·p: π = ⟨p, q⟩, α = ρ/π, x += α·p, r −= α·q, ρ' = ⟨r, r⟩ and p = r + (ρ'/ρ)·p;
 * returns π and ρ' (the caller owns both). Fused when the space offers `cgIteration` (WebGPU:
 * three dispatches), else {@link cgStep}, div and axpby (the same arithmetic). Recorded whatever
 * π and ρ are: the caller checks them later (a vanishing one makes x, r, p non-finite).
 * @example const { pq, rr } = cgIteration(space, rho, p, q, x, r);
 */
export function cgIteration<V, S>(space: VectorSpace<V, S>, rho: S, p: V, q: V, x: V, r: V): { pq: S; rr: S } {
  const f = (space as Partial<CgIterationSpace<V, S>>).cgIteration;
  if (typeof f === 'function') return f.call(space, rho, p, q, x, r);
  const out = cgStep(space, rho, p, q, x, r);
  const beta = space.div(out.rr, rho);
  space.axpby(1, r, beta, p);
  space.release(beta);
  return out;
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

/** y = β·y + Σ c_j·x_j, h = ‖y‖ and v = (k/h)·y in two passes. */
export interface CombineNormalizeSpace<V, S> {
  combineNormalize(coeffs: readonly ScalarLike<S>[], xs: readonly V[], beta: ScalarLike<S>, y: V, v: V, k: number): S;
}

/**
 * y = β·y + Σ c_j·x_j, then v = (k/‖y‖)·y, returning ‖y‖ (the caller owns it): fused when the
 * space offers `combineNormalize` (the WebGPU space: two dispatches instead of three, the same
 * bits), else {@link combineNorm}, div and axpby. v distinct from y and every x.
 * @example const hn = combineNormalize(space, h, vs, -1, w, next, -1); // next = −w'/‖w'‖
 */
export function combineNormalize<V, S>(space: VectorSpace<V, S>, coeffs: readonly ScalarLike<S>[], xs: readonly V[], beta: ScalarLike<S>, y: V, v: V, k: number): S {
  const f = (space as Partial<CombineNormalizeSpace<V, S>>).combineNormalize;
  if (typeof f === 'function') return f.call(space, coeffs, xs, beta, y, v, k);
  const h = combineNorm(space, coeffs, xs, beta, y);
  const inv = space.div(k, h);
  space.axpby(inv, y, 0, v); // v = (k/h)·y
  space.release(inv);
  return h;
}
