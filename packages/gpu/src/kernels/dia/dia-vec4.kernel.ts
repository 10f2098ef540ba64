/**
 * DIA with aligned vec4 loads (issue 20, session 12): banded and stencil matrices with a quarter
 * of dia-tiled's value load instructions and no shifted value reads. Measured on the H100
 * (bench/RESULTS.md, session 12): 5–17 % slower than dia-tiled, which already runs at 95–97 % of a
 * copy of its own bytes; kept as the measured alternative (experimental). The layout pads every diagonal's block of a piece to a multiple of 4 slots, so the values
 * of 4 consecutive rows (a *group*, starting at a multiple of 4) on one diagonal are one aligned
 * 16-byte load; x for that group is one aligned vec4 load when the diagonal's offset is a multiple
 * of 4 (the ±n, ±n² diagonals of a stencil of side a multiple of 4), otherwise two aligned vec4
 * loads shifted by offset mod 4 — a shift that is the same for every invocation (it comes from the
 * diagonal table), so its branch is uniform (`xvec` 1); or four scalar loads (`xvec` 0, any column
 * count); or (`xvec` 2) from windows of x staged in workgroup memory per tile: the offsets are
 * grouped into clusters (neighbours ≤ 64 apart: a stencil's ±1 triple, ±n, ±n², …), and each tile
 * first copies, per cluster, the x its rows need on those diagonals (tile rows + the cluster's
 * span, aligned vec4 loads, zeros outside the columns) into one workgroup array, then reads x from
 * there (two aligned vec4 reads shifted, as xvec 1) — x leaves L2 once per tile and cluster instead
 * of once per diagonal and line that the value stream evicted from L1. dia-tiled's `vec` 1 shifted
 * both arrays by a per-row amount and read twice the bytes of values; this one reads every value
 * byte once.
 *
 * As dia-tiled: the diagonal table is staged once per workgroup in workgroup memory (≤ 256
 * diagonals), a tile of `4·rowsPerThread·workgroupSize` rows whose every row lies inside every
 * diagonal (the interior, computed on the host per piece) runs without range tests, `unroll`
 * diagonals per interior step are loaded before they are summed; tiles at the ends take the
 * checked loop. `tiles` consecutive tiles per workgroup (1 or more) trade workgroups for a
 * longer loop (fewer table copies and barriers, fewer workgroups in the tail wave).
 *
 * Summation order per row: diagonals in ascending order, one product at a time (dia-tiled's
 * order), so both give the same bits. Padding slots hold 0 and are never multiplied (interior
 * rows have a column on every diagonal; the checked loop tests each). Matrices whose values
 * exceed one binding are split into row blocks (multiples of 4 rows); more than 256 diagonals
 * are refused with the reason (dia-tiled takes those).
 * @module
 */
import { type DiaMatrix, diaDefaultParams } from '@gpusparse/formats';
import { csrVectorsFit } from '../csr/csr-device';
import { bindingCapElems, type EllDeviceMatrix, encodeEll, type HostPiece, uploadPieces } from '../ell/ell-device';
import type { SpmvKernel } from '../types';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, signature, type WgslBinding } from '../wgsl/index';
import { isDeviceDia } from './dia-build';
import { diagonalCountFits, diagonalPrecheck } from './diagonal-device';
import { DIA_DEVICE_FORMAT, diaLayout } from './dia.kernel';
import { each, interiorLoop, TILED_MAX_DIAGONALS, tilePrologue, UNROLLS } from './dia-tiled.kernel';

/** Parameters of {@link diaVec4Kernel}. */
export type DiaVec4Params = { rowsPerThread: number; workgroupSize: number; maxDiagonals: number; unroll: number; xvec: number; tiles: number };

/** An uploaded matrix: the row-block pieces and, per piece, the local rows [ilo, ihi) of its unchecked tiles. */
export interface DiaVec4DeviceMatrix extends EllDeviceMatrix {
  readonly interior: readonly (readonly [number, number])[];
  /** Staged x windows per tile of each piece (xvec 2; 0 otherwise). */
  readonly clusters: readonly number[];
}

/** Floats of x one tile may stage (xvec 2): 12 KiB, with the 4 KiB diagonal table the 16 KiB every WebGPU device has. */
export const STAGE_FLOATS = 3072;

/** Offsets at most this far apart share one staged window (xvec 2). */
const CLUSTER_GAP = 64;

/**
 * Bindings: the table (4 i32 per diagonal: offset k, values base in vec4s, the x position — ⌊k/4⌋
 * in vec4s, or with xvec 2 the float index in the tile's window at row 0 — and k mod 4; with xvec 2
 * then 4 i32 per cluster: window start in vec4s, first column relative to the tile in floats,
 * length in vec4s, 0), values, x, y.
 */
function bindings(xvec: number): WgslBinding[] {
  return [
    { name: 'tab', type: 'array<i32>', access: 'r' },
    { name: 'vals', type: 'array<vec4<f32>>', access: 'r' },
    { name: 'x', type: xvec === 0 ? 'array<f32>' : 'array<vec4<f32>>', access: 'r' },
    { name: 'y', type: 'array<f32>', access: 'w' },
  ];
}

/** `shift4(lo, hi, s)`: the 4 floats from position s of the 8 in lo, hi (s in 0…3, uniform per diagonal). */
const SHIFT4 = `fn shift4(lo: vec4<f32>, hi: vec4<f32>, s: i32) -> vec4<f32> {
  switch s {
    case 1: { return vec4<f32>(lo.yzw, hi.x); }
    case 2: { return vec4<f32>(lo.zw, hi.xy); }
    case 3: { return vec4<f32>(lo.w, hi.xyz); }
    default: { return lo; }
  }
}`;

/**
 * x helpers: \`xs(i)\` one float from the binding, \`x4(e, g, tl)\` the 4 floats x[g + k … g + k + 3]
 * of the group at global row g (local row tl in its tile) on diagonal e.
 */
function xHelpers(xvec: number): string {
  if (xvec === 2) {
    return `fn xs(i: i32) -> f32 { return x[u32(i) >> 2u][u32(i) & 3u]; }
${SHIFT4}
var<workgroup> xw: array<vec4<f32>, ${STAGE_FLOATS / 4}>;
fn x4(e: vec4<i32>, g: i32, tl: u32) -> vec4<f32> {
  let q = (tl + u32(e.z)) >> 2u;
  let lo = xw[q];
  if (e.w == 0) { return lo; }
  return shift4(lo, xw[q + 1u], e.w);
}`;
  }
  if (xvec === 0) {
    return `fn xs(i: i32) -> f32 { return x[u32(i)]; }
fn x4(e: vec4<i32>, g: i32, tl: u32) -> vec4<f32> {
  let i = u32(g + e.x);
  return vec4<f32>(x[i], x[i + 1u], x[i + 2u], x[i + 3u]);
}`;
  }
  return `fn xs(i: i32) -> f32 { return x[u32(i) >> 2u][u32(i) & 3u]; }
${SHIFT4}
fn x4(e: vec4<i32>, g: i32, tl: u32) -> vec4<f32> {
  let q = u32((g >> 2) + e.z);
  let lo = x[q];
  if (e.w == 0) { return lo; }
  return shift4(lo, x[q + 1u], e.w);
}`;
}

/**
 * WGSL of one tile's staging (xvec 2): after a barrier (the previous tile's reads are done), each
 * cluster's window of x — from the tile's first global row plus the cluster's first column, in
 * aligned vec4s, zeros outside the columns — copied into \`xw\` by the workgroup, then a barrier.
 * Uniform control flow: b, the table and the uniforms are the same in every invocation.
 */
function stageWindows(wg: number): string {
  return `workgroupBarrier();
    for (var c = 0u; c < u.nclu; c++) {
      let w = 4u * (u.count + c);
      let src = (i32(u.row_base + b) + tab[w + 1u]) >> 2;
      for (var i = lid; i < u32(tab[w + 2u]); i += ${wg}u) {
        let gi = src + i32(i);
        var v = vec4<f32>(0.0);
        if (gi >= 0 && gi < i32(u.cols >> 2u)) { v = x[u32(gi)]; }
        xw[u32(tab[w]) + i] = v;
      }
    }
    workgroupBarrier();`;
}

/**
 * The shader: `wg` invocations, `rpt` groups of 4 rows each (group j of invocation lid starts at
 * local row b + 4·(lid + j·wg) of tile b), `unroll` diagonals per interior step, `xvec` x loads,
 * `tiles` tiles per workgroup.
 * @example diaVec4Wgsl(256, 1, 4, 1, 1)
 */
export function diaVec4Wgsl(wg: number, rpt: number, unroll: number, xvec: number, tiles: number): string {
  // ≤ 256: the WebGPU default maxComputeWorkgroupSizeX, which the context does not raise
  if (![32, 64, 128, 256].includes(wg)) throw new RangeError(`dia-vec4: workgroupSize expected 32, 64, 128 or 256, got ${wg}`);
  if (!(Number.isInteger(rpt) && rpt >= 1 && rpt <= 4)) throw new RangeError(`dia-vec4: rowsPerThread expected an integer in 1…4, got ${rpt}`);
  if (!UNROLLS.includes(unroll)) throw new RangeError(`dia-vec4: unroll expected one of ${UNROLLS.join(', ')}, got ${unroll}`);
  if (xvec !== 0 && xvec !== 1 && xvec !== 2) throw new RangeError(`dia-vec4: xvec expected 0, 1 or 2, got ${xvec}`);
  if (!(Number.isInteger(tiles) && tiles >= 1 && tiles <= 64)) throw new RangeError(`dia-vec4: tiles expected an integer in 1…64, got ${tiles}`);
  const tile = 4 * wg * rpt;
  const groups = (f: (j: number) => string, indent = '      ') => each(rpt, indent, f);
  const checked = (j: number, c: number) =>
    `if (t${j} + ${c}u < u.rows && g${j} + ${c} + e.x >= 0 && g${j} + ${c} + e.x < i32(u.cols)) { s${j}.${'xyzw'[c]} = s${j}.${'xyzw'[c]} + vals[u32(e.y) + v${j}].${'xyzw'[c]} * xs(g${j} + ${c} + e.x); }`;
  return `${preamble([...SPMV_UNIFORMS, ['ilo', 'u32'], ['ihi', 'u32'], ['cols', 'u32'], ['nclu', 'u32']], bindings(xvec))}
${SPMV_STORE}
${xHelpers(xvec)}
var<workgroup> diag: array<vec4<i32>, ${TILED_MAX_DIAGONALS}>;
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
${tilePrologue(wg, tile * tiles)}
  for (var tt = 0u; tt < ${tiles}u; tt++) {
    let b = b0 + tt * ${tile}u;
    if (b >= u.rows) { break; }
    ${xvec === 2 ? stageWindows(wg) : ''}
    ${groups((j) => `let t${j} = b + 4u * (lid + ${j * wg}u);\n    let v${j} = t${j} >> 2u;\n    let g${j} = i32(u.row_base + t${j});\n    var s${j} = vec4<f32>(0.0);`, '    ')}
    if (b >= u.ilo && b + ${tile}u <= u.ihi) {
      // interior tile: every row of it has a column on every diagonal, x's vec4s inside the binding
      ${interiorLoop(unroll, rpt, (q, j) => `vals[u32(e${q}.y) + v${j}] * x4(e${q}, g${j}, t${j} - b)`)}
    } else {
      for (var d = 0u; d < u.count; d++) {
        let e = diag[d];
        ${groups((j) => [0, 1, 2, 3].map((c) => checked(j, c)).join('\n        '), '        ')}
      }
    }
    ${groups((j) => [0, 1, 2, 3].map((c) => `if (t${j} + ${c}u < u.rows) { store_y(t${j} + ${c}u, s${j}.${'xyzw'[c]}); }`).join('\n    '), '    ')}
  }
}`;
}

/** A piece's 4 table words for diagonal offset k whose values start at vec4 `base4`. */
const tableEntry = (k: number, base4: number): [number, number, number, number] => [k, base4, Math.floor(k / 4), k - 4 * Math.floor(k / 4)];

/**
 * The local rows [ilo, ihi) of a piece (rows [rowBase, rowBase + rows), rowBase a multiple of 4)
 * whose groups may take the unchecked path: for every offset k, every row's column is ≥ 0 and the
 * 8 floats of x from the group's aligned vec4 on lie inside the cols, so that both vec4 loads (and
 * the 4 scalar ones) stay in range. [2³²−1, 2³²−1) when empty. O(ndiag).
 * @example vec4Interior(Int32Array.of(-1, 0, 1), 0, 64, 64) // [4, 56]
 */
export function vec4Interior(offsets: Int32Array, rowBase: number, rows: number, cols: number): [number, number] {
  let lo = 0;
  let hi = rows;
  for (const k of offsets) {
    lo = Math.max(lo, -k - rowBase);
    hi = Math.min(hi, cols - 7 - k - rowBase);
  }
  lo = 4 * Math.ceil(lo / 4);
  return lo < hi ? [lo, hi] : [0xffffffff, 0xffffffff];
}

/**
 * The staged x windows of a tile of `tileRows` rows (xvec 2) for ascending offsets: clusters of
 * offsets ≤ 64 apart, each window from the tile's first row + 4⌊k_min/4⌋ over tileRows + span + 4
 * floats (a multiple of 4), placed one after another. `cluster` rows are the 4 table words per
 * cluster (window start in vec4s, first column in floats, length in vec4s, 0); `at[d]` is diagonal
 * d's float index in the windows at local row 0. O(ndiag).
 * @example stageClusters(Int32Array.of(-1, 0, 1), 8).floats // 16
 */
export function stageClusters(offsets: Int32Array, tileRows: number): { cluster: number[]; at: Int32Array; floats: number } {
  const cluster: number[] = [];
  const at = new Int32Array(offsets.length);
  let floats = 0;
  for (let d0 = 0; d0 < offsets.length; ) {
    let d1 = d0 + 1;
    while (d1 < offsets.length && offsets[d1]! - offsets[d1 - 1]! <= CLUSTER_GAP) d1++;
    const src = 4 * Math.floor(offsets[d0]! / 4);
    const len = 4 * Math.ceil((tileRows + offsets[d1 - 1]! - src + 4) / 4);
    for (let d = d0; d < d1; d++) at[d] = floats + offsets[d]! - src;
    cluster.push(floats / 4, src, len / 4, 0);
    floats += len;
    d0 = d1;
  }
  return { cluster, at, floats };
}

/**
 * Row blocks of `h` rows (a multiple of 4) of a DIA matrix, each a table and a values array of
 * ndiag blocks of ⌈rows/4⌉·4 slots (zero padding); with `tileRows` (xvec 2) the table holds the
 * staged positions and the clusters ({@link stageClusters}). O(rows·ndiag) host copy.
 */
function* vec4Pieces(m: DiaMatrix, h: number, tileRows?: number): Generator<HostPiece & { clusters: number }> {
  const layout = diaLayout(m);
  const nd = layout.offsets.length;
  const st = tileRows === undefined ? undefined : stageClusters(layout.offsets, tileRows);
  for (let r0 = 0; r0 < m.rows; r0 += h) {
    const rows = Math.min(h, m.rows - r0);
    const r4 = 4 * Math.ceil(rows / 4);
    const tab = new Int32Array(4 * nd + (st?.cluster.length ?? 0));
    const vals = new Float32Array(Math.max(4, nd * r4));
    for (let d = 0; d < nd; d++) {
      const e = tableEntry(layout.offsets[d]!, (d * r4) / 4);
      if (st) e[2] = st.at[d]!;
      tab.set(e, 4 * d);
      const src = layout.base(d) + r0;
      vals.set(layout.values.subarray(src, src + rows), d * r4);
    }
    if (st) tab.set(st.cluster, 4 * nd);
    yield { rows, rowBase: r0, count: nd, accumulate: false, data: [tab, vals], clusters: (st?.cluster.length ?? 0) / 4 };
  }
}

/**
 * DIA SpMV with aligned vec4 loads. Cost per apply: one dispatch per row block (one when the
 * values fit a binding); 4·⌈rows/4⌉·ndiag bytes of values plus x and y.
 * @example const h = diaVec4Kernel.upload(ctx, diaFromCsr(a, { valueType: 'f32' }));
 */
export const diaVec4Kernel: SpmvKernel<DiaMatrix, DiaVec4Params, DiaVec4DeviceMatrix> = {
  id: 'dia-vec4',
  format: 'dia',
  title: 'DIA with aligned vec4 loads: 4 consecutive rows per load, values blocks padded to 16 bytes, x as aligned vec4s shifted by the offset mod 4',
  params: {
    rowsPerThread: { description: 'groups of 4 consecutive rows per invocation (strided by the workgroup size)', values: [1, 2] },
    workgroupSize: { description: 'invocations per workgroup', values: [256, 128] },
    maxDiagonals: { description: 'most diagonals accepted (the dia format default; ≤ 256)', values: [diaDefaultParams.maxDiagonals] },
    unroll: { description: 'diagonals per unrolled interior step (1…8)', values: [4, 8] },
    xvec: {
      description: '1: x read as aligned vec4s (columns a multiple of 4); 0: four scalar loads per group and diagonal; 2: x windows staged in workgroup memory per tile and cluster of offsets (columns a multiple of 4, windows ≤ 3 072 floats)',
      values: [1, 0, 2],
    },
    tiles: { description: 'consecutive tiles per workgroup (1…64)', values: [1, 4] },
  },
  defaults: { rowsPerThread: 1, workgroupSize: 256, maxDiagonals: diaDefaultParams.maxDiagonals, unroll: 4, xvec: 1, tiles: 1 },
  // the same conversion as dia and dia-tiled (float32 DIA), so a caller converts once for all three
  formatParams: () => ({ maxDiagonals: 2 ** 28, ...DIA_DEVICE_FORMAT }),
  precheck: (a, _limits, params) => diagonalPrecheck(a, Math.min(params.maxDiagonals, TILED_MAX_DIAGONALS), 'dia'),
  supports(m, limits, params) {
    const max = params?.maxDiagonals ?? diaDefaultParams.maxDiagonals;
    const ok = diagonalCountFits(m.offsets.length, max, 'dia');
    if (ok !== true) return ok;
    // the device DIA build follows dia-tiled's piece plan (unpadded blocks): this layout is re-packed on the host
    if (isDeviceDia(m)) return 'dia-vec4 takes a host-converted DIA matrix (diaFromCsr); this layout was built on the device for dia / dia-tiled';
    if (m.offsets.length > TILED_MAX_DIAGONALS) return `dia-vec4 stages its diagonal table in workgroup memory: expected at most ${TILED_MAX_DIAGONALS} diagonals, got ${m.offsets.length} (use dia-tiled)`;
    const p = { ...this.defaults, ...params };
    if (p.xvec !== 0 && m.cols % 4 !== 0) return `dia-vec4 xvec ${p.xvec} reads x as vec4: expected columns a multiple of 4, got ${m.cols} (use xvec 0)`;
    if (p.xvec === 2) {
      const tile = 4 * p.rowsPerThread * p.workgroupSize;
      const { floats } = stageClusters(m.offsets, tile);
      if (floats > STAGE_FLOATS) return `dia-vec4 xvec 2 stages ${floats} floats of x per tile of ${tile} rows (${m.offsets.length} offsets), more than ${STAGE_FLOATS}: use fewer rows per tile (workgroupSize, rowsPerThread) or xvec 1`;
      if (limits.maxComputeWorkgroupStorageSize < 16384) return `dia-vec4 xvec 2 needs 16384 bytes of workgroup memory, the device has ${limits.maxComputeWorkgroupStorageSize}`;
    }
    if (m.offsets.length * 16 > limits.maxStorageBufferBindingSize) return `dia-vec4: ${m.offsets.length} diagonals need rows of 16 bytes each in one binding of ${limits.maxStorageBufferBindingSize} bytes`;
    return csrVectorsFit(m, limits.maxStorageBufferBindingSize);
  },
  wgsl: (p) => diaVec4Wgsl(p.workgroupSize, p.rowsPerThread, p.unroll, p.xvec, p.tiles),
  pipelineSpec(p, caps) {
    const text = this.wgsl(p, caps);
    const label = `dia-vec4(rows=${p.rowsPerThread},wg=${p.workgroupSize},unroll=${p.unroll},xvec=${p.xvec},tiles=${p.tiles})`;
    return { key: text, label, bindings: signature(bindings(p.xvec)), wgsl: () => text };
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const why = this.supports(m, ctx.limits, p);
    if (why !== true) throw new RangeError(`dia-vec4 upload: ${why}`);
    const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    // row blocks: a multiple of 4 rows whose ndiag padded blocks fit one binding
    const cap = bindingCapElems(ctx, opts);
    const nd = Math.max(1, m.offsets.length);
    const h = 4 * Math.floor(cap / (4 * nd));
    if (h < 4 || 4 * nd > cap) throw new RangeError(`dia-vec4 upload: ${m.offsets.length} diagonals of 4 rows do not fit a binding of ${cap} floats (use dia-tiled)`);
    const interior: [number, number][] = [];
    const clusters: number[] = [];
    const tile = 4 * p.rowsPerThread * p.workgroupSize;
    const pieces = (function* () {
      for (const q of vec4Pieces(m, Math.min(h, 4 * Math.ceil(m.rows / 4)), p.xvec === 2 ? tile : undefined)) {
        interior.push(vec4Interior(m.offsets, q.rowBase, q.rows, m.cols));
        clusters.push(q.clusters);
        yield q;
      }
    })();
    return { ...uploadPieces(ctx, this.id, m, pipe, pieces, tile * p.tiles), interior, clusters };
  },
  encode: (ctx, h, x, y, scale) =>
    encodeEll(ctx, h, x, y, scale, (u, i) => {
      u.u[6] = h.interior[i]![0]; // ilo
      u.u[7] = h.interior[i]![1]; // ihi
      u.u[8] = h.cols;
      u.u[9] = h.clusters[i]!; // staged windows per tile (xvec 2)
    }),
};
