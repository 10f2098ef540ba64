/**
 * WGSL of the merge-path CSR kernel (csr-merge, issue 20): the main pass (long-row units, then
 * tiles) and the fix-up pass of rows cut into several units. The host plan is in merge-plan.ts.
 * @module
 */
import { CSR_BINDINGS } from '../csr/csr-device';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, type WgslBinding, workgroupSum } from '../wgsl/index';
import { pairwiseSum } from '../wgsl/lanes';
import { segmentedBlockScan } from '../wgsl/scan';
import { subgroupSegmentedScan } from './subgroup-scan';

/** Uniforms: the SpMV block (count = long-row units) plus the tile count and the table offsets. */
export const MERGE_UNIFORMS = [...SPMV_UNIFORMS, ['tiles', 'u32'], ['tile_off', 'u32'], ['fix_off', 'u32']] as const;

/** Main pass: the CSR arrays, the plan table, the carry slots (written). */
export const MERGE_BINDINGS: readonly WgslBinding[] = [...CSR_BINDINGS, { name: 'blk', type: 'array<u32>', access: 'r' }, { name: 'carries', type: 'array<f32>', access: 'w' }];

/** Fix-up pass: the carry slots, the plan table, y. */
export const FIXUP_BINDINGS: readonly WgslBinding[] = [
  { name: 'carries', type: 'array<f32>', access: 'r' },
  { name: 'blk', type: 'array<u32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
];

/** Invocations of a fix-up workgroup. */
export const FIXUP_WORKGROUP = 64;

/** Entries each invocation of a long-row unit loads per step (independent loads in flight). */
export const longUnroll = (perThread: number): number => Math.min(perThread, 8);

/** Rows of one tile at most: half its items (a tile of one-entry rows is full at that count). */
export const tileRows = (perThread: number, workgroupSize: number): number => Math.max(1, (perThread * workgroupSize) / 2);

/** Workgroup memory of the main pass in bytes: products, row ends, tree, segmented scan, bounds. */
export const mergeWorkgroupBytes = (perThread: number, workgroupSize: number): number => 4 * (perThread * workgroupSize + tileRows(perThread, workgroupSize) + 3 * workgroupSize + 4);

/**
 * A long-row unit: entries [k0, k1) of one row, `u` strided loads in flight per invocation (the
 * last step's slots past k1 load and add nothing), then the workgroup tree; the row's y
 * (whole row) or its carry slot (a chunk).
 */
function longUnitFn(w: number, u: number): string {
  const ix = Array.from({ length: u }, (_, i) => i);
  const slot = (i: number) => (i === 0 ? 'k' : `k + ${i * w}u`);
  // slot 0 is always inside the row (k < k1); the others are guarded, loads and product alike
  const guard = (i: number, body: string) => (i === 0 ? body : `if (${slot(i)} < k1) { ${body} }`);
  return `fn long_unit(lid: u32, g: u32) {
  if (lid == 0u) { for (var j = 0u; j < 4u; j++) { wb[j] = blk[4u * g + j]; } }
  let unit = workgroupUniformLoad(&wb);
  let k1 = unit[2];
  var k = unit[1] + lid;
  ${ix.map((i) => `var a${i} = 0.0;`).join(' ')}
  // every step issues all its column and value loads before the gathers
  for (; k < k1; k += ${u * w}u) {
    ${ix.map((i) => `var c${i} = 0u; var v${i} = 0.0; ${guard(i, `c${i} = col_idx[${slot(i)}]; v${i} = vals[${slot(i)}];`)}`).join('\n    ')}
    ${ix.map((i) => guard(i, `a${i} = fma(v${i}, x[c${i}], a${i});`)).join('\n    ')}
  }
  let s = red_sum(lid, ${pairwiseSum(ix.map((i) => `a${i}`))});
  if (lid == 0u) {
    if (unit[3] == NONE) { store_y(unit[0], s); } else { carries[unit[3]] = s; }
  }
}`;
}

/** Stage the tile's products in workgroup memory: `p` coalesced entries per invocation, all loads issued before the gathers. */
function stageProducts(p: number, w: number): string {
  const ix = Array.from({ length: p }, (_, i) => i);
  return `${ix.map((i) => `let q${i} = lid + ${i * w}u; var c${i} = 0u; var v${i} = 0.0;
  if (q${i} < n) { c${i} = col_idx[base + q${i}]; v${i} = vals[base + q${i}]; }`).join('\n  ')}
  ${ix.map((i) => `if (q${i} < n) { prod[q${i}] = v${i} * x[c${i}]; }`).join('\n  ')}`;
}

/** One merge-path bisection step on the tile's row ends (the row ends among the first d items). */
const BISECT = 'let mid = (lo + hi) >> 1u; if (rend[mid] + mid < d) { lo = mid + 1u; } else { hi = mid; }';

/**
 * The merge-path search: a loop, or (unrolled) its ⌊log2 tileRows⌋ + 1 steps written out — the
 * range hi − lo ≤ tileRows halves each step — so that no loop carries Tint's robustness guard.
 */
function search(p: number, w: number, unrolled: boolean): string {
  if (!unrolled) return `while (lo < hi) { ${BISECT} }`;
  const steps = Math.floor(Math.log2(tileRows(p, w))) + 1;
  return Array.from({ length: steps }, () => `if (lo < hi) { ${BISECT} }`).join('\n    ');
}

/** One merge item: an entry of the current row, or the row's end (store it, or hold it for the carry). */
const ITEM = `if (k < re) {
        acc = acc + prod[k];
        k++;
      } else {
        if (started) { store_y(r0 + row, acc); } else { first = acc; first_row = row; }
        acc = 0.0;
        started = true;
        row++;
        if (row < nrows) { re = rend[row]; }
      }`;

/** The invocation's `cnt` ≤ p items: a loop, or (unrolled) p guarded copies of one item. */
function consume(p: number, unrolled: boolean): string {
  if (!unrolled) return `for (var j = 0u; j < cnt; j++) {\n      ${ITEM}\n    }`;
  return Array.from({ length: p }, (_, j) => `if (${j}u < cnt) {\n      ${ITEM}\n    }`).join('\n    ');
}

/**
 * A tile: rows [r0, r1) of at most perThread·W items. Invocation `lid` takes items
 * [lid·perThread, (lid + 1)·perThread) of the merge of row ends and entries, found by a
 * binary search on the diagonal (Merrill & Garland); it stores every row it completes except its
 * first one when that row began before its items; the segmented block scan of the invocations'
 * trailing partial sums supplies that row's carry. Tiles end on row ends: nothing leaves the tile.
 */
function tileFn(p: number, w: number, unrolled: boolean): string {
  return `fn tile(lid: u32, t: u32) {
  if (lid == 0u) { wb[0] = blk[u.tile_off + 2u * t]; wb[1] = blk[u.tile_off + 2u * t + 1u]; }
  let bounds = workgroupUniformLoad(&wb);
  let r0 = bounds[0];
  let nrows = bounds[1] - r0;
  let base = row_ptr[r0];
  let n = row_ptr[bounds[1]] - base;
  let items = nrows + n;
  for (var i = lid; i < nrows; i += ${w}u) { rend[i] = row_ptr[r0 + i + 1u] - base; }
  ${stageProducts(p, w)}
  workgroupBarrier();
  var tail = 0.0;
  var head = 1u;
  var first = 0.0;
  var first_row = NONE;
  let d = lid * ${p}u;
  if (d < items) {
    // merge-path search: the row ends among the first d items (row end e at item e + row)
    var lo = select(0u, d - n, d > n);
    var hi = min(d, nrows);
    ${search(p, w, unrolled)}
    var row = lo;
    var k = d - lo;
    // the row began inside these items when they start at its first entry
    var rs = 0u;
    if (row > 0u) { rs = rend[row - 1u]; }
    var started = rs == k;
    var re = rend[row];
    var acc = 0.0;
    let cnt = min(${p}u, items - d);
    ${consume(p, unrolled)}
    tail = acc;
    head = select(0u, 1u, started);
  }
  let carry = sscan_excl(lid, head, tail);
  if (first_row != NONE) { store_y(r0 + first_row, first + carry); }
}`;
}

/**
 * WGSL of the main pass: workgroups [0, count) are long-row units, the next `tiles` are tiles.
 * `subgroupScan`: the tile's carries by subgroup-segmented-scan.ts (2 barriers) instead of the
 * workgroup-memory segmented scan (2·log2 W barriers).
 */
export function mergeMainWgsl(perThread: number, w: number, unrolled: boolean, subgroupScan: boolean): string {
  const shared = [`prod: array<f32, ${perThread * w}>`, `rend: array<u32, ${tileRows(perThread, w)}>`, 'wb: array<u32, 4>'];
  const sg = { subgroups: subgroupScan };
  const scan = subgroupScan ? subgroupSegmentedScan('sscan', w) : segmentedBlockScan('sscan', w);
  const head = [preamble(MERGE_UNIFORMS, MERGE_BINDINGS, sg), SPMV_STORE, workgroupSum('red', w), scan, 'const NONE = 0xffffffffu;', ...shared.map((d) => `var<workgroup> ${d};`)];
  return `${head.join('\n')}
${longUnitFn(w, longUnroll(perThread))}
${tileFn(perThread, w, unrolled)}
@compute @workgroup_size(${w})
fn main(${entryArgs(sg)}) {
  ${subgroupScan ? 'sgp_lane = sg_lane;\n  sgp_size = sg_size;' : ''}
  let g = wg_linear(wid, nwg);
  if (g < u.count) {
    long_unit(lid, g);
    return;
  }
  if (g - u.count >= u.tiles) { return; }
  tile(lid, g - u.count);
}`;
}

/** WGSL of the fix-up pass: one workgroup per segment sums the row's carry slots in a fixed order and stores y. */
export function mergeFixupWgsl(): string {
  const w = FIXUP_WORKGROUP;
  return `${preamble(MERGE_UNIFORMS, FIXUP_BINDINGS)}
${SPMV_STORE}
${workgroupSum('red', w)}
var<workgroup> wb: array<u32, 3>;
@compute @workgroup_size(${w})
fn main(${entryArgs()}) {
  let g = wg_linear(wid, nwg);
  if (g >= u.count) { return; }
  if (lid == 0u) { for (var j = 0u; j < 3u; j++) { wb[j] = blk[u.fix_off + 3u * g + j]; } }
  let seg = workgroupUniformLoad(&wb);
  var s = 0.0;
  for (var j = seg[1] + lid; j < seg[2]; j += ${w}u) { s = s + carries[j]; }
  let t = red_sum(lid, s);
  if (lid == 0u) { store_y(seg[0], t); }
}`;
}
