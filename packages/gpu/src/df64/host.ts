/**
 * Host side of df64: exact references for the error-free transformations (a JS double holds
 * the exact sum or product of two f32 without over/underflow), a step-by-step float32
 * emulation of the device's df64 operations (bit-for-bit oracle for the tests), and the
 * split / join between Float64Array and interleaved (hi, lo) float32 pairs.
 * @module
 */

const f = Math.fround;

/** Exact TwoSum of two f32: [fl(a + b), a + b − fl(a + b)] (the error is an f32). */
export function exactTwoSum(a: number, b: number): [number, number] {
  const s = f(a + b);
  // the larger operand minus s is exact in double (≤ 48 significant bits), then + the smaller
  const e = Math.abs(a) >= Math.abs(b) ? a - s + b : b - s + a;
  return [s, e];
}

/** Exact TwoProd of two f32: [fl(a·b), a·b − fl(a·b)] (a·b has ≤ 48 bits: exact in double). */
export function exactTwoProd(a: number, b: number): [number, number] {
  const p = f(a * b);
  return [p, a * b - p];
}

function fastTwoSum(a: number, b: number): [number, number] {
  const s = f(a + b);
  return [s, f(b - f(s - a))];
}

/** The device's df_add, step by step in float32. */
export function emuAdd(ah: number, al: number, bh: number, bl: number): [number, number] {
  const [sh, sl] = exactTwoSum(ah, bh);
  const [th, tl] = exactTwoSum(al, bl);
  const [uh, ul] = fastTwoSum(sh, f(sl + th));
  return fastTwoSum(uh, f(ul + tl));
}

/** The device's df_mul, step by step in float32. */
export function emuMul(ah: number, al: number, bh: number, bl: number): [number, number] {
  const [ph, pl] = exactTwoProd(ah, bh);
  const c = f(f(ah * bl) + f(al * bh));
  return fastTwoSum(ph, f(pl + c));
}

/** The device's df_mul_f (df64 times f32), step by step in float32. */
export function emuMulF(ah: number, al: number, b: number): [number, number] {
  const [ph, pl] = exactTwoProd(ah, b);
  return fastTwoSum(ph, f(pl + f(al * b)));
}

/** hi = fl32(v), lo = fl32(v − hi): interleaved pairs (v − hi is exact in double). */
export function splitF64(values: ArrayLike<number>): Float32Array {
  const out = new Float32Array(2 * values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    const hi = f(v);
    out[2 * i] = hi;
    out[2 * i + 1] = Number.isFinite(hi) ? f(v - hi) : 0;
  }
  return out;
}

/** hi + lo of interleaved pairs, as float64. */
export function joinF64(pairs: Float32Array, n = pairs.length / 2): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = pairs[2 * i]! + pairs[2 * i + 1]!;
  return out;
}
