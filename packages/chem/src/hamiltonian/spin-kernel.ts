/**
 * The kernels of S² = S_z² + S_z + S₋S₊ over a determinant space. Like ./kernel.ts they run
 * on the main thread and, as source text, inside worker threads (./spin-worker.ts): they
 * must stay SELF-CONTAINED — no imports, no closures over module variables, no nested named
 * functions.
 *
 * The S₋S₊ partners of D = (a, b) are D' = a†_qβ a_qα a†_pα a_pβ D for every β-only orbital
 * p and α-only orbital q: alpha string a' = a − q + p, beta string b' = b − p + q. With
 * f(x) = #(a below x) + #(b below x) the fermionic sign is (−1)^(f(p) + f(q)) (the [p < q]
 * terms of moving past each other cancel), so it splits into an alpha part
 * #(a below p) + #(a below q) and a beta part #(b below p) + #(b below q). The target string
 * indices come from per-string move tables (one Int32 per occupied × empty orbital) instead
 * of a hash probe per term.
 *
 * Two kernels:
 * - {@link spinRowsKernel}, per determinant: any space; the target determinant is found by
 *   arithmetic (full product in alpha-major order), a dense (alpha, beta) table, or the hash.
 * - {@link spinPairsKernel}, per alpha string, for spaces that pair each alpha string with
 *   a whole class of beta strings (FCI, CAS, with or without an irrep): for each alpha move
 *   a → a' and each beta move b → b' of the matching orbital pair and of a's class, the
 *   product c[a', b']·c[a, b]; the vector is read row by row (rows a and a'), which keeps it
 *   in cache on 10^7-determinant spaces.
 *
 * S₋S₊ is symmetric and the partner's reverse move swaps p and q, so the expectation kernels
 * sum the moves with p < q and double them.
 * @module
 */

/** One spin's strings and move table (see {@link SpinContext}). */
export interface SpinStrings {
  count: number;
  nel: number;
  /** norb − nel. */
  nvirt: number;
  lo: Uint32Array;
  hi: Uint32Array;
  /** Occupied orbitals, `nel` per string, ascending (empty without a move table). */
  occ: Int32Array;
  /** Empty orbitals, `nvirt` per string, ascending (empty without a move table). */
  virt: Int32Array;
  /**
   * move[s·nel·nvirt + x·nvirt + v]: index of string s with its x-th occupied orbital moved to
   * its v-th empty orbital, or −1 when that string is not in the list. Empty when the table
   * would be too large: the kernels then probe the string hash below.
   */
  move: Int32Array;
  hashMask: number;
  hashLo: Uint32Array;
  hashHi: Uint32Array;
  hashVals: Int32Array;
}

/** Flat inputs of the S² kernels (numbers and typed arrays only, so they can be shared). */
export interface SpinContext {
  norb: number;
  /** S_z² + S_z, the constant part of the diagonal. */
  szTerm: number;
  size: number;
  detAlpha: Int32Array;
  detBeta: Int32Array;
  alpha: SpinStrings;
  beta: SpinStrings;
  /**
   * How (alpha index, beta index) becomes a determinant index: 0 alpha·nBeta + beta (every
   * pair present, alpha-major), 1 pairIndex[alpha·nBeta + beta] (−1 outside), 2 the hash.
   */
  lookup: number;
  nBeta: number;
  /** Dense table for lookup 1 (empty otherwise). */
  pairIndex: Int32Array;
  hashMask: number;
  hashLo: Uint32Array;
  hashHi: Uint32Array;
  hashVals: Int32Array;
  /**
   * Beta classes, for {@link spinPairsKernel} (0 when the space has none): the space is the
   * union over alpha strings a of a × (all beta strings of class alphaClass[a]), the classes
   * being disjoint — FCI and CAS (one class), FCI and CAS of one irrep (a class per beta
   * irrep), the same reordered.
   */
  classes: number;
  /** Class of each alpha string's betas, −1 for an alpha string without determinants. */
  alphaClass: Int32Array;
  /** Beta strings of class c: classBeta[classOff[c]..classOff[c+1] − 1], ascending. */
  classOff: Int32Array;
  classBeta: Int32Array;
  /**
   * Beta moves grouped by orbital pair and class (empty without classes): for p < q,
   * entries pairOff[key]..pairOff[key + 1] − 1 with key = (p·norb + q)·classes + class are
   * the beta strings b of that class holding p and not q (pairB), the index of b − p + q
   * (pairT) and the parity #(b below p) + #(b below q) (pairS, 0 or 1).
   */
  pairOff: Int32Array;
  pairB: Int32Array;
  pairT: Int32Array;
  pairS: Int32Array;
}

/**
 * S² terms of determinants [start, end). Without callbacks: returns [num_r..., den_r...] for
 * the vectors, num_r = Σ_k Σ_t c_r[t]·S²_tk·c_r[k] over the range's columns k (the p < q
 * moves, doubled), den_r = Σ_k c_r[k]². With `diag` and `off`: calls diag(k, S²_kk) and
 * off(k, t, ±1) for every partner t inside the space (all moves, p ascending, then q
 * ascending) and returns zeros. Cost O(n_open² + norb) per determinant, O(1) per term with
 * the move tables and lookups 0–1, hash probes otherwise. Self-contained.
 * @example
 * const [num, den] = spinRowsKernel(ctx, [c], 0, ctx.size);
 */
export function spinRowsKernel(
  ctx: SpinContext,
  vecs: readonly Float64Array[],
  start: number,
  end: number,
  diag?: (k: number, value: number) => void,
  off?: (k: number, t: number, sign: number) => void,
): Float64Array {
  // Long by design (a house-style exception): shipped to worker threads by its source text (./spin-worker.ts), so it must be self-contained, and its determinant loop is the ⟨S²⟩ hot path.
  const n = ctx.norb;
  const R = vecs.length;
  const out = new Float64Array(2 * R);
  const acc = new Float64Array(R);
  const A = ctx.alpha;
  const B = ctx.beta;
  const aNv = A.nvirt;
  const bNv = B.nvirt;
  const aStride = A.nel * aNv;
  const bStride = B.nel * bNv;
  const aMove = A.move;
  const bMove = B.move;
  const aTab = aMove.length > 0;
  const bTab = bMove.length > 0;
  const lookup = ctx.lookup;
  const nB = ctx.nBeta;
  const pix = ctx.pairIndex;
  const half = off === undefined;
  // β-only orbitals p: orbital, empty position in a, occupied position in b, f(p) parity
  const pOrb = new Int32Array(n);
  const pA = new Int32Array(n);
  const pB = new Int32Array(n);
  const pS = new Int32Array(n);
  // α-only orbitals q: orbital, occupied position in a, empty position in b, f(q) parity
  const qOrb = new Int32Array(n);
  const qA = new Int32Array(n);
  const qB = new Int32Array(n);
  const qS = new Int32Array(n);
  for (let k = start; k < end; k++) {
    const ia = ctx.detAlpha[k]!;
    const ib = ctx.detBeta[k]!;
    const aLo = A.lo[ia]!;
    const aHi = A.hi[ia]!;
    const bLo = B.lo[ib]!;
    const bHi = B.hi[ib]!;
    let ca = 0;
    let cb = 0;
    let np = 0;
    let nq = 0;
    for (let x = 0; x < n; x++) {
      const ab = x < 32 ? (aLo >>> x) & 1 : (aHi >>> (x - 32)) & 1;
      const bb = x < 32 ? (bLo >>> x) & 1 : (bHi >>> (x - 32)) & 1;
      if (bb === 1 && ab === 0) {
        pOrb[np] = x;
        pA[np] = x - ca;
        pB[np] = cb;
        pS[np++] = (ca + cb) & 1;
      } else if (ab === 1 && bb === 0) {
        qOrb[nq] = x;
        qA[nq] = ca;
        qB[nq] = x - cb;
        qS[nq++] = (ca + cb) & 1;
      }
      ca += ab;
      cb += bb;
    }
    const dval = ctx.szTerm + np;
    if (diag) diag(k, dval);
    else {
      for (let r = 0; r < R; r++) {
        const x = vecs[r]![k]!;
        out[r]! += dval * x * x;
        out[R + r]! += x * x;
      }
    }
    let j0 = 0;
    for (let i = 0; i < np; i++) {
      const p = pOrb[i]!;
      if (half) while (j0 < nq && qOrb[j0]! < p) j0++;
      for (let j = half ? j0 : 0; j < nq; j++) {
        const q = qOrb[j]!;
        // target strings a − q + p and b − p + q: move tables, or −2 for a string hash probe
        let ta = aTab ? aMove[ia * aStride + qA[j]! * aNv + pA[i]!]! : -2;
        let tb = bTab ? bMove[ib * bStride + pB[i]! * bNv + qB[j]!]! : -2;
        if (ta === -1 || tb === -1) continue;
        for (let side = ta === -2 ? 0 : tb === -2 ? 1 : 2; side < 2; side++) {
          if ((side === 0 ? ta : tb) !== -2) continue;
          const S = side === 0 ? A : B;
          const add = side === 0 ? p : q;
          const del = side === 0 ? q : p;
          let lo = side === 0 ? aLo : bLo;
          let hi = side === 0 ? aHi : bHi;
          if (add < 32) lo = (lo | (1 << add)) >>> 0;
          else hi = (hi | (1 << (add - 32))) >>> 0;
          if (del < 32) lo = (lo & ~(1 << del)) >>> 0;
          else hi = (hi & ~(1 << (del - 32))) >>> 0;
          let s = Math.imul(lo ^ Math.imul(hi ^ 0x7f4a7c15, 0x9e3779b1), 0x85ebca6b);
          s ^= s >>> 13;
          s = Math.imul(s, 0xc2b2ae35);
          s ^= s >>> 16;
          s &= S.hashMask;
          let found = -1;
          for (;;) {
            const v = S.hashVals[s]!;
            if (v === -1) break;
            if (S.hashLo[s] === lo && S.hashHi[s] === hi) {
              found = v;
              break;
            }
            s = (s + 1) & S.hashMask;
          }
          if (side === 0) ta = found;
          else tb = found;
        }
        if (ta < 0 || tb < 0) continue;
        let t: number;
        if (lookup === 0) t = ta * nB + tb;
        else if (lookup === 1) t = pix[ta * nB + tb]!;
        else {
          let s = Math.imul(ta ^ Math.imul(tb ^ 0x7f4a7c15, 0x9e3779b1), 0x85ebca6b);
          s ^= s >>> 13;
          s = Math.imul(s, 0xc2b2ae35);
          s ^= s >>> 16;
          s &= ctx.hashMask;
          t = -1;
          for (;;) {
            const v = ctx.hashVals[s]!;
            if (v === -1) break;
            if (ctx.hashLo[s] === ta && ctx.hashHi[s] === tb) {
              t = v;
              break;
            }
            s = (s + 1) & ctx.hashMask;
          }
        }
        if (t < 0) continue;
        const neg = (pS[i]! ^ qS[j]!) === 1;
        if (off) off(k, t, neg ? -1 : 1);
        else {
          for (let r = 0; r < R; r++) {
            const v = vecs[r]!;
            const w = v[t]! * v[k]!;
            acc[r]! += neg ? -w : w;
          }
        }
      }
    }
  }
  for (let r = 0; r < R; r++) out[r]! += 2 * acc[r]!;
  return out;
}

/**
 * Expectation sums of alpha strings [start, end) in a space with beta classes (lookup 0 or
 * 1, pair lists present): returns [num_r..., den_r...] as {@link spinRowsKernel} does for all
 * determinants (a, ·). Cost O(class size) per alpha string plus O(1) per S₋S₊ term, two
 * vector rows per alpha move. Self-contained.
 * @example
 * const [num, den] = spinPairsKernel(ctx, [c], 0, ctx.alpha.count);
 */
export function spinPairsKernel(ctx: SpinContext, vecs: readonly Float64Array[], start: number, end: number): Float64Array {
  // Long by design (a house-style exception): shipped to worker threads by its source text (./spin-worker.ts), so it must be self-contained, and its alpha-string loop is the ⟨S²⟩ hot path.
  const n = ctx.norb;
  const R = vecs.length;
  const out = new Float64Array(2 * R);
  const A = ctx.alpha;
  const B = ctx.beta;
  const aNel = A.nel;
  const aNv = A.nvirt;
  const aStride = aNel * aNv;
  const nB = ctx.nBeta;
  const dense = ctx.lookup === 0;
  const pix = ctx.pairIndex;
  const pairOff = ctx.pairOff;
  const pairB = ctx.pairB;
  const pairT = ctx.pairT;
  const pairS = ctx.pairS;
  const nC = ctx.classes;
  const members = ctx.classBeta;
  const dcol = new Float64Array(nB);
  for (let a = start; a < end; a++) {
    const c = ctx.alphaClass[a]!;
    if (c < 0) continue;
    const m0 = ctx.classOff[c]!;
    const m1 = ctx.classOff[c + 1]!;
    const aLo = A.lo[a]!;
    const aHi = A.hi[a]!;
    const row = a * nB;
    // diagonal: S_z² + S_z + #(b \ a)
    for (let m = m0; m < m1; m++) {
      const b = members[m]!;
      let x = (B.lo[b]! & ~aLo) >>> 0;
      x -= (x >>> 1) & 0x55555555;
      x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
      let y = (B.hi[b]! & ~aHi) >>> 0;
      y -= (y >>> 1) & 0x55555555;
      y = (y & 0x33333333) + ((y >>> 2) & 0x33333333);
      const cnt = ((Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff) + ((Math.imul((y + (y >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff);
      dcol[m - m0] = ctx.szTerm + cnt;
    }
    for (let r = 0; r < R; r++) {
      const v = vecs[r]!;
      let num = 0;
      let den = 0;
      for (let m = m0; m < m1; m++) {
        const b = members[m]!;
        const x = v[dense ? row + b : pix[row + b]!]!;
        num += dcol[m - m0]! * x * x;
        den += x * x;
      }
      // alpha moves q → p with p < q (a holds q, not p), each with the beta moves p → q
      let off = 0;
      for (let xq = 0; xq < aNel; xq++) {
        const q = A.occ[a * aNel + xq]!;
        for (let vp = 0; vp < aNv; vp++) {
          const p = A.virt[a * aNv + vp]!;
          if (p > q) break;
          const ta = A.move[a * aStride + xq * aNv + vp]!;
          if (ta < 0) continue;
          const trow = ta * nB;
          const key = (p * n + q) * nC + c;
          const e1 = pairOff[key + 1]!;
          let s = 0;
          if (dense) {
            for (let e = pairOff[key]!; e < e1; e++) {
              const w = v[trow + pairT[e]!]! * v[row + pairB[e]!]!;
              s += pairS[e] === 1 ? -w : w;
            }
          } else {
            for (let e = pairOff[key]!; e < e1; e++) {
              const t = pix[trow + pairT[e]!]!;
              if (t < 0) continue; // the partner is outside the space
              const w = v[t]! * v[pix[row + pairB[e]!]!]!;
              s += pairS[e] === 1 ? -w : w;
            }
          }
          off += ((xq + p - vp) & 1) === 1 ? -s : s; // alpha parity #(a below q) + #(a below p)
        }
      }
      out[r]! += num + 2 * off;
      out[R + r]! += den;
    }
  }
  return out;
}
