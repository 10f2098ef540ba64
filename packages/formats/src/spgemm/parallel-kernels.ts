/**
 * The row-range kernels of the parallel diagonal SpGEMM ({@link hmSpgemmParallel},
 * {@link cdmSpgemmParallel}). Each kernel computes the rows [r0, r1) of C into C's shared
 * arrays, with exactly the loop order of the serial reference restricted to those rows, so every
 * entry of C receives its products in the same order as in hmSpgemm / cdmSpgemm and the result is
 * bit-identical.
 *
 * The kernels are self-contained (no imports, no helpers, no closures): their own source text is
 * what the worker threads run (`new Worker(code, { eval: true })`), which works the same under
 * tsx, vitest and an esbuild bundle. Writes: values of C only in rows [r0, r1) (disjoint between
 * chunks), presence bits with Atomics.or (a 32-bit mask word can hold slots of two chunks).
 * @module
 */

/** Everything the HM kernel reads and writes; the large arrays live in SharedArrayBuffers. */
export interface HmRowsJob {
  readonly kind: 'hm';
  /** Rows of A (= rows of C) and columns of B (= columns of C). */
  readonly m: number;
  readonly n: number;
  /** A's diagonals in HM order: offset, start in aValues, length. */
  readonly aOffsets: Int32Array;
  readonly aStarts: Int32Array;
  readonly aLens: Int32Array;
  readonly aValues: Float64Array;
  readonly aPresent: Uint32Array;
  /** B's diagonals in HM order. */
  readonly bOffsets: Int32Array;
  readonly bStarts: Int32Array;
  readonly bValues: Float64Array;
  readonly bPresent: Uint32Array;
  /** cStartOf[dC + m − 1]: start in cValues of C's diagonal dC (every reachable dC is stored). */
  readonly cStartOf: Int32Array;
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
 * Rows [r0, r1) of C = A·B for HM operands, in hmSpgemm's order (A diagonal u in HM order, its
 * entries, B diagonals v): c_il += a_ij·b_jl. Returns the number of C slots it marked present.
 * Cost: O(stored entries of A in those rows · dg(B)).
 * @example
 * const nnz = hmRowsKernel(job, 0, job.m); // the whole product on this thread
 */
export function hmRowsKernel(job: HmRowsJob, r0: number, r1: number): number {
  const m = job.m;
  const n = job.n;
  const ao = job.aOffsets;
  const as = job.aStarts;
  const al = job.aLens;
  const av = job.aValues;
  const ap = job.aPresent;
  const bo = job.bOffsets;
  const bs = job.bStarts;
  const bv = job.bValues;
  const bp = job.bPresent;
  const cso = job.cStartOf;
  const cv = job.cValues;
  const cp = job.cPresent;
  const nb = bo.length;
  let nnz = 0;
  for (let u = 0; u < ao.length; u++) {
    const dA = ao[u];
    const s0 = as[u];
    // entry p of diagonal dA is row i = p (dA ≥ 0) or p − dA (dA < 0): rows [r0, r1) are p in [pLo, pHi)
    const pLo = Math.max(0, dA >= 0 ? r0 : r0 + dA);
    const pHi = Math.min(al[u], dA >= 0 ? r1 : r1 + dA);
    for (let p = pLo; p < pHi; p++) {
      const sA = s0 + p;
      if (((ap[sA >>> 5] >>> (sA & 31)) & 1) === 0) continue;
      const i = dA >= 0 ? p : p - dA;
      const j = i + dA;
      const a = av[sA];
      for (let v = 0; v < nb; v++) {
        const dB = bo[v];
        const l = j + dB;
        if (l < 0 || l >= n) continue;
        const sB = bs[v] + Math.min(j, l); // FindBInd: B[dB][min(j, l)]
        if (((bp[sB >>> 5] >>> (sB & 31)) & 1) === 0) continue;
        const sC = cso[dA + dB + m - 1] + Math.min(i, l); // FindCInd: C[dA + dB][min(i, l)]
        // c_il += a_ij·b_jl
        cv[sC] += a * bv[sB];
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
