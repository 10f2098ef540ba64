/**
 * Tables of the direct (matrix-free) σ = H·c for FCI and CAS spaces: the coefficient layout
 * (one contiguous row of β coefficients per α string, D2h-subgroup blocks), the single
 * replacement lists of α and β strings (with signs, grouped by the irrep of the orbital pair),
 * the same-spin string Hamiltonians, and the diagonal. Nothing here grows with the number of
 * determinants except the diagonal and the layout permutation: the operator holds strings,
 * integrals and vectors, never H.
 *
 * Hamiltonian split (chemists' notation, E^σ_pq = a†_pσ a_qσ):
 *   H = H_α ⊗ 1 + 1 ⊗ H_β + Σ_pqrs (pq|rs) E^α_pq E^β_rs,
 * where H_α, H_β are the one-spin Hamiltonians (one-electron part plus same-spin two-electron
 * part, Slater–Condon) as sparse matrices over strings, and the α–β part is applied as a gather
 * of replacement rows, a contraction with the integrals and a scatter (./kernel.ts).
 * @module
 */
import { InvalidParameterError, NotSupportedError } from '@gpusparse/formats';
import { binomial } from '../determinants/bits';
import type { DeterminantSpace } from '../determinants/space';
import { type StringList, stringIndex, stringIrreps } from '../determinants/strings';
import type { Fcidump } from '../fcidump/types';
import { applySingle, spinTables } from '../hamiltonian/tables';

/** Flat inputs of the σ kernel (typed arrays only, so that worker threads can share them). */
export interface DirectContext {
  norb: number;
  nA: number;
  nB: number;
  /** Entries per α / β replacement list (same for every string: nel·(norb − nel) + nel). */
  mA: number;
  mB: number;
  /** Target irrep (0-based XOR numbering; 0 without symmetry). */
  target: number;
  /** Start of each α string's row in the direct layout, and its length (β strings of the matching irrep). */
  rowStart: Int32Array;
  rowLen: Int32Array;
  /** Entries of each row the kernel computes (its first ones): rowLen, or fewer under time reversal (./time-reversal.ts). */
  rowCompute: Int32Array;
  /** Irrep of each α string. */
  irrepA: Int32Array;
  /** β strings sorted by irrep (stable), and where each irrep starts (9 entries). */
  betaSorted: Int32Array;
  betaStart: Int32Array;
  /** Same-spin α Hamiltonian rows (diagonal included; only targets of the same irrep). */
  hAOff: Int32Array;
  hATarget: Int32Array;
  hAValue: Float64Array;
  /** Same-spin β Hamiltonian rows; targets as positions inside their irrep's β list. */
  hBOff: Int32Array;
  hBTarget: Int32Array;
  hBValue: Float64Array;
  /** α replacements of string I (mA each, sorted by pair irrep): J = E_qp I, pair p·norb + q, sign. */
  aTarget: Int32Array;
  aPair: Int32Array;
  aSign: Float64Array;
  /** Per α string, 9 offsets into its list: where each pair irrep's entries start. */
  aGroup: Int32Array;
  /** β replacements: target position inside its irrep's list, pair r·norb + s, sign, pair irrep. */
  bTarget: Int32Array;
  bPair: Int32Array;
  bSign: Float64Array;
  bGroup: Int32Array;
  /** Per β replacement: bPair·mA (its row of the contraction table) and bTarget·mA (its row of the gathered block). */
  bK: Int32Array;
  bX: Int32Array;
  /** Orbital pairs sorted by pair irrep, and where each irrep starts (9 entries). */
  pairSorted: Int32Array;
  pairStart: Int32Array;
  /** (pq|rs), norb⁴ row-major (the FCIDUMP's dense array, not copied). */
  eri: Float64Array;
  /** Largest row length (scratch size). */
  maxRow: number;
}

/** The direct layout against the space's determinant order. */
export interface DirectLayout {
  /** perm[k] = position of the space's determinant k in the direct layout; undefined when the identity. */
  perm: Int32Array | undefined;
  size: number;
}

function fullStrings(list: StringList, norb: number, nel: number, what: string): void {
  const full = binomial(norb, nel);
  if (list.count !== full) {
    throw new NotSupportedError(
      `direct σ: the ${what} strings must be all C(${norb},${nel}) = ${full} strings (an FCI or CAS space), got ${list.count}; truncated CI needs the explicit Hamiltonian (sigma: 'explicit')`,
    );
  }
}

/** Irreps of the strings and the target, or all zero when the space is the full product. */
function spaceIrreps(fd: Fcidump, space: DeterminantSpace): { gA: Int32Array; gB: Int32Array; orb: Int32Array; target: number } {
  const nA = space.alpha.count;
  const nB = space.beta.count;
  if (space.size === nA * nB) return { gA: new Int32Array(nA), gB: new Int32Array(nB), orb: new Int32Array(fd.norb), target: 0 };
  const orb = Int32Array.from(fd.orbsym, (s) => s - 1);
  const gA = stringIrreps(space.alpha.lo, space.alpha.hi, fd.orbsym);
  const gB = stringIrreps(space.beta.lo, space.beta.hi, fd.orbsym);
  const target = gA[space.detAlpha[0]!]! ^ gB[space.detBeta[0]!]!;
  for (let k = 0; k < space.size; k++) {
    if ((gA[space.detAlpha[k]!]! ^ gB[space.detBeta[k]!]!) !== target) {
      throw new NotSupportedError(`direct σ: determinant ${k} of ${space.label} is not of the space's irrep ${target + 1}; expected one point-group block`);
    }
  }
  return { gA, gB, orb, target };
}

/** Single replacements E_qp (p occupied, q empty or q = p) of every string, sorted by pair irrep. */
function replacements(list: StringList, norb: number, orb: Int32Array, place: (t: number) => number) {
  const nel = list.electrons;
  const m = nel * (norb - nel) + nel;
  const target = new Int32Array(list.count * m);
  const pair = new Int32Array(list.count * m);
  const sign = new Float64Array(list.count * m);
  const group = new Int32Array(list.count * 9);
  const pairIrrep = new Int32Array(m);
  const tmp = { t: new Int32Array(m), p: new Int32Array(m), s: new Float64Array(m) };
  for (let s = 0; s < list.count; s++) {
    const lo = list.lo[s]!;
    const hi = list.hi[s]!;
    let k = 0;
    for (let p = 0; p < norb; p++) {
      const occP = p < 32 ? (lo >>> p) & 1 : (hi >>> (p - 32)) & 1;
      if (!occP) continue;
      for (let q = 0; q < norb; q++) {
        const occQ = q < 32 ? (lo >>> q) & 1 : (hi >>> (q - 32)) & 1;
        if (occQ && q !== p) continue;
        let t = s;
        let sg = 1;
        if (q !== p) {
          const [sgn, a, b] = applySingle(lo, hi, p, q);
          t = stringIndex(list, a, b);
          sg = sgn;
        }
        tmp.t[k] = t;
        tmp.p[k] = p * norb + q;
        tmp.s[k] = sg;
        pairIrrep[k] = orb[p]! ^ orb[q]!;
        k++;
      }
    }
    // counting sort by pair irrep (stable)
    const g = s * 9;
    for (let x = 0; x < m; x++) group[g + pairIrrep[x]! + 1]!++;
    for (let x = 0; x < 8; x++) group[g + x + 1]! += group[g + x]!;
    const fill = group.slice(g, g + 8);
    for (let x = 0; x < m; x++) {
      const at = s * m + fill[pairIrrep[x]!]!++;
      target[at] = place(tmp.t[x]!);
      pair[at] = tmp.p[x]!;
      sign[at] = tmp.s[x]!;
    }
  }
  return { m, target, pair, sign, group };
}

/** The one-spin Hamiltonian as sparse rows: diagonal, singles and doubles that keep the irrep. */
function sameSpinRows(list: StringList, fd: Fcidump, irreps: Int32Array, place: (t: number) => number) {
  const t = spinTables(list, fd.norb, fd.h1, fd.eri);
  const off = new Int32Array(t.count + 1);
  const tg: number[] = [];
  const val: number[] = [];
  for (let s = 0; s < t.count; s++) {
    tg.push(place(s));
    val.push(t.diag[s]!);
    for (let e = t.sOff[s]!; e < t.sOff[s + 1]!; e++) {
      const j = t.sTarget[e]!;
      if (irreps[j] !== irreps[s]) continue; // zero by symmetry, and outside the block anyway
      tg.push(place(j));
      val.push(t.sSign[e]! * t.sBase[e]!);
    }
    for (let e = t.dOff[s]!; e < t.dOff[s + 1]!; e++) {
      const j = t.dTarget[e]!;
      if (irreps[j] !== irreps[s]) continue;
      tg.push(place(j));
      val.push(t.dValue[e]!);
    }
    off[s + 1] = tg.length;
  }
  return { off, target: Int32Array.from(tg), value: Float64Array.from(val), diag: t.diag };
}

/**
 * Build the kernel's context and the layout for `space` (an FCI or CAS space over the orbitals
 * of `fd`, with or without a point-group block). Throws NotSupportedError for spaces without
 * the full string structure (truncated CI, explicit lists). Cost O(n_strings · (nel·nvirt)²)
 * for the same-spin doubles plus O(size) for the layout check.
 * @example
 * const { ctx, layout } = directContext(fd, space);
 */
export function directContext(fd: Fcidump, space: DeterminantSpace): { ctx: DirectContext; layout: DirectLayout; diagonal: Float64Array } {
  if (fd.norb !== space.norb) throw new InvalidParameterError('space.norb', `${fd.norb} (the FCIDUMP's NORB)`, space.norb);
  const norb = fd.norb;
  fullStrings(space.alpha, norb, space.nalpha, 'α');
  fullStrings(space.beta, norb, space.nbeta, 'β');
  const { gA, gB, orb, target } = spaceIrreps(fd, space);
  const nA = space.alpha.count;
  const nB = space.beta.count;
  // β strings by irrep, and each one's position inside its irrep
  const betaStart = new Int32Array(9);
  for (let j = 0; j < nB; j++) betaStart[gB[j]! + 1]!++;
  for (let g = 0; g < 8; g++) betaStart[g + 1]! += betaStart[g]!;
  const betaSorted = new Int32Array(nB);
  const posB = new Int32Array(nB);
  const fill = betaStart.slice(0, 8);
  for (let j = 0; j < nB; j++) {
    const at = fill[gB[j]!]!++;
    betaSorted[at] = j;
    posB[j] = at - betaStart[gB[j]!]!;
  }
  const rowStart = new Int32Array(nA);
  const rowLen = new Int32Array(nA);
  let size = 0;
  let maxRow = 0;
  for (let i = 0; i < nA; i++) {
    const g = gA[i]! ^ target;
    rowStart[i] = size;
    rowLen[i] = betaStart[g + 1]! - betaStart[g]!;
    size += rowLen[i]!;
    maxRow = Math.max(maxRow, rowLen[i]!);
  }
  if (size !== space.size) {
    throw new NotSupportedError(`direct σ: ${space.label} has ${space.size} determinants, the full block of irrep ${target + 1} has ${size}; expected an FCI or CAS space`);
  }
  const layout = spaceLayout(space, rowStart, posB);
  const a = replacements(space.alpha, norb, orb, (t) => t);
  // MS2 = 0 (one string list for both spins): the β tables are the α ones with targets renumbered
  const same = sameStringList(space);
  const b = same ? { ...a, target: a.target.map((t) => posB[t]!) } : replacements(space.beta, norb, orb, (t) => posB[t]!);
  const bGroup = new Int32Array(b.target.length);
  for (let e = 0; e < bGroup.length; e++) bGroup[e] = orb[Math.floor(b.pair[e]! / norb)]! ^ orb[b.pair[e]! % norb]!;
  const hA = sameSpinRows(space.alpha, fd, gA, (t) => t);
  const hB = same ? { ...hA, target: hA.target.map((t) => posB[t]!) } : sameSpinRows(space.beta, fd, gB, (t) => posB[t]!);
  const { pairSorted, pairStart } = pairsByIrrep(norb, orb);
  const ctx: DirectContext = {
    norb,
    nA,
    nB,
    mA: a.m,
    mB: b.m,
    target,
    rowStart,
    rowLen,
    rowCompute: rowLen,
    irrepA: gA,
    betaSorted,
    betaStart,
    hAOff: hA.off,
    hATarget: hA.target,
    hAValue: hA.value,
    hBOff: hB.off,
    hBTarget: hB.target,
    hBValue: hB.value,
    aTarget: a.target,
    aPair: a.pair,
    aSign: a.sign,
    aGroup: a.group,
    bTarget: b.target,
    bPair: b.pair,
    bSign: b.sign,
    bGroup,
    bK: b.pair.map((x) => x * a.m),
    bX: b.target.map((x) => x * a.m),
    pairSorted,
    pairStart,
    eri: fd.eri,
    maxRow,
  };
  return { ctx, layout, diagonal: directDiagonal(fd, space, hA.diag, hB.diag) };
}

/** Whether α and β use one string list (same count, same strings in the same order). */
function sameStringList(space: DeterminantSpace): boolean {
  const a = space.alpha;
  const b = space.beta;
  if (a === b) return true;
  if (a.count !== b.count || a.electrons !== b.electrons) return false;
  for (let i = 0; i < a.count; i++) if (a.lo[i] !== b.lo[i] || a.hi[i] !== b.hi[i]) return false;
  return true;
}

function pairsByIrrep(norb: number, orb: Int32Array): { pairSorted: Int32Array; pairStart: Int32Array } {
  const n2 = norb * norb;
  const pairStart = new Int32Array(9);
  for (let x = 0; x < n2; x++) pairStart[(orb[Math.floor(x / norb)]! ^ orb[x % norb]!) + 1]!++;
  for (let g = 0; g < 8; g++) pairStart[g + 1]! += pairStart[g]!;
  const pairSorted = new Int32Array(n2);
  const fill = pairStart.slice(0, 8);
  for (let x = 0; x < n2; x++) pairSorted[fill[orb[Math.floor(x / norb)]! ^ orb[x % norb]!]!++] = x;
  return { pairSorted, pairStart };
}

/** Where each of the space's determinants sits in the direct layout (undefined: the same order). */
function spaceLayout(space: DeterminantSpace, rowStart: Int32Array, posB: Int32Array): DirectLayout {
  const perm = new Int32Array(space.size);
  const seen = new Uint8Array(space.size);
  let identity = true;
  for (let k = 0; k < space.size; k++) {
    const at = rowStart[space.detAlpha[k]!]! + posB[space.detBeta[k]!]!;
    if (seen[at]) throw new NotSupportedError(`direct σ: determinant ${k} of ${space.label} repeats an (α, β) pair`);
    seen[at] = 1;
    perm[k] = at;
    if (at !== k) identity = false;
  }
  return { perm: identity ? undefined : perm, size: space.size };
}

/**
 * diag(H) in the space's order: same-spin diagonals plus Σ_{p∈α, q∈β} (pp|qq), the latter as
 * Σ_{q∈β} J_α[q] with J_α[q] = Σ_{p∈α} (pp|qq) computed once per α string (O(size · nβ)).
 */
function directDiagonal(fd: Fcidump, space: DeterminantSpace, dA: Float64Array, dB: Float64Array): Float64Array {
  const n = fd.norb;
  const out = new Float64Array(space.size);
  const occ = (list: DeterminantSpace['alpha'], s: number, into: Int32Array) => {
    let k = 0;
    const lo = list.lo[s]!;
    const hi = list.hi[s]!;
    for (let q = 0; q < n; q++) if (q < 32 ? (lo >>> q) & 1 : (hi >>> (q - 32)) & 1) into[k++] = q;
    return k;
  };
  const nb = space.nbeta;
  const occB = new Int32Array(Math.max(1, space.beta.count * nb));
  const one = new Int32Array(n);
  for (let s = 0; s < space.beta.count; s++) {
    occ(space.beta, s, one);
    occB.set(one.subarray(0, nb), s * nb);
  }
  const jA = new Float64Array(n);
  let last = -1;
  for (let k = 0; k < space.size; k++) {
    const ia = space.detAlpha[k]!;
    const ib = space.detBeta[k]!;
    if (ia !== last) {
      // J_α of this string (determinants come grouped by α string in FCI/CAS spaces; recomputed otherwise)
      jA.fill(0);
      const na = occ(space.alpha, ia, one);
      for (let x = 0; x < na; x++) {
        const base = (one[x]! * n + one[x]!) * n * n;
        for (let q = 0; q < n; q++) jA[q]! += fd.eri[base + q * n + q]!;
      }
      last = ia;
    }
    let e = dA[ia]! + dB[ib]!;
    for (let y = 0; y < nb; y++) e += jA[occB[ib * nb + y]!]!;
    out[k] = e;
  }
  return out;
}
