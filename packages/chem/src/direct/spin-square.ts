/**
 * ⟨S²⟩ of vectors in the direct layout, from the direct σ's own replacement lists (./tables.ts)
 * instead of the separate spin tables of ../hamiltonian/spin.ts (whose set-up was ≈ 60 % of a
 * 0.09 s ⟨S²⟩ pass at 6·10^4 determinants). With S₊ = Σ_p a†_pα a_pβ:
 *
 *   S² = S_z² + S_z + S₋S₊,   S₋S₊ = Σ_p n_pβ (1 − n_pα) − Σ_{p≠q} E^α_pq E^β_qp,
 *
 * (a_qα a†_pα = −a†_pα a_qα for p ≠ q; moving a β pair past α operators costs no sign). The
 * exchange sum is the α–β contraction of σ with (pq|rs) replaced by δ_ps δ_qr: per α
 * replacement t = (p q) of string I and per β string b of its row, the β replacement of b with
 * the pair (q p). Cost O(size · mA) reads.
 * @module
 */
import type { DeterminantSpace } from '../determinants/space';
import type { DirectContext } from './tables';

function popcount32(x: number): number {
  let v = x >>> 0;
  v -= (v >>> 1) & 0x55555555;
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/** Per β string and orbital pair (r·norb + s): its entry in the β replacement lists, or −1. */
function betaPairEntries(ctx: DirectContext): Int32Array {
  const n2 = ctx.norb * ctx.norb;
  const at = new Int32Array(ctx.nB * n2).fill(-1);
  for (let b = 0; b < ctx.nB; b++) for (let e = b * ctx.mB; e < (b + 1) * ctx.mB; e++) at[b * n2 + ctx.bPair[e]!] = e;
  return at;
}

/**
 * A function giving ⟨x|S²|x⟩ / ⟨x|x⟩ for x in the direct layout of `ctx` (a context of
 * ./tables.ts over `space`); the β lookup table (nB·norb² int32) is built once.
 * @example const s2 = directSpinSquared(ctx, space); s2(x); // 0 for a singlet
 */
export function directSpinSquared(ctx: DirectContext, space: DeterminantSpace): (x: Float64Array) => number {
  const { norb, nA, mA, rowStart, rowLen, irrepA, betaSorted, betaStart, target, aTarget, aPair, aSign, bTarget, bSign } = ctx;
  const n2 = norb * norb;
  const entries = betaPairEntries(ctx);
  const sz = (space.nalpha - space.nbeta) / 2;
  const { lo: aLo, hi: aHi } = space.alpha;
  const { lo: bLo, hi: bHi } = space.beta;
  return (x) => {
    let norm = 0;
    let direct = 0;
    let exchange = 0;
    for (let i = 0; i < nA; i++) {
      const r0 = rowStart[i]!;
      const len = rowLen[i]!;
      if (len === 0) continue;
      const list = betaStart[irrepA[i]! ^ target]!;
      for (let k = 0; k < len; k++) {
        const b = betaSorted[list + k]!;
        const c2 = x[r0 + k]! * x[r0 + k]!;
        norm += c2;
        direct += c2 * (popcount32(bLo[b]! & ~aLo[i]!) + popcount32(bHi[b]! & ~aHi[i]!));
      }
      for (let t = i * mA; t < (i + 1) * mA; t++) {
        const pq = aPair[t]!;
        const p = (pq / norb) | 0;
        const q = pq - p * norb;
        if (p === q) continue;
        const qp = q * norb + p;
        const j0 = rowStart[aTarget[t]!]!;
        let s = 0;
        for (let k = 0; k < len; k++) {
          const e = entries[betaSorted[list + k]! * n2 + qp]!;
          if (e >= 0) s += x[r0 + k]! * bSign[e]! * x[j0 + bTarget[e]!]!;
        }
        exchange += aSign[t]! * s;
      }
    }
    if (norm === 0) return Number.NaN;
    const s2 = sz * sz + sz + (direct - exchange) / norm;
    // ⟨S²⟩ ≥ 0: a value just below zero is the cancellation in direct − exchange (≈ 1e-15), shown as 0;
    // anything clearly negative stays visible (it would be a bug, not rounding)
    return s2 < 0 && s2 > -1e-10 ? 0 : s2;
  };
}

/**
 * y = S² x for x in the direct layout of `ctx` (the terms of {@link directSpinSquared}, applied
 * instead of contracted): for the spin projector of start vectors. Cost O(size · mA) per product.
 * @example const s2 = directSpinSquaredApply(ctx, space); s2(x, y);
 */
export function directSpinSquaredApply(ctx: DirectContext, space: DeterminantSpace): (x: Float64Array, y: Float64Array) => void {
  const { norb, nA, mA, rowStart, rowLen, irrepA, betaSorted, betaStart, target, aTarget, aPair, aSign, bTarget, bSign } = ctx;
  const n2 = norb * norb;
  const entries = betaPairEntries(ctx);
  const sz = (space.nalpha - space.nbeta) / 2;
  const { lo: aLo, hi: aHi } = space.alpha;
  const { lo: bLo, hi: bHi } = space.beta;
  return (x, y) => {
    for (let i = 0; i < nA; i++) {
      const r0 = rowStart[i]!;
      const len = rowLen[i]!;
      if (len === 0) continue;
      const list = betaStart[irrepA[i]! ^ target]!;
      for (let k = 0; k < len; k++) {
        const b = betaSorted[list + k]!;
        y[r0 + k] = (sz * sz + sz + popcount32(bLo[b]! & ~aLo[i]!) + popcount32(bHi[b]! & ~aHi[i]!)) * x[r0 + k]!;
      }
      for (let t = i * mA; t < (i + 1) * mA; t++) {
        const pq = aPair[t]!;
        const p = (pq / norb) | 0;
        const q = pq - p * norb;
        if (p === q) continue;
        const qp = q * norb + p;
        const j0 = rowStart[aTarget[t]!]!;
        const sa = aSign[t]!;
        for (let k = 0; k < len; k++) {
          const e = entries[betaSorted[list + k]! * n2 + qp]!;
          if (e >= 0) y[r0 + k]! -= sa * bSign[e]! * x[j0 + bTarget[e]!]!;
        }
      }
    }
  };
}

/**
 * Configuration ids of the direct layout's positions: determinants with the same doubly and singly
 * occupied orbitals share one (S² mixes only those). O(size) plus a hash per position.
 * @example const cfg = directConfigurations(ctx, space); cfg[pos];
 */
export function directConfigurations(ctx: DirectContext, space: DeterminantSpace): Int32Array {
  const { nA, rowStart, rowLen, irrepA, betaSorted, betaStart, target } = ctx;
  const { lo: aLo, hi: aHi } = space.alpha;
  const { lo: bLo, hi: bHi } = space.beta;
  const size = nA === 0 ? 0 : rowStart[nA - 1]! + rowLen[nA - 1]!;
  const out = new Int32Array(size);
  const ids = new Map<string | number, number>();
  // up to 26 orbitals the pair (doubles, singles) is one exact double; beyond, a string key
  const small = space.norb <= 26;
  for (let i = 0; i < nA; i++) {
    const list = betaStart[irrepA[i]! ^ target]!;
    for (let k = 0; k < rowLen[i]!; k++) {
      const b = betaSorted[list + k]!;
      const key = small ? ((aLo[i]! & bLo[b]!) >>> 0) * 67108864 + ((aLo[i]! ^ bLo[b]!) >>> 0) : `${aLo[i]! & bLo[b]!},${aHi[i]! & bHi[b]!},${aLo[i]! ^ bLo[b]!},${aHi[i]! ^ bHi[b]!}`;
      let id = ids.get(key);
      if (id === undefined) ids.set(key, (id = ids.size));
      out[rowStart[i]! + k] = id;
    }
  }
  return out;
}
