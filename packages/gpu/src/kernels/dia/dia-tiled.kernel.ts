/**
 * DIA kernel for banded and stencil matrices at the bandwidth limit (issue 20). Same device
 * layout as the `dia` kernel (diagonal-major padded slots, a table of offset, base and valid
 * row range per diagonal), read the way a memory-bound gather has to be read on a GPU:
 *
 * - a workgroup owns a tile of `rowsPerThread`·workgroupSize rows; invocation t handles rows
 *   t, t + W, t + 2W, … of the tile, so every load of values and of x stays coalesced
 *   (consecutive invocations, consecutive slots) while each invocation keeps
 *   rowsPerThread × 4 independent value loads and as many x loads in flight (the diagonal loop
 *   is unrolled by 4 in the shader text): the thread-per-row `dia` kernel had one load pair in
 *   flight per row and waited a full memory latency per diagonal;
 * - the diagonal table is staged once per workgroup in workgroup memory (at most
 *   {@link TILED_MAX_DIAGONALS} diagonals per piece; more become accumulating pieces), not
 *   re-read from storage per row and diagonal;
 * - a tile whose rows lie inside every diagonal's valid range (the *interior*, [ilo, ihi),
 *   computed on the host per piece) runs without any per-element range test; only the tiles at
 *   the ends of the matrix take the checked loop.
 *
 * - `unroll` diagonals per interior step (1–8) set how many loads each row has in flight;
 * - `vec` 1 (issue 20): groups of 4 consecutive rows per invocation read values and x as vec4
 *   (two aligned loads shifted, see {@link diaTiledVecWgsl}): a quarter to a half of the load
 *   instructions per entry of the scalar path, for columns a multiple of 4.
 *
 * Summation order per row: diagonals in ascending order, one product at a time, as in `dia`;
 * fill slots hold 0 and are multiplied like in `dia` (0·x). No float atomics: the invocation
 * that sums a row alone stores it; split pieces accumulate in later, ordered dispatches (β = 1).
 * @module
 */
import { type DiaMatrix, diaDefaultParams } from '@gpusparse/formats';
import type { GpuCaps } from '../../device/context';
import type { PipelineSpec } from '../../device/pipelines';
import { csrVectorsFit } from '../csr/csr-device';
import { bindingCapElems, type EllDeviceMatrix, encodeEll, type HostPiece, uploadPieces } from '../ell/ell-device';
import type { SpmvKernel } from '../types';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, signature, type WgslBinding } from '../wgsl/index';
import { type DeviceDiaMatrix, deviceDiaHandle, diaBuildSpecs, isDeviceDia } from './dia-build';
import { DIA_DEVICE_FORMAT, diaLayout } from './dia.kernel';
import { DIAGONAL_BINDINGS, diagonalCountFits, diagonalPieces, diagonalPrecheck } from './diagonal-device';

/** Most diagonals of one piece (the workgroup-memory table: 16 bytes each, 4 KiB). */
export const TILED_MAX_DIAGONALS = 256;

/**
 * Diagonals per unrolled step of the interior loop (the `unroll` parameter's accepted values).
 * Every count 1…8: a stencil with ≤ 8 diagonals (5-point: 5, 7-point: 7) can take all of them
 * in one step (every load of its rows in flight at once) instead of an unrolled step plus
 * single-diagonal remainder steps, each of which waits a memory latency with few loads in flight.
 */
export const UNROLLS = [1, 2, 3, 4, 5, 6, 7, 8];

/**
 * The opening of both tiled shaders' entry point: the tile's first row b0 (invocations past the
 * rows return) and the piece's diagonal table copied into workgroup memory, then a barrier.
 */
export function tilePrologue(wg: number, tile: number): string {
  return `  let b0 = wg_linear(wid, nwg) * ${tile}u;
  if (b0 >= u.rows) { return; }
  for (var q = lid; q < u.count; q += ${wg}u) {
    diag[q] = vec4<i32>(tab[4u * q], tab[4u * q + 1u], tab[4u * q + 2u], tab[4u * q + 3u]);
  }
  workgroupBarrier();`;
}

/** Parameters of {@link diaTiledKernel}. */
export type DiaTiledParams = { rowsPerThread: number; workgroupSize: number; maxDiagonals: number; unroll: number; vec: number; skew: number };

/** Floats per unit of the `skew` parameter (256 bytes). */
const SKEW_UNIT = 64;

/**
 * A host piece with diagonal t's value block moved `t·skew·64` floats up (its table base with
 * it), so the diagonals' streams no longer start rows·4 bytes apart. Why (issue 20): on the H100
 * the 5-point stencil (4·10^6 rows: blocks 16 000 000 bytes apart) and the banded matrix
 * (2·10^6 rows) moved 38 % of copy where the 7-point (4 096 000 rows) moved 80 %; both slow
 * strides are 5^6 times a small power of two, and the HBM3 of an H100 80 GB has 5 stacks — if the
 * address hash sends the concurrent reads of every diagonal at row t to one stack, a skew spreads
 * them (a hypothesis the sweep's skew variants test). Reads stay inside each diagonal's valid
 * slots [base + lo, base + hi), which move intact; a piece that would outgrow `cap` keeps its
 * layout. O(values of the piece) host copy.
 */
function skewPiece(q: HostPiece, skew: number, cap: number): HostPiece {
  const S = skew * SKEW_UNIT;
  const [tab0, vals0] = q.data as [Int32Array, Float32Array | Float64Array];
  if (S === 0 || q.count < 2 || vals0.length + (q.count - 1) * S > cap) return q;
  const tab = Int32Array.from(tab0);
  const vals = new Float32Array(vals0.length + (q.count - 1) * S);
  for (let t = 0; t < q.count; t++) {
    const [base, lo, hi] = [tab0[4 * t + 1]!, tab0[4 * t + 2]!, tab0[4 * t + 3]!];
    tab[4 * t + 1] = base + t * S;
    if (hi > lo) vals.set(vals0.subarray(base + lo, base + hi), base + t * S + lo);
  }
  return { ...q, data: [tab, vals] };
}

/** An uploaded matrix: the pieces and, per piece, the row range [ilo, ihi) its fast path takes. */
export interface DiaTiledDeviceMatrix extends EllDeviceMatrix {
  readonly interior: readonly (readonly [number, number])[];
}

/** `n` WGSL statements from `f(j)`, j = 0 … n − 1, joined by newlines with `indent`. */
export const each = (n: number, indent: string, f: (j: number) => string): string => Array.from({ length: n }, (_, j) => f(j)).join(`\n${indent}`);

/** Bindings of the vec4 variant: the same buffers as {@link DIAGONAL_BINDINGS}, values and x read as vec4. */
const VEC_BINDINGS: readonly WgslBinding[] = DIAGONAL_BINDINGS.map((b) => (b.name === 'vals' || b.name === 'x' ? { ...b, type: 'array<vec4<f32>>' } : b));

/**
 * One unrolled interior step of `n` diagonals: the table entries, then every product (all loads
 * independent), then each row's sum in diagonal order. `prod(q, j)` is the WGSL of row (group)
 * j's product on diagonal q of the step.
 */
function interiorStep(n: number, rpt: number, prod: (q: number, j: number) => string): string {
  const qs = Array.from({ length: n }, (_, q) => q);
  return [
    ...qs.map((q) => `let e${q} = diag[d + ${q}u];`),
    ...qs.flatMap((q) => Array.from({ length: rpt }, (_, j) => `let p${q}_${j} = ${prod(q, j)};`)),
    ...Array.from({ length: rpt }, (_, j) => `s${j} = ${qs.reduce((acc, q) => `(${acc} + p${q}_${j})`, `s${j}`)};`),
  ].join('\n      ');
}

/** The interior loop: unrolled steps of `n` diagonals, then the remaining diagonals one at a time. */
export function interiorLoop(n: number, rpt: number, prod: (q: number, j: number) => string): string {
  return `var d = 0u;
    loop {
      if (d + ${n}u > u.count) { break; }
      ${interiorStep(n, rpt, prod)}
      d += ${n}u;
    }
    for (; d < u.count; d++) {
      ${interiorStep(1, rpt, prod)}
    }`;
}

/**
 * The tiled DIA shader for `wg` invocations of `rpt` rows each, `unroll` diagonals per
 * interior step. Row j of invocation `lid` in the tile starting at local row b0 is
 * t_j = b0 + lid + j·wg; its sum s_j.
 * @example diaTiledWgsl(128, 4)
 */
export function diaTiledWgsl(wg: number, rpt: number, unroll = 4): string {
  if (!(Number.isInteger(rpt) && rpt >= 1 && rpt <= 8)) throw new RangeError(`dia-tiled: rowsPerThread expected an integer in 1…8, got ${rpt}`);
  if (!UNROLLS.includes(unroll)) throw new RangeError(`dia-tiled: unroll expected one of ${UNROLLS.join(', ')}, got ${unroll}`);
  const tile = wg * rpt;
  const rows = (f: (j: number) => string, indent = '      ') => each(rpt, indent, f);
  return `${preamble([...SPMV_UNIFORMS, ['ilo', 'u32'], ['ihi', 'u32']], DIAGONAL_BINDINGS)}
${SPMV_STORE}
var<workgroup> diag: array<vec4<i32>, ${TILED_MAX_DIAGONALS}>;
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
${tilePrologue(wg, tile)}
  ${rows((j) => `let t${j} = i32(b0 + lid + ${j * wg}u);\n  let g${j} = i32(u.row_base) + t${j};\n  var s${j} = 0.0;`, '  ')}
  if (b0 >= u.ilo && b0 + ${tile}u <= u.ihi) {
    // interior tile: every row of it has a column on every diagonal
    ${interiorLoop(unroll, rpt, (q, j) => `vals[u32(e${q}.y + t${j})] * x[u32(g${j} + e${q}.x)]`)}
  } else {
    for (var d = 0u; d < u.count; d++) {
      let e = diag[d];
      ${rows((j) => `if (t${j} >= e.z && t${j} < e.w) { s${j} = s${j} + vals[u32(e.y + t${j})] * x[u32(g${j} + e.x)]; }`)}
    }
  }
  ${rows((j) => `if (u32(t${j}) < u.rows) { store_y(u32(t${j}), s${j}); }`, '  ')}
}`;
}

/**
 * The vec4 variant: invocation `lid` owns `rpt` groups of 4 consecutive rows (group j starts at
 * t_j = b0 + 4·(lid + j·wg)), so that one 16-byte load brings a diagonal's values of 4 rows and
 * one more (or none, when aligned) the neighbouring 4: 2 vec4 loads of values and 2 of x instead
 * of 8 scalar loads per 4 rows and diagonal. Both arrays are read as vec4 at index ⌊i/4⌋ and
 * ⌊i/4⌋ + 1 and shifted by i mod 4, which is the same for every invocation of the tile (tiles and
 * groups start at multiples of 4), so the shift's branch is uniform. The fast path runs only on
 * tiles inside [ilo, ihi) computed on the host such that both vec4 indices stay below the arrays'
 * whole vec4 counts ({@link pieceVecInterior}); other tiles take the checked scalar loop, reading
 * the vec4 arrays by component. Per-row sums: diagonals in ascending order, as in the scalar path.
 */
export function diaTiledVecWgsl(wg: number, rpt: number, unroll = 4): string {
  if (!(Number.isInteger(rpt) && rpt >= 1 && rpt <= 4)) throw new RangeError(`dia-tiled: rowsPerThread expected an integer in 1…4 with vec 1, got ${rpt}`);
  if (!UNROLLS.includes(unroll)) throw new RangeError(`dia-tiled: unroll expected one of ${UNROLLS.join(', ')}, got ${unroll}`);
  const tile = 4 * wg * rpt;
  const groups = (f: (j: number) => string, indent = '      ') => each(rpt, indent, f);
  const checked = (j: number, c: number) =>
    `if (t${j} + ${c} >= e.z && t${j} + ${c} < e.w) { let vi = u32(e.y + t${j} + ${c}); let xi = u32(g${j} + ${c} + e.x); s${j}.${'xyzw'[c]} = s${j}.${'xyzw'[c]} + vals[vi >> 2u][vi & 3u] * x[xi >> 2u][xi & 3u]; }`;
  return `${preamble([...SPMV_UNIFORMS, ['ilo', 'u32'], ['ihi', 'u32']], VEC_BINDINGS)}
${SPMV_STORE}
var<workgroup> diag: array<vec4<i32>, ${TILED_MAX_DIAGONALS}>;
fn shift4(lo: vec4<f32>, hi: vec4<f32>, s: u32) -> vec4<f32> {
  switch s {
    case 1u: { return vec4<f32>(lo.yzw, hi.x); }
    case 2u: { return vec4<f32>(lo.zw, hi.xy); }
    case 3u: { return vec4<f32>(lo.w, hi.xyz); }
    default: { return lo; }
  }
}
fn vals4(i: u32) -> vec4<f32> {
  let a = i >> 2u;
  let s = i & 3u;
  if (s == 0u) { return vals[a]; }
  return shift4(vals[a], vals[a + 1u], s);
}
fn x4(i: u32) -> vec4<f32> {
  let a = i >> 2u;
  let s = i & 3u;
  if (s == 0u) { return x[a]; }
  return shift4(x[a], x[a + 1u], s);
}
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
${tilePrologue(wg, tile)}
  ${groups((j) => `let t${j} = i32(b0 + 4u * (lid + ${j * wg}u));\n  let g${j} = i32(u.row_base) + t${j};\n  var s${j} = vec4<f32>(0.0);`, '  ')}
  if (b0 >= u.ilo && b0 + ${tile}u <= u.ihi) {
    // interior tile whose vec4 loads all stay inside the arrays' whole vec4s
    ${interiorLoop(unroll, rpt, (q, j) => `vals4(u32(e${q}.y + t${j})) * x4(u32(g${j} + e${q}.x))`)}
  } else {
    for (var d = 0u; d < u.count; d++) {
      let e = diag[d];
      ${groups((j) => [0, 1, 2, 3].map((c) => checked(j, c)).join('\n      '))}
    }
  }
  ${groups((j) => [0, 1, 2, 3].map((c) => `if (u32(t${j} + ${c}) < u.rows) { store_y(u32(t${j} + ${c}), s${j}.${'xyzw'[c]}); }`).join('\n  '), '  ')}
}`;
}

/**
 * The interior [ilo, ihi) of a piece: the local rows valid on every diagonal of its table
 * (4 i32 per diagonal: offset, base, lo, hi), [0, rows) without diagonals, [2³²−1, 2³²−1)
 * when empty (every tile then takes the checked loop). O(count).
 * @example pieceInterior(Int32Array.of(-1, 0, 1, 10, 1, 10, 0, 9), 2, 10) // [1, 9]
 */
export function pieceInterior(tab: Int32Array, count: number, rows: number): [number, number] {
  let lo = 0;
  let hi = rows;
  for (let d = 0; d < count; d++) {
    lo = Math.max(lo, tab[4 * d + 2]!);
    hi = Math.min(hi, tab[4 * d + 3]!);
  }
  return lo < hi ? [lo, hi] : [0xffffffff, 0xffffffff];
}

/**
 * The rows [ilo, ihi) of a piece on which the vec4 variant's fast path may run: the piece's
 * interior ({@link pieceInterior}) cut so that for every diagonal d and row t of it the vec4
 * indices ⌊(b_d + t)/4⌋ + 1 of the values and ⌊(rowBase + t + k_d)/4⌋ + 1 of x stay below the
 * whole vec4 counts ⌊valsLen/4⌋ and ⌊cols/4⌋ (t ≤ 4⌊len/4⌋ − 8 − start, a sufficient bound).
 * Same empty marker as pieceInterior. O(count).
 * @example pieceVecInterior(Int32Array.of(-1, 0, 1, 16, 1, 16, 0, 15), 2, 16, 32, 0, 16) // [1, 8]
 */
export function pieceVecInterior(tab: Int32Array, count: number, rows: number, valsLen: number, rowBase: number, cols: number): [number, number] {
  const [lo, inner] = pieceInterior(tab, count, rows);
  if (lo === 0xffffffff) return [lo, inner];
  let hi = inner;
  for (let d = 0; d < count; d++) {
    hi = Math.min(hi, 4 * Math.floor(valsLen / 4) - 7 - tab[4 * d + 1]!, 4 * Math.floor(cols / 4) - 7 - rowBase - tab[4 * d]!);
  }
  return lo < hi ? [lo, hi] : [0xffffffff, 0xffffffff];
}

/**
 * Tiled DIA SpMV. Cost per apply: one dispatch per piece (one for any matrix of ≤ 256
 * diagonals that fits a binding); 4·rows·ndiag bytes of values (padding included) plus x and y.
 * @example const h = diaTiledKernel.upload(ctx, diaFromCsr(a), { rowsPerThread: 4 });
 */
export const diaTiledKernel: SpmvKernel<DiaMatrix | DeviceDiaMatrix, DiaTiledParams, DiaTiledDeviceMatrix> = {
  id: 'dia-tiled',
  format: 'dia',
  title: 'DIA tiled: several coalesced rows per invocation, diagonal table in workgroup memory, unchecked interior tiles',
  params: {
    rowsPerThread: { description: 'rows per invocation (strided by the workgroup size: loads stay coalesced); with vec 1, groups of 4 consecutive rows (1…4)', values: [4, 2, 1, 8] },
    workgroupSize: { description: 'invocations per workgroup', values: [256, 128] },
    maxDiagonals: { description: 'most diagonals accepted (the dia format default)', values: [diaDefaultParams.maxDiagonals] },
    unroll: { description: 'diagonals per unrolled interior step (1…8; the diagonal count of a stencil with ≤ 8 takes them all in one step): independent loads in flight per row', values: [4, 8] },
    vec: { description: '1: vec4 loads of values and x, 4 consecutive rows per group (columns a multiple of 4); 0: scalar loads', values: [0, 1] },
    skew: { description: 'vec 0, host-converted layouts: diagonal t of a piece starts t·skew·256 bytes later (the diagonals’ streams no longer rows·4 bytes apart); 0: packed', values: [0] },
  },
  // H100 (bench/RESULTS.md, session 6, issue 20): rowsPerThread 4 with 256 invocations was the
  // fastest variant on all four matrices measured (27-point stencil 120³ 0.171 ms, tied with
  // rowsPerThread 2; banded 2·10^6 b9 0.091; 5-point 2000² 0.109; 7-point 160³ 0.132 ms);
  // rowsPerThread 1 and 8 were 15–70 % slower
  defaults: { rowsPerThread: 4, workgroupSize: 256, maxDiagonals: diaDefaultParams.maxDiagonals, unroll: 4, vec: 0, skew: 0 },
  formatParams: () => ({ maxDiagonals: 2 ** 28, ...DIA_DEVICE_FORMAT }),
  precheck: (a, _limits, params) => diagonalPrecheck(a, params.maxDiagonals, 'dia'),
  supports(m, limits, params) {
    const ok = diagonalCountFits(m.offsets.length, params?.maxDiagonals ?? diaDefaultParams.maxDiagonals, 'dia');
    // vec 1 binds x as vec4: a binding of 4·cols bytes holds whole vec4s only when cols is a multiple of 4
    if (ok === true && params?.vec === 1 && m.cols % 4 !== 0) return `dia-tiled vec 1 reads x as vec4: expected columns a multiple of 4, got ${m.cols} (use vec 0)`;
    // a layout built on the device follows the scalar kernel's piece plan (whole-binding pieces, not whole vec4s)
    if (ok === true && params?.vec === 1 && isDeviceDia(m)) return 'dia-tiled vec 1 takes a host-converted layout: this one was built on the device for vec 0';
    if (ok === true && (params?.skew ?? 0) !== 0 && (params?.vec === 1 || isDeviceDia(m))) return 'dia-tiled skew > 0 takes vec 0 and a host-converted layout (use skew 0)';
    return ok === true ? csrVectorsFit(m, limits.maxStorageBufferBindingSize) : ok;
  },
  wgsl: (p) => (p.vec === 1 ? diaTiledVecWgsl(p.workgroupSize, p.rowsPerThread, p.unroll) : diaTiledWgsl(p.workgroupSize, p.rowsPerThread, p.unroll)),
  pipelineSpec(p, caps) {
    const text = this.wgsl(p, caps);
    const label = `dia-tiled(rows=${p.rowsPerThread},wg=${p.workgroupSize},unroll=${p.unroll},vec=${p.vec})`;
    return { key: text, label, bindings: signature(DIAGONAL_BINDINGS), wgsl: () => text };
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    if (p.vec !== 0 && p.vec !== 1) throw new RangeError(`dia-tiled: vec expected 0 or 1, got ${p.vec}`);
    if (!(Number.isInteger(p.skew) && p.skew >= 0 && p.skew <= 64)) throw new RangeError(`dia-tiled: skew expected an integer in 0…64, got ${p.skew}`);
    if (p.skew > 0 && (p.vec === 1 || isDeviceDia(m))) throw new RangeError('dia-tiled: skew > 0 takes vec 0 and a host-converted layout (use skew 0)');
    const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    if (isDeviceDia(m)) {
      if (p.vec === 1) throw new RangeError('dia-tiled: vec 1 takes a host-converted layout; this one was built on the device (use vec 0)');
      // built on the device: the same plan, so the same pieces and interiors as the host upload
      const h = deviceDiaHandle(m, this.id, pipe, bindingCapElems(ctx, opts), TILED_MAX_DIAGONALS, p.rowsPerThread * p.workgroupSize);
      return { ...h, interior: h.tabs.map((tab, i) => pieceInterior(tab, h.parts[i]!.count, h.parts[i]!.rows)) };
    }
    // vec 1: pieces of whole vec4s below the binding limit, so every values buffer is sized in
    // 16-byte units (the pool rounds to 16 below the limit) and its last vec4 is readable
    const cap = bindingCapElems(ctx, opts);
    const vecCap = Math.max(4, Math.floor((cap - 4) / 4) * 4);
    // pieces stream through (a split matrix's re-packed copies are not all held at once);
    // each piece's fast-path range is recorded as it passes, in dispatch order
    const interior: [number, number][] = [];
    const pieces = diagonalPieces(diaLayout(m), p.vec === 1 ? vecCap : cap, TILED_MAX_DIAGONALS);
    const tracked = (function* () {
      for (const q0 of pieces) {
        const q = skewPiece(q0, p.skew, cap);
        const tab = q.data[0] as Int32Array;
        interior.push(p.vec === 1 ? pieceVecInterior(tab, q.count, q.rows, q.data[1]!.length, q.rowBase, m.cols) : pieceInterior(tab, q.count, q.rows));
        yield q;
      }
    })();
    return { ...uploadPieces(ctx, this.id, m, pipe, tracked, (p.vec === 1 ? 4 : 1) * p.rowsPerThread * p.workgroupSize), interior };
  },
  encode: (ctx, h, x, y, scale) =>
    encodeEll(ctx, h, x, y, scale, (u, i) => {
      u.u[6] = h.interior[i]![0]; // ilo
      u.u[7] = h.interior[i]![1]; // ihi
    }),
};

/**
 * What a DIA conversion on the device and the default dia-tiled upload compile (for
 * PipelineCache.prewarm: the autotuner asks for them while the host prepares the CSR upload).
 */
export function diaDeviceSpecs(caps: GpuCaps): PipelineSpec[] {
  return [...diaBuildSpecs(), diaTiledKernel.pipelineSpec!(diaTiledKernel.defaults, caps)];
}
