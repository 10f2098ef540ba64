/**
 * The row-assembly kernel of the CI Hamiltonian. It runs on the main thread and, as source
 * text (`assembleRowsKernel.toString()`), inside worker threads: it must stay
 * SELF-CONTAINED — no imports, no closures over module variables, no nested named functions
 * (transpilers may wrap those in helpers the worker does not have).
 *
 * For determinant I = (a, b) it enumerates, through the per-string tables of ./tables.ts:
 * the diagonal, alpha and beta singles, alpha-alpha and beta-beta doubles, and alpha-beta
 * doubles (one alpha single × one beta single, element σ_α σ_β (rp|sq)); each target
 * determinant is looked up in the (alpha index, beta index) hash. Rows come out with sorted
 * columns; exact zeros off the diagonal are dropped.
 * @module
 */

/** Flat inputs of {@link assembleRowsKernel} (all typed arrays, so they can be shared). */
export interface KernelContext {
  norb: number;
  /** h[q·norb + p] (not read by this kernel; the string-driven one screens with it). */
  h1: Float64Array;
  eri: Float64Array;
  /** J[i·norb + j] = (ii|jj). */
  jmat: Float64Array;
  detAlpha: Int32Array;
  detBeta: Int32Array;
  hashMask: number;
  hashLo: Uint32Array;
  hashHi: Uint32Array;
  hashVals: Int32Array;
  /** Off-diagonal entries with |value| ≤ dropTolerance are not stored. */
  dropTolerance: number;
  alpha: KernelSpin;
  beta: KernelSpin;
}

/** One spin's tables (see SpinTables in ./tables.ts). */
export interface KernelSpin {
  nel: number;
  occ: Int32Array;
  diag: Float64Array;
  sOff: Int32Array;
  sTarget: Int32Array;
  sFrom: Int32Array;
  sTo: Int32Array;
  sSign: Float64Array;
  sBase: Float64Array;
  dOff: Int32Array;
  dTarget: Int32Array;
  dValue: Float64Array;
}

/** Rows rowStart..rowEnd−1 of the matrix: lengths, columns, values, and the diagonal. */
export interface KernelOutput {
  lengths: Int32Array;
  cols: Int32Array;
  vals: Float64Array;
  diag: Float64Array;
}

/**
 * Assemble rows [rowStart, rowEnd) of H. Cost per row: O(n_singles_α·n_singles_β + doubles)
 * hash probes plus a sort of the row. Self-contained (see the module comment).
 * @example
 * const { lengths, cols, vals, diag } = assembleRowsKernel(kernelContext(fd, space), 0, space.size);
 */
export function assembleRowsKernel(ctx: KernelContext, rowStart: number, rowEnd: number): KernelOutput {
  // Long by design (a house-style exception): shipped to worker threads by its source text (./workers.ts), so it must be self-contained, and its row loop is the assembly's hot path.
  const n = ctx.norb;
  const eri = ctx.eri;
  const jmat = ctx.jmat;
  const A = ctx.alpha;
  const B = ctx.beta;
  const mask = ctx.hashMask;
  const hLo = ctx.hashLo;
  const hHi = ctx.hashHi;
  const hV = ctx.hashVals;
  const tol = ctx.dropTolerance;
  const nrows = rowEnd - rowStart;
  const lengths = new Int32Array(nrows);
  const diag = new Float64Array(nrows);
  let cap = 1024;
  let cols = new Int32Array(cap);
  let vals = new Float64Array(cap);
  let used = 0;
  let rowCap = 256;
  let rc = new Int32Array(rowCap);
  let rv = new Float64Array(rowCap);
  let keys = new Float64Array(rowCap);
  const SHIFT = 2097152; // 2^21 entries per row at most
  for (let row = rowStart; row < rowEnd; row++) {
    const a = ctx.detAlpha[row]!;
    const b = ctx.detBeta[row]!;
    let len = 0;
    // upper bound of this row's length
    const naS = A.sOff[a + 1]! - A.sOff[a]!;
    const nbS = B.sOff[b + 1]! - B.sOff[b]!;
    const bound = 1 + naS + nbS + (A.dOff[a + 1]! - A.dOff[a]!) + (B.dOff[b + 1]! - B.dOff[b]!) + naS * nbS;
    if (bound > SHIFT) throw new RangeError(`row ${row}: ${bound} candidate entries exceed ${SHIFT}`);
    if (bound > rowCap) {
      while (rowCap < bound) rowCap *= 2;
      rc = new Int32Array(rowCap);
      rv = new Float64Array(rowCap);
      keys = new Float64Array(rowCap);
    }
    // diagonal: same-spin parts + Σ_{i∈α, j∈β} (ii|jj)
    let d = A.diag[a]! + B.diag[b]!;
    const oa = a * A.nel;
    const ob = b * B.nel;
    for (let x = 0; x < A.nel; x++) {
      const i = A.occ[oa + x]!;
      for (let y = 0; y < B.nel; y++) d += jmat[i * n + B.occ[ob + y]!]!;
    }
    diag[row - rowStart] = d;
    rc[len] = row;
    rv[len++] = d;
    // alpha singles (beta fixed): σ(base + Σ_{k∈β} (qp|kk)) — and alpha-beta doubles
    for (let e = A.sOff[a]!; e < A.sOff[a + 1]!; e++) {
      const t = A.sTarget[e]!;
      const p = A.sFrom[e]!;
      const q = A.sTo[e]!;
      const sa = A.sSign[e]!;
      // probe (t, b)
      let s = Math.imul(t ^ Math.imul(b ^ 0x7f4a7c15, 0x9e3779b1), 0x85ebca6b);
      s ^= s >>> 13;
      s = Math.imul(s, 0xc2b2ae35);
      s ^= s >>> 16;
      s &= mask;
      let col = -1;
      for (;;) {
        const v = hV[s]!;
        if (v === -1) break;
        if (hLo[s] === t && hHi[s] === b) {
          col = v;
          break;
        }
        s = (s + 1) & mask;
      }
      if (col >= 0) {
        let val = A.sBase[e]!;
        const qp = (q * n + p) * n * n;
        for (let y = 0; y < B.nel; y++) {
          const k = B.occ[ob + y]!;
          val += eri[qp + k * n + k]!;
        }
        val *= sa;
        if (Math.abs(val) > tol) {
          rc[len] = col;
          rv[len++] = val;
        }
      }
      // alpha-beta doubles: (p→q)α (r→u)β, element σα σβ (qp|ur)
      const qpBase = (q * n + p) * n * n;
      for (let f = B.sOff[b]!; f < B.sOff[b + 1]!; f++) {
        const tb = B.sTarget[f]!;
        const val = sa * B.sSign[f]! * eri[qpBase + B.sTo[f]! * n + B.sFrom[f]!]!;
        if (!(Math.abs(val) > tol)) continue;
        let s2 = Math.imul(t ^ Math.imul(tb ^ 0x7f4a7c15, 0x9e3779b1), 0x85ebca6b);
        s2 ^= s2 >>> 13;
        s2 = Math.imul(s2, 0xc2b2ae35);
        s2 ^= s2 >>> 16;
        s2 &= mask;
        for (;;) {
          const v = hV[s2]!;
          if (v === -1) break;
          if (hLo[s2] === t && hHi[s2] === tb) {
            rc[len] = v;
            rv[len++] = val;
            break;
          }
          s2 = (s2 + 1) & mask;
        }
      }
    }
    // beta singles (alpha fixed)
    for (let f = B.sOff[b]!; f < B.sOff[b + 1]!; f++) {
      const tb = B.sTarget[f]!;
      let s = Math.imul(a ^ Math.imul(tb ^ 0x7f4a7c15, 0x9e3779b1), 0x85ebca6b);
      s ^= s >>> 13;
      s = Math.imul(s, 0xc2b2ae35);
      s ^= s >>> 16;
      s &= mask;
      let col = -1;
      for (;;) {
        const v = hV[s]!;
        if (v === -1) break;
        if (hLo[s] === a && hHi[s] === tb) {
          col = v;
          break;
        }
        s = (s + 1) & mask;
      }
      if (col < 0) continue;
      const p = B.sFrom[f]!;
      const q = B.sTo[f]!;
      let val = B.sBase[f]!;
      const qp = (q * n + p) * n * n;
      for (let x = 0; x < A.nel; x++) {
        const k = A.occ[oa + x]!;
        val += eri[qp + k * n + k]!;
      }
      val *= B.sSign[f]!;
      if (Math.abs(val) > tol) {
        rc[len] = col;
        rv[len++] = val;
      }
    }
    // same-spin doubles: alpha-alpha (beta fixed), then beta-beta (alpha fixed)
    for (let spin = 0; spin < 2; spin++) {
      const T = spin === 0 ? A : B;
      const own = spin === 0 ? a : b;
      for (let e = T.dOff[own]!; e < T.dOff[own + 1]!; e++) {
        const ka = spin === 0 ? T.dTarget[e]! : a;
        const kb = spin === 0 ? b : T.dTarget[e]!;
        let s = Math.imul(ka ^ Math.imul(kb ^ 0x7f4a7c15, 0x9e3779b1), 0x85ebca6b);
        s ^= s >>> 13;
        s = Math.imul(s, 0xc2b2ae35);
        s ^= s >>> 16;
        s &= mask;
        for (;;) {
          const v = hV[s]!;
          if (v === -1) break;
          if (hLo[s] === ka && hHi[s] === kb) {
            const val = T.dValue[e]!;
            if (Math.abs(val) > tol) {
              rc[len] = v;
              rv[len++] = val;
            }
            break;
          }
          s = (s + 1) & mask;
        }
      }
    }
    // sort the row by column: key = col·2^21 + position (exact in float64)
    for (let k = 0; k < len; k++) keys[k] = rc[k]! * SHIFT + k;
    const sorted = keys.subarray(0, len).sort();
    if (used + len > cap) {
      while (cap < used + len) cap *= 2;
      const nc = new Int32Array(cap);
      nc.set(cols.subarray(0, used));
      cols = nc;
      const nv = new Float64Array(cap);
      nv.set(vals.subarray(0, used));
      vals = nv;
    }
    for (let k = 0; k < len; k++) {
      const key = sorted[k]!;
      const c = Math.floor(key / SHIFT);
      cols[used] = c;
      vals[used++] = rv[key - c * SHIFT]!;
    }
    lengths[row - rowStart] = len;
  }
  return { lengths, cols: cols.slice(0, used), vals: vals.slice(0, used), diag };
}
