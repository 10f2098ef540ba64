/**
 * The identity preconditioner M⁻¹ = I.
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';

/**
 * M⁻¹ = I on vectors of length n: z = r (one copy). Useful as a baseline and to test that a
 * preconditioned path matches the plain one. Symmetric, so `applyTranspose` is provided.
 * Cost: one vector copy per apply.
 * @example
 * const res = await cg(space, op, b, { preconditioner: identityPreconditioner(space, op.rows) });
 */
export function identityPreconditioner<V, S>(space: VectorSpace<V, S>, n: number): LinearOperator<V> {
  return {
    rows: n,
    cols: n,
    label: 'identity',
    apply: (x, y) => space.copy(x, y),
    applyScaled: (alpha, x, beta, y) => space.axpby(alpha, x, beta, y),
    applyTranspose: (x, y) => space.copy(x, y),
  };
}
