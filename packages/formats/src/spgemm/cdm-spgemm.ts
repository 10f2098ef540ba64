/**
 * C = op(A)·op(B) with square A, B and C in CDM compact diagonal storage: the float64 CPU reference of
 * seed 002 §4 and §6.1 (Algorithm 1, banded matrix–matrix multiplication).
 *
 * Compact diagonal i of C is the sum over the compact diagonals k of A of A_k ∘ B_{(i−k) mod n}^{r_k}
 * (element t: A_k[t]·B_{(i−k) mod n}[(t + k) mod n]); for i = 0 this is the §4 formula
 * C_0 = A_0 B_0 + Σ A_k B̃_k. Algorithm 1 gives one thread per entry of C, looping over A's diagonals;
 * this reference keeps that order (for each C diagonal, each A diagonal, each t). The compact diagonal
 * indices of C, {(kA + kB) mod n}, are fixed before any arithmetic ({@link cdmSpgemmDiagonals}), so C is
 * allocated once.
 *
 * Transposed operands (seed 002 §4) are read through reverse compact diagonals, never copied:
 * (Xᵀ)_k[t] = X_{(n−k) mod n}[(t + k) mod n].
 * A slot of C is present when a product of two stored entries lands on it (fill skipped), so cdmToCsr(C)
 * has the pattern of the CSR×CSR product. Cost: O(dg(A)·dg(B)·n) time, O(dg(C)·n) memory.
 * @module
 */
import { DimensionMismatchError } from '../core/errors';
import { type CdmMatrix, cdmAllocate, cdmDiagonalLookup } from '../cdm/cdm';
import { bitmaskGet, bitmaskSet, requireInt } from '../dia/common';
import { checkDiagonalCount } from '../dia/dia';
import type { SpgemmOptions } from './hm-spgemm';

/** Options of the CDM product: transposed operands and the diagonal limit. */
export interface CdmSpgemmOptions extends SpgemmOptions {
  /** Use Aᵀ, read through reverse compact diagonals. */
  readonly transposeA?: boolean;
  /** Use Bᵀ, read through reverse compact diagonals. */
  readonly transposeB?: boolean;
}

/** op(X) as seen by the product: its compact indices and where element (k, t) lies in X.values. */
interface Operand {
  readonly offsets: Int32Array;
  /** Slot in X.values of op(X)_k[t], or −1 when compact diagonal k of op(X) is not stored. */
  slot(k: number, t: number): number;
  readonly x: CdmMatrix;
}

function operand(x: CdmMatrix, transpose: boolean): Operand {
  const n = x.rows;
  const lookup = cdmDiagonalLookup(x);
  if (!transpose) {
    return { x, offsets: x.offsets, slot: (k, t) => (lookup[k] < 0 ? -1 : lookup[k] * n + t) };
  }
  return {
    x,
    offsets: Int32Array.from(x.offsets, (k) => (n - k) % n).sort(),
    slot(k, t) {
      // (Xᵀ)_k[t] = X̃_k[t] = X_{(n−k) mod n}[(t + k) mod n]
      const d = lookup[(n - k) % n];
      return d < 0 ? -1 : d * n + ((t + k) % n);
    },
  };
}

/**
 * Compact diagonal indices of C = op(A)·op(B): {(kA + kB) mod n}, ascending, before any arithmetic.
 * Cost: O(dg(A)·dg(B) + n).
 * @example
 * cdmSpgemmDiagonals(cdmFromCsr(laplacian1d(6)), cdmFromCsr(laplacian1d(6))); // [0, 1, 2, 4, 5]
 */
export function cdmSpgemmDiagonals(a: CdmMatrix, b: CdmMatrix, opts: CdmSpgemmOptions = {}): Int32Array {
  if (a.rows !== b.rows) throw new DimensionMismatchError('cdmSpgemm: order of B (= order of A)', a.rows, b.rows);
  const n = a.rows;
  const oa = operand(a, opts.transposeA ?? false).offsets;
  const ob = operand(b, opts.transposeB ?? false).offsets;
  const seen = new Uint8Array(n);
  for (const kA of oa) for (const kB of ob) seen[(kA + kB) % n] = 1;
  const out: number[] = [];
  for (let k = 0; k < n; k++) if (seen[k]) out.push(k);
  return Int32Array.from(out);
}

/**
 * C = op(A)·op(B) in float64 with CDM operands and a CDM result (convert with cdmToCsr).
 * Throws DimensionMismatchError when the orders differ.
 * Cost: O(dg(C)·dg(A)·n) ≤ O(dg(A)·dg(B)·n) useful work.
 * @example
 * const c = cdmSpgemm(cdmFromCsr(a), cdmFromCsr(b), { transposeB: true }); // A·Bᵀ
 */
export function cdmSpgemm(a: CdmMatrix, b: CdmMatrix, opts: CdmSpgemmOptions = {}): CdmMatrix {
  const maxDiagonals = requireInt('maxDiagonals', opts.maxDiagonals ?? 4096, 0);
  const ks = cdmSpgemmDiagonals(a, b, opts);
  const n = a.rows;
  checkDiagonalCount('cdm (product)', ks.length, maxDiagonals, ks.length * n);
  const c = cdmAllocate(n, ks);
  const A = operand(a, opts.transposeA ?? false);
  const B = operand(b, opts.transposeB ?? false);
  const bHas = new Uint8Array(n);
  for (const kB of B.offsets) bHas[kB] = 1;
  const { values: cv, present: cp } = c;
  let nnz = 0;
  for (let dC = 0; dC < ks.length; dC++) {
    const kC = ks[dC];
    for (const kA of A.offsets) {
      const kB = (kC - kA + n) % n;
      if (!bHas[kB]) continue;
      for (let t = 0; t < n; t++) {
        const sA = A.slot(kA, t);
        if (!bitmaskGet(A.x.present, sA)) continue;
        const u = t + kA < n ? t + kA : t + kA - n; // the shared index j = (t + kA) mod n
        const sB = B.slot(kB, u);
        if (!bitmaskGet(B.x.present, sB)) continue;
        // C_kC[t] += A_kA[t]·B_kB[(t + kA) mod n]   (c_{t, t+kC} += a_{t, j}·b_{j, j+kB})
        const sC = dC * n + t;
        cv[sC] += A.x.values[sA] * B.x.values[sB];
        if (!bitmaskGet(cp, sC)) {
          bitmaskSet(cp, sC);
          nnz++;
        }
      }
    }
  }
  return { ...c, nnz };
}
