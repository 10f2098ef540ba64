/**
 * Diagonal storage on the device, shared by the DIA and HM kernels: both become a list of
 * pieces (row block × range of diagonals), each with a *diagonal table* of four i32 per
 * diagonal — offset k = j − i, base b, local row range [lo, hi) — and a values array in which
 * the entry of local row t on that diagonal sits at `vals[b + t]`. DIA's padded layout and HM's
 * min(i, j)-indexed layout both have this form (stride 1 along a diagonal), so one shader
 * serves both and reads are coalesced: consecutive invocations read consecutive slots.
 *
 * Rows are split into blocks when the values exceed one binding, diagonals into ranges when the
 * table does; a piece that continues the diagonals of rows an earlier piece wrote accumulates
 * (beta = 1, dispatched after it). No atomics: invocation t of a piece alone writes y[row_base + t].
 * @module
 */

import type { CsrMatrix } from '@gpusparse/formats';
import { csrVectorsFit } from '../csr/csr-device';
import { bindingCapElems, type EllDeviceMatrix, encodeEll, type HostPiece, uploadPieces } from '../ell/ell-device';
import type { MatrixShape, SpmvKernel } from '../types';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, signature, type WgslBinding } from '../wgsl/index';

/** Bindings of the diagonal shader: table, values, x, y. */
export const DIAGONAL_BINDINGS: readonly WgslBinding[] = [
  { name: 'tab', type: 'array<i32>', access: 'r' },
  { name: 'vals', type: 'array<f32>', access: 'r' },
  { name: 'x', type: 'array<f32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
];

/**
 * The thread-per-row diagonal SpMV shader: invocation t loops over the piece's `count`
 * diagonals, y[row_base + t] = alpha·Σ_d vals[b_d + t]·x[row_base + t + k_d] + beta·y.
 * Cost per row: 4 table words (broadcast) + 2 loads per diagonal.
 * @example diagonalWgsl(256)
 */
export function diagonalWgsl(wg: number): string {
  return `${preamble(SPMV_UNIFORMS, DIAGONAL_BINDINGS)}
${SPMV_STORE}
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let t = wg_linear(wid, nwg) * ${wg}u + lid;
  if (t >= u.rows) { return; }
  let gi = i32(u.row_base + t);
  var s = 0.0;
  for (var d = 0u; d < u.count; d++) {
    let e = 4u * d;
    let lo = u32(tab[e + 2u]);
    let hi = u32(tab[e + 3u]);
    if (t >= lo && t < hi) { s = s + vals[u32(tab[e + 1u] + i32(t))] * x[u32(gi + tab[e])]; }
  }
  store_y(t, s);
}`;
}

/**
 * Where diagonal number `d` (offset `k`) keeps global row i of a matrix: slot `base(d) + i`.
 * DIA: d·rows; HM: starts[d] + min(k, 0).
 */
export interface DiagonalLayout {
  readonly rows: number;
  readonly cols: number;
  readonly offsets: Int32Array;
  /** Float32Array when the format stored float32 already: a one-piece upload sends it as is. */
  readonly values: Float64Array | Float32Array;
  /** Slot of global row 0 on diagonal d (may be negative: only rows with a column are read). */
  base(d: number): number;
}

/** Global rows [lo, hi) of diagonal k inside rows [r0, r1) of a rows × cols matrix. O(1). */
function rowRange(k: number, r0: number, r1: number, cols: number): [number, number] {
  return [Math.max(r0, -k), Math.min(r1, cols - k)];
}

/**
 * One piece of a diagonal matrix as planned from its offsets alone (no values): the diagonal
 * table the shader reads and where each diagonal of the piece keeps its values, so that the
 * host ({@link diagonalPieces}) and the device build (`dia-build.ts`) fill the same layout.
 */
export interface DiagonalPiecePlan {
  /** Local rows of the piece (the uniform `rows`) and its first global row. */
  readonly rows: number;
  readonly rowBase: number;
  /** Table entries (non-empty diagonals of the piece). */
  readonly count: number;
  readonly accumulate: boolean;
  /** 4 i32 per entry: offset k, base b, local row range [lo, hi); local row t at vals[b + t]. */
  readonly tab: Int32Array;
  /** Global index of the diagonal of each table entry. */
  readonly diags: Int32Array;
  /** Slots of the piece's values array. */
  readonly slots: number;
  /** True when the piece is the whole matrix stored as the layout has it (values not re-packed). */
  readonly whole: boolean;
}

/**
 * Plan the pieces of a diagonal layout (rows × cols, `offsets`, diagonal d's row 0 at slot
 * base(d), `slots` values in all) for bindings of `cap` elements: one piece holding the layout
 * as it is when everything fits; otherwise ranges of ⌊cap / 4⌋ (at most `maxCount`) diagonals ×
 * blocks of rows whose slots fit in `cap`, each re-packed (empty diagonals of a block dropped;
 * later diagonal ranges of a row block accumulate). `maxCount` bounds a piece's table for
 * kernels that stage it in workgroup memory. Cost: O(ndiag · pieces) host work, no values.
 * @example [...diagonalPlan(10, 10, Int32Array.of(-1, 0, 1), (d) => 10 * d, 30, 1 << 20)].length // 1
 */
export function* diagonalPlan(
  rows: number,
  cols: number,
  offsets: Int32Array,
  base: (d: number) => number,
  slots: number,
  cap: number,
  maxCount = Number.POSITIVE_INFINITY,
): Generator<DiagonalPiecePlan> {
  const nd = offsets.length;
  if (nd * 4 <= cap && nd <= maxCount && slots <= cap && rows <= cap) {
    const tab = new Int32Array(4 * nd);
    for (let d = 0; d < nd; d++) {
      const [lo, hi] = rowRange(offsets[d]!, 0, rows, cols);
      tab.set([offsets[d]!, base(d), lo, Math.max(lo, hi)], 4 * d);
    }
    yield { rows, rowBase: 0, count: nd, accumulate: false, tab, diags: Int32Array.from({ length: nd }, (_, d) => d), slots, whole: true };
    return;
  }
  const dRange = Math.max(1, Math.min(maxCount, Math.floor(cap / 4)));
  for (let d0 = 0; d0 < Math.max(nd, 1); d0 += dRange) {
    const d1 = Math.min(nd, d0 + dRange);
    const h = Math.max(1, Math.min(cap, Math.floor(cap / Math.max(1, d1 - d0))));
    for (let r0 = 0; r0 < rows; r0 += h) {
      const p = blockPlan(offsets, cols, d0, d1, r0, Math.min(rows, r0 + h));
      if (d0 > 0 && p.count === 0) continue; // nothing to add to rows already written
      yield p;
    }
  }
}

/** The plan of diagonals [d0, d1) × rows [r0, r1), values re-packed diagonal after diagonal. O(d1 − d0). */
function blockPlan(offsets: Int32Array, cols: number, d0: number, d1: number, r0: number, r1: number): DiagonalPiecePlan {
  const tab: number[] = [];
  const diags: number[] = [];
  let v = 0;
  for (let d = d0; d < d1; d++) {
    const k = offsets[d]!;
    const [lo, hi] = rowRange(k, r0, r1, cols);
    if (lo >= hi) continue;
    tab.push(k, v - (lo - r0), lo - r0, hi - r0);
    diags.push(d);
    v += hi - lo;
  }
  return { rows: r1 - r0, rowBase: r0, count: diags.length, accumulate: d0 > 0, tab: Int32Array.from(tab), diags: Int32Array.from(diags), slots: v, whole: false };
}

/**
 * The pieces of a diagonal matrix for bindings of `cap` elements ({@link diagonalPlan}) with
 * their values: the layout's own array for a whole piece, a re-packed float32 copy otherwise.
 * Cost: O(ndiag) when it fits, O(rows·ndiag) host copies when split.
 * @example [...diagonalPieces(layout, 1 << 20)].length // 1 for a small matrix
 */
export function* diagonalPieces(m: DiagonalLayout, cap: number, maxCount = Number.POSITIVE_INFINITY): Generator<HostPiece> {
  for (const p of diagonalPlan(m.rows, m.cols, m.offsets, (d) => m.base(d), m.values.length, cap, maxCount)) {
    if (p.whole) {
      yield { rows: p.rows, rowBase: p.rowBase, count: p.count, accumulate: p.accumulate, data: [p.tab, m.values] };
      continue;
    }
    const vals = new Float32Array(p.slots);
    for (let t = 0; t < p.count; t++) {
      // one block copy per diagonal (a memcpy from float32 values, a rounding copy from float64)
      const lo = p.tab[4 * t + 2]!;
      const src = m.base(p.diags[t]!) + p.rowBase + lo;
      vals.set(m.values.subarray(src, src + p.tab[4 * t + 3]! - lo), p.tab[4 * t + 1]! + lo);
    }
    yield { rows: p.rows, rowBase: p.rowBase, count: p.count, accumulate: p.accumulate, data: [p.tab, vals] };
  }
}

/** Parameters of the diagonal kernels (DIA, HM). */
export type DiagonalKernelParams = { workgroupSize: number; maxDiagonals: number };

/**
 * Refuse a diagonal matrix with more diagonals than `max` (the format's own limit: a thread
 * per row reads every diagonal, so past it diagonal storage is the wrong format). O(1).
 * @example diagonalCountFits(m.offsets.length, 1024, 'dia') // true or the reason
 */
export function diagonalCountFits(count: number, max: number, format: string): true | string {
  if (count > max) return `${format} matrix has ${count} occupied diagonals, more than maxDiagonals = ${max} (the ${format} format's limit): use a CSR or ELL kernel`;
  return true;
}

/** What distinguishes one diagonal kernel from another: its format and layout. */
export interface DiagonalKernelSpec<M extends MatrixShape & { nnz: number }> {
  readonly id: string;
  readonly format: string;
  readonly title: string;
  /** The format's default maxDiagonals (the kernel refuses past it). */
  readonly maxDiagonals: number;
  /** Number of stored diagonals of m. */
  count(m: M): number;
  /** Format parameters of the kernel's conversion besides maxDiagonals (DIA: float32 values). */
  readonly formatParams?: Readonly<Record<string, string | number>>;
  /** m as a {@link DiagonalLayout}, after checking its arrays (throws on bad input). */
  layout(m: M): DiagonalLayout;
}

/**
 * True, or why CSR `a` has too many diagonals for a diagonal format, counted from the CSR
 * columns and stopping at the first diagonal past `max`: a random matrix is refused after a few
 * rows instead of after a whole O(nnz) conversion (10 s at 3·10^7 entries). Cost O(rows + cols)
 * memory, O(entries read) time.
 * @example diagonalPrecheck(generators.uniformRandom(1e5, 1e5, 8), 1024, 'dia') // 'dia matrix has more than 1024 …'
 */
export function diagonalPrecheck(a: CsrMatrix, max: number, format: string): true | string {
  const seen = new Uint8Array(a.rows + a.cols);
  let count = 0;
  for (let i = 0; i < a.rows; i++) {
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const d = a.colIdx[k]! - i + a.rows; // diagonal offset, shifted to be ≥ 0
      if (seen[d]) continue;
      seen[d] = 1;
      if (++count > max) return `${format} matrix has more than ${max} occupied diagonals (found while reading row ${i}), the ${format} format's limit: use a CSR or ELL kernel`;
    }
  }
  return true;
}

/**
 * A thread-per-row diagonal SpMV kernel from a spec (used by DIA and HM). The format converts
 * with an unbounded maxDiagonals (2²⁸ slots stay the format's hard limit) so that `supports`
 * gives the refusal and its reason. Cost per apply: one dispatch per piece.
 * @example export const diaKernel = diagonalKernel({ id: 'dia', format: 'dia', ... });
 */
export function diagonalKernel<M extends MatrixShape & { nnz: number }>(spec: DiagonalKernelSpec<M>): SpmvKernel<M, DiagonalKernelParams, EllDeviceMatrix> {
  return {
    id: spec.id,
    format: spec.format,
    title: spec.title,
    params: {
      workgroupSize: { description: 'invocations (rows) per workgroup', values: [256, 64] },
      maxDiagonals: { description: `most diagonals accepted (the ${spec.format} format default)`, values: [spec.maxDiagonals] },
    },
    defaults: { workgroupSize: 256, maxDiagonals: spec.maxDiagonals },
    formatParams: () => ({ maxDiagonals: 2 ** 28, ...spec.formatParams }),
    precheck: (a, _limits, params) => diagonalPrecheck(a, params.maxDiagonals, spec.format),
    supports(m, limits, params) {
      const ok = diagonalCountFits(spec.count(m), params?.maxDiagonals ?? spec.maxDiagonals, spec.format);
      return ok === true ? csrVectorsFit(m, limits.maxStorageBufferBindingSize) : ok;
    },
    wgsl: (p) => diagonalWgsl(p.workgroupSize),
    // declared so that the tuner compiles it ahead of time (autotune/prewarm.ts)
    pipelineSpec(p, caps) {
      const text = this.wgsl(p, caps);
      return { key: text, label: `${spec.id}(wg=${p.workgroupSize})`, bindings: signature(DIAGONAL_BINDINGS), wgsl: () => text };
    },
    upload(ctx, m, params = {}, opts) {
      const p = { ...this.defaults, ...params };
      const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
      const pieces = diagonalPieces(spec.layout(m), bindingCapElems(ctx, opts));
      return uploadPieces(ctx, spec.id, m, pipe, pieces, p.workgroupSize);
    },
    encode: (ctx, h, x, y, scale) => encodeEll(ctx, h, x, y, scale),
  };
}
