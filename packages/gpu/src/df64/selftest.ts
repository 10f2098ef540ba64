/**
 * The df64 self-test: runs every error-free transformation on the device over many f32 pairs
 * (random and hard cases) and compares each output bit for bit with exact host arithmetic.
 * `df64Mode` runs it once per context and picks the TwoProd form that is exact on this device
 * (or none: then extended precision is not offered and the solvers use the host float64 path).
 * @module
 */
import type { GpuContext } from '../device/context';
import { preamble, signature, type WgslBinding } from '../kernels/wgsl/index';
import { readRanges } from '../memory/readback';
import { Uniforms } from '../memory/recorder';
import { uploadF32 } from '../memory/upload';
import { exactTwoProd, exactTwoSum } from './host';
import { df64Lib, pinWgsl, splitWgsl, twoProdDekkerWgsl, twoProdFmaWgsl, twoSumWgsl, type TwoProdMode } from './wgsl';

/** Outputs per pair of the self-test kernel, in this order (each a [value, error] pair). */
export const SELFTEST_PRIMITIVES = ['twoSum', 'fast2Sum', 'twoProdFma', 'twoProdDekker', 'textbookTwoSum', 'textbookDekker', 'mulOneTwoSum', 'mulOneDekker'] as const;
export type SelfTestPrimitive = (typeof SELFTEST_PRIMITIVES)[number];

const WG = 256;
const OUT_PER_PAIR = 2 * SELFTEST_PRIMITIVES.length;
const BINDINGS: WgslBinding[] = [
  { name: 'a', type: 'array<f32>', access: 'r' },
  { name: 'b', type: 'array<f32>', access: 'r' },
  { name: 'out', type: 'array<f32>', access: 'w' },
];

/** The same transformations with no barrier: what a textbook port gives (for the report). */
const TEXTBOOK = `fn tb_two_sum(a: f32, b: f32) -> vec2<f32> {
  let s = a + b;
  let bb = s - a;
  return vec2<f32>(s, (a - (s - bb)) + (b - bb));
}
fn tb_two_prod(a: f32, b: f32) -> vec2<f32> {
  let p = a * b;
  let ta = 4097.0 * a;
  let ah = ta - (ta - a);
  let al = a - ah;
  let tb = 4097.0 * b;
  let bh = tb - (tb - b);
  let bl = b - bh;
  return vec2<f32>(p, ((ah * bh - p) + ah * bl + al * bh) + al * bl);
}
fn one_two_sum(a: f32, b: f32) -> vec2<f32> {
  let s = (a + b) * u.one;
  let bb = (s - a) * u.one;
  return vec2<f32>(s, ((a - (s - bb) * u.one) * u.one + (b - bb) * u.one) * u.one);
}
fn one_split(a: f32) -> vec2<f32> {
  let t = (4097.0 * a) * u.one;
  let h = (t - (t - a) * u.one) * u.one;
  return vec2<f32>(h, (a - h) * u.one);
}
fn one_two_prod(a: f32, b: f32) -> vec2<f32> {
  let p = (a * b) * u.one;
  let x = one_split(a);
  let y = one_split(b);
  var e = ((x.x * y.x) * u.one - p) * u.one;
  e = (e + (x.x * y.y) * u.one) * u.one;
  e = (e + (x.y * y.x) * u.one) * u.one;
  return vec2<f32>(p, (e + (x.y * y.y) * u.one) * u.one);
}`;

function selfTestWgsl(): string {
  return `${preamble([['n', 'u32'], ['one', 'f32'], ['zero', 'u32']], BINDINGS)}
${pinWgsl('u.zero')}
${twoSumWgsl()}
${twoProdFmaWgsl('df_two_prod_fma')}
${splitWgsl()}
${twoProdDekkerWgsl('df_two_prod_dekker')}
${TEXTBOOK}
@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = wg_linear(wid, nwg) * ${WG}u + lid;
  if (i >= u.n) { return; }
  let x = a[i];
  let y = b[i];
  let big = select(y, x, abs(x) >= abs(y));
  let small = select(x, y, abs(x) >= abs(y));
  var r: array<vec2<f32>, ${SELFTEST_PRIMITIVES.length}>;
  r[0] = df_two_sum(x, y);
  r[1] = df_fast_two_sum(big, small);
  r[2] = df_two_prod_fma(x, y);
  r[3] = df_two_prod_dekker(x, y);
  r[4] = tb_two_sum(x, y);
  r[5] = tb_two_prod(x, y);
  r[6] = one_two_sum(x, y);
  r[7] = one_two_prod(x, y);
  for (var k = 0u; k < ${SELFTEST_PRIMITIVES.length}u; k++) {
    out[i * ${OUT_PER_PAIR}u + 2u * k] = r[k].x;
    out[i * ${OUT_PER_PAIR}u + 2u * k + 1u] = r[k].y;
  }
}`;
}

/** Mismatches per primitive (value or error term not bit-identical to the exact host result). */
export interface SelfTestReport {
  pairs: number;
  mismatches: Record<SelfTestPrimitive, number>;
  /** First mismatching pair per primitive, for the report. */
  firstBad: Partial<Record<SelfTestPrimitive, { a: number; b: number; got: [number, number]; want: [number, number] }>>;
}

/** The exact host result of primitive `k` on (x, y). */
function expected(k: SelfTestPrimitive, x: number, y: number): [number, number] {
  if (k === 'twoSum' || k === 'textbookTwoSum' || k === 'fast2Sum' || k === 'mulOneTwoSum') return exactTwoSum(x, y);
  return exactTwoProd(x, y);
}

/**
 * Run every primitive on the device for the pairs (a[i], b[i]) (f32 values) and count bit
 * mismatches against exact host arithmetic. One dispatch and one readback.
 * @example const rep = await df64SelfTest(ctx, a, b); rep.mismatches.twoSum === 0
 */
export async function df64SelfTest(ctx: GpuContext, a: Float32Array, b: Float32Array): Promise<SelfTestReport> {
  const n = a.length;
  const pipe = ctx.pipelines.get({ key: 'df64:selftest', label: 'df64-selftest', bindings: signature(BINDINGS), wgsl: selfTestWgsl });
  const da = uploadF32(ctx, a, 'df64-selftest-a');
  const db = uploadF32(ctx, b, 'df64-selftest-b');
  const out = ctx.buffers.acquire(Math.max(16, n * OUT_PER_PAIR * 4), undefined, 'df64-selftest-out');
  try {
    const u = new Uniforms();
    u.u[0] = n;
    u.f[1] = 1; // the run-time 1.0 of the mul-by-one variants
    u.u[2] = 0; // the pin
    ctx.recorder.dispatch(pipe, [da, db, out], u, Math.ceil(n / WG));
    const [bytes] = await readRanges(ctx, [{ buf: out, offset: 0, bytes: n * OUT_PER_PAIR * 4 }]);
    const got = new Float32Array(bytes!);
    const mismatches = Object.fromEntries(SELFTEST_PRIMITIVES.map((k) => [k, 0])) as Record<SelfTestPrimitive, number>;
    const firstBad: SelfTestReport['firstBad'] = {};
    for (let i = 0; i < n; i++) {
      SELFTEST_PRIMITIVES.forEach((k, j) => {
        const want = expected(k, a[i]!, b[i]!);
        const g: [number, number] = [got[i * OUT_PER_PAIR + 2 * j]!, got[i * OUT_PER_PAIR + 2 * j + 1]!];
        if (g[0] !== want[0] || g[1] !== want[1]) {
          if (mismatches[k]++ === 0) firstBad[k] = { a: a[i]!, b: b[i]!, got: g, want };
        }
      });
    }
    return { pairs: n, mismatches, firstBad };
  } finally {
    da.dispose();
    db.dispose();
    out.dispose();
  }
}

/** A deterministic generator of 32-bit words (xorshift32). */
function words(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>>= 0);
  };
}

/**
 * `n` test pairs: random normal f32 with exponents in [−20, 20] (sums, products and their
 * exact errors stay normal: no subnormal result to flush), and hard cases in rotation:
 * near-cancellation (b ≈ −a), exponent gaps up to 2^70,
 * full mantissas (0xFFFFFF), powers of two, zeros, all sign combinations.
 */
export function selfTestPairs(n: number, seed = 1): { a: Float32Array; b: Float32Array } {
  const next = words(seed);
  const a = new Float32Array(n);
  const b = new Float32Array(n);
  const rnd = (): number => {
    const mant = 1 + (next() & 0x7fffff) / 0x800000;
    const e = (next() % 41) - 20;
    return (next() & 1 ? -1 : 1) * mant * 2 ** e;
  };
  for (let i = 0; i < n; i++) {
    const x = Math.fround(rnd());
    let y: number;
    switch (i % 8) {
      case 0: // near cancellation: b = −a·(1 + k·2^-23)
        y = -x * (1 + ((next() % 64) - 32) * 2 ** -23);
        break;
      case 1: // large exponent gap
        y = rnd() * 2 ** -((next() % 21) + 10);
        break;
      case 2: // full mantissas
        y = (next() & 1 ? -1 : 1) * (0xffffff / 0x800000) * 2 ** ((next() % 41) - 20);
        break;
      case 3: // a power of two, or zero
        y = next() % 16 === 0 ? 0 : 2 ** ((next() % 41) - 20);
        break;
      default:
        y = rnd();
    }
    a[i] = x;
    b[i] = Math.fround(y);
  }
  return { a, b };
}

const modes = new WeakMap<GpuContext, Promise<TwoProdMode | undefined>>();

/**
 * The TwoProd form that is exact on this device, decided once per context by a self-test on
 * 4096 pairs (TwoSum and Fast2Sum must be exact too): 'fma' when the device fuses, else
 * 'dekker', else undefined (df64 is not offered on this device).
 */
export function df64Mode(ctx: GpuContext): Promise<TwoProdMode | undefined> {
  let m = modes.get(ctx);
  if (!m) {
    m = (async () => {
      const { a, b } = selfTestPairs(4096, 7);
      const r = (await df64SelfTest(ctx, a, b)).mismatches;
      if (r.twoSum !== 0 || r.fast2Sum !== 0) return undefined;
      if (r.twoProdFma === 0) return 'fma';
      if (r.twoProdDekker === 0) return 'dekker';
      return undefined;
    })();
    modes.set(ctx, m);
  }
  return m;
}

const OPS_BINDINGS: WgslBinding[] = [
  { name: 'a', type: 'array<vec2<f32>>', access: 'r' },
  { name: 'b', type: 'array<vec2<f32>>', access: 'r' },
  { name: 'out', type: 'array<vec2<f32>>', access: 'w' },
];

function opsWgsl(mode: TwoProdMode): string {
  return `${preamble([['n', 'u32'], ['zero', 'u32']], OPS_BINDINGS)}
${df64Lib(mode, 'u.zero')}
@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = wg_linear(wid, nwg) * ${WG}u + lid;
  if (i >= u.n) { return; }
  out[3u * i] = df_add(a[i], b[i]);
  out[3u * i + 1u] = df_mul(a[i], b[i]);
  out[3u * i + 2u] = df_mul_f(a[i], b[i].x);
}`;
}

/**
 * df_add(a, b), df_mul(a, b) and df_mul_f(a, b.hi) on the device for interleaved df64 pairs
 * `a`, `b` (hi, lo, hi, lo, ...): returns 3 interleaved results per element (tests compare
 * them bit for bit with the float32 emulation in `host.ts`). One dispatch, one readback.
 */
export async function df64OpsOnDevice(ctx: GpuContext, mode: TwoProdMode, a: Float32Array, b: Float32Array): Promise<Float32Array> {
  const n = a.length / 2;
  const pipe = ctx.pipelines.get({ key: `df64:ops:${mode}`, label: 'df64-ops', bindings: signature(OPS_BINDINGS), wgsl: () => opsWgsl(mode) });
  const da = uploadF32(ctx, a, 'df64-ops-a');
  const db = uploadF32(ctx, b, 'df64-ops-b');
  const out = ctx.buffers.acquire(Math.max(16, n * 24), undefined, 'df64-ops-out');
  try {
    const u = new Uniforms();
    u.u[0] = n;
    u.u[1] = 0; // the pin: a zero the compiler cannot see
    ctx.recorder.dispatch(pipe, [da, db, out], u, Math.ceil(n / WG));
    const [bytes] = await readRanges(ctx, [{ buf: out, offset: 0, bytes: n * 24 }]);
    return new Float32Array(bytes!);
  } finally {
    da.dispose();
    db.dispose();
    out.dispose();
  }
}
