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

/** Scratch of one thread: X (maxRow · mA) and K (norb² · mA). */
export interface SigmaScratch {
  x: Float64Array;
  k: Float64Array;
}

/**
 * Scratch arrays for `ctx`. Memory 8·mA·(maxRow + norb²) bytes.
 * @example const scratch = sigmaScratch(ctx);
 */
export function sigmaScratch(ctx: DirectContext): SigmaScratch {
  return { x: new Float64Array(Math.max(1, ctx.maxRow * ctx.mA)), k: new Float64Array(Math.max(1, ctx.norb * ctx.norb * ctx.mA)) };
}

/**
 * σ rows of α strings [aStart, aEnd): σ(I,·) = (H c)(I,·), overwritten. Cost per row:
 * O(conn_α·row + row·conn_β + mA·row + mB·row·mA/n_irreps + norb²·mA/n_irreps).
 * Self-contained (see the module comment).
 * @example sigmaRows(ctx, c, sigma, 0, ctx.nA, sigmaScratch(ctx));
 */
export function sigmaRows(ctx: DirectContext, c: Float64Array, sigma: Float64Array, aStart: number, aEnd: number, scratch: SigmaScratch): void {
  const { norb, mA, mB, target, rowStart, rowLen, irrepA, betaSorted, betaStart, eri } = ctx;
  const n2 = norb * norb;
  const X = scratch.x;
  const K = scratch.k;
  for (let ia = aStart; ia < aEnd; ia++) {
    const r0 = rowStart[ia];
    const nb = rowLen[ia];
    if (nb === 0) continue;
    for (let b = 0; b < nb; b++) sigma[r0 + b] = 0;
    // 1. α–α (diagonal of H_α included)
    for (let e = ctx.hAOff[ia]; e < ctx.hAOff[ia + 1]; e++) {
      const v = ctx.hAValue[e];
      const j0 = rowStart[ctx.hATarget[e]];
      for (let b = 0; b < nb; b++) sigma[r0 + b] += v * c[j0 + b];
    }
    // 2. β–β
    const gb = irrepA[ia] ^ target;
    const bList = betaStart[gb];
    for (let b = 0; b < nb; b++) {
      const ib = betaSorted[bList + b];
      let s = 0;
      for (let e = ctx.hBOff[ib]; e < ctx.hBOff[ib + 1]; e++) s += ctx.hBValue[e] * c[r0 + ctx.hBTarget[e]];
      sigma[r0 + b] += s;
    }
    if (mA === 0 || mB === 0) continue;
    // 3a. gather X[b'][t]
    const a0 = ia * mA;
    for (let t = 0; t < mA; t++) {
      const ja = ctx.aTarget[a0 + t];
      const sg = ctx.aSign[a0 + t];
      const j0 = rowStart[ja];
      const nj = rowLen[ja];
      for (let b = 0; b < nj; b++) X[b * mA + t] = sg * c[j0 + b];
    }
    // 3b. K[rs][t] = (p_t q_t | rs) for rs of t's pair irrep
    const g0 = ia * 9;
    for (let g = 0; g < 8; g++) {
      const t0 = ctx.aGroup[g0 + g];
      const t1 = ctx.aGroup[g0 + g + 1];
      if (t0 === t1) continue;
      for (let x = ctx.pairStart[g]; x < ctx.pairStart[g + 1]; x++) {
        const rs = ctx.pairSorted[x];
        const kr = rs * mA;
        for (let t = t0; t < t1; t++) K[kr + t] = eri[ctx.aPair[a0 + t] * n2 + rs];
      }
    }
    // 3c. scatter through the β replacements
    for (let b = 0; b < nb; b++) {
      const ib = betaSorted[bList + b];
      const e0 = ib * mB;
      let s = 0;
      for (let e = e0; e < e0 + mB; e++) {
        const g = ctx.bGroup[e];
        const t0 = ctx.aGroup[g0 + g];
        const t1 = ctx.aGroup[g0 + g + 1];
        if (t0 === t1) continue;
        const kr = ctx.bPair[e] * mA;
        const xr = ctx.bTarget[e] * mA;
        let d = 0;
        for (let t = t0; t < t1; t++) d += K[kr + t] * X[xr + t];
        s += ctx.bSign[e] * d;
      }
      sigma[r0 + b] += s;
    }
  }
}
