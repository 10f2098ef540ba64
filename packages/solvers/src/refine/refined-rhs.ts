/**
 * The right-hand side of {@link refinedSolve}: host values or a device vector, its norm, and the
 * power of two it is divided by when max|b| lies outside what the float32 / df64 state holds.
 * @module
 */
import { DimensionMismatchError, type ExtendedPrecisionResidual, type ExtendedVector, InvalidParameterError } from '@gpusparse/formats';
import { norm64 } from './host-refinement';

/** The right-hand side as refinedSolveInRange takes it: host values or a device vector, its norm and scale. */
export interface Rhs {
  /** Host values (unscaled), or undefined for a device vector. */
  values?: ArrayLike<number>;
  vector?: ExtendedVector;
  /** ‖b/scale‖₂. */
  bNorm: number;
  /** 1 or the power of two b is divided by. */
  scale: number;
  /** Synchronisations spent on b (1 for the norm of a device vector). */
  readbacks: number;
}

export async function rhsOf<V>(o: { b: ArrayLike<number> | ExtendedVector; output?: 'host' | 'device' }, ext: ExtendedPrecisionResidual<V> | undefined, n: number): Promise<Rhs> {
  if (o.output !== undefined && o.output !== 'host' && o.output !== 'device') throw new InvalidParameterError('refinedSolve output', "'host' | 'device'", String(o.output));
  if (o.output === 'device' && !ext?.acceptsVector) {
    throw new InvalidParameterError("refinedSolve output 'device'", 'an inner operator with a device extended-precision residual (a GPU operator built from CSR, df64)', ext ? ext.precision : 'none (x is kept on the host)');
  }
  if (!isHostArray(o.b)) {
    if (!ext?.acceptsVector?.(o.b) || !ext.vectorNorm) {
      throw new InvalidParameterError('refinedSolve b', "host values, or a device vector of the inner operator's extended-precision backend", ext ? `a vector that ${ext.precision} does not take` : 'a vector, but the inner operator has no extended-precision residual');
    }
    const norm = await ext.vectorNorm(o.b);
    const scale = norm > 0 && Number.isFinite(norm) && (norm < 2 ** -60 || norm > 2 ** 60) ? 2 ** Math.round(Math.log2(norm)) : 1;
    return { vector: o.b, bNorm: norm / scale, scale, readbacks: 1 };
  }
  const scale = rhsPowerOfTwo(o.b);
  const values = o.b;
  if (values.length !== n) throw new DimensionMismatchError('refinedSolve: b', n, values.length);
  const f64 = values instanceof Float64Array ? values : Float64Array.from(values);
  return { values: f64, bNorm: norm64(f64) / scale, scale, readbacks: 0 };
}

export function isHostArray(b: ArrayLike<number> | ExtendedVector): b is ArrayLike<number> {
  return typeof (b as ArrayLike<number>).length === 'number';
}

/** 1, or the power of two nearest max|b| when that lies outside [2^-60, 2^60]. O(n). */
export function rhsPowerOfTwo(b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < b.length; i++) m = Math.max(m, Math.abs(b[i]!));
  if (!(m > 0) || !Number.isFinite(m) || (m >= 2 ** -60 && m <= 2 ** 60)) return 1;
  return 2 ** Math.round(Math.log2(m));
}
