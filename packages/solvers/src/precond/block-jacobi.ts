/**
 * Block-Jacobi preconditioner: dense blocks of size b along the diagonal of a CSR matrix,
 * factorised on the host in float64 (Cholesky for SPD blocks, LU with partial pivoting
 * otherwise). Entries outside the diagonal blocks are ignored.
 *
 * On the host the factors are applied directly ({@link blockJacobi}). For another space (the
 * GPU), the explicit block-diagonal inverse is built as a CSR matrix ({@link blockJacobiInverse})
 * and handed to an operator factory of that space, so that M⁻¹·r is one SpMV there
 * ({@link blockJacobiFor}); the solvers package never imports the GPU package itself.
 * @module
 */
import { type CsrMatrix, DimensionMismatchError, InvalidParameterError, type LinearOperator } from '@gpusparse/formats';
import { type BlockFactor, type BlockFactorization, factorBlock } from './dense-block';

/** Options of {@link blockJacobi}. */
export interface BlockJacobiOptions {
  /** Block size b ≥ 1 (the last block takes the remaining n mod b rows). */
  blockSize: number;
  /** Default 'auto': Cholesky on symmetric positive definite blocks, LU otherwise. */
  factorization?: BlockFactorization;
}

function checkSquare(a: CsrMatrix, opts: BlockJacobiOptions): void {
  if (a.rows !== a.cols) throw new DimensionMismatchError('blockJacobi: square matrix, cols', a.rows, a.cols);
  const b = opts.blockSize;
  if (!Number.isInteger(b) || b < 1) throw new InvalidParameterError('blockJacobi blockSize', 'an integer ≥ 1', b);
}

/** Factorise every diagonal block of `a`. O(n·b²) time and memory. */
function factorAll(a: CsrMatrix, opts: BlockJacobiOptions): BlockFactor[] {
  checkSquare(a, opts);
  const n = a.rows;
  const bs = opts.blockSize;
  const kind = opts.factorization ?? 'auto';
  const out: BlockFactor[] = [];
  for (let s = 0; s < n; s += bs) {
    const size = Math.min(bs, n - s);
    const block: number[][] = Array.from({ length: size }, () => new Array<number>(size).fill(0));
    for (let i = 0; i < size; i++) {
      for (let k = a.rowPtr[s + i]!; k < a.rowPtr[s + i + 1]!; k++) {
        const j = a.colIdx[k]! - s;
        if (j >= 0 && j < size) block[i]![j]! += a.values[k]!;
      }
    }
    out.push(factorBlock(block, s, kind));
  }
  return out;
}

/**
 * Block-Jacobi preconditioner M⁻¹ = blockdiag(A₁₁, A₂₂, ...)⁻¹ as a host (float64) operator.
 * Provides applyTranspose (usable with BiCG). Throws ZeroPivotError naming the row of a singular
 * block. Cost: setup O(n·b²); each apply O(n·b) flops (two triangular solves per block).
 * @example
 * const m = blockJacobi(a, { blockSize: 6 }); // bcsstk-type matrices: 6 dof per node
 * const res = await cg(new HostVectorSpace(), HostOperator.fromCsr(a), b, { preconditioner: m });
 */
export function blockJacobi(a: CsrMatrix, opts: BlockJacobiOptions): LinearOperator<Float64Array> {
  const factors = factorAll(a, opts);
  const n = a.rows;
  const bs = opts.blockSize;
  const run = (x: Float64Array, y: Float64Array, transpose: boolean): void => {
    if (x.length !== n) throw new DimensionMismatchError('blockJacobi apply x', n, x.length);
    if (y.length !== n) throw new DimensionMismatchError('blockJacobi apply y', n, y.length);
    if (y !== x) y.set(x);
    for (let t = 0; t < factors.length; t++) {
      const f = factors[t]!;
      const seg = y.subarray(t * bs, t * bs + f.size);
      if (transpose) f.solveTranspose(seg);
      else f.solve(seg); // z_t = A_tt⁻¹·r_t
    }
  };
  let tmp: Float64Array | undefined;
  return {
    rows: n,
    cols: n,
    label: `block-jacobi(${bs})`,
    apply: (x, y) => run(x, y, false),
    applyTranspose: (x, y) => run(x, y, true),
    applyScaled(alpha, x, beta, y) {
      const t = tmp ?? (tmp = new Float64Array(n));
      run(x, t, false);
      for (let i = 0; i < n; i++) y[i] = alpha * t[i]! + (beta === 0 ? 0 : beta * y[i]!); // y = α·M⁻¹·x + β·y
    },
  };
}

/**
 * The explicit block-diagonal inverse blockdiag(A₁₁⁻¹, A₂₂⁻¹, ...) as canonical CSR (n·b stored
 * entries), computed in float64. Feed it to any backend's operator constructor.
 * Cost: O(n·b²) time and memory.
 * @example
 * const inv = blockJacobiInverse(a, { blockSize: 4 }); // inv.rowPtr[1] === 4
 */
export function blockJacobiInverse(a: CsrMatrix, opts: BlockJacobiOptions): CsrMatrix {
  const factors = factorAll(a, opts);
  const n = a.rows;
  const bs = opts.blockSize;
  let nnz = 0;
  for (const f of factors) nnz += f.size * f.size;
  const rowPtr = new Int32Array(n + 1);
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  let w = 0;
  for (let t = 0; t < factors.length; t++) {
    const f = factors[t]!;
    const s = t * bs;
    const cols: Float64Array[] = [];
    for (let j = 0; j < f.size; j++) {
      const e = new Float64Array(f.size);
      e[j] = 1;
      f.solve(e); // column j of A_tt⁻¹
      cols.push(e);
    }
    for (let i = 0; i < f.size; i++) {
      for (let j = 0; j < f.size; j++) {
        colIdx[w] = s + j;
        values[w] = cols[j]![i]!;
        w++;
      }
      rowPtr[s + i + 1] = w;
    }
  }
  return { format: 'csr', rows: n, cols: n, rowPtr, colIdx, values };
}

/**
 * Block-Jacobi for any space: builds {@link blockJacobiInverse} and returns
 * `makeOperator(inverse)`, e.g. a GPU SpMV operator over the CSR inverse. The factory decides
 * the storage and precision; on a float32 device the explicit inverse is rounded to float32.
 * Cost: setup O(n·b²); each apply is one SpMV with n·b entries.
 * @example
 * const m = blockJacobiFor(a, { blockSize: 4, makeOperator: (inv) => gpuOperatorFromCsr(ctx, inv) });
 */
export function blockJacobiFor<V>(
  a: CsrMatrix,
  opts: BlockJacobiOptions & { makeOperator: (inverse: CsrMatrix) => LinearOperator<V> },
): LinearOperator<V> {
  const inv = blockJacobiInverse(a, opts);
  const op = opts.makeOperator(inv);
  if (op.rows !== a.rows || op.cols !== a.cols) {
    throw new DimensionMismatchError('blockJacobiFor: makeOperator result shape', `${a.rows}x${a.cols}`, `${op.rows}x${op.cols}`);
  }
  return op;
}
