/**
 * A CSR matrix for the df64 residual product: row pointers, columns, values as f32 hi and,
 * only when some value is not exact in f32, an f32 lo array (hi + lo keeps 48 bits of each
 * float64 value). Own copy: 4·(rows + 1) + 8·nnz device bytes, + 4·nnz with the lo array.
 * Shared with a single-block CSR operator (its row pointers, columns and float32 values are
 * exactly these arrays): only the lo array, 0 or 4·nnz bytes.
 * @module
 */
import { type CsrMatrix, DimensionMismatchError, GpuSparseError, ResourceLimitError } from '@gpusparse/formats';
import { signature } from '../kernels/wgsl/index';
import type { GpuBuf } from '../memory/buffers';
import { Uniforms } from '../memory/recorder';
import { uploadF32, uploadU32, validateCsrIndices } from '../memory/upload';
import type { Df64Blas, Df64Vector } from './blas';
import { DF_WG } from './blas.kernel';
import { RESIDUAL_BINDINGS, residualWgsl } from './residual.kernel';

/**
 * Invocations per row: a power of two, 1 … 32, with 4–8 non-zeros per invocation on rows of
 * the mean length (8 and more before the count doubles). The lanes of a row meet in a df64 tree in
 * workgroup memory, log2(lanes) levels of df_add with a barrier each, which costs about as much
 * as the products themselves: with one non-zero per lane (the rule before, lanes ≈ mean row
 * length) the 27-point stencil ran 32 lanes and its residual took 69 ms on lavapipe against
 * 7.1 ms with 4 lanes (5.0 ms against a 0.17 ms float32 product on the H100).
 * @example residualLanes(1_728_000, 45_900_000) // 4 (27 per row)
 */
export function residualLanes(rows: number, nnz: number): number {
  const mean = rows > 0 ? nnz / rows : 0;
  let l = 1;
  while (l < 32 && l * 8 <= mean) l *= 2;
  return l;
}

/** Device arrays of a float32 CSR upload that the df64 residual can read instead of its own. */
export interface SharedCsrArrays {
  readonly rowPtr: GpuBuf;
  readonly colIdx: GpuBuf;
  /** fl32 of every value, in CSR order. */
  readonly values: GpuBuf;
}

/** CSR on the device for df64 residuals. */
export class Df64Csr {
  /** True when an f32 lo array was uploaded (some value is not exact in f32). */
  readonly hasLo: boolean;
  /** Device bytes this object added (the lo array only, when the arrays are shared). */
  readonly bytes: number;
  /** True when row pointers, columns and hi values are an operator's own buffers. */
  readonly shared: boolean;
  readonly lanes: number;
  private readonly bufs: { rowPtr: GpuBuf; col: GpuBuf; hi: GpuBuf; lo: GpuBuf | undefined };

  /**
   * Upload `a` (validated), or only its lo array when `share` holds the float32 CSR arrays of
   * the same matrix (a single-block CSR operator's upload). Cost O(rows + nnz) host work and
   * the transfer of {@link bytes}.
   * @throws ResourceLimitError when the column or value array exceeds one storage binding or buffer
   */
  constructor(
    readonly d: Df64Blas,
    readonly a: CsrMatrix,
    share?: SharedCsrArrays,
  ) {
    validateCsrIndices(a, 'Df64Csr');
    const nnz = a.values.length;
    const limit = Math.min(d.ctx.limits.maxStorageBufferBindingSize, d.ctx.limits.maxBufferSize);
    if (nnz * 4 > limit) {
      throw new ResourceLimitError('df64 residual matrix (column and value arrays)', nnz * 4, limit, 'the df64 residual binds each array whole; refine on the host (refinedSolve extended: false)');
    }
    const hi = Float32Array.from(a.values);
    const lo = new Float32Array(nnz);
    let needLo = false;
    for (let k = 0; k < nnz; k++) {
      const v = a.values[k]!;
      lo[k] = Number.isFinite(hi[k]!) ? Math.fround(v - hi[k]!) : 0;
      if (lo[k] !== 0) needLo = true;
    }
    this.hasLo = needLo;
    this.lanes = residualLanes(a.rows, nnz);
    const ctx = d.ctx;
    this.shared = share !== undefined && nnz > 0;
    this.bufs = {
      rowPtr: this.shared ? share!.rowPtr : uploadU32(ctx, a.rowPtr, 'df64-rowptr'),
      col: this.shared ? share!.colIdx : uploadU32(ctx, a.colIdx, 'df64-col'),
      hi: this.shared ? share!.values : uploadF32(ctx, nnz ? hi : new Float32Array(1), 'df64-a-hi'),
      lo: needLo ? uploadF32(ctx, lo, 'df64-a-lo') : undefined,
    };
    this.bytes = (this.shared ? 0 : 4 * (a.rows + 1) + 8 * nnz) + (needLo ? 4 * nnz : 0);
  }

  /** r = b − A·x in df64 (one dispatch; x, b, r distinct). */
  residual(x: Df64Vector, b: Df64Vector, r: Df64Vector): void {
    const { rows, cols } = this.a;
    if (x.n !== cols) throw new DimensionMismatchError('df64 residual x', cols, x.n);
    if (b.n !== rows) throw new DimensionMismatchError('df64 residual b', rows, b.n);
    if (r.n !== rows) throw new DimensionMismatchError('df64 residual r', rows, r.n);
    if (r.buf.id === x.buf.id || r.buf.id === b.buf.id) throw new GpuSparseError('df64 residual: expected r distinct from x and b, got an alias');
    const { mode } = this.d;
    const p = this.d.pipe(`residual-${this.lanes}-${this.hasLo ? 'lo' : 'hi'}`, () => residualWgsl(mode, this.lanes, this.hasLo), signature(RESIDUAL_BINDINGS));
    const u = new Uniforms();
    u.u[0] = rows;
    const { rowPtr, col, hi, lo } = this.bufs;
    this.d.ctx.recorder.dispatch(p, [rowPtr, col, hi, lo ?? hi, x.buf, b.buf, r.buf], u, Math.ceil(rows / (DF_WG / this.lanes)));
  }

  /** Return the buffers this object uploaded to the pool (shared ones stay with their owner). */
  dispose(): void {
    const { rowPtr, col, hi, lo } = this.bufs;
    if (!this.shared) for (const b of [rowPtr, col, hi]) b.dispose();
    lo?.dispose();
  }
}
