/**
 * Orthogonalisation kernels of the eigensolvers, written on the VectorSpace interface so that
 * scalars stay on the device: classical Gram–Schmidt applied twice (CGS2, via multiDot and
 * combine, no readback) and SVQB block orthonormalisation (Stathopoulos & Wu 2002: Gram
 * matrix → host eigendecomposition → drop near-dependent directions → one combine per vector;
 * one readback per call).
 * @module
 */
import type { VectorSpace } from '@gpusparse/formats';
import type { SolverStats } from '../common/result';
import { createForOverwrite } from '../common/snapshot';
import { combineNormalize } from '../krylov/fused-update';
import { readAndRelease, releaseScalars } from './common';
import { symmetricEigen } from './dense';

/**
 * w ← (I − Q·Qᵀ)² · w, classical Gram–Schmidt twice, and the same combination on `mirror.w`
 * with `mirror.q` (to keep A·w consistent without another matvec). No synchronisation.
 *
 * Sign trick: `combine(h, Q, −1, w)` computes w ← Q·h − w, so each pass flips the sign of w;
 * two passes give w − Q·(h₁ − h₂). With `keep`, the device scalars h₁ and h₂ are returned
 * (the total projection coefficients are h₁ − h₂; the caller releases them); otherwise they
 * are released at once and empty arrays come back.
 * Cost: 2·|Q| dots and 2·|Q| axpys of length n (twice that with a mirror).
 * @example
 * const { h1, h2 } = projectOutTwice(space, basis, w); // w ⟂ basis
 */
export function projectOutTwice<V, S>(
  space: VectorSpace<V, S>,
  q: readonly V[],
  w: V,
  mirror?: { q: readonly V[]; w: V },
  keep = false,
): { h1: S[]; h2: S[] } {
  if (q.length === 0) return { h1: [], h2: [] };
  const h1 = space.multiDot(q, w); // h₁ = Qᵀ·w
  space.combine(h1, q, -1, w); // w ← Q·h₁ − w
  if (mirror) space.combine(h1, mirror.q, -1, mirror.w); // A·w ← A·Q·h₁ − A·w
  const h2 = space.multiDot(q, w); // h₂ = Qᵀ·w
  space.combine(h2, q, -1, w); // w ← Q·h₂ − w  (= w₀ − Q·(h₁ − h₂))
  if (mirror) space.combine(h2, mirror.q, -1, mirror.w); // A·w ← A·Q·h₂ − A·w
  if (keep) return { h1, h2 };
  releaseScalars(space, h1);
  releaseScalars(space, h2);
  return { h1: [], h2: [] };
}

/** Re-exported from common/snapshot (its home since session 12: the Krylov solvers use it too). */
export { createForOverwrite };

/**
 * {@link projectOutTwice} (keep = true) whose second pass also normalises: w' = (I − QQᵀ)²·w,
 * hn = ‖w'‖ and v = w'/‖w'‖ (v distinct from w and Q; w holds w' after). Fused where the space
 * offers `combineDots` and `combineNormalize` (the WebGPU space: the first combine and the second
 * multi-dot's stage 1 in one pass; the second combine, the norm and the scaling in two dispatches
 * where combine, dot stage 1, dot stage 2 and axpby take four). Q non-empty.
 * The caller releases h1, h2 and hn. No synchronisation.
 * @example const { h1, h2, hn } = projectOutTwiceNormalize(space, basis, w, next);
 */
export function projectOutTwiceNormalize<V, S>(space: VectorSpace<V, S>, q: readonly V[], w: V, v: V): { h1: S[]; h2: S[]; hn: S } {
  const h1 = space.multiDot(q, w); // h₁ = Qᵀ·w
  const h2 = combineDots(space, h1, q, -1, w); // w ← Q·h₁ − w, h₂ = Qᵀ·w
  const hn = combineNormalize(space, h2, q, -1, w, v, 1); // w ← Q·h₂ − w = w₀ − Q·(h₁ − h₂), v = w/‖w‖
  return { h1, h2, hn };
}

/**
 * y ← β·y + Σ c_j·x_j, then xs·y of the new y: fused where the space offers `combineDots` (the
 * WebGPU space: the combine and the multi-dot's first stage in one pass over the x's), else
 * combine and multiDot. No x may alias y.
 * @example const h2 = combineDots(space, h1, basis, -1, w);
 */
export function combineDots<V, S>(space: VectorSpace<V, S>, coeffs: readonly S[], xs: readonly V[], beta: number, y: V): S[] {
  const f = (space as { combineDots?: (c: readonly S[], x: readonly V[], b: number, y: V) => S[] }).combineDots;
  if (typeof f === 'function') return f.call(space, coeffs, xs, beta, y);
  space.combine(coeffs, xs, beta, y);
  return space.multiDot(xs, y);
}

/** Outcome of {@link svqb}. */
export interface SvqbResult<V> {
  /** The orthonormal block (new vectors; the input vectors are released). */
  block: V[];
  /** The mirror block transformed the same way, when one was given. */
  mirror: V[];
  /** Number of directions dropped as linearly dependent. */
  dropped: number;
  /** Smallest kept / largest eigenvalue of the scaled Gram matrix (1 = perfectly conditioned). */
  conditioning: number;
  /**
   * Smallest kept eigenvalue of the scaled Gram matrix (0 when none kept). With `refNorms`, the
   * smallest squared fraction of the original norms that survived the projection.
   */
  smallest: number;
  /** True when the Gram matrix held a non-finite entry (nothing was transformed). */
  nonFinite: boolean;
}

/**
 * SVQB: orthonormalise `block` in place of itself. Forms the Gram matrix G = BᵀB on the device
 * (one readMany), scales it by D⁻¹ (D = `refNorms` when given, else √diag G), eigendecomposes
 * D⁻¹GD⁻¹ = UΛUᵀ on the host, drops directions with λ < dropTol, and returns B·D⁻¹·U·Λ^(−1/2).
 * With `refNorms` = the norms before a projection, λ is the squared fraction that survived it,
 * so dropTol is a linear-dependence threshold relative to the original vectors. The refNorms
 * scalars are released (consumed).
 * Cost: b(b+1)/2 dots, b·b' axpys (b' kept), one readback, O(b³) host flops.
 * @example
 * const { block } = await svqb(space, [w1, w2], { dropTol: 1e-14 }, stats);
 */
export async function svqb<V, S>(
  space: VectorSpace<V, S>,
  block: readonly V[],
  opts: { dropTol: number; refNorms?: readonly S[]; mirror?: readonly V[] },
  stats: SolverStats,
): Promise<SvqbResult<V>> {
  const b = block.length;
  const empty: SvqbResult<V> = { block: [], mirror: [], dropped: 0, conditioning: 1, smallest: 0, nonFinite: false };
  if (b === 0) {
    releaseScalars(space, opts.refNorms ?? []);
    return empty;
  }
  const dots: S[] = [];
  for (let j = 0; j < b; j++) dots.push(...space.multiDot(block.slice(0, j + 1), block[j]!)); // G[0..j][j]
  const toRead: S[] = opts.refNorms ? [...dots, ...opts.refNorms] : dots;
  const got = await readAndRelease(space, toRead, stats); // releases refNorms too
  if (!got.every(Number.isFinite)) return { ...empty, block: [...block], mirror: [...(opts.mirror ?? [])], nonFinite: true };
  const g: number[][] = Array.from({ length: b }, () => new Array<number>(b).fill(0));
  let p = 0;
  for (let j = 0; j < b; j++) {
    for (let i = 0; i <= j; i++) {
      g[i]![j] = got[p]!;
      g[j]![i] = got[p]!;
      p++;
    }
  }
  const scale = new Array<number>(b);
  for (let i = 0; i < b; i++) {
    const d = opts.refNorms ? got[dots.length + i]! : Math.sqrt(Math.max(g[i]![i]!, 0));
    scale[i] = d > 0 ? 1 / d : 0; // a zero vector contributes nothing
  }
  const gs = g.map((row, i) => row.map((x, j) => x * scale[i]! * scale[j]!));
  const eig = symmetricEigen(gs);
  if (!eig) return { ...empty, block: [...block], mirror: [...(opts.mirror ?? [])], nonFinite: true };
  const lamMax = Math.max(eig.values[b - 1]!, 0);
  const keep: number[] = [];
  for (let l = 0; l < b; l++) if (eig.values[l]! > opts.dropTol && eig.values[l]! > 0) keep.push(l);
  const out: V[] = [];
  const outMirror: V[] = [];
  const n = space.length(block[0]!);
  for (const l of keep) {
    const inv = 1 / Math.sqrt(eig.values[l]!);
    const c = eig.vectors[l]!.map((u, i) => u * scale[i]! * inv); // column of D⁻¹·U·Λ^(−1/2)
    const v = createForOverwrite(space, n);
    space.combine(c, block, 0, v); // v = B·c (β = 0: every element written, none read)
    out.push(v);
    if (opts.mirror) {
      const mv = createForOverwrite(space, n);
      space.combine(c, opts.mirror, 0, mv); // A·v = (A·B)·c
      outMirror.push(mv);
    }
  }
  for (const v of block) space.release(v);
  for (const v of opts.mirror ?? []) space.release(v);
  const conditioning = keep.length > 0 && lamMax > 0 ? eig.values[keep[0]!]! / lamMax : 0;
  const smallest = keep.length > 0 ? eig.values[keep[0]!]! : 0;
  return { block: out, mirror: outMirror, dropped: b - keep.length, conditioning, smallest, nonFinite: false };
}

/** A space that forms several combinations of one basis in one sweep over it (WasmVectorSpace.combineMany). */
interface CombineMany<V> {
  combineMany(coeffs: readonly (readonly number[])[], xs: readonly V[], ys: readonly V[]): void;
}

/**
 * New vectors Y[:, l] = Σᵢ coeffs[l][i] · basis[i] (a small dense basis change on the device).
 * Cost: |coeffs|·|basis| axpys of length n, no synchronisation; on a space with `combineMany`
 * (the wasm host space) in one sweep over the basis instead of one per output (the same values).
 * @example
 * const ritz = combineColumns(space, Q, [s0, s1]); // Ritz vectors Q·s
 */
export function combineColumns<V, S>(space: VectorSpace<V, S>, basis: readonly V[], coeffs: readonly (readonly number[])[]): V[] {
  const n = space.length(basis[0]!);
  const many = (space as Partial<CombineMany<V>>).combineMany;
  const width = coeffs.length > 0 ? coeffs[0]!.length : 0;
  if (typeof many === 'function' && coeffs.length > 1 && coeffs.every((c) => c.length === width)) {
    const ys = coeffs.map(() => createForOverwrite(space, n));
    many.call(space, coeffs, basis.slice(0, width), ys);
    return ys;
  }
  return coeffs.map((c) => {
    const y = createForOverwrite(space, n);
    space.combine(c, basis.slice(0, c.length), 0, y); // y = Σ cᵢ·basisᵢ (β = 0: every element written, none read)
    return y;
  });
}
