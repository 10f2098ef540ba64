/**
 * The α–β scatter of the direct σ (./kernel.ts step 3c) as a WebAssembly f64x2 SIMD kernel,
 * written with the project's module writer (no toolchain). It is the hottest loop of the direct
 * σ: mB · row · mA / n_irreps multiply–adds per α string against O(mA · row) for the gather.
 *
 * Each thread owns one instance and its memory (the tables below are small: 24 B per β
 * replacement). The kernel's scratch X and K live in that memory, so the JavaScript gather and
 * contraction-table steps write straight into it; c and σ stay in JavaScript arrays.
 *
 * Memory layout (byte offsets): G (8 pair irreps × (lo, hi) byte offsets of the current α
 * string's replacement groups), OUT (maxRow doubles: the scatter's sums), X, K, BASE (per β
 * string, in irrep-sorted order: the address of its first record), REC (per β replacement:
 * K-row address, X-row address, G-entry address, pad, sign as f64).
 *
 * Summation order is exactly the JavaScript kernel's: per replacement, lane 0 of the f64x2
 * accumulator takes the even terms (d0), lane 1 the odd ones (d1), a last odd term goes to d0,
 * and s ← s + sign · (d0 + d1). WebAssembly has no fused multiply–add, so σ is bit-identical to
 * the JavaScript kernel whatever the thread count.
 * @module
 */
import { buildModule, CodeBuilder, Op, SimdOp, ValType } from '@gpusparse/formats';
import type { ScatterMemory } from './kernel';
import type { DirectContext } from './tables';

/** Bytes of one β replacement record in wasm memory. */
export const SCATTER_RECORD_BYTES = 24;

// parameters and locals of `scatter(bp, nb, mB, outp)`
const BP = 0; // running pointer into BASE
const NB = 1;
const MB = 2;
const OUTP = 3; // running pointer into OUT
const BEND = 4;
const RP = 5; // running record pointer
const REND = 6;
const GA = 7;
const LO = 8;
const HI = 9;
const KP = 10;
const XP = 11;
const KEND = 12;
const S = 13; // f64
const D0 = 14; // f64
const ACC = 15; // v128

const I32_EQ = 0x46;
const I32_GT_U = 0x4b;
const I32_LE_U = 0x4d;
const I32_MUL = 0x6c;

/** acc ← acc + K[kp + 2j..] ⊙ X[xp + 2j..] for j < `pairs`, in order (the JavaScript order). */
function pairTerms(c: CodeBuilder, pairs: number): void {
  for (let j = 0; j < pairs; j++) {
    c.localGet(ACC).localGet(KP).v128Load(16 * j).localGet(XP).v128Load(16 * j).simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add).localSet(ACC);
  }
  c.localGet(KP).i32Const(16 * pairs).op(Op.i32Add).localSet(KP);
  c.localGet(XP).i32Const(16 * pairs).op(Op.i32Add).localSet(XP);
}

/** acc takes the terms two pairs at a time, then one pair, while two terms are left; kp, xp then point at the tail. */
function pairLoop(c: CodeBuilder): void {
  c.block().loop();
  c.localGet(KP).i32Const(32).op(Op.i32Add).localGet(KEND).op(I32_GT_U).brIf(1);
  pairTerms(c, 2);
  c.br(0).end().end();
  c.localGet(KP).i32Const(16).op(Op.i32Add).localGet(KEND).op(I32_LE_U).if();
  pairTerms(c, 1);
  c.end();
}

/** One β replacement record at RP: s ← s + sign · Σ_t K[kr + t] X[xr + t] over its group's t. */
function recordTerm(c: CodeBuilder): void {
  c.localGet(RP).i32Load(8).localTee(GA).i32Load(0).localSet(LO);
  c.localGet(GA).i32Load(4).localSet(HI);
  c.block();
  c.localGet(LO).localGet(HI).op(I32_EQ).brIf(0);
  c.localGet(RP).i32Load(0).localGet(LO).op(Op.i32Add).localSet(KP);
  c.localGet(RP).i32Load(0).localGet(HI).op(Op.i32Add).localSet(KEND);
  c.localGet(RP).i32Load(4).localGet(LO).op(Op.i32Add).localSet(XP);
  c.simd(SimdOp.v128Const, ...new Array<number>(16).fill(0)).localSet(ACC);
  pairLoop(c);
  c.localGet(ACC).f64x2ExtractLane(0).localSet(D0);
  c.localGet(KP).localGet(KEND).op(Op.i32LtU).if();
  c.localGet(D0).localGet(KP).f64Load(0).localGet(XP).f64Load(0).op(Op.f64Mul, Op.f64Add).localSet(D0);
  c.end();
  c.localGet(S).localGet(RP).f64Load(16).localGet(D0).localGet(ACC).f64x2ExtractLane(1).op(Op.f64Add, Op.f64Mul, Op.f64Add).localSet(S);
  c.end();
}

/** Body of `scatter(bp, nb, mB, outp)`: OUT[b] += Σ over b's records (b < nb). */
function scatterBody(): CodeBuilder {
  const c = new CodeBuilder();
  c.localGet(BP).localGet(NB).i32Const(2).op(Op.i32Shl, Op.i32Add).localSet(BEND);
  c.block().loop();
  c.localGet(BP).localGet(BEND).op(Op.i32GeU).brIf(1);
  c.localGet(BP).i32Load(0).localTee(RP).localGet(MB).i32Const(SCATTER_RECORD_BYTES).op(I32_MUL, Op.i32Add).localSet(REND);
  c.f64Const(0).localSet(S);
  c.block().loop();
  c.localGet(RP).localGet(REND).op(Op.i32GeU).brIf(1);
  recordTerm(c);
  c.localGet(RP).i32Const(SCATTER_RECORD_BYTES).op(Op.i32Add).localSet(RP);
  c.br(0).end().end();
  c.localGet(OUTP).localGet(OUTP).f64Load(0).localGet(S).op(Op.f64Add).f64Store(0);
  c.localGet(OUTP).i32Const(8).op(Op.i32Add).localSet(OUTP);
  c.localGet(BP).i32Const(4).op(Op.i32Add).localSet(BP);
  c.br(0).end().end();
  return c;
}

// parameters and locals of `same(ha, haEnd, row, nb, hbp, outp)`
const HA = 0; // running pointer to α records (C-row address i32, pad, value f64)
const HA_END = 1;
const ROW = 2; // address of c(I, 0) in C
const SNB = 3;
const HBP = 4; // running pointer into HBS ((start, end) record addresses per β string of the row)
const SOUT = 5;
const OEND = 6;
const OP = 7;
const JP = 8;
const E = 9;
const EEND = 10;
const V = 11; // f64
const SS = 12; // f64
const VV = 13; // v128

const V128_STORE = 0x0b;

/** OUT[0..nb) ← Σ_e v_e · c(J_e, ·): f64x2 axpys of whole rows (element-wise: order as in JavaScript). */
function alphaAlpha(c: CodeBuilder): void {
  c.block().loop();
  c.localGet(HA).localGet(HA_END).op(Op.i32GeU).brIf(1);
  c.localGet(HA).i32Load(0).localSet(JP);
  c.localGet(HA).f64Load(8).localSet(V);
  c.localGet(HA).v128Load64Splat(8).localSet(VV);
  c.localGet(SOUT).localSet(OP);
  c.block().loop();
  c.localGet(OP).i32Const(16).op(Op.i32Add).localGet(OEND).op(I32_GT_U).brIf(1);
  c.localGet(OP).localGet(OP).v128Load(0).localGet(VV).localGet(JP).v128Load(0).simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add).simd(V128_STORE, 3, 0);
  c.localGet(OP).i32Const(16).op(Op.i32Add).localSet(OP);
  c.localGet(JP).i32Const(16).op(Op.i32Add).localSet(JP);
  c.br(0).end().end();
  c.localGet(OP).localGet(OEND).op(Op.i32LtU).if();
  c.localGet(OP).localGet(OP).f64Load(0).localGet(V).localGet(JP).f64Load(0).op(Op.f64Mul, Op.f64Add).f64Store(0);
  c.end();
  c.localGet(HA).i32Const(16).op(Op.i32Add).localSet(HA);
  c.br(0).end().end();
}

/** OUT[b] += Σ_e v_e · c(I, b'_e) for each b of the row (sequential sums, as in JavaScript). */
function betaBeta(c: CodeBuilder): void {
  c.localGet(SOUT).localSet(OP);
  c.block().loop();
  c.localGet(OP).localGet(OEND).op(Op.i32GeU).brIf(1);
  c.localGet(HBP).i32Load(0).localSet(E);
  c.localGet(HBP).i32Load(4).localSet(EEND);
  c.f64Const(0).localSet(SS);
  c.block().loop();
  c.localGet(E).localGet(EEND).op(Op.i32GeU).brIf(1);
  c.localGet(SS).localGet(E).f64Load(8).localGet(ROW).localGet(E).i32Load(0).op(Op.i32Add).f64Load(0).op(Op.f64Mul, Op.f64Add).localSet(SS);
  c.localGet(E).i32Const(16).op(Op.i32Add).localSet(E);
  c.br(0).end().end();
  c.localGet(OP).localGet(OP).f64Load(0).localGet(SS).op(Op.f64Add).f64Store(0);
  c.localGet(OP).i32Const(8).op(Op.i32Add).localSet(OP);
  c.localGet(HBP).i32Const(8).op(Op.i32Add).localSet(HBP);
  c.br(0).end().end();
}

/** Body of `same(ha, haEnd, row, nb, hbp, outp)`: OUT[0..nb) = (H_α ⊗ 1 + 1 ⊗ H_β) rows of c. */
function sameBody(): CodeBuilder {
  const c = new CodeBuilder();
  c.localGet(SOUT).localGet(SNB).i32Const(3).op(Op.i32Shl, Op.i32Add).localSet(OEND);
  c.localGet(SOUT).localSet(OP);
  c.block().loop();
  c.localGet(OP).localGet(OEND).op(Op.i32GeU).brIf(1);
  c.localGet(OP).f64Const(0).f64Store(0);
  c.localGet(OP).i32Const(8).op(Op.i32Add).localSet(OP);
  c.br(0).end().end();
  alphaAlpha(c);
  betaBeta(c);
  return c;
}

// parameters and locals of `gather(ap, apEnd, xp, stride)`
const AP = 0; // running pointer to α replacement records (C-row address i32, row length i32, sign f64)
const AP_END = 1;
const GXP = 2; // X[0][t] address
const STRIDE = 3; // 8·mA
const GX = 4;
const GC = 5;
const GC_END = 6;
const SG = 7; // f64

/** Body of `gather(ap, apEnd, xp, stride)`: X[b][t] = sign_t · c(J_t, b) for the mA replacements of one α string. */
function gatherBody(): CodeBuilder {
  const c = new CodeBuilder();
  c.block().loop();
  c.localGet(AP).localGet(AP_END).op(Op.i32GeU).brIf(1);
  c.localGet(AP).i32Load(0).localTee(GC).localGet(AP).i32Load(4).i32Const(3).op(Op.i32Shl, Op.i32Add).localSet(GC_END);
  c.localGet(AP).f64Load(8).localSet(SG);
  c.localGet(GXP).localSet(GX);
  c.block().loop();
  c.localGet(GC).localGet(GC_END).op(Op.i32GeU).brIf(1);
  c.localGet(GX).localGet(SG).localGet(GC).f64Load(0).op(Op.f64Mul).f64Store(0);
  c.localGet(GX).localGet(STRIDE).op(Op.i32Add).localSet(GX);
  c.localGet(GC).i32Const(8).op(Op.i32Add).localSet(GC);
  c.br(0).end().end();
  c.localGet(GXP).i32Const(8).op(Op.i32Add).localSet(GXP);
  c.localGet(AP).i32Const(16).op(Op.i32Add).localSet(AP);
  c.br(0).end().end();
  return c;
}

// parameters and locals of `kbuild(ap, gp, ps)`
const KAP = 0; // APAIR + 4·a0: per replacement t, the address of (p_t q_t | 00) in ERI
const KGP = 1; // running pointer into G
const KPS = 2; // running pointer into PSTART (9 byte addresses into PAIRS)
const KG_END = 3;
const KLO = 4;
const KHI = 5;
const KPP = 6;
const KPP_END = 7;
const KROW = 8;
const KEO = 9;
const KT = 10;
const I32_SHR_U = 0x76;

/** K[rs][t] = (p_t q_t | rs) for the pairs rs of each group's irrep and its t (G: byte offsets 8·t). */
function kbuildBody(): CodeBuilder {
  const c = new CodeBuilder();
  c.localGet(KGP).i32Const(64).op(Op.i32Add).localSet(KG_END);
  c.block().loop();
  c.localGet(KGP).localGet(KG_END).op(Op.i32GeU).brIf(1);
  c.localGet(KGP).i32Load(0).localSet(KLO);
  c.localGet(KGP).i32Load(4).localSet(KHI);
  c.localGet(KPS).i32Load(0).localSet(KPP);
  c.localGet(KPS).i32Load(4).localSet(KPP_END);
  c.block().loop();
  c.localGet(KLO).localGet(KHI).op(Op.i32GeU).brIf(1);
  c.localGet(KPP).localGet(KPP_END).op(Op.i32GeU).brIf(1);
  c.localGet(KPP).i32Load(0).localSet(KROW);
  c.localGet(KPP).i32Load(4).localSet(KEO);
  c.localGet(KLO).localSet(KT);
  c.block().loop();
  c.localGet(KT).localGet(KHI).op(Op.i32GeU).brIf(1);
  c.localGet(KROW).localGet(KT).op(Op.i32Add);
  c.localGet(KAP).localGet(KT).i32Const(1).op(I32_SHR_U, Op.i32Add).i32Load(0).localGet(KEO).op(Op.i32Add).f64Load(0);
  c.f64Store(0);
  c.localGet(KT).i32Const(8).op(Op.i32Add).localSet(KT);
  c.br(0).end().end();
  c.localGet(KPP).i32Const(8).op(Op.i32Add).localSet(KPP);
  c.br(0).end().end();
  c.localGet(KGP).i32Const(8).op(Op.i32Add).localSet(KGP);
  c.localGet(KPS).i32Const(4).op(Op.i32Add).localSet(KPS);
  c.br(0).end().end();
  return c;
}

/** Byte offsets of the regions of one thread's wasm memory for `ctx`, and its page count. */
export function scatterLayout(ctx: DirectContext): ScatterMemory & { pages: number } {
  const up16 = (v: number) => Math.ceil(v / 16) * 16;
  const g = 0;
  const out = 64;
  const x = up16(out + 8 * Math.max(1, ctx.maxRow));
  const k = up16(x + 8 * Math.max(1, ctx.maxRow * ctx.mA));
  const base = up16(k + 8 * Math.max(1, ctx.norb * ctx.norb * ctx.mA));
  const rec = up16(base + 4 * Math.max(1, ctx.nB));
  const size = ctx.nA === 0 ? 0 : ctx.rowStart[ctx.nA - 1]! + ctx.rowLen[ctx.nA - 1]!;
  const cv = up16(rec + SCATTER_RECORD_BYTES * Math.max(1, ctx.nB * ctx.mB));
  const ha = up16(cv + 8 * Math.max(1, size));
  const hbs = up16(ha + 16 * Math.max(1, ctx.hAOff[ctx.nA]!));
  const hb = up16(hbs + 8 * Math.max(1, ctx.nB));
  const arec = up16(hb + 16 * Math.max(1, ctx.hBOff[ctx.nB]!));
  const eri = up16(arec + 16 * Math.max(1, ctx.nA * ctx.mA));
  const apair = up16(eri + 8 * Math.max(1, ctx.eri.length));
  const pstart = up16(apair + 4 * Math.max(1, ctx.nA * ctx.mA));
  const pairs = up16(pstart + 4 * 9);
  const end = pairs + 8 * Math.max(1, ctx.norb * ctx.norb) + 16;
  return { g, out, x, k, base, rec, c: cv, ha, hbs, hb, arec, eri, apair, pstart, pairs, pages: Math.ceil(end / 65536) };
}

/**
 * The scatter module's bytes for `ctx` (its memory sized by {@link scatterLayout}), or
 * undefined where WebAssembly or its SIMD is unavailable or the memory would exceed 1 GiB.
 * @example const bytes = scatterModuleBytes(ctx);
 */
export function scatterModuleBytes(ctx: DirectContext): Uint8Array<ArrayBuffer> | undefined {
  if (typeof WebAssembly !== 'object') return undefined;
  const { pages } = scatterLayout(ctx);
  if (pages > 16384) return undefined;
  const i32 = ValType.i32;
  const locals = [i32, i32, i32, i32, i32, i32, i32, i32, i32, ValType.f64, ValType.f64, ValType.v128];
  const sameLocals = [i32, i32, i32, i32, i32, ValType.f64, ValType.f64, ValType.v128];
  const bytes = buildModule(
    [
      { name: 'scatter', params: [i32, i32, i32, i32], results: [], locals, body: scatterBody() },
      { name: 'same', params: [i32, i32, i32, i32, i32, i32], results: [], locals: sameLocals, body: sameBody() },
      { name: 'gather', params: [i32, i32, i32, i32], results: [], locals: [i32, i32, i32, ValType.f64], body: gatherBody() },
      { name: 'kbuild', params: [i32, i32, i32], results: [], locals: [i32, i32, i32, i32, i32, i32, i32, i32], body: kbuildBody() },
    ],
    { minPages: pages, maxPages: pages },
  );
  return WebAssembly.validate(bytes) ? bytes : undefined;
}
