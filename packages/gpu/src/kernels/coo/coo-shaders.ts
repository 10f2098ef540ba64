/**
 * The three shaders of the COO kernel: scale (y = beta·y), chunk (segmented sums of one chunk
 * of row-sorted triplets per workgroup) and carry (the rows cut by chunk boundaries).
 * @module
 */
import { entryArgs, preamble, SPMV_UNIFORMS, type WgslBinding } from '../wgsl/index';
import { segmentedScan } from '../wgsl/segmented';

/** Bindings of the scale pass. */
export const SCALE_BINDINGS: readonly WgslBinding[] = [{ name: 'y', type: 'array<f32>', access: 'w' }];

/** Bindings of the chunk pass: triplets, x, y, partials. */
export const CHUNK_BINDINGS: readonly WgslBinding[] = [
  { name: 'ri', type: 'array<u32>', access: 'r' },
  { name: 'ci', type: 'array<u32>', access: 'r' },
  { name: 'vals', type: 'array<f32>', access: 'r' },
  { name: 'x', type: 'array<f32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
  { name: 'part', type: 'array<vec2<u32>>', access: 'w' },
];

/** Bindings of the carry pass: partials, y. */
export const CARRY_BINDINGS: readonly WgslBinding[] = [
  { name: 'part', type: 'array<vec2<u32>>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
];

/** y[i] = beta·y[i] for i < rows (beta = 0 writes 0, ignoring NaN). One invocation per row. */
export function cooScaleWgsl(wg: number): string {
  return `${preamble(SPMV_UNIFORMS, SCALE_BINDINGS)}
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let i = wg_linear(wid, nwg) * ${wg}u + lid;
  if (i >= u.rows) { return; }
  if (u.beta == 0.0) { y[i] = 0.0; } else { y[i] = u.beta * y[i]; }
}`;
}

/**
 * Chunk pass: workgroup w takes triplets [w·wg, w·wg + wg) of the piece (`count` = its nnz),
 * forms a_k·x[col_k] and a segmented inclusive scan keyed by row. The invocation ending a run
 * owns that run's row: a run neither first nor last in the chunk is a whole row, added to y
 * directly (y += alpha·s); the first run goes to part[2w], the last to part[2w + 1] (the pair
 * (row, bits of the sum)); a chunk of one run puts (row, +0) in part[2w + 1].
 */
export function cooChunkWgsl(wg: number): string {
  return `${preamble(SPMV_UNIFORMS, CHUNK_BINDINGS)}
${segmentedScan('seg', wg)}
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let w = wg_linear(wid, nwg);
  let chunks = (u.count + ${wg - 1}u) / ${wg}u;
  if (w >= chunks) { return; } // uniform: whole workgroup
  let base = w * ${wg}u;
  let n = min(${wg}u, u.count - base);
  var k = 0xffffffffu;
  var v = 0.0;
  if (lid < n) {
    k = ri[base + lid];
    v = vals[base + lid] * x[ci[base + lid]];
  }
  let s = seg_scan(lid, k, v);
  if (seg_ends(lid, n)) {
    let first = k == seg_k[0];
    let last = lid + 1u == n;
    if (first) { part[2u * w] = vec2<u32>(k, bitcast<u32>(s)); }
    if (last) { part[2u * w + 1u] = vec2<u32>(k, bitcast<u32>(select(s, 0.0, first))); }
    if (!first && !last) { y[k] = y[k] + u.alpha * s; }
  }
}`;
}

/**
 * Carry pass: the partial pairs (`count` of them) are sorted by row; the invocation at the start
 * of a run of equal rows adds the run in order and updates y[row] += alpha·Σ — one writer per row.
 */
export function cooCarryWgsl(wg: number): string {
  return `${preamble(SPMV_UNIFORMS, CARRY_BINDINGS)}
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let p = wg_linear(wid, nwg) * ${wg}u + lid;
  if (p >= u.count) { return; }
  let k = part[p].x;
  if (p > 0u && part[p - 1u].x == k) { return; }
  var s = 0.0;
  for (var q = p; q < u.count; q++) {
    let e = part[q];
    if (e.x != k) { break; }
    s = s + bitcast<f32>(e.y);
  }
  y[k] = y[k] + u.alpha * s;
}`;
}
