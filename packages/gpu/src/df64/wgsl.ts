/**
 * WGSL of double-float ("df64") arithmetic: a value is the unevaluated sum hi + lo of two f32
 * (a `vec2<f32>`, x = hi, y = lo, |lo| ≤ ½ulp(hi)), about 48 significant bits.
 *
 * Error-free transformations only work when the shader compiler evaluates each f32 operation
 * as written. WGSL allows reassociation and FMA contraction, and real drivers do both (measured
 * with Dawn on 2^20 pairs: textbook TwoSum is wrong for ~93 % of pairs on lavapipe and on an
 * H100; Dekker's product is contracted into FMA on the H100; `fma` is not fused on lavapipe).
 * Every intermediate below therefore goes through `df_pin`: its bits are OR-ed with a zero the
 * kernel reads from its uniform block at run time. The compiler cannot prove the zero, so the
 * pinned value is opaque to floating-point algebra: `(a + b) − a` cannot be folded to `b`, sums
 * cannot be reassociated, and a pinned product cannot be contracted into an FMA. (Multiplying
 * each intermediate by a run-time 1.0 also works for TwoSum and TwoProd, but not for the df64
 * product: with reassociation allowed, LLVM factors `x·one + y·one` into `(x + y)·one` and
 * reorders the sums — measured on lavapipe, where df_mul then lost its last bit.)
 * The product's error term has two forms, chosen per device by the self-test
 * (`selftest.ts`): `fma`, exact where the hardware fuses, and Dekker's split, exact where the
 * pins keep it apart.
 * @module
 */

/** How TwoProd computes the rounding error of a·b. */
export type TwoProdMode = 'fma' | 'dekker';

/**
 * The df64 function library for a kernel. `zero` is a WGSL u32 expression holding a run-time
 * 0 (every df64 kernel passes `u.zero`, a uniform field it sets to 0). Functions: `df_pin`,
 * `df_two_sum`, `df_fast_two_sum`, `df_two_prod`, `df_add`, `df_sub`, `df_mul`, `df_mul_f`.
 * @example `${preamble(...)}\n${df64Lib('fma', 'u.zero')}`
 */
export function df64Lib(mode: TwoProdMode, zero: string): string {
  return `${pinWgsl(zero)}
${twoSumWgsl()}
${mode === 'fma' ? twoProdFmaWgsl('df_two_prod') : `${splitWgsl()}\n${twoProdDekkerWgsl('df_two_prod')}`}
${df64OpsWgsl()}`;
}

/**
 * `df_pin(x)`: x unchanged, through an integer OR with a run-time zero the compiler cannot see.
 * The result is opaque to floating-point algebra: no fold, no reassociation, no distribution
 * over a common factor, no FMA contraction of the product that produced x.
 */
export function pinWgsl(zero: string): string {
  return `fn df_pin(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) | ${zero}); }`;
}

/** TwoSum (Knuth, any order of magnitudes) and Fast2Sum (Dekker, needs |a| ≥ |b|). */
export function twoSumWgsl(): string {
  return `fn df_two_sum(a: f32, b: f32) -> vec2<f32> {
  let s = df_pin(a + b);
  let bb = df_pin(s - a);
  let ab = df_pin(s - bb);
  let e = df_pin(df_pin(a - ab) + df_pin(b - bb));
  return vec2<f32>(s, e);
}
fn df_fast_two_sum(a: f32, b: f32) -> vec2<f32> {
  let s = df_pin(a + b);
  let e = df_pin(b - df_pin(s - a));
  return vec2<f32>(s, e);
}`;
}

/** TwoProd through `fma`: exact only where the device really fuses. */
export function twoProdFmaWgsl(name: string): string {
  return `fn ${name}(a: f32, b: f32) -> vec2<f32> {
  let p = df_pin(a * b);
  return vec2<f32>(p, df_pin(fma(a, b, -p)));
}`;
}

/** Veltkamp's split into two 12-bit halves (4097 = 2^12 + 1). */
export function splitWgsl(): string {
  return `fn df_split(a: f32) -> vec2<f32> {
  let t = df_pin(4097.0 * a);
  let hi = df_pin(t - df_pin(t - a));
  return vec2<f32>(hi, df_pin(a - hi));
}`;
}

/** Dekker's TwoProd from the split (no fma needed; exact while the barrier holds). */
export function twoProdDekkerWgsl(name: string): string {
  return `fn ${name}(a: f32, b: f32) -> vec2<f32> {
  let p = df_pin(a * b);
  let x = df_split(a);
  let y = df_split(b);
  var e = df_pin(df_pin(x.x * y.x) - p);
  e = df_pin(e + df_pin(x.x * y.y));
  e = df_pin(e + df_pin(x.y * y.x));
  e = df_pin(e + df_pin(x.y * y.y));
  return vec2<f32>(p, e);
}`;
}

/**
 * df64 arithmetic on top of the transformations: the "accurate" addition (two TwoSums, error
 * ≲ 2·2^-48 relative to |a| + |b|) and the product (error ≲ 4·2^-48 relative).
 */
export function df64OpsWgsl(): string {
  return `fn df_add(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let s = df_two_sum(a.x, b.x);
  let t = df_two_sum(a.y, b.y);
  let u1 = df_fast_two_sum(s.x, df_pin(s.y + t.x));
  return df_fast_two_sum(u1.x, df_pin(u1.y + t.y));
}
fn df_sub(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  return df_add(a, -b);
}
fn df_mul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let p = df_two_prod(a.x, b.x);
  let c = df_pin(df_pin(a.x * b.y) + df_pin(a.y * b.x));
  return df_fast_two_sum(p.x, df_pin(p.y + c));
}
fn df_mul_f(a: vec2<f32>, b: f32) -> vec2<f32> {
  let p = df_two_prod(a.x, b);
  return df_fast_two_sum(p.x, df_pin(p.y + df_pin(a.y * b)));
}`;
}
