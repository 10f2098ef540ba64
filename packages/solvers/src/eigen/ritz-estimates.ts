/**
 * Ritz values and residual estimates of a small symmetric projected matrix without its
 * eigenvectors: what a Lanczos step needs to test convergence. The residual of the Ritz pair
 * (θ_i, Q·s_i) is |β·s_i(m)|, so only the last component of each eigenvector is wanted.
 *
 * Householder tridiagonalisation that never touches the last index (the reflectors act on the
 * leading rows only, so Q·e_m = e_m and the last components of H's eigenvectors are those of
 * T's), then implicit QL with Wilkinson-type shifts where each rotation updates one row of the
 * eigenvector matrix instead of all m. Cost ≈ (4/3)·m³ + O(m²) flops against ≈ 9·m³ for a
 * full decomposition (ml-matrix's, see ./dense), and no allocation of m vectors: at m = 20 this
 * is a few µs per step against ≈ 170 µs for ml-matrix's EigenvalueDecomposition.
 * @module
 */
import { ascendingOrder } from './dense-qr';

/** Ritz values (ascending) and the last component of each matching unit eigenvector (sign free). */
export interface RitzEstimates {
  values: number[];
  last: number[];
}

/**
 * Eigenvalues and the last eigenvector components of the symmetric part of the leading m×m
 * block of `h` (row arrays). Returns undefined when an entry is non-finite or the QL sweeps do
 * not converge (callers fall back to a full decomposition or report 'non-finite').
 * @example
 * ritzEstimates([[2, 1], [1, 2]], 2); // { values: [1, 3], last: [±0.707, ±0.707] }
 */
export function ritzEstimates(h: readonly (readonly number[])[], m: number): RitzEstimates | undefined {
  if (m === 0) return { values: [], last: [] };
  const a = new Float64Array(m * m);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < m; j++) {
      const x = 0.5 * (h[i]![j]! + h[j]![i]!);
      if (!Number.isFinite(x)) return undefined;
      a[i * m + j] = x;
    }
  }
  const d = new Float64Array(m);
  const e = new Float64Array(m); // e[i] couples i and i + 1
  tridiagonaliseKeepingLast(a, m, d, e);
  const z = new Float64Array(m);
  z[m - 1] = 1; // the last row of the identity; rotations update it like the whole matrix
  if (!implicitQl(d, e, z, m)) return undefined;
  const order = ascendingOrder(d, m);
  const values = new Array<number>(m);
  const last = new Array<number>(m);
  for (let t = 0; t < m; t++) {
    values[t] = d[order[t]!]!;
    last[t] = z[order[t]!]!;
  }
  return { values, last };
}

/**
 * In place: a = P·a·P for reflectors P acting on rows 0..p−1 (p = m−1 … 2), which leaves the
 * last index alone; writes the tridiagonal diagonal to d and the off-diagonal to e.
 */
function tridiagonaliseKeepingLast(a: Float64Array, m: number, d: Float64Array, e: Float64Array): void {
  const v = new Float64Array(m);
  const w = new Float64Array(m);
  for (let p = m - 1; p >= 2; p--) {
    // x = a[p][0..p−1] → α·e_{p−1}; v = x − α·e_{p−1} with α of opposite sign to x_{p−1}
    let s = 0;
    for (let i = 0; i < p - 1; i++) s += a[p * m + i]! ** 2;
    if (s === 0) continue; // row p is already tridiagonal
    const xl = a[p * m + p - 1]!;
    const norm = Math.sqrt(s + xl * xl);
    const alpha = xl >= 0 ? -norm : norm;
    for (let i = 0; i < p; i++) v[i] = a[p * m + i]!;
    v[p - 1] = xl - alpha;
    let vv = 0;
    for (let i = 0; i < p; i++) vv += v[i]! ** 2;
    const beta = 2 / vv;
    // B ← B − v·wᵀ − w·vᵀ with q = β·B·v, w = q − (β·vᵀq/2)·v  (B the leading p×p block)
    let vq = 0;
    for (let i = 0; i < p; i++) {
      let t = 0;
      for (let j = 0; j < p; j++) t += a[i * m + j]! * v[j]!;
      w[i] = beta * t;
      vq += v[i]! * w[i]!;
    }
    const k = 0.5 * beta * vq;
    for (let i = 0; i < p; i++) w[i] = w[i]! - k * v[i]!;
    for (let i = 0; i < p; i++) for (let j = 0; j < p; j++) a[i * m + j] = a[i * m + j]! - v[i]! * w[j]! - w[i]! * v[j]!;
    for (let i = 0; i < p; i++) a[p * m + i] = a[i * m + p] = 0;
    a[p * m + p - 1] = a[(p - 1) * m + p] = alpha;
  }
  for (let i = 0; i < m; i++) d[i] = a[i * m + i]!;
  for (let i = 0; i + 1 < m; i++) e[i] = a[(i + 1) * m + i]!;
  e[m - 1] = 0;
}

/**
 * Implicit QL with shifts on the tridiagonal (d, e), in place: d becomes the eigenvalues
 * (unsorted) and z (one row of the eigenvector matrix) the matching components. False when an
 * eigenvalue needs more than 60 sweeps.
 */
function implicitQl(d: Float64Array, e: Float64Array, z: Float64Array, m: number): boolean {
  for (let l = 0; l < m; l++) {
    for (let iter = 0; ; iter++) {
      let mm = l;
      for (; mm < m - 1; mm++) {
        const dd = Math.abs(d[mm]!) + Math.abs(d[mm + 1]!);
        if (Math.abs(e[mm]!) <= Number.EPSILON * dd) break;
      }
      if (mm === l) break; // d[l] has split off
      if (iter === 60) return false;
      // shift from the leading 2×2 block at l (its eigenvalue nearer d[l])
      let g = (d[l + 1]! - d[l]!) / (2 * e[l]!);
      let r = pythag(g, 1);
      g = d[mm]! - d[l]! + e[l]! / (g + (g >= 0 ? r : -r));
      let s = 1;
      let c = 1;
      let p = 0;
      let i = mm - 1;
      for (; i >= l; i--) {
        const f = s * e[i]!;
        const b = c * e[i]!;
        r = pythag(f, g);
        e[i + 1] = r;
        if (r === 0) {
          // underflow: the matrix splits between i and i + 1; restart the sweep there
          d[i + 1] = d[i + 1]! - p;
          e[mm] = 0;
          break;
        }
        s = f / r;
        c = g / r;
        g = d[i + 1]! - p;
        r = (d[i]! - g) * s + 2 * c * b;
        p = s * r;
        d[i + 1] = g + p;
        g = c * r - b;
        const zf = z[i + 1]!;
        z[i + 1] = s * z[i]! + c * zf;
        z[i] = c * z[i]! - s * zf;
      }
      if (r === 0 && i >= l) continue;
      d[l] = d[l]! - p;
      e[l] = g;
      e[mm] = 0;
    }
  }
  return true;
}

/** √(a² + b²); Math.hypot (several times slower in V8) only where the squares could over- or underflow. */
function pythag(a: number, b: number): number {
  const h = Math.sqrt(a * a + b * b);
  return h < 1e150 && h > 1e-150 ? h : Math.hypot(a, b);
}

/**
 * Most steps between two Ritz estimates of a {@link estimateGap} schedule: 8 (was 4) — host
 * Lanczos, k = 4 with the multiplicity check, estimates 87 / 104 / 560 → 51 / 61 / 297 on SiH4 /
 * ExaSP2_trpcage_8K / banded-spd-2000-b9 for 287 / 370 / 2 062 → 288 / 372 / 2 061 products
 * (a 20×20 estimate costs ≈ 40 µs, a banded-spd-2000 step ≈ 100 µs).
 */
export const MAX_ESTIMATE_GAP = 8;

/** The worst wanted residual estimate at an iteration, as ln(estimate / threshold). */
export interface EstimatePoint {
  iteration: number;
  logRatio: number;
}

/**
 * Steps from `now` to the next Ritz estimate, for a Lanczos run whose scalars are free to read
 * (the one-pass host path) and whose estimates are then a visible cost: taken every step they
 * were ≈ 8 % of the CPU time on ExaSP2_trpcage_8K (k = 4, m = 20). From the fall of
 * ln(worst estimate / threshold) per step since `last`, the steps to convergence are predicted
 * and half of them skipped, at most {@link MAX_ESTIMATE_GAP}: near convergence the run is
 * estimated every step again, so it stops at most a step later than one estimated every step.
 * 1 when the worst estimate is already at or below the threshold (or not finite).
 * @example
 * estimateGap({ iteration: 20, logRatio: 4 }, { iteration: 18, logRatio: 6 }); // 1: rate 1/step, 4 steps left
 */
export function estimateGap(now: EstimatePoint, last: EstimatePoint | undefined): number {
  if (!(now.logRatio > 0) || !Number.isFinite(now.logRatio)) return 1;
  const steps = last ? now.iteration - last.iteration : 0;
  const rate = steps > 0 ? (last!.logRatio - now.logRatio) / steps : 0;
  const gap = rate > 0 ? Math.floor((0.5 * now.logRatio) / rate) : MAX_ESTIMATE_GAP;
  return Math.max(1, Math.min(MAX_ESTIMATE_GAP, gap));
}
