/**
 * The direct σ's string tables (../tables.ts) packed for the device: everything a σ element
 * (one determinant of the direct layout) needs to gather its value, as u32 words. Built once
 * per space; nothing here grows with the determinant count except the work list (one entry
 * per 64 determinants) — the operator holds strings, integrals and vectors, never H.
 *
 * Buffers (u32 words unless said):
 * - `work`: per workgroup, (α string, first β position of its 64-wide chunk);
 * - `info`: per α string 16 words — row start, row length, first β position of its irrep's list,
 *   same-spin row [h0, h1) into `hrec`, its 9 replacement-group bounds (by pair irrep), pad;
 *   then per β position (irrep-sorted) 4 words — same-spin row [h0, h1) into `hrec`, first word
 *   of its replacement list in `rep`, pad;
 * - `rep`: α replacements (row start of J_t, pair·norb² | sign bit 31), then β replacements
 *   (target position b′, pair rs | pair irrep << 16 | sign bit 31), 2 words each;
 * - `hrec`: same-spin records (α: row start of the target string; β: its position), value bits (f32);
 * - `eri`: (pq|rs) as f32, norb⁴.
 * @module
 */
import { InvalidParameterError, ResourceLimitError } from '@gpusparse/formats';
import type { DirectContext } from '../tables';

/** Invocations per workgroup of the σ kernel: one determinant each, a chunk of one α row. */
export const SIGMA_WG = 64;
/** u32 words per α string / per β position in `info`. */
export const ALPHA_WORDS = 16;
export const BETA_WORDS = 4;

/** Host arrays of the device tables (see the module comment). */
export interface PackedSigmaTables {
  work: Uint32Array;
  info: Uint32Array;
  rep: Uint32Array;
  hrec: Uint32Array;
  eri: Float32Array;
  /** Word offsets: β records in `info`, β replacements in `rep`. */
  betaInfo: number;
  betaRep: number;
  /** Workgroups of one σ. */
  groups: number;
  /** Replacements grouped by the orbitals' pair irreps (false: one group, see pairSymmetry). */
  pairIrreps: boolean;
  /**
   * Entries of the largest per-string integral block K[rs][t] (pairs rs of each group's irrep ×
   * its replacements t) when the kernels stage it in workgroup memory; 0: they read the
   * integrals from the storage buffer instead. With staging, β replacement words carry the
   * pair's position inside its irrep's list, not the pair.
   */
  kmax: number;
  /** Word offsets in `info` of the pairs sorted by irrep (norb² words) and of their 9 starts. */
  pairsAt: number;
  pstartAt: number;
}

/** Workgroup bytes of the kernels besides the staged block: replacement records, groups, offsets. */
export function workgroupBaseBytes(mA: number): number {
  return 8 * Math.max(1, mA) + 8 * 9;
}

/** Pairs sorted by irrep (stable), where each irrep starts, and each pair's position in its irrep. */
function pairLists(orb: Int32Array, n: number): { plist: Int32Array; pstart: Int32Array; local: Int32Array } {
  const n2 = n * n;
  const pstart = new Int32Array(9);
  const gOf = (x: number) => orb[Math.floor(x / n)]! ^ orb[x % n]!;
  for (let x = 0; x < n2; x++) pstart[gOf(x) + 1]!++;
  for (let g = 0; g < 8; g++) pstart[g + 1]! += pstart[g]!;
  const fill = pstart.slice(0, 8);
  const plist = new Int32Array(n2);
  const local = new Int32Array(n2);
  for (let x = 0; x < n2; x++) {
    const g = gOf(x);
    local[x] = fill[g]! - pstart[g]!;
    plist[fill[g]!++] = x;
  }
  return { plist, pstart, local };
}

/** Largest Σ_g |pairs of irrep g| · |replacements of string I in group g| over α strings I. */
function largestBlock(ctx: DirectContext, info: Uint32Array, pstart: Int32Array): number {
  let kmax = 0;
  for (let i = 0; i < ctx.nA; i++) {
    const w = i * ALPHA_WORDS + 5;
    let k = 0;
    for (let g = 0; g < 8; g++) k += (pstart[g + 1]! - pstart[g]!) * (info[w + g + 1]! - info[w + g]!);
    kmax = Math.max(kmax, k);
  }
  return kmax;
}

const SIGN = 0x80000000;

/**
 * α part: per string, its replacements counting-sorted by the pair irrep Γ(p)⊗Γ(q) of the
 * orbitals (`orb`, 0-based XOR numbering) — also in a space without a point-group block, where
 * the host tables keep one group: (pq|rs) vanishes unless Γ(pq) = Γ(rs), so the kernel skips
 * the other groups (7/8 of the α–β work of a D2h molecule run without symmetry).
 */
function alphaPart(ctx: DirectContext, orb: Int32Array, info: Uint32Array, rep: Uint32Array, hA: number): void {
  const { nA, mA, norb, rowStart, rowLen, irrepA, betaStart, target, hAOff, aTarget, aPair, aSign } = ctx;
  const n2 = norb * norb;
  const start = new Int32Array(9);
  const g = new Int32Array(mA);
  for (let i = 0; i < nA; i++) {
    const w = i * ALPHA_WORDS;
    info[w] = rowStart[i]!;
    info[w + 1] = rowLen[i]!;
    info[w + 2] = betaStart[irrepA[i]! ^ target]!;
    info[w + 3] = hA + hAOff[i]!;
    info[w + 4] = hA + hAOff[i + 1]!;
    start.fill(0);
    const a0 = i * mA;
    for (let t = 0; t < mA; t++) {
      const pq = aPair[a0 + t]!;
      g[t] = orb[Math.floor(pq / norb)]! ^ orb[pq % norb]!;
      start[g[t]! + 1]!++;
    }
    for (let x = 0; x < 8; x++) start[x + 1]! += start[x]!;
    for (let x = 0; x < 9; x++) info[w + 5 + x] = start[x]!;
    for (let t = 0; t < mA; t++) {
      const at = a0 + start[g[t]!]!++;
      rep[2 * at] = rowStart[aTarget[a0 + t]!]!;
      rep[2 * at + 1] = (aPair[a0 + t]! * n2) | (aSign[a0 + t]! < 0 ? SIGN : 0);
    }
  }
}

function betaPart(ctx: DirectContext, orb: Int32Array, pairIndex: Int32Array, info: Uint32Array, rep: Uint32Array, hB: number, at: { info: number; rep: number }): void {
  const { nB, mB, norb, betaSorted, hBOff, bTarget, bPair, bSign } = ctx;
  for (let q = 0; q < nB; q++) {
    const ib = betaSorted[q]!;
    const w = at.info + q * BETA_WORDS;
    info[w] = hB + hBOff[ib]!;
    info[w + 1] = hB + hBOff[ib + 1]!;
    info[w + 2] = at.rep + 2 * ib * mB;
  }
  for (let e = 0; e < nB * mB; e++) {
    const rs = bPair[e]!;
    const g = orb[Math.floor(rs / norb)]! ^ orb[rs % norb]!;
    rep[at.rep + 2 * e] = bTarget[e]!;
    rep[at.rep + 2 * e + 1] = pairIndex[rs]! | (g << 16) | (bSign[e]! < 0 ? SIGN : 0);
  }
}

function sameSpinRecords(ctx: DirectContext): Uint32Array {
  const na = ctx.hAOff[ctx.nA]!;
  const nb = ctx.hBOff[ctx.nB]!;
  const out = new Uint32Array(2 * Math.max(1, na + nb));
  const f = new Float32Array(out.buffer);
  for (let e = 0; e < na; e++) {
    out[2 * e] = ctx.rowStart[ctx.hATarget[e]!]!;
    f[2 * e + 1] = ctx.hAValue[e]!;
  }
  for (let e = 0; e < nb; e++) {
    out[2 * (na + e)] = ctx.hBTarget[e]!;
    f[2 * (na + e) + 1] = ctx.hBValue[e]!;
  }
  return out;
}

function workList(ctx: DirectContext): Uint32Array {
  let groups = 0;
  for (let i = 0; i < ctx.nA; i++) groups += Math.ceil(ctx.rowLen[i]! / SIGMA_WG);
  const work = new Uint32Array(2 * Math.max(1, groups));
  let k = 0;
  for (let i = 0; i < ctx.nA; i++) {
    for (let b = 0; b < ctx.rowLen[i]!; b += SIGMA_WG) {
      work[k++] = i;
      work[k++] = b;
    }
  }
  return work;
}

/**
 * Orbital irreps (0-based) to group replacements by, when the integrals obey them: every
 * (pq|rs) with Γ(pq) ≠ Γ(rs) exactly zero. Otherwise (labels outside 1..8, e.g. Lz labels, or
 * integrals that break the labels) one group for all: never a dropped integral. O(norb⁴).
 */
function pairSymmetry(orbsym: ArrayLike<number>, eri: Float64Array, n: number): Int32Array {
  const orb = Int32Array.from(orbsym, (s) => s - 1);
  const none = new Int32Array(n);
  if (orb.some((g) => !(g >= 0 && g < 8))) return none;
  const n2 = n * n;
  for (let pq = 0; pq < n2; pq++) {
    const g = orb[Math.floor(pq / n)]! ^ orb[pq % n]!;
    for (let rs = 0; rs < n2; rs++) {
      if ((orb[Math.floor(rs / n)]! ^ orb[rs % n]!) !== g && eri[pq * n2 + rs] !== 0) return none;
    }
  }
  return orb;
}

/**
 * Pack `ctx` (../tables.ts, without time reversal) for the device σ kernel; `orbsym`: the
 * FCIDUMP's orbital irreps (1-based), which group the replacements by pair irrep. Throws
 * ResourceLimitError when a table exceeds `maxBindingBytes` (one storage binding each), or
 * when the pair index does not fit 16 bits (norb > 255). `workgroupBytes`: the device's
 * workgroup memory; the per-string integral block is staged there when it fits (`kmax`; 0
 * never stages). O(strings · replacements) host work.
 * @example const t = packSigmaTables(ctx, fd.orbsym, device.limits.maxStorageBufferBindingSize);
 */
export function packSigmaTables(ctx: DirectContext, orbsym: ArrayLike<number>, maxBindingBytes: number, workgroupBytes = 0): PackedSigmaTables {
  if (orbsym.length !== ctx.norb) throw new InvalidParameterError('orbsym', `${ctx.norb} orbital irreps (NORB)`, orbsym.length);
  const orb = pairSymmetry(orbsym, ctx.eri, ctx.norb);
  if (ctx.norb > 255) throw new ResourceLimitError(`device direct σ: orbital pairs of norb = ${ctx.norb} as 16-bit indices`, ctx.norb * ctx.norb, 65536, 'use the host direct σ (--backend cpu)');
  const hA = 0;
  const hB = ctx.hAOff[ctx.nA]!;
  const betaInfo = ctx.nA * ALPHA_WORDS;
  const betaRep = 2 * ctx.nA * ctx.mA;
  const n2 = ctx.norb * ctx.norb;
  const pairsAt = betaInfo + ctx.nB * BETA_WORDS;
  const pstartAt = pairsAt + n2;
  const info = new Uint32Array(pstartAt + 9);
  const rep = new Uint32Array(Math.max(1, betaRep + 2 * ctx.nB * ctx.mB));
  alphaPart(ctx, orb, info, rep, hA);
  const { plist, pstart, local } = pairLists(orb, ctx.norb);
  info.set(plist, pairsAt);
  info.set(pstart, pstartAt);
  // stage K in workgroup memory when the df64 kernel's block (8 B per entry) fits too
  // the block size is part of the kernels' text: rounded up to a power of two (fewer pipelines to compile)
  const block = largestBlock(ctx, info, pstart);
  const fits = (k: number) => k > 0 && 8 * k + workgroupBaseBytes(ctx.mA) <= workgroupBytes;
  const rounded = 2 ** Math.ceil(Math.log2(Math.max(64, block)));
  const kmax = fits(rounded) ? rounded : fits(block) ? block : 0;
  betaPart(ctx, orb, kmax > 0 ? local : Int32Array.from({ length: n2 }, (_, x) => x), info, rep, hB, { info: betaInfo, rep: betaRep });
  const pairIrreps = orb.some((g) => g !== 0);
  const t: PackedSigmaTables = { work: workList(ctx), info, rep, hrec: sameSpinRecords(ctx), eri: Float32Array.from(ctx.eri), betaInfo, betaRep, groups: 0, pairIrreps, kmax, pairsAt, pstartAt };
  t.groups = t.work.length / 2;
  if (ctx.nA === 0 || ctx.rowLen.every((l) => l === 0)) t.groups = 0;
  for (const [name, a] of [['work list', t.work], ['string records', t.info], ['replacement lists', t.rep], ['same-spin rows', t.hrec], ['integrals', t.eri]] as const) {
    if (a.byteLength > maxBindingBytes) throw new ResourceLimitError(`device direct σ: the ${name} in one storage binding`, a.byteLength, maxBindingBytes, 'use point-group symmetry (irrep) or the host direct σ (--backend cpu)');
  }
  return t;
}
