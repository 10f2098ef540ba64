/**
 * LOBPCG's block operations on [X, W, P]: orthonormalisation of a block against the earlier ones
 * (one classical pass or CGS2, then SVQB) and the update of X, A·X and P from the Ritz coefficients.
 * Split from lobpcg.ts (the driver and its steps).
 * @module
 */
import type { VectorSpace } from '@gpusparse/formats';
import { type EigenRun, releaseScalars } from './common';
import { combineColumns, createForOverwrite, projectOutTwice, svqb } from './ortho';

/**
 * Conditioning (λmin/λmax of the SVQB Gram matrix scaled by the norms before projection) above
 * which one CGS2 + SVQB pass is kept in float64: SVQB's loss of orthonormality is ≈ u/λmin
 * (≤ 2e-12 here) and CGS2 has already made the block orthogonal to the earlier ones.
 */
export const SECOND_PASS_BELOW = 1e-4;

/**
 * Kept fraction (smallest eigenvalue of the SVQB Gram matrix scaled by the norms before the
 * projection) above which one classical Gram–Schmidt pass against the earlier blocks is enough
 * in float64: the pass leaves the block orthogonal to them to ≈ (their loss + |S|·u)/√kept
 * (≤ 10× that at 1e-2); below it, or when the SVQB is ill-conditioned, a CGS2 + SVQB round
 * follows. As Davidson's F64_ONE_ROUND_KEEP. The residual block W is orthogonal to X in exact
 * arithmetic (X are Ritz vectors), so its pass rarely removes anything.
 */
export const ONE_PASS_KEEP = 1e-2;

/**
 * `block` (and its `mirror` A·block, transformed alike) made orthonormal and orthogonal to
 * `against`. float32 (`onePass` false): CGS2 + SVQB, repeated once when the first SVQB reports
 * conditioning below `secondBelow`. float64 (`onePass`): one classical pass + SVQB, then a CGS2 +
 * SVQB round only when that SVQB is ill-conditioned or kept less than {@link ONE_PASS_KEEP}.
 * `dropped` counts directions dropped as dependent over both rounds.
 */
export async function orthonormalAgainst<V, S>(
  space: VectorSpace<V, S>,
  against: readonly V[],
  againstMirror: readonly V[] | undefined,
  block: V[],
  mirror: V[] | undefined,
  o: { lindep: number; secondBelow: number; onePass: boolean; stats: EigenRun['stats'] },
): Promise<{ block: V[]; mirror: V[]; dropped: number; nonFinite: boolean }> {
  const project = (b: readonly V[], m: readonly V[] | undefined, once: boolean) =>
    b.forEach((v, t) => {
      const mw = m && againstMirror ? { q: againstMirror, w: m[t]! } : undefined;
      if (once) projectOutOnce(space, against, v, mw); // v ← −(I − SSᵀ)·v, same on A·v
      else projectOutTwice(space, against, v, mw); // v ← (I − SSᵀ)²·v, same on A·v
    });
  const refNorms = block.map((v) => space.norm2(v));
  project(block, mirror, o.onePass);
  const first = await svqb(space, block, { dropTol: o.lindep, refNorms, ...(mirror ? { mirror } : {}) }, o.stats);
  if (first.nonFinite || (first.conditioning >= o.secondBelow && (!o.onePass || first.smallest >= ONE_PASS_KEEP))) return first;
  project(first.block, mirror ? first.mirror : undefined, false);
  const second = await svqb(space, first.block, { dropTol: o.lindep, ...(mirror ? { mirror: first.mirror } : {}) }, o.stats);
  return { ...second, dropped: first.dropped + second.dropped };
}

/**
 * One classical Gram–Schmidt pass: w ← Q·(Qᵀw) − w = −(I − QQᵀ)·w (the sign is free: the
 * block is orthonormalised next), and the same combination on `mirror.w`. No synchronisation.
 */
function projectOutOnce<V, S>(space: VectorSpace<V, S>, q: readonly V[], w: V, mirror?: { q: readonly V[]; w: V }): void {
  if (q.length === 0) return;
  const h = space.multiDot(q, w); // h = Qᵀ·w
  space.combine(h, q, -1, w); // w ← Q·h − w
  if (mirror) space.combine(h, mirror.q, -1, mirror.w); // A·w ← A·Q·h − A·w
  releaseScalars(space, h);
}

/**
 * X ← S·C and A·X ← A·S·C for the Ritz coefficients C (columns over S = [X, W, P]); for an
 * active column also its new P = [W, P]·C_wp (and A·P), from which x = X·C_x + p is formed
 * instead of from all of S (|S| − |X| − 1 fewer vectors read per active column, twice).
 */
export function updateBlocks<V, S>(space: VectorSpace<V, S>, s: readonly V[], as: readonly V[], c: readonly (readonly number[])[], nx: number, active: readonly number[]): { x: V[]; ax: V[]; p: Map<number, { p: V; ap: V }> } {
  const n = space.length(s[0]!);
  const p = new Map<number, { p: V; ap: V }>();
  const form = (basis: readonly V[], ci: readonly number[], pi: V | undefined): V => {
    const y = createForOverwrite(space, n);
    if (pi) space.combine([...ci.slice(0, nx), 1], [...basis.slice(0, nx), pi], 0, y); // x = X·C_x + p
    else space.combine(ci, basis.slice(0, ci.length), 0, y); // x = S·c
    return y;
  };
  const x: V[] = [];
  const ax: V[] = [];
  // the new directions of all active columns at once: one sweep over [W, P] (and [A·W, A·P]) on
  // spaces with combineMany, instead of one per column; each the same values as alone
  const moving = s.length > nx ? c.map((_, i) => i).filter((i) => active.includes(i)) : [];
  const pAll = moving.length > 0 ? combineColumns(space, s.slice(nx), moving.map((i) => c[i]!.slice(nx))) : []; // p = [W, P]·C_wp
  const apAll = moving.length > 0 ? combineColumns(space, as.slice(nx), moving.map((i) => c[i]!.slice(nx))) : []; // A·p = [A·W, A·P]·C_wp
  for (let t = 0; t < moving.length; t++) p.set(moving[t]!, { p: pAll[t]!, ap: apAll[t]! });
  // the columns without a new direction: x = S·c, one sweep over S for all of them
  const still = c.map((_, i) => i).filter((i) => !p.has(i));
  const xStill = still.length > 1 ? combineColumns(space, s, still.map((i) => c[i]!)) : [];
  const axStill = still.length > 1 ? combineColumns(space, as, still.map((i) => c[i]!)) : [];
  c.forEach((ci, i) => {
    const pi = p.get(i);
    const t = still.indexOf(i);
    if (pi) {
      x.push(form(s, ci, pi.p));
      ax.push(form(as, ci, pi.ap));
    } else if (still.length > 1) {
      x.push(xStill[t]!);
      ax.push(axStill[t]!);
    } else {
      x.push(form(s, ci, undefined));
      ax.push(form(as, ci, undefined));
    }
  });
  return { x, ax, p };
}
