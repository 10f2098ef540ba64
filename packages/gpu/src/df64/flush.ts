/**
 * What a df64 matrix loses where the device flushes float32 subnormals (NVIDIA does; WGSL
 * allows it), and the exact power-of-two scale that avoids the loss.
 *
 * A df64 value is hi + lo with |lo| ≤ ½ulp(hi). Two things vanish under a flush:
 * - stored parts below 2^-126: a lo part (v − fl32(v)) or a whole hi (|v| < 2^-126). Each such
 *   entry of A then carries an absolute error below 2^-126, so ‖ΔA‖₂ ≤ 2^-126·√count;
 * - intermediate results below 2^-126: the error terms of products and sums whose magnitude is
 *   below about 2^-102. With unit vectors (an eigensolver's) that is every product once
 *   max|aᵢⱼ| is tiny.
 * Neither matters while it stays far below df64's own rounding, 2^-48 relative to ‖A‖: a matrix
 * of order-one entries with a few entries of 1e-35 keeps its df64 accuracy (the entries' lost
 * parts are 1e-38 next to 1). It matters when the whole matrix is tiny (A·1e-30: every lo part
 * is near 1e-38, about 1e-8 of the entries — the df64 product is then float32-accurate).
 * The rule ({@link df64FlushLoss}): the stored losses stay below 2^-60·max|aᵢⱼ| (2^12 under
 * df64's rounding) and max|aᵢⱼ| ≥ 2^-64. An exact power of two 2^s (s = −round(log2 max|aᵢⱼ|))
 * brings max|aᵢⱼ| to 1 and every lo part above 2^-126 again ({@link df64ScaleFor}); the
 * caller must then know it multiplies by 2^s·A (eigsMixed's `devicePolish.scale`).
 * @module
 */

/** Float32's smallest normal value, 2^-126. */
export const F32_MIN_NORMAL = 2 ** -126;

/** Below this max|aᵢⱼ| the products' own error terms are flushed (unit vectors): 2^-64. */
const ARITHMETIC_FLOOR = 2 ** -64;
/** Stored losses must stay this far below max|aᵢⱼ|: 2^-60 (2^12 under df64's 2^-48). */
const STORED_MARGIN = 2 ** -60;

/** A one-pass summary of a matrix's values as a df64 operator at scale `scale` stores them. */
export interface Df64ValueRange {
  /** max |v| (unscaled). */
  maxAbs: number;
  /** Entries whose fl32(v) is a float32 subnormal (flushed whole on load). */
  subnormalHi: number;
  /** Entries whose stored lo part, fl32((v − fl32(v))·scale), is a float32 subnormal. */
  subnormalLo: number;
  /** The power of two the lo parts were computed at (1: unscaled). */
  scale: number;
}

/** An empty range at `scale` (for {@link addValueRange}). */
export function emptyValueRange(scale = 1): Df64ValueRange {
  return { maxAbs: 0, subnormalHi: 0, subnormalLo: 0, scale };
}

/**
 * Add values[k0, k1) to `r` (lo parts at r.scale). One pass, no allocation. O(k1 − k0).
 * @example const r = addValueRange(emptyValueRange(), a.values); df64FlushLoss(r) // undefined when safe
 */
export function addValueRange(r: Df64ValueRange, values: ArrayLike<number>, k0 = 0, k1 = values.length): Df64ValueRange {
  let { maxAbs, subnormalHi, subnormalLo } = r;
  for (let k = k0; k < k1; k++) {
    const v = values[k]!;
    const a = Math.abs(v);
    if (a > maxAbs) maxAbs = a;
    const hi = Math.fround(v);
    if (hi !== 0 && Math.abs(hi) < F32_MIN_NORMAL) subnormalHi++;
    const lo = Math.abs(Math.fround((v - hi) * r.scale));
    if (lo !== 0 && lo < F32_MIN_NORMAL) subnormalLo++;
  }
  r.maxAbs = maxAbs;
  r.subnormalHi = subnormalHi;
  r.subnormalLo = subnormalLo;
  return r;
}

/**
 * Why a df64 operator over values summarised by `r` (scaled by r.scale) would lose accuracy on a
 * device that flushes float32 subnormals, or undefined when the loss stays below df64's own
 * rounding (the module comment's rule). O(1).
 * @example df64FlushLoss(addValueRange(emptyValueRange(), poisson.values.map((v) => v * 1e-30)))
 * // 'max |aᵢⱼ| = 4.0e-30: products below 2^-64 …'
 */
export function df64FlushLoss(r: Df64ValueRange): string | undefined {
  if (!(r.maxAbs > 0) || !Number.isFinite(r.maxAbs)) return undefined; // a zero matrix loses nothing
  const m = r.maxAbs * r.scale;
  if (m < ARITHMETIC_FLOOR) {
    return `max |aᵢⱼ| = ${r.maxAbs.toExponential(2)}${r.scale === 1 ? '' : ` (×2^${Math.log2(r.scale)})`}: its products' df64 error terms fall below float32's normal range (2^-126), which devices flush (NVIDIA), so the df64 product would be about float32-accurate`;
  }
  // ‖ΔA‖₂ ≤ 2^-126·√(count), in the scaled matrix; a flushed hi loses |v|·scale < 2^-126·scale
  const loss = F32_MIN_NORMAL * Math.sqrt(r.subnormalLo + r.subnormalHi * r.scale * r.scale);
  if (loss > STORED_MARGIN * m) {
    return `${r.subnormalLo + r.subnormalHi} entries have df64 parts below float32's normal range (flushed by NVIDIA: up to ${loss.toExponential(1)} in ‖A‖ against max |aᵢⱼ| = ${m.toExponential(2)}), so the df64 product would be about float32-accurate`;
  }
  return undefined;
}

/**
 * The power of two 2^s that brings max|v| to [2^-½, 2^½) (1 for a zero or non-finite maximum),
 * for a df64 operator that multiplies by 2^s·A instead of A. Exact: scaling by a power of two
 * changes no bit of a float64 mantissa in range.
 * @example df64ScaleFor(4e-30) // 2^98
 */
export function df64ScaleFor(maxAbs: number): number {
  if (!(maxAbs > 0) || !Number.isFinite(maxAbs)) return 1;
  return 2 ** -Math.round(Math.log2(maxAbs));
}
