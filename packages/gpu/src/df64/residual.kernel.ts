/**
 * The df64 residual product r = b − A·x for CSR: A's values as f32 hi plus an optional f32 lo
 * array (only uploaded when some value is not exact in f32), x, b and r in df64, every product
 * and sum in df64. `lanes` invocations per row (a power of two ≤ 32) stride over the row and
 * meet in a fixed df64 tree: deterministic, no atomics; each row is written once.
 * @module
 */
import { preamble, type WgslBinding } from '../kernels/wgsl/index';
import { DF_WG, dfSegmentedSum } from './blas.kernel';
import { df64Lib, type TwoProdMode } from './wgsl';

/** Bindings: row pointers, columns, hi, lo (any buffer when absent), x, b, r. */
export const RESIDUAL_BINDINGS: WgslBinding[] = [
  { name: 'row_ptr', type: 'array<u32>', access: 'r' },
  { name: 'col', type: 'array<u32>', access: 'r' },
  { name: 'a_hi', type: 'array<f32>', access: 'r' },
  { name: 'a_lo', type: 'array<f32>', access: 'r' },
  { name: 'x', type: 'array<vec2<f32>>', access: 'r' },
  { name: 'b', type: 'array<vec2<f32>>', access: 'r' },
  { name: 'r', type: 'array<vec2<f32>>', access: 'w' },
];

/**
 * The kernel body shared by the df64 CSR kernels: `row` (local to the bound row pointers), and
 * `t` = Σ_k A[row, k]·x[col[k]] in df64 over `lanes` invocations (valid in lane 0); bindings
 * row_ptr, col, a_hi, a_lo and x. Followed by `epilogue`, which writes the row. `hiScale`: a WGSL
 * f32 expression (a power of two) that a_hi is multiplied by exactly (the lo array then holds the
 * scaled lo parts; df64/flush.ts).
 */
export function dfCsrRowSumWgsl(mode: TwoProdMode, lanes: number, hasLo: boolean, epilogue: string, hiScale?: string): string {
  const hi = hiScale ? `df_pin(a_hi[k] * ${hiScale})` : 'a_hi[k]';
  const a = hasLo ? `vec2<f32>(${hi}, a_lo[k])` : `vec2<f32>(${hi}, 0.0)`;
  return `${df64Lib(mode, 'u.zero')}
${dfSegmentedSum(lanes)}
@compute @workgroup_size(${DF_WG})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let row = wg_linear(wid, nwg) * ${DF_WG / lanes}u + lid / ${lanes}u;
  let lane = lid % ${lanes}u;
  var s = vec2<f32>(0.0, 0.0);
  if (row < u.n) {
    let end = row_ptr[row + 1u];
    for (var k = row_ptr[row] + lane; k < end; k += ${lanes}u) {
      s = df_add(s, df_mul(${a}, x[col[k]]));
    }
  }
  let t = red_seg(lid, s);
  ${epilogue}
}`;
}

/** WGSL of the residual kernel for `lanes` per row, with or without the lo array. */
export function residualWgsl(mode: TwoProdMode, lanes: number, hasLo: boolean): string {
  return `${preamble([['n', 'u32'], ['zero', 'u32']], RESIDUAL_BINDINGS)}
${dfCsrRowSumWgsl(mode, lanes, hasLo, 'if (row < u.n && lane == 0u) { r[row] = df_sub(b[row], t); }')}`;
}
