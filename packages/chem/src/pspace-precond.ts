/**
 * Davidson's correction step for the direct CI on the time-reversal half space, with a P space:
 * t = (M − θ + shift)⁻¹ r, where M is the exact H on the P half coordinates of lowest diagonal
 * (./direct/pspace.ts) and diag(H) elsewhere — the P-space preconditioner of Knowles–Handy and
 * Olsen-type CI codes. The diagonal preconditioner treats the strongly coupled low determinants
 * as uncoupled; inverting their block exactly (one dense LU of order P per root and iteration,
 * ≈ ⅔P³ flops: 0.2 Mflop at P = 64) brings the residual down faster (H2O/6-31G fc, one ¹A1
 * root to ‖r‖ ≤ 1e-8: 19 → 17 iterations, bench/RESULTS.md).
 * @module
 */
import { type DavidsonCorrector, lowestIndices } from '@gpusparse/solvers';
import { symmetricEigenDense } from './dense-eigen';
import type { HalfSpaceOperator } from './direct/operator';

/** The P block and where its coordinates sit in the half space. */
export interface PSpace {
  /** Half coordinates of the P space (lowest diagonal first). */
  idx: Int32Array;
  /** H_PP, row-major (idx.length²). */
  block: Float64Array;
  /**
   * The preconditioner's diagonal outside P: diag(H) averaged over each configuration (so that
   * corrections keep the spin of the residuals), when the operator gives configurations.
   */
  diagonal?: Float64Array;
  /**
   * H_PP = U Λ Uᵀ (./dense-eigen.ts), once: each correction is then two products with U,
   * O(P²), instead of an LU of order P per root and iteration, O(P³).
   */
  eig?: { values: number[]; vectors: Float64Array[] };
}

/**
 * Default P size: 160 coordinates. With one root 64 and 150 gave the same 17 iterations (H2O/6-31G
 * fc); with three roots in four irreps (CH2/6-31G ¹A1 and ¹B1, spin-clean) 64 / 128 / 200 took
 * 154 / 144 / 137 products. Since the block is diagonalised once (no LU per correction), P costs
 * O(P²·norb) for the block and ≈ 9P³ flops once per solve (≈ 40 Mflop at 160).
 */
export const PSPACE_SIZE = 160;

/**
 * The P space is used only where the half space has at least this many times P coordinates: with
 * P close to the whole space, (H − θ)⁻¹ r ≈ the Ritz vector itself, a correction Davidson already
 * has (stagnation), and small spaces converge in a few iterations anyway.
 */
export const PSPACE_MIN_RATIO = 32;

/** Denominator clamp, as Davidson's diagonal preconditioner (PySCF's 1e-8). */
const CLAMP = 1e-8;

/**
 * Indices of the m smallest entries of d, ascending by value then index (solvers'
 * `lowestIndices`: an insertion selection, O(n·m) at worst and ≈ O(n) on a diagonal — a native
 * sort of the 31 000 entries took 15–27 ms here).
 * @example lowestCoordinates(Float64Array.of(3, 1, 2), 2); // Int32Array [1, 2]
 */
export function lowestCoordinates(d: Float64Array, m: number): Int32Array {
  return Int32Array.from(lowestIndices(d, Math.min(m, d.length)));
}

/**
 * The P space of `half`, or undefined where it should not be used (fewer than
 * PSPACE_MIN_RATIO·size coordinates, or a non-finite block entry). Cost O(size²·norb).
 * @example const ps = pSpace(op.half!, 64);
 */
export function pSpace(half: HalfSpaceOperator, size = PSPACE_SIZE): PSpace | undefined {
  if (size < 1 || half.rows < PSPACE_MIN_RATIO * size) return undefined;
  const cfg = (half as Partial<HalfSpaceOperator>).configurations?.();
  if (!cfg) {
    const idx = lowestCoordinates(half.diagonal(), size);
    const block = half.block(idx);
    for (const x of block) if (!Number.isFinite(x)) return undefined;
    return { idx, block };
  }
  // spin-clean: M = H_PP ⊕ configuration-averaged diag(H) commutes with S² when P is made of whole
  // configurations, so corrections of pure-spin residuals stay pure and a state of another spin
  // of the parity (a quintet among singlets) does not enter the subspace (no deflation round)
  const diagonal = configurationAverage(half.diagonal(), cfg);
  const idx = wholeConfigurations(lowestCoordinates(diagonal, size), cfg, diagonal, Math.ceil(1.25 * size));
  const block = half.block(idx);
  for (const x of block) if (!Number.isFinite(x)) return undefined;
  const eig = symmetricEigenDense(block, idx.length);
  return { idx, block, diagonal, eig: { values: Array.from(eig.values), vectors: eig.vectors.map((v) => Float64Array.from(v)) } };
}

/**
 * d averaged over the coordinates of each configuration id. O(n).
 * @example configurationAverage(Float64Array.of(1, 3, 5), Int32Array.of(0, 0, 1)); // [2, 2, 5]
 */
export function configurationAverage(d: Float64Array, cfg: Int32Array): Float64Array {
  let ids = 0;
  for (const c of cfg) ids = Math.max(ids, c + 1);
  const sum = new Float64Array(ids);
  const count = new Int32Array(ids);
  for (let i = 0; i < d.length; i++) {
    sum[cfg[i]!]! += d[i]!;
    count[cfg[i]!]!++;
  }
  return Float64Array.from(cfg, (c) => sum[c]! / count[c]!);
}

/**
 * The configurations of `seed` (in its order) completed to all their coordinates, whole
 * configurations dropped from the end past `limit` coordinates (the first always kept); sorted
 * by d, then index. O(n).
 */
export function wholeConfigurations(seed: Int32Array, cfg: Int32Array, d: Float64Array, limit: number): Int32Array {
  const order = new Map<number, number>();
  for (const i of seed) if (!order.has(cfg[i]!)) order.set(cfg[i]!, order.size);
  const members: number[][] = Array.from({ length: order.size }, () => []);
  for (let i = 0; i < cfg.length; i++) {
    const r = order.get(cfg[i]!);
    if (r !== undefined) members[r]!.push(i);
  }
  const out: number[] = [];
  for (const m of members) {
    if (out.length > 0 && out.length + m.length > limit) break;
    out.push(...m);
  }
  out.sort((a, b) => d[a]! - d[b]! || a - b);
  return Int32Array.from(out);
}

/** Solves a·x = b in place (b ← x) by Gaussian elimination with partial pivoting; false when a is numerically singular. */
function solveDense(a: Float64Array, b: Float64Array, m: number): boolean {
  let scale = 0;
  for (const x of a) scale = Math.max(scale, Math.abs(x));
  const tiny = 1e-14 * scale;
  for (let c = 0; c < m; c++) {
    let p = c;
    for (let r = c + 1; r < m; r++) if (Math.abs(a[r * m + c]!) > Math.abs(a[p * m + c]!)) p = r;
    const piv = a[p * m + c]!;
    if (!(Math.abs(piv) > tiny)) return false;
    if (p !== c) {
      for (let j = c; j < m; j++) {
        const x = a[c * m + j]!;
        a[c * m + j] = a[p * m + j]!;
        a[p * m + j] = x;
      }
      const y = b[c]!;
      b[c] = b[p]!;
      b[p] = y;
    }
    for (let r = c + 1; r < m; r++) {
      const f = a[r * m + c]! / piv;
      if (f === 0) continue;
      for (let j = c + 1; j < m; j++) a[r * m + j]! -= f * a[c * m + j]!;
      b[r]! -= f * b[c]!;
    }
  }
  for (let c = m - 1; c >= 0; c--) {
    let s = b[c]!;
    for (let j = c + 1; j < m; j++) s -= a[c * m + j]! * b[j]!;
    b[c] = s / a[c * m + c]!;
  }
  return true;
}

/**
 * t = (M − θ + shift)⁻¹ r: the clamped diagonal outside P, the P block by a dense solve (the
 * diagonal there too when the block is singular at θ), into `out` when given (length of r). O(n + P³).
 * @example const t = applyPSpaceInverse(ps, half.diagonal(), r, theta, 1e-3);
 */
export function applyPSpaceInverse(ps: PSpace, diag: Float64Array, r: Float64Array, theta: number, shift: number, out?: Float64Array): Float64Array {
  const t = out ?? new Float64Array(r.length);
  for (let j = 0; j < r.length; j++) {
    let den = diag[j]! - theta + shift;
    if (Math.abs(den) < CLAMP) den = den < 0 ? -CLAMP : CLAMP;
    t[j] = r[j]! / den;
  }
  const { idx, block } = ps;
  const m = idx.length;
  if (ps.eig && spectralSolve(ps.eig, idx, r, t, theta - shift)) return t;
  const a = Float64Array.from(block);
  for (let k = 0; k < m; k++) a[k * m + k]! += shift - theta;
  const b = Float64Array.from(idx, (i) => r[i]!);
  if (solveDense(a, b, m)) for (let k = 0; k < m; k++) t[idx[k]!] = b[k]!;
  return t;
}

/**
 * t[idx] = U (Λ − μ)⁻¹ Uᵀ r[idx]; false (t untouched) when some λ − μ is numerically zero (the
 * caller then keeps the diagonal there, as the LU path does for a singular block). O(P²).
 */
function spectralSolve(eig: { values: number[]; vectors: Float64Array[] }, idx: Int32Array, r: Float64Array, t: Float64Array, mu: number): boolean {
  const m = idx.length;
  let scale = 0;
  for (const l of eig.values) scale = Math.max(scale, Math.abs(l));
  const coef = new Float64Array(m);
  for (let k = 0; k < m; k++) {
    const den = eig.values[k]! - mu;
    if (!(Math.abs(den) > 1e-14 * scale)) return false;
    const u = eig.vectors[k]!;
    let c = 0;
    for (let a = 0; a < m; a++) c += u[a]! * r[idx[a]!]!;
    coef[k] = c / den;
  }
  const out = new Float64Array(m);
  for (let k = 0; k < m; k++) {
    const u = eig.vectors[k]!;
    const c = coef[k]!;
    for (let a = 0; a < m; a++) out[a]! += c * u[a]!;
  }
  for (let a = 0; a < m; a++) t[idx[a]!] = out[a]!;
  return true;
}

/** Options of {@link pSpaceCorrector}. */
export interface PSpaceCorrectorOptions<V> {
  ps: PSpace;
  /** The half operator's diagonal (the preconditioner outside P). */
  diagonal: Float64Array;
  toArray: (v: V) => Promise<Float64Array>;
  fromArray: (a: Float64Array) => V;
  /**
   * Optional, for a space whose vectors are host Float64Arrays: a new vector of length n and the
   * array to write it through, so the correction is written in place (no copy, no garbage of n
   * doubles per root and iteration awaiting collection); `toArray` may then return the vector
   * itself (it is only read). Undefined from it: the copy path.
   */
  alloc?: (n: number) => { vector: V; array: Float64Array } | undefined;
  /** Davidson's level shift (default 1e-3, its own default). */
  levelShift?: number;
}

/**
 * Davidson's corrector (solvers' `davidsonWith`) with the P-space preconditioner, one
 * correction per unconverged root.
 * @example davidsonWith(op, space, { k: 1, diagonal, corrector: pSpaceCorrector({ ps, diagonal, toArray, fromArray }) });
 */
export function pSpaceCorrector<V>(o: PSpaceCorrectorOptions<V>): DavidsonCorrector<V> {
  const shift = o.levelShift ?? 1e-3;
  return async ({ residuals, roots, theta }) => {
    const out: V[] = [];
    for (let j = 0; j < residuals.length; j++) {
      const r = await o.toArray(residuals[j]!);
      const target = o.alloc?.(r.length);
      const t = applyPSpaceInverse(o.ps, o.ps.diagonal ?? o.diagonal, r, theta[roots[j]!]!, shift, target?.array);
      out.push(target ? target.vector : o.fromArray(t));
    }
    return out;
  };
}
