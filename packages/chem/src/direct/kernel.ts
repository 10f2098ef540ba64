/**
 * The direct σ kernel: σ rows of a range of α strings from c, both in the direct layout of
 * ./tables.ts. It runs on the main thread and, as source text (`sigmaRows.toString()`), inside
 * worker threads: it must stay SELF-CONTAINED — no imports, no closures over module variables,
 * no nested named functions.
 *
 * For one α string I (one row of σ, the β coefficients of the matching irrep):
 * 1. α–α: σ(I,·) += Σ_J H_α(I,J) c(J,·) — axpys of whole rows (same irrep ⇒ same β list);
 * 2. β–β: σ(I,b) += Σ_b' H_β(b,b') c(I,b') — sparse rows against the contiguous row c(I,·);
 * 3. α–β, gather: X[b'][t] = sign_t · c(J_t, b') for the mA single replacements t of I
 *    (J_t = E_qp I, diagonal p = q included), grouped by the pair irrep Γ(pq);
 *    contraction table: K[rs][t] = (p_t q_t|rs) for the pairs rs of t's irrep;
 *    scatter: σ(I,b) += Σ_{(rs, b', s) ∈ β replacements of b} s · Σ_{t ∈ Γ(rs)} K[rs][t] X[b'][t].
 * Every row is written by one call only, so α ranges can run on separate threads and the
 * result does not depend on how the rows were split.
 * @module
 */
import type { DirectContext } from './tables';

/**
 * Scratch of one thread: X (maxRow · mA) and K (norb² · mA); with the wasm scatter
 * (./scatter.kernel.ts) these are views of the thread's wasm memory, and `wasm` holds the
 * kernel, its group table G, its output OUT and the byte addresses it takes.
 */
export interface SigmaScratch {
  x: Float64Array;
  k: Float64Array;
  wasm?: SigmaWasm;
}

/** The wasm kernels of one thread and the addresses they take (./scatter.kernel.ts). */
export interface SigmaWasm {
  scatter: (bp: number, nb: number, mB: number, outp: number) => void;
  same: (ha: number, haEnd: number, row: number, nb: number, hbp: number, outp: number) => void;
  gather: (ap: number, apEnd: number, xp: number, stride: number) => void;
  kbuild: (ap: number, gp: number, ps: number) => void;
  /** G table, OUT row, and this thread's copy of c (set by {@link loadSigmaInput} before each product). */
  g: Int32Array;
  out: Float64Array;
  c: Float64Array;
  base: number;
  outAddr: number;
  cAddr: number;
  hbs: number;
  xAddr: number;
  arec: number;
  apair: number;
  gAddr: number;
  pstart: number;
  /** Per α string (nA + 1): byte address of its first same-spin record. */
  haAddr: Int32Array;
}

/** Byte offsets of a thread's wasm memory (./scatter.kernel.ts `scatterLayout`). */
export interface ScatterMemory {
  g: number;
  out: number;
  x: number;
  k: number;
  base: number;
  rec: number;
  c: number;
  ha: number;
  hbs: number;
  hb: number;
  arec: number;
  eri: number;
  apair: number;
  pstart: number;
  pairs: number;
}

/**
 * Scratch arrays for `ctx`. Memory 8·mA·(maxRow + norb²) bytes.
 * @example const scratch = sigmaScratch(ctx);
 */
export function sigmaScratch(ctx: DirectContext): SigmaScratch {
  return { x: new Float64Array(Math.max(1, ctx.maxRow * ctx.mA)), k: new Float64Array(Math.max(1, ctx.norb * ctx.norb * ctx.mA)) };
}

/**
 * Scratch on a new instance of the wasm scatter module (`bytes`, laid out as `mem`): copies the
 * β replacement records (K-row, X-row and G-entry addresses, sign) into its memory. Runs on
 * worker threads as source text: SELF-CONTAINED like {@link sigmaRows}. Memory: 24·nB·mB bytes
 * plus the scratch.
 * @example const scratch = wasmSigmaScratch(ctx, scatterModuleBytes(ctx)!, scatterLayout(ctx));
 */
export function wasmSigmaScratch(ctx: DirectContext, bytes: Uint8Array<ArrayBuffer>, mem: ScatterMemory): SigmaScratch {
  const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
  const buf = (inst.exports.memory as WebAssembly.Memory).buffer;
  const { nA, nB, mB, mA, betaSorted, bK, bX, bGroup, bSign, rowStart, hAOff, hATarget, hAValue, hBOff, hBTarget, hBValue } = ctx;
  const base = new Int32Array(buf, mem.base, Math.max(1, nB));
  for (let j = 0; j < nB; j++) base[j] = mem.rec + 24 * mB * betaSorted[j]!;
  const ri = new Int32Array(buf, mem.rec, 6 * Math.max(1, nB * mB));
  const rf = new Float64Array(buf, mem.rec, 3 * Math.max(1, nB * mB));
  for (let e = 0; e < nB * mB; e++) {
    ri[6 * e] = mem.k + 8 * bK[e]!;
    ri[6 * e + 1] = mem.x + 8 * bX[e]!;
    ri[6 * e + 2] = mem.g + 8 * bGroup[e]!;
    rf[3 * e + 2] = bSign[e]!;
  }
  // same-spin records: (address of the target's row in C or offset inside the row, value)
  const na = hAOff[nA]!;
  const ai = new Int32Array(buf, mem.ha, 4 * Math.max(1, na));
  const af = new Float64Array(buf, mem.ha, 2 * Math.max(1, na));
  for (let e = 0; e < na; e++) {
    ai[4 * e] = mem.c + 8 * rowStart[hATarget[e]!]!;
    af[2 * e + 1] = hAValue[e]!;
  }
  const nbr = hBOff[nB]!;
  const bi = new Int32Array(buf, mem.hb, 4 * Math.max(1, nbr));
  const bf = new Float64Array(buf, mem.hb, 2 * Math.max(1, nbr));
  for (let e = 0; e < nbr; e++) {
    bi[4 * e] = 8 * hBTarget[e]!;
    bf[2 * e + 1] = hBValue[e]!;
  }
  const hbs = new Int32Array(buf, mem.hbs, 2 * Math.max(1, nB));
  for (let j = 0; j < nB; j++) {
    hbs[2 * j] = mem.hb + 16 * hBOff[betaSorted[j]!]!;
    hbs[2 * j + 1] = mem.hb + 16 * hBOff[betaSorted[j]! + 1]!;
  }
  // α replacement records: (address of c(J_t, 0) in C, row length of J_t, sign)
  const gi = new Int32Array(buf, mem.arec, 4 * Math.max(1, nA * mA));
  const gf = new Float64Array(buf, mem.arec, 2 * Math.max(1, nA * mA));
  for (let e = 0; e < nA * mA; e++) {
    gi[4 * e] = mem.c + 8 * rowStart[ctx.aTarget[e]!]!;
    gi[4 * e + 1] = ctx.rowLen[ctx.aTarget[e]!]!;
    gf[2 * e + 1] = ctx.aSign[e]!;
  }
  // integrals, per replacement the address of its (pq|··) block, pairs by irrep as (K row, ERI offset)
  const n2 = ctx.norb * ctx.norb;
  new Float64Array(buf, mem.eri, ctx.eri.length).set(ctx.eri);
  const ap = new Int32Array(buf, mem.apair, Math.max(1, nA * mA));
  for (let e = 0; e < nA * mA; e++) ap[e] = mem.eri + 8 * n2 * ctx.aPair[e]!;
  const ps = new Int32Array(buf, mem.pstart, 9);
  for (let g = 0; g < 9; g++) ps[g] = mem.pairs + 8 * ctx.pairStart[g]!;
  const pr = new Int32Array(buf, mem.pairs, 2 * Math.max(1, n2));
  for (let x = 0; x < n2; x++) {
    pr[2 * x] = mem.k + 8 * mA * ctx.pairSorted[x]!;
    pr[2 * x + 1] = 8 * ctx.pairSorted[x]!;
  }
  const size = nA === 0 ? 0 : rowStart[nA - 1]! + ctx.rowLen[nA - 1]!;
  return {
    x: new Float64Array(buf, mem.x, Math.max(1, ctx.maxRow * mA)),
    k: new Float64Array(buf, mem.k, Math.max(1, ctx.norb * ctx.norb * mA)),
    wasm: {
      scatter: inst.exports.scatter as SigmaWasm['scatter'],
      same: inst.exports.same as SigmaWasm['same'],
      gather: inst.exports.gather as SigmaWasm['gather'],
      kbuild: inst.exports.kbuild as SigmaWasm['kbuild'],
      g: new Int32Array(buf, mem.g, 16),
      out: new Float64Array(buf, mem.out, Math.max(1, ctx.maxRow)),
      c: new Float64Array(buf, mem.c, size),
      base: mem.base,
      outAddr: mem.out,
      cAddr: mem.c,
      hbs: mem.hbs,
      xAddr: mem.x,
      arec: mem.arec,
      apair: mem.apair,
      gAddr: mem.g,
      pstart: mem.pstart,
      haAddr: Int32Array.from({ length: nA + 1 }, (_, i) => mem.ha + 16 * hAOff[i]!),
    },
  };
}

/**
 * Before a product: copy c into the thread's wasm memory (its same-spin kernel reads it there;
 * O(size), against O(size · connections) for σ). No-op for the JavaScript kernel.
 * @example loadSigmaInput(scratch, c); sigmaRows(ctx, c, sigma, 0, ctx.nA, scratch);
 */
export function loadSigmaInput(scratch: SigmaScratch, c: Float64Array): void {
  if (scratch.wasm) scratch.wasm.c.set(c);
}

/**
 * σ rows of α strings [aStart, aEnd): σ(I,·) = (H c)(I,·), overwritten. Cost per row:
 * O(conn_α·row + row·conn_β + mA·row + mB·row·mA/n_irreps + norb²·mA/n_irreps).
 * Self-contained (see the module comment).
 * @example sigmaRows(ctx, c, sigma, 0, ctx.nA, sigmaScratch(ctx));
 */
export function sigmaRows(ctx: DirectContext, c: Float64Array, sigma: Float64Array, aStart: number, aEnd: number, scratch: SigmaScratch): void {
  // Long by design (a house-style exception): shipped to worker threads by its source text (./threads.ts), so it must be self-contained, and its alpha-string loop is the σ = H·c hot path.
  const { norb, mA, mB, target, rowStart, rowLen, rowCompute, irrepA, betaSorted, betaStart, eri } = ctx;
  const { hAOff, hATarget, hAValue, hBOff, hBTarget, hBValue, aTarget, aPair, aSign, aGroup } = ctx;
  const { bK, bX, bSign, bGroup, pairSorted, pairStart } = ctx;
  const n2 = norb * norb;
  const X = scratch.x;
  const K = scratch.k;
  const wasm = scratch.wasm;
  // per α string: where each pair irrep's replacements start (t0) and end (t1)
  const gLo = new Int32Array(8);
  const gHi = new Int32Array(8);
  for (let ia = aStart; ia < aEnd; ia++) {
    const r0 = rowStart[ia]!;
    const nb = rowCompute[ia]!; // the first nb entries of the row (all of it unless time reversal halves the work)
    if (nb === 0) continue;
    const bList = betaStart[irrepA[ia]! ^ target]!;
    if (wasm) {
      // 1–2 in wasm, into OUT (c read from the thread's copy)
      wasm.same(wasm.haAddr[ia]!, wasm.haAddr[ia + 1]!, wasm.cAddr + 8 * r0, nb, wasm.hbs + 8 * bList, wasm.outAddr);
      if (mA === 0 || mB === 0) {
        for (let b = 0; b < nb; b++) sigma[r0 + b] = wasm.out[b]!;
        continue;
      }
    } else {
      // 1. α–α (diagonal of H_α included)
      const h0 = hAOff[ia]!;
      const h1 = hAOff[ia + 1]!;
      for (let b = 0; b < nb; b++) sigma[r0 + b] = 0;
      for (let e = h0; e < h1; e++) {
        const v = hAValue[e]!;
        const j0 = rowStart[hATarget[e]!]!;
        for (let b = 0; b < nb; b++) sigma[r0 + b] += v * c[j0 + b]!;
      }
      // 2. β–β
      for (let b = 0; b < nb; b++) {
        const ib = betaSorted[bList + b]!;
        const e1 = hBOff[ib + 1]!;
        let s = 0;
        for (let e = hBOff[ib]!; e < e1; e++) s += hBValue[e]! * c[r0 + hBTarget[e]!]!;
        sigma[r0 + b] += s;
      }
      if (mA === 0 || mB === 0) continue;
    }
    // 3a. gather X[b'][t]
    const a0 = ia * mA;
    if (wasm) {
      wasm.gather(wasm.arec + 16 * a0, wasm.arec + 16 * (a0 + mA), wasm.xAddr, 8 * mA);
    } else {
      for (let t = 0; t < mA; t++) {
        const ja = aTarget[a0 + t]!;
        const sg = aSign[a0 + t]!;
        const j0 = rowStart[ja]!;
        const nj = rowLen[ja]!;
        for (let b = 0, xb = t; b < nj; b++, xb += mA) X[xb] = sg * c[j0 + b]!;
      }
    }
    // 3b. K[rs][t] = (p_t q_t | rs) for rs of t's pair irrep
    const g0 = ia * 9;
    for (let g = 0; g < 8; g++) {
      const t0 = a0 + aGroup[g0 + g]!;
      const t1 = a0 + aGroup[g0 + g + 1]!;
      gLo[g] = t0 - a0;
      gHi[g] = t1 - a0;
      if (wasm) {
        wasm.g[2 * g] = 8 * (t0 - a0);
        wasm.g[2 * g + 1] = 8 * (t1 - a0);
      }
      if (t0 === t1 || wasm) continue;
      for (let x = pairStart[g]!; x < pairStart[g + 1]!; x++) {
        const rs = pairSorted[x]!;
        const kr = rs * mA - a0;
        for (let t = t0; t < t1; t++) K[kr + t] = eri[aPair[t]! * n2 + rs]!;
      }
    }
    if (wasm) wasm.kbuild(wasm.apair + 4 * a0, wasm.gAddr, wasm.pstart);
    // 3c. scatter through the β replacements (bK, bX: the K and X row offsets of each entry)
    if (wasm) {
      wasm.scatter(wasm.base + 4 * bList, nb, mB, wasm.outAddr);
      const out = wasm.out;
      for (let b = 0; b < nb; b++) sigma[r0 + b] = out[b]!;
      continue;
    }
    for (let b = 0; b < nb; b++) {
      const e0 = betaSorted[bList + b]! * mB;
      const e1 = e0 + mB;
      let s = 0;
      for (let e = e0; e < e1; e++) {
        const g = bGroup[e]!;
        const t0 = gLo[g]!;
        const t1 = gHi[g]!;
        if (t0 === t1) continue;
        const kr = bK[e]!;
        const xr = bX[e]!;
        let d0 = 0;
        let d1 = 0;
        let t = t0;
        for (; t + 1 < t1; t += 2) {
          d0 += K[kr + t]! * X[xr + t]!;
          d1 += K[kr + t + 1]! * X[xr + t + 1]!;
        }
        if (t < t1) d0 += K[kr + t]! * X[xr + t]!;
        s += bSign[e]! * (d0 + d1);
      }
      sigma[r0 + b] += s;
    }
  }
}
