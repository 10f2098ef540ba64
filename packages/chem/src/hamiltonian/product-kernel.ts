/**
 * The string-driven row kernel of the CI Hamiltonian, for spaces whose determinants are
 * addressed through a dense (alpha string, beta string) → index table. Like
 * ./kernel.ts it runs as source text inside worker threads: it must stay SELF-CONTAINED
 * (no imports, no closures over module variables, no nested named functions).
 *
 * For determinant I = (a, b) it walks the alpha connections of a (identity, singles,
 * doubles; sorted by target string) and, inside each, the beta connections of b that the
 * Slater–Condon rules allow (all of them for the alpha identity, identity + singles for an
 * alpha single, identity for an alpha double). With an index table that increases with
 * (alpha, beta) the columns come out sorted and no sort is needed; otherwise each row is
 * sorted as in ./kernel.ts. Each matrix element is computed by the same float64
 * operations, in the same order, as in {@link assembleRowsKernel}: the result is bit for bit
 * the reference kernel's.
 *
 * Integral screening (./screening.ts, built into the lists by ./product.ts): singles whose
 * element is a sum of exact zeros are not in the lists; inside an alpha single p → q only the
 * beta singles of its pair class (those that can have (qp|ur) ≠ 0) are walked; the other
 * spin's Σ_k (qp|kk) is skipped when all those integrals are zero, and the diagonal's
 * Σ J_ij walks the non-zero J only (recomputed in full when the sum is 0, whose sign the
 * skipped zeros decide). Skipped terms are exact zeros, so the result is unchanged bit for bit.
 * @module
 */
import type { KernelOutput, KernelSpin } from './kernel';

/** One spin's connection lists, sorted by target string (see ./product.ts). */
export interface ProductSpin extends KernelSpin {
  /** All connections of string s: entries cOff[s]..cOff[s+1]−1. */
  cOff: Int32Array;
  /** Singles among the connections of string s (the others: the identity and doubles). */
  cSingles: Int32Array;
  cTarget: Int32Array;
  /** 0: identity, 1: single (cRef indexes sTarget…), 2: double (cRef indexes dTarget…). */
  cKind: Int32Array;
  cRef: Int32Array;
  /**
   * Identity and singles, one list per (string s, pair class c): entries
   * lOff[s·nClass + c]..lOff[s·nClass + c + 1]−1 (lTarget, lRef; lRef = −1 for the identity).
   */
  lOff: Int32Array;
  /** Longest of the nClass lists of string s. */
  lMax: Int32Array;
  lTarget: Int32Array;
  lRef: Int32Array;
  /** For singles p → q: q·norb + p (−1 for the identity). */
  lPair: Int32Array;
  /** For singles: the fermionic sign (0 for the identity). */
  lSign: Float64Array;
}

/** Flat inputs of {@link assembleRowsProduct} (all typed arrays, shareable). */
export interface ProductContext {
  norb: number;
  eri: Float64Array;
  /** J[i·norb + j] = (ii|jj). */
  jmat: Float64Array;
  detAlpha: Int32Array;
  detBeta: Int32Array;
  /** Number of beta strings (row length of pairIndex). */
  nBeta: number;
  /** pairIndex[a·nBeta + b] = determinant index of (a, b), or −1 (empty when `full`). */
  pairIndex: Int32Array;
  /** 1 when every (a, b) is in the space in alpha-major order (FCI, CAS): index = a·nBeta + b. */
  full: number;
  /** 1 when pairIndex increases with (a, b) lexicographically (rows come out sorted). */
  monotone: number;
  /** Class of each alpha pair q·norb + p: its beta partners are in list class pairClass[qp]. */
  pairClass: Int32Array;
  nClass: number;
  /** coulomb[q·norb + p] = 0 when (qp|kk) = 0 for every k (the other spin's sum is skipped). */
  coulomb: Int32Array;
  /** Non-zero J per orbital i: j = jIdx[jOff[i]..jOff[i+1]) ascending; used when jSparse = 1. */
  jOff: Int32Array;
  jIdx: Int32Array;
  jSparse: number;
  /** Occupation bits of the beta strings (orbitals 0–31, 32–63). */
  betaLo: Uint32Array;
  betaHi: Uint32Array;
  dropTolerance: number;
  alpha: ProductSpin;
  beta: ProductSpin;
}

/** Reusable output buffers of {@link assembleRowsProduct} (replaced by the kernel when short). */
export interface ProductScratch {
  cols: Int32Array;
  vals: Float64Array;
}

/**
 * Assemble rows [rowStart, rowEnd) of H from the connection lists. With `scratch` the
 * output is written into reused buffers and returned as compact copies. Cost per row
 * O(n_singles_α·n_singles_β + doubles) table reads, no hashing, no sort when monotone.
 * @example
 * const { lengths, cols, vals, diag } = assembleRowsProduct(productContext(fd, space)!, 0, space.size);
 */
export function assembleRowsProduct(ctx: ProductContext, rowStart: number, rowEnd: number, scratch?: ProductScratch): KernelOutput {
  // Long by design (a house-style exception): shipped to worker threads by its source text (./workers.ts), so it must be self-contained, and its row loop is the assembly's hot path.
  const n = ctx.norb;
  const eri = ctx.eri;
  const jmat = ctx.jmat;
  const A = ctx.alpha;
  const B = ctx.beta;
  const nB = ctx.nBeta;
  const pix = ctx.pairIndex;
  const full = ctx.full === 1;
  const tol = ctx.dropTolerance;
  const sorted = ctx.monotone === 1;
  const nrows = rowEnd - rowStart;
  const lengths = new Int32Array(nrows);
  const diag = new Float64Array(nrows);
  // output sized by Σ row bounds (no regrowth); returned as views, not copies
  let cap = 0;
  const aTarget = A.cTarget;
  const aKind = A.cKind;
  const aRef = A.cRef;
  const aSign = A.sSign;
  const aTo = A.sTo;
  const aFrom = A.sFrom;
  const aBase = A.sBase;
  const aDValue = A.dValue;
  const bOcc = B.occ;
  const aOcc = A.occ;
  const aCOff = A.cOff;
  // row bound: the beta connections (alpha identity) + per alpha single its beta list + alpha doubles
  for (let row = rowStart; row < rowEnd; row++) {
    const a = ctx.detAlpha[row]!;
    const b = ctx.detBeta[row]!;
    const naS = A.cSingles[a]!;
    cap += B.cOff[b + 1]! - B.cOff[b]! + naS * B.lMax[b]! + (aCOff[a + 1]! - aCOff[a]! - 1 - naS);
  }
  let cols: Int32Array;
  let vals: Float64Array;
  if (scratch && scratch.cols.length >= cap) {
    cols = scratch.cols;
    vals = scratch.vals;
  } else {
    cols = new Int32Array(cap);
    vals = new Float64Array(cap);
    if (scratch) {
      scratch.cols = cols;
      scratch.vals = vals;
    }
  }
  let used = 0;
  let keyCap = 256;
  let keys = new Float64Array(sorted ? 0 : keyCap);
  let tv = new Float64Array(sorted ? 0 : keyCap);
  const SHIFT = 2097152; // 2^21 entries per row at most
  const nelA = A.nel;
  const nelB = B.nel;
  const lOff = B.lOff;
  const lMax = B.lMax;
  const pairClass = ctx.pairClass;
  const nCls = ctx.nClass;
  const lTarget = B.lTarget;
  const lPair = B.lPair;
  const lSign = B.lSign;
  const nn = n * n;
  const coulomb = ctx.coulomb;
  const jSparse = ctx.jSparse;
  const jOff = ctx.jOff;
  const jIdx = ctx.jIdx;
  const bLo = ctx.betaLo;
  const bHi = ctx.betaHi;
  for (let row = rowStart; row < rowEnd; row++) {
    const a = ctx.detAlpha[row]!;
    const b = ctx.detBeta[row]!;
    const naS = A.cSingles[a]!;
    const bound = B.cOff[b + 1]! - B.cOff[b]! + naS * lMax[b]! + (aCOff[a + 1]! - aCOff[a]! - 1 - naS);
    if (bound > SHIFT) throw new RangeError(`row ${row}: ${bound} candidate entries exceed ${SHIFT}`);
    const start = used;
    // diagonal: same-spin parts + Σ_{i∈α, j∈β} (ii|jj)
    let d = A.diag[a]! + B.diag[b]!;
    const oa = a * nelA;
    const ob = b * nelB;
    let allJ = jSparse !== 1;
    if (!allJ) {
      // only the non-zero J_ij with j in b, in the same order: the same sum unless it is ±0
      const d0 = d;
      const lo = bLo[b]!;
      const hi = bHi[b]!;
      for (let x = 0; x < nelA; x++) {
        const i = aOcc[oa + x]!;
        const jEnd = jOff[i + 1]!;
        for (let t = jOff[i]!; t < jEnd; t++) {
          const j = jIdx[t]!;
          if ((j < 32 ? (lo >>> j) & 1 : (hi >>> (j - 32)) & 1) === 1) d += jmat[i * n + j]!;
        }
      }
      if (d === 0) {
        // the sign of a zero sum depends on the skipped zeros: recompute with all terms
        d = d0;
        allJ = true;
      }
    }
    if (allJ) {
      for (let x = 0; x < nelA; x++) {
        const i = aOcc[oa + x]!;
        for (let y = 0; y < nelB; y++) d += jmat[i * n + bOcc[ob + y]!]!;
      }
    }
    diag[row - rowStart] = d;
    const cEndA = aCOff[a + 1]!;
    for (let ca = aCOff[a]!; ca < cEndA; ca++) {
      const t = aTarget[ca]!;
      const kind = aKind[ca]!;
      const base = t * nB;
      if (kind === 0) {
        // alpha identity: diagonal, beta singles, beta-beta doubles (sorted by beta target)
        const cEndB = B.cOff[b + 1]!;
        for (let cb = B.cOff[b]!; cb < cEndB; cb++) {
          const kb = B.cKind[cb]!;
          if (kb === 0) {
            cols[used] = row;
            vals[used++] = d;
            continue;
          }
          const col = full ? base + B.cTarget[cb]! : pix[base + B.cTarget[cb]!]!;
          if (col < 0) continue;
          const f = B.cRef[cb]!;
          let val: number;
          if (kb === 1) {
            // beta single p → q: σ(base + Σ_{k∈α} (qp|kk))
            val = B.sBase[f]!;
            const pair = B.sTo[f]! * n + B.sFrom[f]!;
            if (coulomb[pair] === 1) {
              const qp = pair * nn;
              for (let x = 0; x < nelA; x++) {
                const k = aOcc[oa + x]!;
                val += eri[qp + k * n + k]!;
              }
            }
            val *= B.sSign[f]!;
          } else val = B.dValue[f]!;
          if (Math.abs(val) > tol) {
            cols[used] = col;
            vals[used++] = val;
          }
        }
      } else if (kind === 1) {
        // alpha single p → q with beta identity or a beta single
        const e = aRef[ca]!;
        const sa = aSign[e]!;
        const aPair = aTo[e]! * n + aFrom[e]!;
        const qpBase = aPair * nn;
        const aCoulomb = coulomb[aPair] === 1;
        // the identity and the beta singles of b that can pair with this one (its class)
        const li = b * nCls + pairClass[aPair]!;
        const lEnd = lOff[li + 1]!;
        for (let cb = lOff[li]!; cb < lEnd; cb++) {
          const ur = lPair[cb]!;
          if (ur < 0) {
            const col = full ? base + b : pix[base + b]!;
            if (col < 0) continue;
            // σ(base + Σ_{k∈β} (qp|kk))
            let val = aBase[e]!;
            if (aCoulomb) {
              for (let y = 0; y < nelB; y++) {
                const k = bOcc[ob + y]!;
                val += eri[qpBase + k * n + k]!;
              }
            }
            val *= sa;
            if (Math.abs(val) > tol) {
              cols[used] = col;
              vals[used++] = val;
            }
            continue;
          }
          // alpha-beta double: σα σβ (qp|ur)
          const val = sa * lSign[cb]! * eri[qpBase + ur]!;
          if (!(Math.abs(val) > tol)) continue;
          const col = full ? base + lTarget[cb]! : pix[base + lTarget[cb]!]!;
          if (col < 0) continue;
          cols[used] = col;
          vals[used++] = val;
        }
      } else {
        // alpha-alpha double, beta fixed
        const col = full ? base + b : pix[base + b]!;
        if (col < 0) continue;
        const val = aDValue[aRef[ca]!]!;
        if (Math.abs(val) > tol) {
          cols[used] = col;
          vals[used++] = val;
        }
      }
    }
    const len = used - start;
    if (!sorted) {
      // sort the row by column: key = col·2^21 + position (exact in float64)
      if (len > keyCap) {
        while (keyCap < len) keyCap *= 2;
        keys = new Float64Array(keyCap);
        tv = new Float64Array(keyCap);
      }
      for (let k = 0; k < len; k++) {
        keys[k] = cols[start + k]! * SHIFT + k;
        tv[k] = vals[start + k]!;
      }
      const order = keys.subarray(0, len).sort();
      for (let k = 0; k < len; k++) {
        const key = order[k]!;
        const c = Math.floor(key / SHIFT);
        cols[start + k] = c;
        vals[start + k] = tv[key - c * SHIFT]!;
      }
    }
    lengths[row - rowStart] = len;
  }
  // views when the bound was tight and no scratch was given (no copy), compact copies otherwise
  if (!scratch && 4 * used >= 3 * cap) return { lengths, cols: cols.subarray(0, used), vals: vals.subarray(0, used), diag };
  return { lengths, cols: cols.slice(0, used), vals: vals.slice(0, used), diag };
}
