/**
 * Growable triplet storage for the reader and the final CSR assembly with symmetric expansion.
 * @module
 */
import { ResourceLimitError } from '../core/errors';
import type { CsrMatrix } from '../core/types';
import { csrFromTriplets } from '../csr/csr';
import type { MatrixMarketSymmetry } from './types';

const MAX_INT32 = 2147483647;

/**
 * Coordinate triplets in typed arrays that double when full (amortised O(1) push, at most 2×
 * the final memory while growing). 16 bytes per entry.
 */
export class TripletBuffer {
  rows = new Int32Array(0);
  cols = new Int32Array(0);
  values = new Float64Array(0);
  length = 0;

  /** Make room for at least `n` entries in total. */
  reserve(n: number): void {
    if (n <= this.rows.length) return;
    const cap = Math.min(MAX_INT32, Math.max(n, 16));
    const r = new Int32Array(cap);
    const c = new Int32Array(cap);
    const v = new Float64Array(cap);
    r.set(this.rows.subarray(0, this.length));
    c.set(this.cols.subarray(0, this.length));
    v.set(this.values.subarray(0, this.length));
    this.rows = r;
    this.cols = c;
    this.values = v;
  }

  /**
   * Append one entry (0-based indices). Growing past `maxBytes` (the new arrays plus the old
   * ones being copied) throws ResourceLimitError instead of letting the allocation fail.
   */
  push(i: number, j: number, v: number, maxBytes = Number.POSITIVE_INFINITY): void {
    const k = this.length;
    if (k === this.rows.length) {
      if (k >= MAX_INT32) throw new RangeError(`more than ${MAX_INT32} entries`);
      const cap = Math.min(MAX_INT32, k * 2);
      if (16 * (cap + k) > maxBytes) {
        throw new ResourceLimitError(`Matrix Market triplets (${k} entries read, growing to ${cap})`, 16 * (cap + k), maxBytes, 'free memory or use a machine with more');
      }
      this.reserve(cap);
    }
    this.rows[k] = i;
    this.cols[k] = j;
    this.values[k] = v;
    this.length = k + 1;
  }
}

/**
 * Canonical CSR from the stored triplets: for symmetric and hermitian storage every off-diagonal
 * entry (i, j) also yields (j, i) with the same value, for skew-symmetric with the negated value.
 * Duplicates are summed by {@link csrFromTriplets}. O(entries + rows + cols).
 * Throws RangeError when the expanded matrix has more than 2^31 − 1 entries.
 */
export function assembleCsr(rows: number, cols: number, t: TripletBuffer, symmetry: MatrixMarketSymmetry): CsrMatrix {
  const n = t.length;
  const ri = t.rows.subarray(0, n);
  const ci = t.cols.subarray(0, n);
  const v = t.values.subarray(0, n);
  if (symmetry === 'general') return csrFromTriplets(rows, cols, ri, ci, v);
  let off = 0;
  for (let k = 0; k < n; k++) if (ri[k] !== ci[k]) off++;
  const total = n + off;
  if (total > MAX_INT32) throw new RangeError(`${total} entries after symmetric expansion`);
  const sign = symmetry === 'skew-symmetric' ? -1 : 1;
  const r2 = new Int32Array(total);
  const c2 = new Int32Array(total);
  const v2 = new Float64Array(total);
  r2.set(ri);
  c2.set(ci);
  v2.set(v);
  let w = n;
  for (let k = 0; k < n; k++) {
    const i = ri[k]!;
    const j = ci[k]!;
    if (i === j) continue;
    r2[w] = j;
    c2[w] = i;
    // mirrored entry: a_ji = a_ij (symmetric, hermitian with real data) or −a_ij (skew)
    v2[w] = sign * v[k]!;
    w++;
  }
  return csrFromTriplets(rows, cols, r2, c2, v2);
}
