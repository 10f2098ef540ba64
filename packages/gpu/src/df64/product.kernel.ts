/**
 * The df64 CSR product y = α·A·x + β·y for one row block (rows [row0, row0 + n) of y): the
 * residual kernel's row sum (residual.kernel.ts) with a product epilogue. A block whose first
 * row continues a row cut at a binding boundary (`cont`) adds its part to that row.
 * @module
 */
import { preamble, type WgslBinding } from '../kernels/wgsl/index';
import { dfCsrRowSumWgsl, RESIDUAL_BINDINGS } from './residual.kernel';
import type { TwoProdMode } from './wgsl';

/** Bindings: row pointers (block-local), columns, hi, lo (any buffer when absent), x, y. */
export const PRODUCT_BINDINGS: WgslBinding[] = [...RESIDUAL_BINDINGS.slice(0, 5), { name: 'y', type: 'array<vec2<f32>>', access: 'w' }];

/** Uniform words: n, zero, row0, bz (β = 0: y ignored), cont, α (hi, lo), β (hi, lo), the power of two the hi values are scaled by. */
export const PRODUCT_UNIFORMS = [
  ['n', 'u32'],
  ['zero', 'u32'],
  ['row0', 'u32'],
  ['bz', 'u32'],
  ['cont', 'u32'],
  ['al_h', 'f32'],
  ['al_l', 'f32'],
  ['be_h', 'f32'],
  ['be_l', 'f32'],
  ['a_p2', 'f32'],
] as const;

/** WGSL of the df64 product kernel for `lanes` per row, with or without the lo array, hi × a_p2 when `scaled`. */
export function productWgsl(mode: TwoProdMode, lanes: number, hasLo: boolean, scaled = false): string {
  const epilogue = `if (row < u.n && lane == 0u) {
    let g = u.row0 + row;
    var v = df_mul(vec2<f32>(u.al_h, u.al_l), t);
    if (u.cont == 1u && row == 0u) { v = df_add(y[g], v); }
    else if (u.bz == 0u) { v = df_add(v, df_mul(vec2<f32>(u.be_h, u.be_l), y[g])); }
    y[g] = v;
  }`;
  return `${preamble(PRODUCT_UNIFORMS, PRODUCT_BINDINGS)}
${dfCsrRowSumWgsl(mode, lanes, hasLo, epilogue, scaled ? 'u.a_p2' : undefined)}`;
}
