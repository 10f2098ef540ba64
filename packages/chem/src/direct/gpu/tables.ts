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
import { ResourceLimitError } from '@gpusparse/formats';
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
}

const SIGN = 0x80000000;

function alphaPart(ctx: DirectContext, info: Uint32Array, rep: Uint32Array, hA: number): void {
  const { nA, mA, rowStart, rowLen, irrepA, betaStart, target, hAOff, aTarget, aPair, aSign, aGroup } = ctx;
  const n2 = ctx.norb * ctx.norb;
  for (let i = 0; i < nA; i++) {
    const w = i * ALPHA_WORDS;
    info[w] = rowStart[i]!;
    info[w + 1] = rowLen[i]!;
    info[w + 2] = betaStart[irrepA[i]! ^ target]!;
    info[w + 3] = hA + hAOff[i]!;
    info[w + 4] = hA + hAOff[i + 1]!;
    for (let g = 0; g < 9; g++) info[w + 5 + g] = aGroup[i * 9 + g]!;
  }
  for (let e = 0; e < nA * mA; e++) {
    rep[2 * e] = rowStart[aTarget[e]!]!;
    rep[2 * e + 1] = (aPair[e]! * n2) | (aSign[e]! < 0 ? SIGN : 0);
  }
}

function betaPart(ctx: DirectContext, info: Uint32Array, rep: Uint32Array, hB: number, at: { info: number; rep: number }): void {
  const { nB, mB, betaSorted, hBOff, bTarget, bPair, bSign, bGroup } = ctx;
  for (let q = 0; q < nB; q++) {
    const ib = betaSorted[q]!;
    const w = at.info + q * BETA_WORDS;
    info[w] = hB + hBOff[ib]!;
    info[w + 1] = hB + hBOff[ib + 1]!;
    info[w + 2] = at.rep + 2 * ib * mB;
  }
  for (let e = 0; e < nB * mB; e++) {
    rep[at.rep + 2 * e] = bTarget[e]!;
    rep[at.rep + 2 * e + 1] = bPair[e]! | (bGroup[e]! << 16) | (bSign[e]! < 0 ? SIGN : 0);
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
 * Pack `ctx` (../tables.ts, without time reversal) for the device σ kernel. Throws
 * ResourceLimitError when a table exceeds `maxBindingBytes` (one storage binding each), or
 * when the pair index does not fit 16 bits (norb > 255). O(strings · replacements) host work.
 * @example const t = packSigmaTables(ctx, device.limits.maxStorageBufferBindingSize);
 */
export function packSigmaTables(ctx: DirectContext, maxBindingBytes: number): PackedSigmaTables {
  if (ctx.norb > 255) throw new ResourceLimitError(`device direct σ: orbital pairs of norb = ${ctx.norb} as 16-bit indices`, ctx.norb * ctx.norb, 65536, 'use the host direct σ (--backend cpu)');
  const hA = 0;
  const hB = ctx.hAOff[ctx.nA]!;
  const betaInfo = ctx.nA * ALPHA_WORDS;
  const betaRep = 2 * ctx.nA * ctx.mA;
  const info = new Uint32Array(Math.max(1, betaInfo + ctx.nB * BETA_WORDS));
  const rep = new Uint32Array(Math.max(1, betaRep + 2 * ctx.nB * ctx.mB));
  alphaPart(ctx, info, rep, hA);
  betaPart(ctx, info, rep, hB, { info: betaInfo, rep: betaRep });
  const t: PackedSigmaTables = { work: workList(ctx), info, rep, hrec: sameSpinRecords(ctx), eri: Float32Array.from(ctx.eri), betaInfo, betaRep, groups: 0 };
  t.groups = t.work.length / 2;
  if (ctx.nA === 0 || ctx.rowLen.every((l) => l === 0)) t.groups = 0;
  for (const [name, a] of [['work list', t.work], ['string records', t.info], ['replacement lists', t.rep], ['same-spin rows', t.hrec], ['integrals', t.eri]] as const) {
    if (a.byteLength > maxBindingBytes) throw new ResourceLimitError(`device direct σ: the ${name} in one storage binding`, a.byteLength, maxBindingBytes, 'use point-group symmetry (irrep) or the host direct σ (--backend cpu)');
  }
  return t;
}
