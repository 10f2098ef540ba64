/**
 * Float64 BLAS-1 kernels over Float64Array for {@link HostVectorSpace}: dot, a scaled-safe
 * 2-norm, and the fused many-vector operations of Krylov/Davidson orthogonalisation — `combine`
 * (y = β·y + Σ cⱼ·xⱼ) and `multiDot` ([x₀·y, x₁·y, …]) — done in one pass over y in chunks of
 * {@link BLAS1_CHUNK} elements, four vectors at a time, so y moves between memory and the core
 * once per call instead of once per vector.
 *
 * Rounding is fixed by construction, not by luck:
 * - {@link dotF64} sums even-index products into one accumulator and odd-index products into a
 *   second, added at the end; {@link multiDotF64} keeps exactly these two accumulators per
 *   vector across chunks (the chunk length is even), so `multiDotF64(xs, y)[j]` is bit-identical
 *   to `dotF64(xs[j], y)` for every j.
 * - {@link combineF64} evaluates, per element, ((β·yᵢ + c₀x₀ᵢ) + c₁x₁ᵢ) + … left to right, the
 *   order of β-scaling followed by one axpy per vector; the result is bit-identical to that
 *   sequential form (β = 0 starts from +0 and never reads y, so NaN in y is ignored).
 * @module
 */

/**
 * Elements per chunk of the fused kernels: 4096 float64 = 32 KiB per vector, so one chunk of y
 * plus four x chunks (160 KiB) stay in L2 while the four-vector groups sweep over it. Even, which
 * {@link multiDotF64}'s bit-identity with {@link dotF64} relies on.
 */
export const BLAS1_CHUNK = 4096;

/**
 * x·y with two accumulators (even and odd indices). Both arrays must have the same length (not
 * checked here). Cost: 2n flops, one pass over x and y.
 * @example
 * dotF64(Float64Array.of(1, 2, 3), Float64Array.of(4, 5, 6)); // 32
 */
export function dotF64(x: Float64Array, y: Float64Array): number {
  const n = x.length;
  let s0 = 0;
  let s1 = 0;
  let i = 0;
  for (; i + 1 < n; i += 2) {
    s0 += x[i]! * y[i]!;
    s1 += x[i + 1]! * y[i + 1]!;
  }
  if (i < n) s0 += x[i]! * y[i]!;
  return s0 + s1;
}

/** Sums of squares at or above this are free of underflow loss: see {@link norm2F64}. */
const NORM2_SAFE_MIN = 2 ** -900;

/**
 * ‖x‖₂. Fast path: one pass of plain sum of squares (two accumulators); when that sum is finite
 * and ≥ 2^-900 no square overflowed and the squares that underflowed (|xᵢ| < 2^-511) weigh less
 * than n·2^-174 relative, so √sum is returned. Otherwise (overflow, all-tiny vectors, NaN, ±∞)
 * a second pass runs the scaled recurrence of LAPACK's dnrm2, which never overflows. Cost: 2n
 * flops (the second pass only on those rare inputs).
 * @example
 * norm2F64(Float64Array.of(3e200, 4e200)); // 5e200 (through the scaled pass)
 */
export function norm2F64(x: Float64Array): number {
  const n = x.length;
  let s0 = 0;
  let s1 = 0;
  let i = 0;
  for (; i + 1 < n; i += 2) {
    const a = x[i]!;
    const b = x[i + 1]!;
    s0 += a * a;
    s1 += b * b;
  }
  if (i < n) s0 += x[i]! * x[i]!;
  const ss = s0 + s1;
  // NaN fails both comparisons and falls through, as do 0, tiny sums and +∞
  if (ss < Number.POSITIVE_INFINITY && ss >= NORM2_SAFE_MIN) return Math.sqrt(ss);
  return scaledNorm2(x);
}

/** dnrm2's scale/ssq recurrence: overflow- and underflow-free, NaN in → NaN out. */
function scaledNorm2(x: Float64Array): number {
  let scale = 0;
  let ssq = 1;
  for (let i = 0; i < x.length; i++) {
    const a = Math.abs(x[i]!);
    if (a === 0) continue;
    if (Number.isNaN(a)) return Number.NaN;
    if (scale < a) {
      ssq = 1 + ssq * (scale / a) * (scale / a);
      scale = a;
    } else ssq += (a / scale) * (a / scale);
  }
  return scale * Math.sqrt(ssq);
}

/**
 * [x₀·y, x₁·y, …] in one pass over y: chunks of {@link BLAS1_CHUNK}, four x vectors per inner
 * loop (eight independent accumulators), then pairs and singles. Every xⱼ must have y's length
 * (not checked here). `out[j]` is bit-identical to `dotF64(xs[j], y)`. Cost: 2nk flops; memory
 * traffic (k + 1)·8n bytes.
 * @example
 * const y = Float64Array.of(1, 1);
 * multiDotF64([Float64Array.of(1, 2), Float64Array.of(3, 4)], y); // Float64Array [3, 7]
 */
export function multiDotF64(xs: readonly Float64Array[], y: Float64Array): Float64Array {
  const k = xs.length;
  const n = y.length;
  const acc = new Float64Array(2 * k); // (even, odd) accumulator pair per vector
  for (let lo = 0; lo < n; lo += BLAS1_CHUNK) {
    const hi = Math.min(n, lo + BLAS1_CHUNK);
    let j = 0;
    for (; j + 4 <= k; j += 4) dot4(acc, j, y, lo, hi, xs[j]!, xs[j + 1]!, xs[j + 2]!, xs[j + 3]!);
    if (j + 2 <= k) {
      dot2(acc, j, y, lo, hi, xs[j]!, xs[j + 1]!);
      j += 2;
    }
    if (j < k) dot1(acc, j, y, lo, hi, xs[j]!);
  }
  const out = new Float64Array(k);
  for (let j = 0; j < k; j++) out[j] = acc[2 * j]! + acc[2 * j + 1]!;
  return out;
}

function dot4(
  acc: Float64Array,
  j: number,
  y: Float64Array,
  lo: number,
  hi: number,
  x0: Float64Array,
  x1: Float64Array,
  x2: Float64Array,
  x3: Float64Array,
): void {
  const p = 2 * j;
  let e0 = acc[p]!;
  let o0 = acc[p + 1]!;
  let e1 = acc[p + 2]!;
  let o1 = acc[p + 3]!;
  let e2 = acc[p + 4]!;
  let o2 = acc[p + 5]!;
  let e3 = acc[p + 6]!;
  let o3 = acc[p + 7]!;
  let i = lo;
  for (; i + 1 < hi; i += 2) {
    const ya = y[i]!;
    const yb = y[i + 1]!;
    e0 += x0[i]! * ya;
    o0 += x0[i + 1]! * yb;
    e1 += x1[i]! * ya;
    o1 += x1[i + 1]! * yb;
    e2 += x2[i]! * ya;
    o2 += x2[i + 1]! * yb;
    e3 += x3[i]! * ya;
    o3 += x3[i + 1]! * yb;
  }
  if (i < hi) {
    const ya = y[i]!;
    e0 += x0[i]! * ya;
    e1 += x1[i]! * ya;
    e2 += x2[i]! * ya;
    e3 += x3[i]! * ya;
  }
  acc[p] = e0;
  acc[p + 1] = o0;
  acc[p + 2] = e1;
  acc[p + 3] = o1;
  acc[p + 4] = e2;
  acc[p + 5] = o2;
  acc[p + 6] = e3;
  acc[p + 7] = o3;
}

function dot2(acc: Float64Array, j: number, y: Float64Array, lo: number, hi: number, x0: Float64Array, x1: Float64Array): void {
  const p = 2 * j;
  let e0 = acc[p]!;
  let o0 = acc[p + 1]!;
  let e1 = acc[p + 2]!;
  let o1 = acc[p + 3]!;
  let i = lo;
  for (; i + 1 < hi; i += 2) {
    const ya = y[i]!;
    const yb = y[i + 1]!;
    e0 += x0[i]! * ya;
    o0 += x0[i + 1]! * yb;
    e1 += x1[i]! * ya;
    o1 += x1[i + 1]! * yb;
  }
  if (i < hi) {
    const ya = y[i]!;
    e0 += x0[i]! * ya;
    e1 += x1[i]! * ya;
  }
  acc[p] = e0;
  acc[p + 1] = o0;
  acc[p + 2] = e1;
  acc[p + 3] = o1;
}

function dot1(acc: Float64Array, j: number, y: Float64Array, lo: number, hi: number, x0: Float64Array): void {
  const p = 2 * j;
  let e0 = acc[p]!;
  let o0 = acc[p + 1]!;
  let i = lo;
  for (; i + 1 < hi; i += 2) {
    e0 += x0[i]! * y[i]!;
    o0 += x0[i + 1]! * y[i + 1]!;
  }
  if (i < hi) e0 += x0[i]! * y[i]!;
  acc[p] = e0;
  acc[p + 1] = o0;
}

/** True when `a` and `b` are views of one buffer with overlapping byte ranges. */
function overlaps(a: Float64Array, b: Float64Array): boolean {
  if (a.buffer !== b.buffer) return false;
  return a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength;
}

/**
 * y = β·y + Σ cⱼ·xⱼ in one pass over y: chunks of {@link BLAS1_CHUNK}; per chunk the first group
 * of (up to) four vectors applies β, later groups accumulate, so y's chunk is read and written
 * from cache. Bit-identical to scaling y by β (β = 0: zeroing) and then one axpy per vector in
 * order. Every xⱼ must have y's length and `coeffs` k entries (not checked here). When some xⱼ
 * overlaps y in memory the fused order would read updated values, so that case runs the
 * sequential form itself. Cost: 2nk flops; memory traffic (k + 2)·8n bytes ((k + 1)·8n for β = 0).
 * @example
 * const y = Float64Array.of(1, 1);
 * combineF64([2, -1], [Float64Array.of(1, 0), Float64Array.of(0, 1)], 0.5, y); // y = [2.5, -0.5]
 */
export function combineF64(coeffs: ArrayLike<number>, xs: readonly Float64Array[], beta: number, y: Float64Array): void {
  const k = xs.length;
  const n = y.length;
  for (let j = 0; j < k; j++) {
    if (overlaps(xs[j]!, y)) {
      combineSequential(coeffs, xs, beta, y);
      return;
    }
  }
  for (let lo = 0; lo < n; lo += BLAS1_CHUNK) {
    const hi = Math.min(n, lo + BLAS1_CHUNK);
    if (k === 0) {
      scaleRange(y, lo, hi, beta);
      continue;
    }
    let b = beta; // the first group applies β, the later ones add to y (β = 1)
    let j = 0;
    for (; j + 4 <= k; j += 4) {
      comb4(y, lo, hi, b, coeffs[j]!, xs[j]!, coeffs[j + 1]!, xs[j + 1]!, coeffs[j + 2]!, xs[j + 2]!, coeffs[j + 3]!, xs[j + 3]!);
      b = 1;
    }
    if (j + 2 <= k) {
      comb2(y, lo, hi, b, coeffs[j]!, xs[j]!, coeffs[j + 1]!, xs[j + 1]!);
      b = 1;
      j += 2;
    }
    if (j < k) comb1(y, lo, hi, b, coeffs[j]!, xs[j]!);
  }
}

/** The reference order, one pass per vector; used when an x overlaps y. */
function combineSequential(coeffs: ArrayLike<number>, xs: readonly Float64Array[], beta: number, y: Float64Array): void {
  scaleRange(y, 0, y.length, beta);
  for (let j = 0; j < xs.length; j++) comb1(y, 0, y.length, 1, coeffs[j]!, xs[j]!);
}

/** y[lo, hi) = β·y (β = 0 writes +0 without reading y; β = 1 leaves y alone). */
function scaleRange(y: Float64Array, lo: number, hi: number, b: number): void {
  if (b === 1) return;
  if (b === 0) y.fill(0, lo, hi);
  else for (let i = lo; i < hi; i++) y[i] = b * y[i]!;
}

// Each kernel below has one loop per β case (0, 1, other) so the inner loops carry no branch;
// β = 0 starts from +0 (what zeroing then adding gives, −0 products included).
function comb4(
  y: Float64Array,
  lo: number,
  hi: number,
  b: number,
  a0: number,
  x0: Float64Array,
  a1: number,
  x1: Float64Array,
  a2: number,
  x2: Float64Array,
  a3: number,
  x3: Float64Array,
): void {
  if (b === 1) for (let i = lo; i < hi; i++) y[i] = y[i]! + a0 * x0[i]! + a1 * x1[i]! + a2 * x2[i]! + a3 * x3[i]!;
  else if (b === 0) for (let i = lo; i < hi; i++) y[i] = 0 + a0 * x0[i]! + a1 * x1[i]! + a2 * x2[i]! + a3 * x3[i]!;
  else for (let i = lo; i < hi; i++) y[i] = b * y[i]! + a0 * x0[i]! + a1 * x1[i]! + a2 * x2[i]! + a3 * x3[i]!;
}

function comb2(y: Float64Array, lo: number, hi: number, b: number, a0: number, x0: Float64Array, a1: number, x1: Float64Array): void {
  if (b === 1) for (let i = lo; i < hi; i++) y[i] = y[i]! + a0 * x0[i]! + a1 * x1[i]!;
  else if (b === 0) for (let i = lo; i < hi; i++) y[i] = 0 + a0 * x0[i]! + a1 * x1[i]!;
  else for (let i = lo; i < hi; i++) y[i] = b * y[i]! + a0 * x0[i]! + a1 * x1[i]!;
}

function comb1(y: Float64Array, lo: number, hi: number, b: number, a0: number, x0: Float64Array): void {
  if (b === 1) for (let i = lo; i < hi; i++) y[i] = y[i]! + a0 * x0[i]!;
  else if (b === 0) for (let i = lo; i < hi; i++) y[i] = 0 + a0 * x0[i]!;
  else for (let i = lo; i < hi; i++) y[i] = b * y[i]! + a0 * x0[i]!;
}
