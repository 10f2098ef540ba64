/**
 * Reverse compact diagonals and transposed access without data movement, seed 002 §3.2 and §4.
 *
 * The reverse of the k-th compact diagonal swaps the super/sub pair: Ã_k = (A̲_k ; Ā_{n−k}),
 * element t = a((t + k) mod n, t). It is the compact diagonal A_{(n−k) mod n} read from position
 * (t + k) mod n on (an upward wrap-around shift by k), so it is addressed, never copied:
 * Ã_k[t] = values[d(n−k)·n + (t + k) mod n]. The transpose B = Aᵀ has B_k = Ã_k (§4), so a
 * CDM matrix serves as its own transpose through {@link cdmTransposeView}.
 * @module
 */
import { DimensionMismatchError } from '../core/errors';
import { checkSpmvArgs } from '../dia/common';
import { type CdmMatrix, cdmDiagonalLookup } from './cdm';

/**
 * Index into m.values of the reverse compact diagonal element Ã_k[t] = a((t + k) mod n, t), or −1
 * when compact diagonal (n − k) mod n is not stored. O(1) with a lookup, O(dgX) without.
 * @example
 * m.values[cdmReverseIndex(m, 3, 0)]; // a₃₀ for n = 4
 */
export function cdmReverseIndex(m: CdmMatrix, k: number, t: number, lookup?: Int32Array): number {
  const n = m.rows;
  const kk = (n - k) % n;
  const d = lookup ? lookup[kk] : m.offsets.indexOf(kk);
  return d < 0 ? -1 : d * n + ((t + k) % n);
}

/**
 * The k-th compact diagonal A_k as a new vector (zeros when not stored). For inspection and tests;
 * kernels address m.values directly. O(n).
 * @example
 * cdmCompactDiagonal(m, 3); // [a₀₃, a₁₀, a₂₁, a₃₂] for n = 4
 */
export function cdmCompactDiagonal(m: CdmMatrix, k: number): Float64Array {
  const n = m.rows;
  const d = m.offsets.indexOf(k);
  return d < 0 ? new Float64Array(n) : m.values.slice(d * n, (d + 1) * n);
}

/**
 * The reverse compact diagonal Ã_k materialised (zeros when not stored), for inspection and
 * tests; {@link cdmReverseIndex} is the data-movement-free access. O(n).
 * @example
 * cdmReverseDiagonal(b, 3); // [b₃₀, b₀₁, b₁₂, b₂₃] for n = 4 (seed 002 §4)
 */
export function cdmReverseDiagonal(m: CdmMatrix, k: number): Float64Array {
  const n = m.rows;
  const out = new Float64Array(n);
  const lookup = cdmDiagonalLookup(m);
  for (let t = 0; t < n; t++) {
    const s = cdmReverseIndex(m, k, t, lookup);
    if (s >= 0) out[t] = m.values[s];
  }
  return out;
}

/**
 * The upward wrap-around shift v^{r_k} of seed 002 §4: out[t] = v[(t + k) mod n]. O(n).
 * @example
 * cdmShiftUp(Float64Array.from([30, 1, 12, 23]), 1); // [1, 12, 23, 30]
 */
export function cdmShiftUp(v: Float64Array, k: number): Float64Array {
  const n = v.length;
  const out = new Float64Array(n);
  if (n === 0) return out;
  const s = ((k % n) + n) % n;
  for (let t = 0; t < n; t++) out[t] = v[(t + s) % n];
  return out;
}

/** The transpose of a CDM matrix, read through the reverse compact diagonals of its storage. */
export interface CdmTransposeView {
  readonly rows: number;
  readonly cols: number;
  /** The matrix whose storage is read (not copied). */
  readonly base: CdmMatrix;
  /** Compact diagonal indices of Aᵀ, ascending: (n − k) mod n for each stored k of A. */
  readonly offsets: Int32Array;
  /** Index into base.values of Aᵀ's compact diagonal element B_k[t] (= Ã_k[t]), or −1. O(1). */
  index(k: number, t: number): number;
  /** Value of B_k[t] = (Aᵀ)(t, (t + k) mod n) = a((t + k) mod n, t); 0 when not stored. O(1). */
  get(k: number, t: number): number;
}

/**
 * View Aᵀ in CDM without moving data: B_k = Ã_k (seed 002 §4). O(n) to build the lookup.
 * @example
 * const bt = cdmTransposeView(a); bt.get(1, 0); // (Aᵀ)(0, 1) = a₁₀
 */
export function cdmTransposeView(m: CdmMatrix): CdmTransposeView {
  const n = m.rows;
  const lookup = cdmDiagonalLookup(m);
  const offsets = Int32Array.from(m.offsets, (k) => (n - k) % n).sort();
  return {
    rows: m.cols,
    cols: m.rows,
    base: m,
    offsets,
    index: (k, t) => cdmReverseIndex(m, k, t, lookup),
    get(k, t) {
      const s = cdmReverseIndex(m, k, t, lookup);
      return s < 0 ? 0 : m.values[s];
    },
  };
}

/**
 * y = Aᵀ·x in float64 from A's CDM storage through reverse compact diagonals (no transposed copy):
 * y_t += Ã_k[t]·x_{(t+k) mod n} over the compact diagonals k of Aᵀ. Cost: O(dgX·n).
 * @example
 * cdmSpmvTranspose(cdmFromCsr(a), x); // equals csrSpmv(csrTranspose(a), x)
 */
export function cdmSpmvTranspose(m: CdmMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const n = m.rows;
  if (m.cols !== n) throw new DimensionMismatchError('cdmSpmvTranspose (square matrix)', n, m.cols);
  const out = checkSpmvArgs('cdmSpmvTranspose', n, n, x, y);
  const { values } = m;
  for (let d = 0; d < m.numDiagonals; d++) {
    const kA = m.offsets[d];
    const k = (n - kA) % n; // compact diagonal of Aᵀ read from A's diagonal kA
    const base = d * n;
    for (let t = 0; t < n; t++) {
      const u = t + k < n ? t + k : t + k - n;
      // y_t += Ã_k[t]·x_{(t+k) mod n}, Ã_k[t] = A_{kA}[(t+k) mod n]
      out[t] += values[base + u] * x[u];
    }
  }
  return out;
}
