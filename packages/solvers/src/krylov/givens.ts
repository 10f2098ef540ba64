/**
 * The small least-squares problem of GMRES, min ‖β·e₁ − H·y‖, solved on the host in float64
 * with Givens rotations. Hessenberg columns arrive in batches (one readback per check), so the
 * device never waits for the rotations.
 * @module
 */

/** Outcome of adding one Hessenberg column. */
export interface ColumnStatus {
  /** |g_{j+1}|: the residual norm of the least-squares problem after this column. */
  estimate: number;
  /** The column made R singular (R[j][j] = 0): the column cannot be used. */
  singular: boolean;
}

/**
 * Incremental QR of an (m+1)×m upper Hessenberg matrix by Givens rotations.
 * Cost: O(j) flops to add column j, O(k²) for the final back-substitution.
 * @example
 * const ls = new GivensLeastSquares(30, beta);
 * const st = ls.addColumn([h00, h10]); // st.estimate = residual after 1 column
 * const y = ls.solve(1);
 */
export class GivensLeastSquares {
  private readonly cs: Float64Array;
  private readonly sn: Float64Array;
  private readonly g: Float64Array;
  /** R stored column by column: r[j] holds R[0..j][j]. */
  private readonly r: Float64Array[] = [];

  constructor(m: number, beta: number) {
    this.cs = new Float64Array(m);
    this.sn = new Float64Array(m);
    this.g = new Float64Array(m + 1);
    this.g[0] = beta;
  }

  /** Columns accepted so far. */
  get columns(): number {
    return this.r.length;
  }

  /** Add column j = columns (h has j + 2 entries: H[0..j+1][j]). */
  addColumn(h: readonly number[]): ColumnStatus {
    const j = this.r.length;
    const col = Float64Array.from(h);
    const { cs, sn, g } = this;
    for (let i = 0; i < j; i++) {
      // apply earlier rotation i to rows i, i+1
      const a = col[i]!;
      const b = col[i + 1]!;
      col[i] = cs[i]! * a + sn[i]! * b;
      col[i + 1] = -sn[i]! * a + cs[i]! * b;
    }
    const a = col[j]!;
    const b = col[j + 1]!;
    const rho = Math.hypot(a, b);
    if (rho === 0) return { estimate: Math.abs(g[j]!), singular: true };
    cs[j] = a / rho;
    sn[j] = b / rho;
    col[j] = rho;
    g[j + 1] = -sn[j]! * g[j]!;
    g[j] = cs[j]! * g[j]!;
    this.r.push(col.subarray(0, j + 1));
    return { estimate: Math.abs(g[j + 1]!), singular: false };
  }

  /** y solving R[0..k)·y = g[0..k) by back-substitution (k ≤ columns). */
  solve(k: number): Float64Array {
    const y = new Float64Array(k);
    for (let i = k - 1; i >= 0; i--) {
      let s = this.g[i]!;
      for (let c = i + 1; c < k; c++) s -= this.r[c]![i]! * y[c]!;
      y[i] = s / this.r[i]![i]!;
    }
    return y;
  }
}
