/**
 * WGSL of the Lanczos basis block (./lanczos-block): the columns of the basis [L Q] live in one
 * storage buffer (column j at j·n), so that one dispatch covers every column, however many, where
 * the per-vector bindings of ./fused-shaders cover at most 14 (NVIDIA) per dispatch. One CGS2 step
 * is six dispatches whatever the basis size (per-vector bindings: six up to 13 vectors, nine at 14–27):
 *
 *   dots     partial[j·groups + g] = Σ over chunk g of Q_j·w            (stage 1, all columns)
 *   reduce   hist[dst + j] = Σ_g partial[j·groups + g]                   (stage 2, one workgroup per column)
 *   combine  w ← Q·h − w, then stage 1 of Qᵀ·w (mode 0) or of ‖w‖² (mode 1)
 *   reduce   (as above, after mode 0)
 *   normalize β = √Σ partials, v = w/β written to the next vector and to column `col`
 *
 * The coefficients h are read from the block's history buffer (`hist`), where the reduces write
 * them; the host reads the history of a batch of steps with one readback. Orders: stage 1 sums
 * the 8 strided elements of each invocation sequentially, then a workgroup tree (as dot stage 1
 * of ./shaders); stage 2 a stride-256 loop and a tree (as dot stage 2); the combine sums
 * −w + Σ_j h_j·Q_j with j ascending (as combine with β = −1).
 *
 * The rounds of J columns loop in either shape of ./loops (unrolled on GPUs, bounded on software
 * adapters), the same sums in the same order for every column written.
 * @module
 */
import { entryArgs, preamble, type WgslBinding, workgroupSum } from '../kernels/wgsl/index';
import type { ColumnLoops } from './loops';
import { DOT_CHUNK, DOT_ITEMS, f32arr, everyGroupShare, groupRowSum, WG } from './shaders';

/** Columns reduced side by side in workgroup memory (4·J·WG bytes: 12 KiB, one barrier per tree level for all of them). */
export const LANCZOS_J = 12;

/** Most columns of a block: the combine keeps the coefficients in workgroup memory. */
export const LANCZOS_MAX_COLUMNS = 256;

/** Dots bindings: the block, w, partials. */
export const LANCZOS_DOTS_BINDINGS: WgslBinding[] = [f32arr('q', 'r'), f32arr('w', 'r'), f32arr('partial', 'w')];
/** Combine bindings: the block, w (updated), partials, history (coefficients). */
export const LANCZOS_COMBINE_BINDINGS: WgslBinding[] = [f32arr('q', 'r'), f32arr('w', 'w'), f32arr('partial', 'w'), f32arr('hist', 'r')];
/** Reduce bindings: partials, history. */
export const LANCZOS_REDUCE_BINDINGS: WgslBinding[] = [f32arr('partial', 'r'), f32arr('hist', 'w')];
/** Normalize bindings: partials, w, the next vector, the block (column `col` written), history. */
export const LANCZOS_NORMALIZE_BINDINGS: WgslBinding[] = [f32arr('partial', 'r'), f32arr('w', 'r'), f32arr('v', 'w'), f32arr('q', 'w'), f32arr('hist', 'w')];

/**
 * The multi-column stage-1 reduction of the register values `wv[k]` (element base + k·WG)
 * against columns [0, u.m) of q: per round of J columns, each invocation's sequential sum of
 * its 8 products, the J trees side by side (one barrier per level), and the partials written
 * at u.out + j·u.groups + g. With `loops` bounded a round's trees skip the rows past its last
 * column (zeros unrolled: their sums are never written).
 */
function columnDots(loops: ColumnLoops): string {
  const J = LANCZOS_J;
  const tEnd = loops === 'unrolled' ? `${J}u` : 'jn';
  return `  for (var j0 = 0u; j0 < u.m; j0 += ${J}u) {${loops === 'unrolled' ? '' : `\n    let jn = min(u.m - j0, ${J}u);`}
    for (var t = 0u; t < ${tEnd}; t++) {
      let j = j0 + t;
      var s = 0.0;
      if (j < u.m) {
        let off = j * u.n;
        for (var k = 0u; k < ${DOT_ITEMS}u; k++) {
          let i = base + k * ${WG}u;
          if (i < u.n) { s = s + q[off + i] * wv[k]; }
        }
      }
      red[t * ${WG}u + lid] = s;
    }
    workgroupBarrier();
    for (var o = ${WG / 2}u; o > 0u; o = o >> 1u) {
      if (lid < o) {
        for (var t = 0u; t < ${tEnd}; t++) { red[t * ${WG}u + lid] = red[t * ${WG}u + lid] + red[t * ${WG}u + lid + o]; }
      }
      workgroupBarrier();
    }
    if (lid < ${J}u && j0 + lid < u.m) { partial[u.out + (j0 + lid) * u.groups + g] = red[lid * ${WG}u]; }
    workgroupBarrier();
  }`;
}

/** Stage 1 of Qᵀ·w over columns [0, m). */
export function lanczosDotsWgsl(loops: ColumnLoops = 'unrolled'): string {
  return `${preamble([['n', 'u32'], ['m', 'u32'], ['groups', 'u32'], ['out', 'u32']], LANCZOS_DOTS_BINDINGS)}
var<workgroup> red: array<f32, ${LANCZOS_J * WG}>;
@compute @workgroup_size(${WG})
fn main(${entryArgs()}) {
  let g = wg_linear(wid, nwg);
  if (g >= u.groups) { return; } // whole workgroup exits together: uniform
  let base = g * ${DOT_CHUNK}u + lid;
  var wv: array<f32, ${DOT_ITEMS}>;
  for (var k = 0u; k < ${DOT_ITEMS}u; k++) {
    let i = base + k * ${WG}u;
    wv[k] = 0.0;
    if (i < u.n) { wv[k] = w[i]; }
  }
${columnDots(loops)}
}`;
}

/**
 * w ← Σ_j hist[coef + j]·Q_j − w (j ascending, from −w), then stage 1 of Qᵀ·w_new (mode 0:
 * partials of column j at out + j·groups) or of ‖w_new‖² (mode 1: one partial per workgroup at
 * out + g).
 */
export function lanczosCombineWgsl(loops: ColumnLoops = 'unrolled'): string {
  return `${preamble([['n', 'u32'], ['m', 'u32'], ['groups', 'u32'], ['out', 'u32'], ['coef', 'u32'], ['mode', 'u32']], LANCZOS_COMBINE_BINDINGS)}
var<workgroup> red: array<f32, ${LANCZOS_J * WG}>;
var<workgroup> cf: array<f32, ${LANCZOS_MAX_COLUMNS}>;
@compute @workgroup_size(${WG})
fn main(${entryArgs()}) {
  let g = wg_linear(wid, nwg);
  if (g >= u.groups) { return; } // whole workgroup exits together: uniform
  for (var j = lid; j < u.m; j += ${WG}u) { cf[j] = hist[u.coef + j]; }
  workgroupBarrier();
  let base = g * ${DOT_CHUNK}u + lid;
  // the ${DOT_ITEMS} elements advance together, column by column: ${DOT_ITEMS} independent loads in
  // flight per invocation per column (an element-at-a-time loop over the columns kept one, and
  // ran at a third of the bandwidth on the H100); each element's sum keeps its order
  var wv: array<f32, ${DOT_ITEMS}>;
  for (var k = 0u; k < ${DOT_ITEMS}u; k++) {
    let i = base + k * ${WG}u;
    wv[k] = 0.0;
    if (i < u.n) { wv[k] = -1.0 * w[i]; }
  }
  if (base + ${(DOT_ITEMS - 1) * WG}u < u.n) {
    for (var j = 0u; j < u.m; j++) {
      let c = cf[j];
      let off = j * u.n + base;
      for (var k = 0u; k < ${DOT_ITEMS}u; k++) { wv[k] = wv[k] + c * q[off + k * ${WG}u]; }
    }
  } else {
    for (var j = 0u; j < u.m; j++) {
      let c = cf[j];
      let off = j * u.n + base;
      for (var k = 0u; k < ${DOT_ITEMS}u; k++) {
        if (base + k * ${WG}u < u.n) { wv[k] = wv[k] + c * q[off + k * ${WG}u]; }
      }
    }
  }
  var ss = 0.0;
  for (var k = 0u; k < ${DOT_ITEMS}u; k++) {
    let i = base + k * ${WG}u;
    if (i < u.n) {
      w[i] = wv[k];
      ss = ss + wv[k] * wv[k];
    }
  }
  if (u.mode == 1u) {
    red[lid] = ss;
    workgroupBarrier();
    for (var o = ${WG / 2}u; o > 0u; o = o >> 1u) {
      if (lid < o) { red[lid] = red[lid] + red[lid + o]; }
      workgroupBarrier();
    }
    if (lid == 0u) { partial[u.out + g] = red[0]; }
    return;
  }
${columnDots(loops)}
}`;
}

/** Workgroup j < m: hist[dst + j] = Σ_k partial[first + j·count + k], k < count (dot stage 2's order). */
export function lanczosReduceWgsl(): string {
  return `${preamble([['count', 'u32'], ['m', 'u32'], ['first', 'u32'], ['dst', 'u32']], LANCZOS_REDUCE_BINDINGS)}
${workgroupSum('red', WG)}
@compute @workgroup_size(${WG})
fn main(${entryArgs()}) {
${groupRowSum()}
  if (lid == 0u) { hist[u.dst + j] = t; }
}`;
}

/**
 * β = √(Σ partial[first …][0..count)) summed by every workgroup in dot stage 2's order (the same
 * bits in all of them), workgroup 0 stores β at hist[dst]; v = (1/β)·w, also written to column
 * `col` of the block.
 */
export function lanczosNormalizeWgsl(): string {
  return `${preamble([['n', 'u32'], ['groups', 'u32'], ['count', 'u32'], ['first', 'u32'], ['dst', 'u32'], ['col', 'u32']], LANCZOS_NORMALIZE_BINDINGS)}
${workgroupSum('red', WG)}
@compute @workgroup_size(${WG})
fn main(${entryArgs()}) {
${everyGroupShare()}
  let h = sqrt(red_sum(lid, ps));
  if (g == 0u && lid == 0u) { hist[u.dst] = h; }
  var a = 1.0;
  a = a / h;
  let off = u.col * u.n;
  let base = g * ${DOT_CHUNK}u + lid;
  for (var k = 0u; k < ${DOT_ITEMS}u; k++) {
    let i = base + k * ${WG}u;
    if (i < u.n) {
      let x = a * w[i];
      v[i] = x;
      q[off + i] = x;
    }
  }
}`;
}

/** Most basis columns one {@link lanczosGemmWgsl} dispatch combines (coefficients in workgroup memory). */
export const LANCZOS_GEMM_MAX_COLUMNS = 64;

/** Gemm bindings: the block, the coefficients, then `r` outputs. */
export function lanczosGemmBindings(r: number): WgslBinding[] {
  return [f32arr('q', 'r'), f32arr('coef', 'r'), ...Array.from({ length: r }, (_, t) => f32arr(`y${t}`, 'w'))];
}

/**
 * Y = Q·C for up to `r` outputs at once: y_t[i] = Σ_{j<m} coef[first + t·m + j]·Q_{col0 + j}[i]
 * for t < u.r, j ascending from 0 (combine's order with β = 0), each column read once for all
 * outputs — the Ritz vectors of a thick restart, where one combine per output reads Q r times.
 */
export function lanczosGemmWgsl(r: number): string {
  const outs = Array.from({ length: r }, (_, t) => `    if (u.r > ${t}u) { y${t}[i] = acc[${t}]; }`).join('\n');
  return `${preamble([['n', 'u32'], ['m', 'u32'], ['col0', 'u32'], ['r', 'u32'], ['first', 'u32']], lanczosGemmBindings(r))}
var<workgroup> cf: array<f32, ${r * LANCZOS_GEMM_MAX_COLUMNS}>;
@compute @workgroup_size(${WG})
fn main(${entryArgs()}) {
  for (var t = lid; t < u.r * u.m; t += ${WG}u) { cf[t] = coef[u.first + t]; }
  workgroupBarrier();
  let i = wg_linear(wid, nwg) * ${WG}u + lid;
  if (i >= u.n) { return; }
  var acc: array<f32, ${r}>;
  for (var t = 0u; t < ${r}u; t++) { acc[t] = 0.0; }
  // the output count is the pipeline's constant (acc stays in registers; a loop to u.r indexed it
  // dynamically), and four columns are loaded before their products (four loads in flight):
  // 1.5 ms for 12 outputs on the H100 before, against ~0.15 ms of memory traffic
  var j = 0u;
  for (; j + 4u <= u.m; j += 4u) {
    let at = (u.col0 + j) * u.n + i;
    let x0 = q[at];
    let x1 = q[at + u.n];
    let x2 = q[at + 2u * u.n];
    let x3 = q[at + 3u * u.n];
    for (var t = 0u; t < ${r}u; t++) {
      let c = t * u.m + j;
      acc[t] = acc[t] + cf[c] * x0;
      acc[t] = acc[t] + cf[c + 1u] * x1;
      acc[t] = acc[t] + cf[c + 2u] * x2;
      acc[t] = acc[t] + cf[c + 3u] * x3;
    }
  }
  for (; j < u.m; j++) {
    let x = q[(u.col0 + j) * u.n + i];
    for (var t = 0u; t < ${r}u; t++) { acc[t] = acc[t] + cf[t * u.m + j] * x; }
  }
${outs}
}`;
}
