/**
 * Kernels of the device direct σ's MS2 = 0 spin parity (./parity.ts): with T the α↔β swap
 * (T x)[k] = x[swap[k]] and s = (−1)^S, the operator is P H P + (1 − P) D (1 − P), P = (1 + s·T)/2.
 * `project` splits x into P x (fed to σ) and (1 − P) x; `combine` gives y = α·(P σ + D ∘ (1 − P) x)
 * + β·y. The halves and s are exact scalings, so df64 keeps its ≈ 48 bits. One invocation per
 * determinant, a gather each (no atomics); float32 and df64 ((hi, lo) pairs) variants.
 * @module
 */
import { df64Lib, preamble, type TwoProdMode, type WgslBinding } from '@gpusparse/gpu';

const elem = (df: boolean) => (df ? 'vec2<f32>' : 'f32');

/** Bindings of the projection: swap indices, x, P x, (1 − P) x. */
export function projectBindings(df: boolean): WgslBinding[] {
  const t = `array<${elem(df)}>`;
  return [
    { name: 'swap', type: 'array<u32>', access: 'r' },
    { name: 'x', type: t, access: 'r' },
    { name: 'xs', type: t, access: 'w' },
    { name: 'w', type: t, access: 'w' },
  ];
}

/** Bindings of the combination: swap indices, σ of P x, (1 − P) x, the diagonal D, y. */
export function combineBindings(df: boolean): WgslBinding[] {
  const t = `array<${elem(df)}>`;
  return [
    { name: 'swap', type: 'array<u32>', access: 'r' },
    { name: 'ys', type: t, access: 'r' },
    { name: 'w', type: t, access: 'r' },
    { name: 'd', type: t, access: 'r' },
    { name: 'y', type: t, access: 'w' },
  ];
}

const HEAD = `@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = wg_linear(wid, nwg) * 256u + lid;
  if (i >= u.n) { return; }`;

/**
 * WGSL of xs[i] = (x[i] + s·x[swap[i]])/2, w[i] = (x[i] − s·x[swap[i]])/2 (i < n; on the diagonal,
 * swap[i] = i, so an odd parity gives xs = 0 there). `df`: df64 vectors (`mode`: the TwoProd form).
 */
export function projectWgsl(df: boolean, mode?: TwoProdMode): string {
  const head = preamble(
    [
      ['n', 'u32'],
      ['sgn', 'f32'],
      ['zero', 'u32'],
    ],
    projectBindings(df),
  );
  const body = df
    ? `  let a = x[i];
  let b = u.sgn * x[swap[i]];
  xs[i] = 0.5 * df_add(a, b);
  w[i] = 0.5 * df_add(a, -b);`
    : `  let a = x[i];
  let b = u.sgn * x[swap[i]];
  xs[i] = 0.5 * (a + b);
  w[i] = 0.5 * (a - b);`;
  return `${head}
${df ? df64Lib(mode!, 'u.zero') : ''}
${HEAD}
${body}
}`;
}

/**
 * WGSL of y[i] = α·((ys[i] + s·ys[swap[i]])/2 + d[i]·w[i]) + β·y[i] (β = 0 flag: y not read):
 * σ of P x projected again (so rounding leaves no other-parity part) plus the diagonal on (1 − P) x.
 */
export function combineWgsl(df: boolean, mode?: TwoProdMode): string {
  const head = preamble(
    df
      ? [
          ['n', 'u32'],
          ['bz', 'u32'],
          ['zero', 'u32'],
          ['sgn', 'f32'],
          ['al_h', 'f32'],
          ['al_l', 'f32'],
          ['be_h', 'f32'],
          ['be_l', 'f32'],
        ]
      : [
          ['n', 'u32'],
          ['bz', 'u32'],
          ['zero', 'u32'],
          ['sgn', 'f32'],
          ['alpha', 'f32'],
          ['beta', 'f32'],
        ],
    combineBindings(df),
  );
  const body = df
    ? `  let p = 0.5 * df_add(ys[i], u.sgn * ys[swap[i]]);
  var v = df_mul(vec2<f32>(u.al_h, u.al_l), df_add(p, df_mul(d[i], w[i])));
  if (u.bz == 0u) { v = df_add(v, df_mul(vec2<f32>(u.be_h, u.be_l), y[i])); }
  y[i] = v;`
    : `  let v = u.alpha * (0.5 * (ys[i] + u.sgn * ys[swap[i]]) + d[i] * w[i]);
  if (u.bz == 1u) { y[i] = v; } else { y[i] = v + u.beta * y[i]; }`;
  return `${head}
${df ? df64Lib(mode!, 'u.zero') : ''}
${HEAD}
${body}
}`;
}
