/**
 * Symmetric eigen-decomposition by Householder tridiagonalisation and implicit-shift QR on the
 * tridiagonal (Wilkinson shifts), on flat Float64Arrays: ≈ 9m³ flops with vectors where cyclic
 * Jacobi takes 6–10 sweeps of ≈ 6m³ — the Rayleigh–Ritz problems of a Lanczos restart (an
 * arrowhead plus a tridiagonal, m ≈ 20–60) are solved at every restart, so this is the host
 * solver's cost that grows with the basis, not with n. Backward stable: every eigenvalue within a
 * few ulps of ‖h‖ of the exact one, vectors orthonormal to working precision.
 * @module
 */

/** Tridiagonal form h = Q·T·Qᵀ: T's diagonal d, sub-diagonal e (e[m−1] = 0), Q row-major. */
interface Tridiagonal {
  d: Float64Array;
  e: Float64Array;
  q: Float64Array;
}

/**
 * Householder reduction of the symmetric m×m `a` (row-major, overwritten) to tridiagonal form.
 * Step k maps column k below the sub-diagonal to zero with H = I − 2vvᵀ/vᵀv (v kept in that
 * column), applied to the trailing block as A ← A − v·wᵀ − w·vᵀ; Q = H₀·H₁·… is then built
 * from the back. Columns that are already zero below the sub-diagonal (the tridiagonal part of a
 * Lanczos matrix) are skipped.
 */
function tridiagonalize(a: Float64Array, m: number): Tridiagonal {
  const d = new Float64Array(m);
  const e = new Float64Array(m);
  const betas = new Float64Array(m); // 2/vᵀv of step k, 0 when skipped
  const p = new Float64Array(m);
  for (let k = 0; k < m - 2; k++) {
    const x0 = a[(k + 1) * m + k]!;
    let scale = 0;
    for (let i = k + 2; i < m; i++) scale = Math.max(scale, Math.abs(a[i * m + k]!));
    if (scale === 0) {
      e[k] = x0;
      continue;
    }
    // v from x/scale (H depends on v's direction only): no overflow or underflow in ‖x‖², vᵀv
    scale = Math.max(scale, Math.abs(x0));
    let ss = 0;
    for (let i = k + 1; i < m; i++) ss += (a[i * m + k] = a[i * m + k]! / scale) ** 2;
    const y0 = a[(k + 1) * m + k]!;
    const alpha = (y0 >= 0 ? -1 : 1) * Math.sqrt(ss); // sign opposite to x0: no cancellation in v0
    a[(k + 1) * m + k] = y0 - alpha; // v = x/scale − α·e₁, stored in column k
    const beta = 1 / (ss - y0 * alpha); // 2/vᵀv, vᵀv = ‖y‖² − 2y₀α + α² = 2(ss − y₀α), no cancellation
    betas[k] = beta;
    e[k] = alpha * scale;
    // p = β·A₂₂·v, then w = p − (β/2)(vᵀp)·v; A₂₂ ← A₂₂ − v·wᵀ − w·vᵀ
    let vp = 0;
    for (let i = k + 1; i < m; i++) {
      let s = 0;
      for (let j = k + 1; j < m; j++) s += a[i * m + j]! * a[j * m + k]!;
      p[i] = beta * s;
      vp += a[i * m + k]! * p[i]!;
    }
    const half = 0.5 * beta * vp;
    for (let i = k + 1; i < m; i++) p[i] = p[i]! - half * a[i * m + k]!;
    for (let i = k + 1; i < m; i++) {
      const vi = a[i * m + k]!, wi = p[i]!;
      for (let j = k + 1; j < m; j++) a[i * m + j] = a[i * m + j]! - vi * p[j]! - wi * a[j * m + k]!;
    }
  }
  for (let k = 0; k < m; k++) d[k] = a[k * m + k]!;
  if (m >= 2) e[m - 2] = a[(m - 1) * m + (m - 2)]!;
  return { d, e, q: accumulate(a, betas, m) };
}

/** Q = H₀·H₁·…·H_{m−3} from the vectors left in the columns of `a`, applied from the back. */
function accumulate(a: Float64Array, betas: Float64Array, m: number): Float64Array {
  const q = new Float64Array(m * m);
  for (let i = 0; i < m; i++) q[i * m + i] = 1;
  const t = new Float64Array(m);
  for (let k = m - 3; k >= 0; k--) {
    const beta = betas[k]!;
    if (beta === 0) continue;
    // Q₂₂ ← (I − β·v·vᵀ)·Q₂₂ on rows/columns k+1.. (the rest of Q is still the identity there)
    t.fill(0);
    for (let i = k + 1; i < m; i++) {
      const vi = a[i * m + k]!;
      for (let j = k + 1; j < m; j++) t[j] = t[j]! + vi * q[i * m + j]!;
    }
    for (let i = k + 1; i < m; i++) {
      const f = beta * a[i * m + k]!;
      for (let j = k + 1; j < m; j++) q[i * m + j] = q[i * m + j]! - f * t[j]!;
    }
  }
  return q;
}

/**
 * Implicit-shift QR sweeps on the tridiagonal (d, e), rotations accumulated into the columns
 * of q (row-major m×m). Each sweep chases the bulge of a Wilkinson-shifted Givens rotation down
 * the lowest unreduced block; an off-diagonal below ε·(|dᵢ| + |dᵢ₊₁|) is set to zero (the
 * standard deflation, a perturbation of one ulp of the neighbouring diagonal). Returns false
 * when a block has not split after 30 sweeps per eigenvalue (the caller falls back to Jacobi).
 */
function tridiagonalQr(d: Float64Array, e: Float64Array, q: Float64Array, m: number): boolean {
  const eps = Number.EPSILON;
  let hi = m - 1;
  let sweeps = 0;
  while (hi > 0) {
    if (Math.abs(e[hi - 1]!) <= eps * (Math.abs(d[hi - 1]!) + Math.abs(d[hi]!)) || Math.abs(e[hi - 1]!) < 2 ** -1022) {
      e[hi - 1] = 0;
      hi--;
      continue;
    }
    let lo = hi - 1;
    while (lo > 0 && Math.abs(e[lo - 1]!) > eps * (Math.abs(d[lo - 1]!) + Math.abs(d[lo]!))) lo--;
    if (lo > 0) e[lo - 1] = 0;
    if (++sweeps > 30 * m) return false;
    qrSweep(d, e, q, m, lo, hi);
  }
  return true;
}

/** One Wilkinson-shifted implicit QR step on the unreduced block [lo, hi] of (d, e). */
function qrSweep(d: Float64Array, e: Float64Array, q: Float64Array, m: number, lo: number, hi: number): void {
  const f = e[hi - 1]!;
  const dd = 0.5 * (d[hi - 1]! - d[hi]!);
  // eigenvalue of the last 2×2 nearer d[hi]: d − f²/(dd ± √(dd² + f²)), written without f² (overflow at 1e300)
  const t = dd / f;
  const mu = d[hi]! - f / (t + (t >= 0 ? 1 : -1) * Math.hypot(t, 1));
  let x = d[lo]! - mu;
  let z = e[lo]!;
  for (let k = lo; k < hi; k++) {
    // G in the (k, k+1) plane with Gᵀ·(x, z) = (r, 0): c = x/r, s = −z/r
    const r = Math.hypot(x, z);
    const c = r === 0 ? 1 : x / r;
    const s = r === 0 ? 0 : -z / r;
    if (k > lo) e[k - 1] = r; // the bulge at (k−1, k+1) is gone
    const a = d[k]!, b = e[k]!, g = d[k + 1]!;
    d[k] = c * c * a - 2 * c * s * b + s * s * g;
    d[k + 1] = s * s * a + 2 * c * s * b + c * c * g;
    e[k] = c * s * (a - g) + (c * c - s * s) * b;
    if (k + 1 < hi) {
      z = -s * e[k + 1]!; // new bulge at (k, k+2)
      e[k + 1] = c * e[k + 1]!;
      x = e[k]!;
    }
    for (let i = 0; i < m; i++) {
      const qk = q[i * m + k]!, qk1 = q[i * m + k + 1]!;
      q[i * m + k] = c * qk - s * qk1;
      q[i * m + k + 1] = s * qk + c * qk1;
    }
  }
}

/**
 * Eigenpairs of the symmetric m×m matrix `a` (row-major, full, finite; overwritten): values
 * ascending, vectors[i] the unit eigenvector of values[i]. Undefined when the QR sweeps did not
 * converge (not seen on finite input; the caller then uses Jacobi).
 */
export function tridiagonalQrEigen(a: Float64Array, m: number): { values: number[]; vectors: number[][] } | undefined {
  // scale by a power of two (exact) to max |aᵢⱼ| ≈ 1: the sweeps' deflation tests and rotations
  // then never reach the subnormal range, where relative precision is lost (entries of 1e-300)
  let big = 0;
  for (let i = 0; i < m * m; i++) big = Math.max(big, Math.abs(a[i]!));
  const scale = big > 0 ? 2 ** -Math.round(Math.log2(big)) : 1;
  for (let i = 0; i < m * m; i++) a[i] = a[i]! * scale;
  const { d, e, q } = tridiagonalize(a, m);
  if (!tridiagonalQr(d, e, q, m)) return undefined;
  // plain loops: Array.from with a callback took ≈ 40 % of this function at m = 20 (a thick restart)
  const order = ascendingOrder(d, m);
  const values = new Array<number>(m);
  const vectors = new Array<number[]>(m);
  for (let t = 0; t < m; t++) {
    const i = order[t]!;
    values[t] = d[i]! / scale;
    if (!Number.isFinite(values[t]!)) return undefined;
    const v = new Array<number>(m);
    for (let k = 0; k < m; k++) v[k] = q[k * m + i]!;
    vectors[t] = v;
  }
  return { values, vectors };
}

/** Indices 0..m−1 ordered by ascending d[i] (insertion sort: m is a few dozen, d mostly sorted). */
export function ascendingOrder(d: Float64Array, m: number): Int32Array {
  const order = new Int32Array(m);
  for (let i = 0; i < m; i++) {
    let p = i;
    while (p > 0 && d[order[p - 1]!]! > d[i]!) {
      order[p] = order[p - 1]!;
      p--;
    }
    order[p] = i;
  }
  return order;
}
