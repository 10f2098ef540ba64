/**
 * WGSL kernels of the device statistics the autotuner profiles a matrix with, reading the CSR
 * row pointers and columns already uploaded for the CSR kernels (one binding block per
 * dispatch; rows whole in a block):
 *
 * - `scan`: one invocation per row; the longest row (atomicMax) and the occupied-diagonal bitmap
 *   (bit j − i + rows − 1, set with atomicOr only when a plain load shows it clear, so that a
 *   banded matrix costs a few atomics per diagonal and not one per entry); rows past
 *   {@link SCAN_LONG_ROW} entries walked by the whole workgroup;
 * - `hist`: the row-length histogram, exact for every length (bins = longest row + 1), lengths
 *   below {@link LOCAL_BINS} counted in workgroup memory first (one global atomic per bin and
 *   workgroup instead of one per row);
 * - `chunks`: Σ over chunks of C consecutive rows of C · (longest row in the chunk) — the slots
 *   of sliced ELL with chunk height C — reduced per workgroup in 64 bits (two u32 words with
 *   carry) and added to a 64-bit accumulator;
 * - `sigma`: the slots of SELL-C-σ — one workgroup per window of W = σ rows sorts the window's
 *   row lengths in workgroup memory (bitonic, descending) and adds C · (the length at each
 *   chunk's first position), which is each chunk's longest row after sorting.
 *
 * Integer atomics only: the results are exact and independent of the order of execution.
 * @module
 */
import { entryArgs, preamble, type WgslBinding } from '../kernels/wgsl/index';

/** Invocations per workgroup of the three kernels. */
export const STATS_WG = 256;
/** Row lengths below this are counted in workgroup memory before the global histogram. */
export const LOCAL_BINS = 256;

/** Uniforms of every stats kernel: block rows, first global row, all rows (the diagonal offset), bins or chunk height. */
export const STATS_UNIFORMS = [
  ['rows', 'u32'],
  ['row_start', 'u32'],
  ['all_rows', 'u32'],
  ['param', 'u32'],
  ['window', 'u32'],
] as const;

/** Largest sorting window of the `sigma` kernel (rows sorted in workgroup memory). */
export const MAX_SIGMA_WINDOW = 1024;

const ROW_PTR: WgslBinding = { name: 'row_ptr', type: 'array<u32>', access: 'r' };
const COL_IDX: WgslBinding = { name: 'col_idx', type: 'array<u32>', access: 'r' };
const atomics = (name: string): WgslBinding => ({ name, type: 'array<atomic<u32>>', access: 'w' });

/** Bindings of `scan`: row_ptr, col_idx, acc ([0] longest row), bits. */
export const SCAN_BINDINGS = [ROW_PTR, COL_IDX, atomics('acc'), atomics('bits')] as const;
/** Bindings of `hist`: row_ptr, hist (param = bins; the last bin also takes longer rows). */
export const HIST_BINDINGS = [ROW_PTR, atomics('hist')] as const;
/** Bindings of `chunks`: row_ptr, acc ([0] low word, [1] high word; param = chunk height C). */
export const CHUNK_BINDINGS = [ROW_PTR, atomics('acc')] as const;

const ROW = `let r = wg_linear(wid, nwg) * ${STATS_WG}u + lid;`;

/**
 * Rows longer than this are walked by the whole workgroup in the `scan` kernel (coalesced, strided
 * by the workgroup), shorter ones by their own invocation. Why: one invocation walking a row of
 * 50 000 entries (densrow of the validation set) is a chain of 50 000 load-and-atomic steps — the
 * H100 spent 75–83 ms of statistics on that one row (sessions 11 and 12, bench/RESULTS.md).
 */
export const SCAN_LONG_ROW = 1024;

/** Mark the diagonals of entries [k0, e) of a row, every `step`-th (\`base\` = all_rows − 1 − row). */
const MARK = `fn mark(k0: u32, e: u32, step: u32, base: u32) {
  for (var k = k0; k < e; k += step) {
    let slot = col_idx[k] + base;
    let w = slot >> 5u;
    let m = 1u << (slot & 31u);
    if ((atomicLoad(&bits[w]) & m) == 0u) { atomicOr(&bits[w], m); }
  }
}`;

/**
 * The longest row and the occupied-diagonal bitmap. A row of at most {@link SCAN_LONG_ROW}
 * entries is walked by its invocation; a longer one is queued in workgroup memory and walked by
 * the whole workgroup after a barrier (every invocation takes every STATS_WG-th entry).
 */
export function scanWgsl(): string {
  return `${preamble(STATS_UNIFORMS, SCAN_BINDINGS)}
var<workgroup> long_rows: array<u32, ${STATS_WG}>;
var<workgroup> long_count: atomic<u32>;
var<workgroup> long_total: u32;
${MARK}
@compute @workgroup_size(${STATS_WG})
fn main(${entryArgs()}) {
  ${ROW}
  if (lid == 0u) { atomicStore(&long_count, 0u); }
  workgroupBarrier();
  if (r < u.rows) {
    let s = row_ptr[r];
    let e = row_ptr[r + 1u];
    atomicMax(&acc[0], e - s);
    // slot of diagonal j − i, shifted by all_rows − 1 so that it is never negative
    if (e - s > ${SCAN_LONG_ROW}u) { long_rows[atomicAdd(&long_count, 1u)] = r; } else { mark(s, e, 1u, u.all_rows - 1u - (u.row_start + r)); }
  }
  workgroupBarrier();
  if (lid == 0u) { long_total = atomicLoad(&long_count); }
  let n = workgroupUniformLoad(&long_total);
  for (var i = 0u; i < n; i++) {
    let row = long_rows[i];
    mark(row_ptr[row] + lid, row_ptr[row + 1u], ${STATS_WG}u, u.all_rows - 1u - (u.row_start + row));
  }
}`;
}

/** The row-length histogram (u.param bins). */
export function histWgsl(): string {
  return `${preamble(STATS_UNIFORMS, HIST_BINDINGS)}
var<workgroup> local_hist: array<atomic<u32>, ${LOCAL_BINS}>;
@compute @workgroup_size(${STATS_WG})
fn main(${entryArgs()}) {
  ${ROW}
  for (var b = lid; b < ${LOCAL_BINS}u; b += ${STATS_WG}u) { atomicStore(&local_hist[b], 0u); }
  workgroupBarrier();
  if (r < u.rows) {
    let len = min(row_ptr[r + 1u] - row_ptr[r], u.param - 1u);
    if (len < ${LOCAL_BINS}u) { atomicAdd(&local_hist[len], 1u); } else { atomicAdd(&hist[len], 1u); }
  }
  workgroupBarrier();
  for (var b = lid; b < min(${LOCAL_BINS}u, u.param); b += ${STATS_WG}u) {
    let c = atomicLoad(&local_hist[b]);
    if (c > 0u) { atomicAdd(&hist[b], c); }
  }
}`;
}

/** Σ over chunks of C rows of C · (longest row of the chunk), in 64 bits. */
export function chunksWgsl(): string {
  return `${preamble(STATS_UNIFORMS, CHUNK_BINDINGS)}
var<workgroup> part: array<vec2<u32>, ${STATS_WG}>;
fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
@compute @workgroup_size(${STATS_WG})
fn main(${entryArgs()}) {
  let c = wg_linear(wid, nwg) * ${STATS_WG}u + lid;
  let C = u.param;
  var m = 0u;
  if (c * C < u.rows) {
    let end = min(u.rows, c * C + C);
    for (var r = c * C; r < end; r++) { m = max(m, row_ptr[r + 1u] - row_ptr[r]); }
  }
  part[lid] = vec2<u32>(m * C, 0u);
  workgroupBarrier();
  for (var off = ${STATS_WG / 2}u; off > 0u; off = off >> 1u) {
    if (lid < off) { part[lid] = add64(part[lid], part[lid + off]); }
    workgroupBarrier();
  }
  if (lid == 0u) {
    let v = part[0];
    let old = atomicAdd(&acc[0], v.x);
    atomicAdd(&acc[1], v.y + select(0u, 1u, old + v.x < old));
  }
}`;
}

const ADD64 = `fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}`;

/** SELL-C-σ slots: per window of u.window rows (a power of two ≤ MAX_SIGMA_WINDOW), sorted descending, Σ C · keys[j·C]. */
export function sigmaWgsl(): string {
  return `${preamble(STATS_UNIFORMS, CHUNK_BINDINGS)}
var<workgroup> keys: array<u32, ${MAX_SIGMA_WINDOW}>;
var<workgroup> part: array<vec2<u32>, ${STATS_WG}>;
${ADD64}
@compute @workgroup_size(${STATS_WG})
fn main(${entryArgs()}) {
  let W = u.window;
  let C = u.param;
  let first = wg_linear(wid, nwg) * W;
  for (var t = lid; t < W; t += ${STATS_WG}u) {
    let r = first + t;
    keys[t] = select(0u, row_ptr[r + 1u] - row_ptr[r], r < u.rows);
  }
  workgroupBarrier();
  for (var k = 2u; k <= W; k = k << 1u) {
    for (var j = k >> 1u; j > 0u; j = j >> 1u) {
      for (var t = lid; t < W; t += ${STATS_WG}u) {
        let o = t ^ j;
        if (o > t) {
          let a = keys[t];
          let b = keys[o];
          // descending where (t & k) == 0: the last merge (k = W) sorts the whole window descending
          if (select(a > b, a < b, (t & k) == 0u)) {
            keys[t] = b;
            keys[o] = a;
          }
        }
      }
      workgroupBarrier();
    }
  }
  var v = vec2<u32>(0u, 0u);
  for (var j = lid; j * C < W; j += ${STATS_WG}u) { v = add64(v, vec2<u32>(keys[j * C] * C, 0u)); }
  part[lid] = v;
  workgroupBarrier();
  for (var off = ${STATS_WG / 2}u; off > 0u; off = off >> 1u) {
    if (lid < off) { part[lid] = add64(part[lid], part[lid + off]); }
    workgroupBarrier();
  }
  if (lid == 0u) {
    let s = part[0];
    let old = atomicAdd(&acc[0], s.x);
    atomicAdd(&acc[1], s.y + select(0u, 1u, old + s.x < old));
  }
}`;
}
