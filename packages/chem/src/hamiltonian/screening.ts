/**
 * Integral screening for the string-driven assembly: which orbital pairs can ever give a
 * non-zero matrix element, decided from the integrals alone (exact zeros), so that the kernel
 * never walks single or double replacements whose elements are sums of zeros. On a model
 * Hamiltonian with nearest-neighbour hopping and on-site repulsion (Hubbard) almost every
 * replacement is such a zero; on a molecule with point-group symmetry, the singles between
 * orbitals of different irreps are.
 *
 * Exactness: an element that is skipped is a sum of exact zeros, so the kernel without the
 * screen would have computed ±0 and dropped it (it stores off-diagonal entries with
 * |value| > dropTolerance ≥ 0). Skipping exact-zero terms inside a sum never changes a
 * non-zero result. The screened matrix is therefore the unscreened one, bit for bit.
 *
 * Pair index of a replacement p → q: q·norb + p (the index of h_qp and of (qp| in the ERI).
 * @module
 */

/** Per-pair flags, norb² entries each (diagonal pairs p = q are never replacements). */
export interface IntegralScreen {
  norb: number;
  /**
   * single[qp] = 1 when a single p → q can be non-zero: h_qp ≠ 0, or (qp|kk) ≠ 0 or
   * (qk|kp) ≠ 0 for some k. When 0 its element σ(h_qp + Σ_k [(qp|kk) − (qk|kp)] + Σ_k' (qp|k'k'))
   * is a sum of zeros whatever the string.
   */
  single: Int32Array;
  /** coulomb[qp] = 1 when (qp|kk) ≠ 0 for some k (the other spin's part of a single's element). */
  coulomb: Int32Array;
  /** Classes of pairs for the alpha-beta doubles ({@link pairClasses}). */
  classes: PairClasses;
}

/**
 * The screen of `h1` (norb², h[q·norb + p]) and `eri` (norb⁴, chemists' (ij|kl) at
 * ((i·n + j)·n + k)·n + l). A NaN integral counts as non-zero (it must reach the result).
 * `maxClasses` bounds the pair classes ({@link pairClasses}). Cost O(norb⁴), once per assembly.
 * @example
 * const s = integralScreen(fd.norb, fd.h1, fd.eri);
 * s.single[q * fd.norb + p]; // 0: the single p → q is zero in every determinant
 */
export function integralScreen(norb: number, h1: Float64Array, eri: Float64Array, maxClasses = 33): IntegralScreen {
  const n = norb;
  const nn = n * n;
  const single = new Int32Array(nn);
  const coulomb = new Int32Array(nn);
  for (let q = 0; q < n; q++) {
    for (let p = 0; p < n; p++) {
      if (p === q) continue;
      const qp = q * n + p;
      let c = 0;
      let x = 0;
      for (let k = 0; k < n; k++) {
        if (eri[qp * nn + k * n + k] !== 0) c = 1;
        if (eri[(q * n + k) * nn + k * n + p] !== 0) x = 1;
      }
      coulomb[qp] = c;
      single[qp] = h1[qp] !== 0 || c || x ? 1 : 0;
    }
  }
  return { norb, single, coulomb, classes: pairClasses(n, eri, maxClasses) };
}

/** Classes of orbital pairs for the alpha-beta doubles (see {@link pairClasses}). */
export interface PairClasses {
  /** Class of an alpha pair q·norb + p: 0 when (qp|ur) = 0 for every beta pair u ≠ r. */
  alpha: Int32Array;
  /** Class of a beta pair u·norb + r: 0 when (qp|ur) = 0 for every alpha pair q ≠ p. */
  beta: Int32Array;
  /** Number of classes, class 0 included. */
  count: number;
}

/** Root of x in a union–find forest (path halving). */
function root(parent: Int32Array, x: number): number {
  let r = x;
  while (parent[r] !== r) {
    parent[r] = parent[parent[r]!]!;
    r = parent[r]!;
  }
  return r;
}

/**
 * Classes of orbital pairs such that (qp|ur) ≠ 0 (q ≠ p, u ≠ r) only when alpha pair qp and
 * beta pair ur are in the same class ≥ 1: the connected components of the bipartite graph
 * "alpha pair — beta pair with a non-zero integral", found from the integrals alone (with
 * D2h symmetry they are the irrep products; for the Hubbard chain there is none). Above
 * `maxClasses` − 1 components, components share classes (a class then holds more pairs than
 * it needs, which costs time, never correctness). Cost O(norb⁴).
 * @example
 * const c = pairClasses(fd.norb, fd.eri);
 * c.alpha[q * fd.norb + p] === c.beta[u * fd.norb + r]; // false ⇒ (qp|ur) = 0
 */
export function pairClasses(norb: number, eri: Float64Array, maxClasses = 33): PairClasses {
  const n = norb;
  const nn = n * n;
  // nodes: alpha pairs 0..nn−1, beta pairs nn..2nn−1
  const parent = Int32Array.from({ length: 2 * nn }, (_, i) => i);
  const linked = new Uint8Array(2 * nn);
  for (let qp = 0; qp < nn; qp++) {
    if (Math.floor(qp / n) === qp % n) continue;
    const row = qp * nn;
    for (let ur = 0; ur < nn; ur++) {
      if (Math.floor(ur / n) === ur % n || eri[row + ur] === 0) continue;
      linked[qp] = 1;
      linked[nn + ur] = 1;
      const x = root(parent, qp);
      const y = root(parent, nn + ur);
      if (x !== y) parent[x] = y;
    }
  }
  const id = new Int32Array(2 * nn).fill(-1);
  let components = 0;
  const alpha = new Int32Array(nn);
  const beta = new Int32Array(nn);
  const span = Math.max(1, maxClasses - 1);
  for (let v = 0; v < 2 * nn; v++) {
    if (!linked[v]) continue;
    const r = root(parent, v);
    if (id[r] < 0) id[r] = components++;
    const cls = 1 + (id[r]! % span);
    if (v < nn) alpha[v] = cls;
    else beta[v - nn] = cls;
  }
  return { alpha, beta, count: 1 + Math.min(components, span) };
}
