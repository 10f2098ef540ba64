/**
 * The host float64 side of iterative refinement (the CPU backend, user operators, and any
 * inner space without an extended-precision capability): x, b and r are Float64Arrays, the
 * residual is a float64 host product, the correction's right-hand side is uploaded and the
 * correction d read back each outer step.
 * @module
 */
import type { ExtendedRefinement, LinearOperator, VectorSpace } from '@gpusparse/formats';
import { returnedVoid } from '../common/operator-check';

/** ‖v‖₂ in float64, scaled when the plain sum of squares would over- or underflow. */
export function norm64(v: Float64Array): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  const r = Math.sqrt(s);
  // r = 0 too: squares below 1e-323 underflow to 0 (b = 1e-300 was "b = 0, so x = 0"); r = Inf
  // from squares that overflow (b = 1e300) as well, but not from an Inf or NaN entry
  if (!Number.isFinite(r) || r > 1e150 || r < 1e-150) {
    let scale = 0;
    for (let i = 0; i < v.length; i++) scale = Math.max(scale, Math.abs(v[i]!));
    if (scale === 0 || !Number.isFinite(scale)) return scale;
    let t = 0;
    for (let i = 0; i < v.length; i++) t += (v[i]! / scale) ** 2;
    return scale * Math.sqrt(t);
  }
  return r;
}

/** The outer state `refinedSolve` drives: an {@link ExtendedRefinement} whose update may wait. */
export interface OuterState<V> extends Omit<ExtendedRefinement<V>, 'update'> {
  update(alpha: number, d: V): void | Promise<void>;
  /** Float64 products on the host so far (absent: none). */
  readonly hostMatvecs?: number;
}

/** Refinement state on the host in float64. Per outer step: 1 host product, 1 upload, 1 download. */
export class HostRefinement<V, S> implements OuterState<V> {
  readbacks = 0;
  hostMatvecs = 0;
  private readonly x: Float64Array;
  private readonly r: Float64Array;
  private best: Float64Array | undefined;

  constructor(
    private readonly A: LinearOperator<Float64Array>,
    private readonly b: Float64Array,
    x0: Float64Array | undefined,
    private readonly space: VectorSpace<V, S>,
  ) {
    this.x = x0 ? x0.slice() : new Float64Array(b.length);
    this.r = b.slice(); // r = b − A·0 until the first residualNorm
  }

  residualNorm(): Promise<number> {
    this.hostMatvecs++;
    returnedVoid(this.A.apply(this.x, this.r), 'refinedSolve hostOperator', 'apply', this.r);
    for (let i = 0; i < this.r.length; i++) this.r[i] = this.b[i]! - this.r[i]!; // r = b − A·x (float64)
    return Promise.resolve(norm64(this.r));
  }

  correctionRhs(scale: number, out: V): void {
    this.space.write(out, this.r.map((v) => v * scale));
  }

  async update(alpha: number, d: V): Promise<void> {
    const dh = await this.space.toArray(d);
    this.readbacks++;
    for (let i = 0; i < dh.length; i++) this.x[i] = this.x[i]! + alpha * dh[i]!; // x = x + alpha·d (float64)
  }

  saveBest(): void {
    (this.best ??= new Float64Array(this.x.length)).set(this.x);
  }

  restoreBest(): void {
    if (this.best) this.x.set(this.best);
  }

  solution(): Promise<Float64Array> {
    return Promise.resolve(this.x);
  }

  dispose(): void {}
}
