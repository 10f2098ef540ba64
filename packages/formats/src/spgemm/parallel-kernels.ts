/**
 * The kernels of the parallel diagonal SpGEMM ({@link hmSpgemmParallel}, {@link cdmSpgemmParallel}).
 * HM: a range of C's diagonals (contiguous runs of C, A and B along each diagonal); CDM: a range of
 * rows of C (the serial loop nest restricted to those rows). In both, every entry of C receives
 * its products in the same order as in hmSpgemm / cdmSpgemm, so the result is bit-identical.
 *
 * The kernels are self-contained (no imports, no helpers, no closures): their own source text is
 * what the worker threads run (`new Worker(code, { eval: true })`), which works the same under
 * tsx, vitest and an esbuild bundle. Writes: values of C only in the chunk's diagonals or rows
 * (disjoint between chunks), presence bits with Atomics.or (a 32-bit mask word can hold slots of
 * two chunks).
 * @module
 */

/** Everything the HM kernel reads and writes; the large arrays live in SharedArrayBuffers. */
export interface HmDiagonalsJob {
  readonly kind: 'hm';
  /** C is m×n; A is m×k, B is k×n. */
  readonly m: number;
  readonly k: number;
  readonly n: number;
  /** A's diagonals in HM order (the order hmSpgemm visits them): offset and start in aValues. */
  readonly aOffsets: Int32Array;
  readonly aStarts: Int32Array;
  readonly aValues: Float64Array;
  readonly aPresent: Uint32Array;
  /** bLookup[dB + k − 1]: B's stored diagonal with offset dB, or −1; its start in bValues. */
  readonly bLookup: Int32Array;
  readonly bStarts: Int32Array;
  readonly bValues: Float64Array;
  readonly bPresent: Uint32Array;
  /** C's diagonals in HM order (the units of work): offset and start in cValues. */
  readonly cOffsets: Int32Array;
  readonly cStarts: Int32Array;
  readonly cValues: Float64Array;
  readonly cPresent: Uint32Array;
}

/** Everything the CDM kernel reads and writes; op(X) is X or Xᵀ read through reverse diagonals. */
export interface CdmRowsJob {
  readonly kind: 'cdm';
  readonly n: number;
  /** Compact indices of op(A), in the order the serial reference visits them. */
  readonly aOps: Int32Array;
  /** Stored row of compact diagonal k of A (not of op(A)), or −1. */
  readonly aLookup: Int32Array;
  readonly aT: boolean;
  readonly aValues: Float64Array;
  readonly aPresent: Uint32Array;
  /** bHas[k] = 1 when op(B) has compact diagonal k. */
  readonly bHas: Uint8Array;
  readonly bLookup: Int32Array;
  readonly bT: boolean;
  readonly bValues: Float64Array;
  readonly bPresent: Uint32Array;
  /** Compact indices of C, ascending (row dC of cValues). */
  readonly cOffsets: Int32Array;
  readonly cValues: Float64Array;
  readonly cPresent: Uint32Array;
}

/**
 * C's diagonals number d0 … d1 − 1 (HM order) of C = A·B for HM operands. For one C diagonal dC,
 * A's diagonals u are visited in HM order, as in hmSpgemm, and each pairs with the one diagonal
 * dB = dC − dA of B; along the rows i the three diagonals are read and written as contiguous runs:
 * c_{i, i+dC} += a_{i, i+dA}·b_{i+dA, i+dC}. Every entry of C gets its products in hmSpgemm's order
 * (ascending u), so its float64 sum is the same. Returns the number of C slots it marked present.
 * Cost: O(Σ over the (dA, dB) pairs of those C diagonals of the overlap length).
 * @example
 * const nnz = hmDiagonalsKernel(job, 0, job.cOffsets.length); // the whole product on this thread
 */
export function hmDiagonalsKernel(job: HmDiagonalsJob, d0: number, d1: number): number {
  const m = job.m;
  const k = job.k;
  const n = job.n;
  const ao = job.aOffsets;
  const as = job.aStarts;
  const av = job.aValues;
  const ap = job.aPresent;
  const blk = job.bLookup;
  const bs = job.bStarts;
  const bv = job.bValues;
  const bp = job.bPresent;
  const co = job.cOffsets;
  const cs = job.cStarts;
  const cv = job.cValues;
  const cp = job.cPresent;
  let nnz = 0;
  for (let dc = d0; dc < d1; dc++) {
    const dC = co[dc];
    const c0 = cs[dc];
    for (let u = 0; u < ao.length; u++) {
      const dA = ao[u];
      const dB = dC - dA;
      if (dB <= -k || dB >= n) continue;
      const v = blk[dB + k - 1];
      if (v < 0) continue;
      // rows i with 0 ≤ i < m, 0 ≤ j = i + dA < k, 0 ≤ l = i + dC < n
      const iLo = Math.max(0, -dA, -dC);
      const iHi = Math.min(m, k - dA, n - dC);
      // slots as linear functions of i: A[dA][min(i, j)], B[dB][min(j, l)], C[dC][min(i, l)]
      const sA0 = as[u] + Math.min(0, dA);
      const sB0 = bs[v] + Math.min(dA, dC); // dB ≥ 0 ⇔ dC ≥ dA
      const sC0 = c0 + Math.min(0, dC);
      for (let i = iLo; i < iHi; i++) {
        const sA = sA0 + i;
        if (((ap[sA >>> 5] >>> (sA & 31)) & 1) === 0) continue;
        const sB = sB0 + i;
        if (((bp[sB >>> 5] >>> (sB & 31)) & 1) === 0) continue;
        const sC = sC0 + i;
        // c_il += a_ij·b_jl
        cv[sC] += av[sA] * bv[sB];
        const bit = 1 << (sC & 31);
        if ((cp[sC >>> 5] & bit) === 0) {
          Atomics.or(cp, sC >>> 5, bit);
          nnz++;
        }
      }
    }
  }
  return nnz;
}

/**
 * Rows [r0, r1) of C = op(A)·op(B) for CDM operands, in cdmSpgemm's order (C diagonal, op(A)
 * diagonal, row t): C_kC[t] += op(A)_kA[t]·op(B)_kB[(t + kA) mod n]. Returns the number of C slots
 * it marked present. Cost: O(dg(C)·dg(A)·(r1 − r0)).
 * @example
 * const nnz = cdmRowsKernel(job, 0, job.n); // the whole product on this thread
 */
export function cdmRowsKernel(job: CdmRowsJob, r0: number, r1: number): number {
  const n = job.n;
  const aOps = job.aOps;
  const aLk = job.aLookup;
  const aT = job.aT;
  const av = job.aValues;
  const ap = job.aPresent;
  const bHas = job.bHas;
  const bLk = job.bLookup;
  const bT = job.bT;
  const bv = job.bValues;
  const bp = job.bPresent;
  const ks = job.cOffsets;
  const cv = job.cValues;
  const cp = job.cPresent;
  let nnz = 0;
  for (let dC = 0; dC < ks.length; dC++) {
    const kC = ks[dC];
    for (let q = 0; q < aOps.length; q++) {
      const kA = aOps[q];
      const kB = (kC - kA + n) % n;
      if (!bHas[kB]) continue;
      // stored rows of A and B holding op(A)_kA and op(B)_kB ((Xᵀ)_k[t] = X_{(n−k) mod n}[(t + k) mod n])
      const rA = (aT ? aLk[(n - kA) % n] : aLk[kA]) * n;
      const rB = (bT ? bLk[(n - kB) % n] : bLk[kB]) * n;
      for (let t = r0; t < r1; t++) {
        const sA = aT ? rA + ((t + kA) % n) : rA + t;
        if (((ap[sA >>> 5] >>> (sA & 31)) & 1) === 0) continue;
        const u = t + kA < n ? t + kA : t + kA - n; // the shared index j = (t + kA) mod n
        const sB = bT ? rB + ((u + kB) % n) : rB + u;
        if (((bp[sB >>> 5] >>> (sB & 31)) & 1) === 0) continue;
        // C_kC[t] += A_kA[t]·B_kB[(t + kA) mod n]   (c_{t, t+kC} += a_{t, j}·b_{j, j+kB})
        const sC = dC * n + t;
        cv[sC] += av[sA] * bv[sB];
        const bit = 1 << (sC & 31);
        if ((cp[sC >>> 5] & bit) === 0) {
          Atomics.or(cp, sC >>> 5, bit);
          nnz++;
        }
      }
    }
  }
  return nnz;
}
