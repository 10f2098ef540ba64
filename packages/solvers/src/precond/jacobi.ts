/**
 * The Jacobi (diagonal) preconditioner M⁻¹ = diag(A)⁻¹.
 * @module
 */
import { DimensionMismatchError, InvalidMatrixError, type LinearOperator, NotSupportedError, type VectorSpace } from '@gpusparse/formats';

/** A diagonal entry that cannot be inverted (zero or non-finite). */
export class ZeroPivotError extends InvalidMatrixError {
  constructor(
    where: string,
    readonly row: number,
    readonly value: number,
    advice: string,
  ) {
    super(where, `row ${row}: expected a non-zero finite pivot, got ${value}. ${advice}`);
  }
}

/**
 * Jacobi preconditioner z = D⁻¹·r with D = diag(A), taken from `source.diagonal()` when `source`
 * is an operator, or given directly as a Float64Array. The inverse is computed in float64 and
 * stored once in the space (rounded to its precision). Symmetric: `applyTranspose` = `apply`.
 * Throws ZeroPivotError naming the first row whose diagonal entry is 0 or non-finite, and
 * NotSupportedError when the operator does not expose its diagonal.
 * Cost: setup O(n); each apply is one element-wise product (2 reads, 1 write).
 * @example
 * const m = jacobi(space, HostOperator.fromCsr(a));
 * const res = await cg(space, op, b, { preconditioner: m });
 */
export function jacobi<V, S>(space: VectorSpace<V, S>, source: LinearOperator<V> | Float64Array): LinearOperator<V> {
  let d: Float64Array;
  if (source instanceof Float64Array) d = source;
  else {
    if (typeof source.diagonal !== 'function') {
      throw new NotSupportedError(
        `jacobi: operator '${source.label ?? 'unlabelled'}' does not expose diagonal(); pass the diagonal as a Float64Array instead ` +
          '(e.g. csrDiagonal(a) from @gpusparse/formats)',
      );
    }
    if (source.rows !== source.cols) throw new DimensionMismatchError('jacobi: square operator, cols', source.rows, source.cols);
    d = source.diagonal();
    if (d.length !== source.rows) throw new DimensionMismatchError('jacobi: diagonal() length', source.rows, d.length);
  }
  const inv = new Float64Array(d.length);
  for (let i = 0; i < d.length; i++) {
    const v = d[i]!;
    if (v === 0 || !Number.isFinite(v)) {
      throw new ZeroPivotError('jacobi', i, v, 'Jacobi needs every diagonal entry non-zero: reorder the matrix, shift it, or use another preconditioner.');
    }
    inv[i] = 1 / v;
  }
  const invD = space.fromArray(inv);
  const n = d.length;
  const apply = (x: V, y: V): void => space.multiply(invD, x, y); // z = D⁻¹ ∘ r
  return {
    rows: n,
    cols: n,
    label: 'jacobi',
    apply,
    applyScaled: (alpha, x, beta, y) => {
      const t = space.create(n);
      space.multiply(invD, x, t); // t = D⁻¹·x
      space.axpby(alpha, t, beta, y); // y = α·t + β·y
      space.release(t);
    },
    applyTranspose: apply,
    diagonal: () => inv.slice(),
  };
}
