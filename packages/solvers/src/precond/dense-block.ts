/**
 * Dense factorisations of the small diagonal blocks of a block-Jacobi preconditioner, on the
 * host in float64 (factorised with ml-matrix, applied with hand-written substitutions so that
 * an apply allocates nothing).
 * @module
 */
import type { Matrix } from 'ml-matrix';
import { mlMatrix } from '../eigen/ml-matrix-lazy';
import { ZeroPivotError } from './jacobi';

/** A factorised b×b block: solve(rhs) overwrites rhs with B⁻¹·rhs, solveTranspose with B⁻ᵀ·rhs. */
export interface BlockFactor {
  readonly size: number;
  readonly kind: 'cholesky' | 'lu';
  solve(rhs: Float64Array): void;
  solveTranspose(rhs: Float64Array): void;
}

/** Which factorisation to use: 'auto' tries Cholesky on symmetric blocks and falls back to LU. */
export type BlockFactorization = 'auto' | 'cholesky' | 'lu';

function isSymmetric(a: number[][]): boolean {
  for (let i = 0; i < a.length; i++) for (let j = 0; j < i; j++) if (a[i]![j] !== a[j]![i]) return false;
  return true;
}

function flatten(m: Matrix): Float64Array {
  const n = m.rows;
  const out = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) out[i * n + j] = m.get(i, j);
  return out;
}

/**
 * Factorise one dense block (row-major `a`, first global row `row0` for error messages).
 * Throws ZeroPivotError naming the global row of a zero or tiny pivot (singular block).
 * Cost: O(b³) once; each solve O(b²).
 * @example
 * const f = factorBlock([[4, 1], [1, 3]], 0, 'auto'); // Cholesky
 * const x = Float64Array.of(1, 2); f.solve(x);
 */
export function factorBlock(a: number[][], row0: number, kind: BlockFactorization): BlockFactor {
  const b = a.length;
  let scale = 0;
  for (const row of a) for (const v of row) scale = Math.max(scale, Math.abs(v));
  const tiny = scale * b * Number.EPSILON;
  const where = `blockJacobi block at rows ${row0}..${row0 + b - 1}`;
  const advice = 'the diagonal block is singular: choose another block size, reorder the matrix, or use jacobi / another preconditioner.';
  if (kind !== 'lu' && isSymmetric(a)) {
    const { CholeskyDecomposition, Matrix } = mlMatrix();
    const chol = new CholeskyDecomposition(new Matrix(a));
    if (chol.isPositiveDefinite()) {
      const L = flatten(chol.lowerTriangularMatrix);
      for (let i = 0; i < b; i++) if (!(Math.abs(L[i * b + i]!) ** 2 > tiny)) throw new ZeroPivotError(where, row0 + i, L[i * b + i]! ** 2, advice);
      const solveChol = (x: Float64Array): void => {
        for (let i = 0; i < b; i++) {
          // forward: L·w = x
          let s = x[i]!;
          for (let j = 0; j < i; j++) s -= L[i * b + j]! * x[j]!;
          x[i] = s / L[i * b + i]!;
        }
        for (let i = b - 1; i >= 0; i--) {
          // backward: Lᵀ·y = w
          let s = x[i]!;
          for (let j = i + 1; j < b; j++) s -= L[j * b + i]! * x[j]!;
          x[i] = s / L[i * b + i]!;
        }
      };
      return { size: b, kind: 'cholesky', solve: solveChol, solveTranspose: solveChol };
    }
  }
  if (kind === 'cholesky') {
    throw new ZeroPivotError(where, row0, Number.NaN, 'Cholesky needs a symmetric positive definite block: use factorization "lu" or "auto".');
  }
  const { LuDecomposition, Matrix } = mlMatrix();
  const lu = new LuDecomposition(new Matrix(a));
  const L = flatten(lu.lowerTriangularMatrix);
  const U = flatten(lu.upperTriangularMatrix);
  const piv = lu.pivotPermutationVector.slice();
  for (let i = 0; i < b; i++) if (!(Math.abs(U[i * b + i]!) > tiny)) throw new ZeroPivotError(where, row0 + i, U[i * b + i]!, advice);
  const t = new Float64Array(b);
  return {
    size: b,
    kind: 'lu',
    // P·B = L·U: B⁻¹·x = U⁻¹·L⁻¹·P·x
    solve(x) {
      for (let i = 0; i < b; i++) t[i] = x[piv[i]!]!;
      for (let i = 0; i < b; i++) for (let j = 0; j < i; j++) t[i]! -= L[i * b + j]! * t[j]!;
      for (let i = b - 1; i >= 0; i--) {
        let s = t[i]!;
        for (let j = i + 1; j < b; j++) s -= U[i * b + j]! * t[j]!;
        t[i] = s / U[i * b + i]!;
      }
      x.set(t);
    },
    // B⁻ᵀ·x = Pᵀ·L⁻ᵀ·U⁻ᵀ·x
    solveTranspose(x) {
      for (let i = 0; i < b; i++) {
        let s = x[i]!;
        for (let j = 0; j < i; j++) s -= U[j * b + i]! * t[j]!;
        t[i] = s / U[i * b + i]!;
      }
      for (let i = b - 1; i >= 0; i--) for (let j = i + 1; j < b; j++) t[i]! -= L[j * b + i]! * t[j]!;
      for (let i = 0; i < b; i++) x[piv[i]!] = t[i]!;
    },
  };
}
