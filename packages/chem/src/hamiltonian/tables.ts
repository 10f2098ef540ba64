/**
 * Per-string excitation tables of one spin: for every string of a {@link StringList}, its
 * occupied orbitals, its same-spin diagonal energy, its single excitations that stay in the
 * list (target, p → q, fermionic sign, spin-local part of the matrix element) and its
 * same-spin double excitations with their full matrix element. Built once on the main thread
 * and shared with the assembly workers. Matrix elements (Slater–Condon, chemists' notation):
 *
 * - diagonal, same spin: Σ_i h_ii + Σ_{i<j} [(ii|jj) − (ij|ji)]
 * - single p → q (sign σ): σ·(h_qp + Σ_{k≠p, same spin} [(qp|kk) − (qk|kp)]) (+ the other
 *   spin's Σ_k (qp|kk), added per determinant in the kernel)
 * - double p,q → r,s (same spin, D' = a†_s a_q a†_r a_p D, sign σ): σ·[(rp|sq) − (rq|sp)]
 * @module
 */
import { countBelow } from '../determinants/bits';
import { type StringList, stringIndex } from '../determinants/strings';

/** Flat tables of one spin (see the module comment). */
export interface SpinTables {
  readonly count: number;
  readonly nel: number;
  /** Occupied orbitals, `nel` per string. */
  readonly occ: Int32Array;
  /** Same-spin diagonal energy per string. */
  readonly diag: Float64Array;
  readonly sOff: Int32Array;
  readonly sTarget: Int32Array;
  readonly sFrom: Int32Array;
  readonly sTo: Int32Array;
  readonly sSign: Float64Array;
  readonly sBase: Float64Array;
  readonly dOff: Int32Array;
  readonly dTarget: Int32Array;
  readonly dValue: Float64Array;
}

/**
 * Sign (−1)^n of a†_q a_p acting on (lo, hi) (p occupied, q empty), and the new string. O(1).
 * @example
 * applySingle(0b011, 0, 0, 2); // [-1, 0b110, 0]: a†_2 a_0 passes orbital 1
 */
export function applySingle(lo: number, hi: number, p: number, q: number): [number, number, number] {
  let n = countBelow(lo, hi, p);
  let a = lo;
  let b = hi;
  if (p < 32) a = (a & ~(1 << p)) >>> 0;
  else b = (b & ~(1 << (p - 32))) >>> 0;
  n += countBelow(a, b, q);
  if (q < 32) a = (a | (1 << q)) >>> 0;
  else b = (b | (1 << (q - 32))) >>> 0;
  return [n & 1 ? -1 : 1, a, b];
}

/**
 * Build the tables of one spin. Cost O(count · nel · nvirt · (nel + nel·nvirt)) time; memory
 * O(count · (nel·nvirt + nel²·nvirt²)) for the lists that stay in the space.
 * @example
 * const ta = spinTables(space.alpha, fd.norb, fd.h1, fd.eri);
 */
export function spinTables(list: StringList, norb: number, h1: Float64Array, eri: Float64Array): SpinTables {
  const n = norb;
  const nel = list.electrons;
  const count = list.count;
  const occ = new Int32Array(count * nel);
  const diag = new Float64Array(count);
  const sOff = new Int32Array(count + 1);
  const dOff = new Int32Array(count + 1);
  const singles: SinglesLists = { sTarget: [], sFrom: [], sTo: [], sSign: [], sBase: [] };
  const doubles: DoublesLists = { dTarget: [], dValue: [] };
  const virt = new Int32Array(n);
  for (let s = 0; s < count; s++) {
    const lo = list.lo[s]!;
    const hi = list.hi[s]!;
    let no = 0;
    let nv = 0;
    for (let p = 0; p < n; p++) {
      const bit = p < 32 ? (lo >>> p) & 1 : (hi >>> (p - 32)) & 1;
      if (bit) occ[s * nel + no++] = p;
      else virt[nv++] = p;
    }
    const o = occ.subarray(s * nel, s * nel + nel);
    diag[s] = stringDiagonal(o, n, h1, eri);
    stringSingles(list, lo, hi, o, virt, nv, n, h1, eri, singles);
    sOff[s + 1] = singles.sTarget.length;
    stringDoubles(list, lo, hi, o, virt, nv, n, eri, doubles);
    dOff[s + 1] = doubles.dTarget.length;
  }
  return {
    count,
    nel,
    occ,
    diag,
    sOff,
    sTarget: Int32Array.from(singles.sTarget),
    sFrom: Int32Array.from(singles.sFrom),
    sTo: Int32Array.from(singles.sTo),
    sSign: Float64Array.from(singles.sSign),
    sBase: Float64Array.from(singles.sBase),
    dOff,
    dTarget: Int32Array.from(doubles.dTarget),
    dValue: Float64Array.from(doubles.dValue),
  };
}

/** The single-excitation lists of {@link spinTables} while they grow. */
interface SinglesLists {
  sTarget: number[];
  sFrom: number[];
  sTo: number[];
  sSign: number[];
  sBase: number[];
}

/** The double-excitation lists of {@link spinTables} while they grow. */
interface DoublesLists {
  dTarget: number[];
  dValue: number[];
}

/** Same-spin diagonal energy of one string (occupied orbitals `o`): Σ h_ii + Σ_{i<j} [(ii|jj) − (ij|ji)]. */
function stringDiagonal(o: Int32Array, n: number, h1: Float64Array, eri: Float64Array): number {
  const g = (i: number, j: number, k: number, l: number) => eri[((i * n + j) * n + k) * n + l]!;
  const nel = o.length;
  let e = 0;
  for (let x = 0; x < nel; x++) {
    const i = o[x]!;
    e += h1[i * n + i]!;
    for (let y = x + 1; y < nel; y++) {
      const j = o[y]!;
      e += g(i, i, j, j) - g(i, j, j, i);
    }
  }
  return e;
}

/** The singles p → q of one string (bits lo, hi; occupied `o`, the first `nv` of `virt` empty), appended to `out`. */
function stringSingles(list: StringList, lo: number, hi: number, o: Int32Array, virt: Int32Array, nv: number, n: number, h1: Float64Array, eri: Float64Array, out: SinglesLists): void {
  const g = (i: number, j: number, k: number, l: number) => eri[((i * n + j) * n + k) * n + l]!;
  const nel = o.length;
  const { sTarget, sFrom, sTo, sSign, sBase } = out;
  for (let x = 0; x < nel; x++) {
    const p = o[x]!;
    for (let v = 0; v < nv; v++) {
      const q = virt[v]!;
      const [sign, a, b] = applySingle(lo, hi, p, q);
      const t = stringIndex(list, a, b);
      if (t < 0) continue;
      let base = h1[q * n + p]!;
      for (let y = 0; y < nel; y++) {
        const k = o[y]!;
        if (k !== p) base += g(q, p, k, k) - g(q, k, k, p);
      }
      sTarget.push(t);
      sFrom.push(p);
      sTo.push(q);
      sSign.push(sign);
      sBase.push(base);
    }
  }
}

/** The doubles p<q → r<u of one string, D' = a†_u a_q a†_r a_p D, appended to `out`. */
function stringDoubles(list: StringList, lo: number, hi: number, o: Int32Array, virt: Int32Array, nv: number, n: number, eri: Float64Array, out: DoublesLists): void {
  const g = (i: number, j: number, k: number, l: number) => eri[((i * n + j) * n + k) * n + l]!;
  const nel = o.length;
  const { dTarget, dValue } = out;
  for (let x = 0; x < nel; x++) {
    const p = o[x]!;
    for (let y = x + 1; y < nel; y++) {
      const q = o[y]!;
      for (let v = 0; v < nv; v++) {
        const r = virt[v]!;
        const [s1, a1, b1] = applySingle(lo, hi, p, r);
        for (let w = v + 1; w < nv; w++) {
          const u = virt[w]!;
          // a zero integral difference gives ±0, which is not stored: skip the string lookup
          const x = g(r, p, u, q) - g(r, q, u, p);
          if (x === 0) continue;
          const [s2, a2, b2] = applySingle(a1, b1, q, u);
          const t = stringIndex(list, a2, b2);
          if (t < 0) continue;
          const val = s1 * s2 * x;
          if (val === 0) continue;
          dTarget.push(t);
          dValue.push(val);
        }
      }
    }
  }
}
