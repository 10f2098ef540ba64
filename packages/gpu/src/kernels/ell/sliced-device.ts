/**
 * The sliced ELL family on the device (sliced ELL, sliced ELL-R: seed 001 §3.4–3.5; SELL-C-σ:
 * survey §2.3.4): the host plan that cuts a matrix into pieces of whole slices (and a slice
 * wider than one binding into slot ranges), and the one shader all three kernels use.
 *
 * Every piece binds [col_idx, vals, sl, (rl), (perm)] then x, y, where `sl` holds two u32 per
 * slice of the piece: its first slot (relative to the piece) and its width. Uniform `count` is
 * the slice height; a slice's stride is the height, or (unpadded formats) the rows left for a
 * short last slice.
 * @module
 */
import type { GpuCaps, GpuLimits } from '../../device/context';
import { csrVectorsFit } from '../csr/csr-device';
import { useSubgroupPath } from '../csr/vector.kernel';
import type { WgslBinding } from '../wgsl/index';
import { spmvLanesHead, stridedSum } from '../wgsl/lanes';
import { clampLengths, type HostPiece, repackSlots } from './ell-device';

/** What the three sliced formats share (SELL's chunkPtr/chunkWidth are its slicePtr/sliceWidth). */
export interface SlicedLayout {
  readonly rows: number;
  /** Rows per slice (sliceHeight or C). */
  readonly height: number;
  /** The last slice is padded to `height` rows (SELL) or stored with its own row count (sliced ELL). */
  readonly padLast: boolean;
  readonly slicePtr: Int32Array;
  readonly sliceWidth: Int32Array;
  readonly colIdx: Int32Array;
  readonly values: Float64Array;
}

/** Shader variant of the sliced family. */
export interface SlicedShader {
  readonly workgroupSize: number;
  /** Invocations per row (power of two dividing the workgroup; 1 = thread per row). */
  readonly lanes: number;
  readonly padLast: boolean;
  /** Stop at rl[p] (the -R formats) instead of the slice width. */
  readonly lengths: boolean;
  /** Store through perm[p] (SELL with σ > 1) instead of row_base + p. */
  readonly perm: boolean;
  /**
   * Lane map when lanes > 1: false = a group of consecutive invocations per row (segmented
   * reduction); true = coalesced (invocation lid on position lid % R, slots lid / R + lanes·j,
   * R = workgroupSize / lanes; partials gathered from workgroup memory). Default false.
   */
  readonly coalesced?: boolean;
}

/** The storage bindings of a sliced shader variant. */
export function slicedBindings(v: Pick<SlicedShader, 'lengths' | 'perm'>): WgslBinding[] {
  const b: WgslBinding[] = [
    { name: 'col_idx', type: 'array<u32>', access: 'r' },
    { name: 'vals', type: 'array<f32>', access: 'r' },
    { name: 'sl', type: 'array<u32>', access: 'r' },
  ];
  if (v.lengths) b.push({ name: 'rl', type: 'array<u32>', access: 'r' });
  if (v.perm) b.push({ name: 'perm', type: 'array<u32>', access: 'r' });
  b.push({ name: 'x', type: 'array<f32>', access: 'r' }, { name: 'y', type: 'array<f32>', access: 'w' });
  return b;
}

/**
 * The sliced shader: `lanes` invocations per row position p (slice c = p / height, local row
 * r), strided over the slots k = l, l + lanes, … of slot address sl[2c] + k·stride + r, where
 * l is the invocation's lane; a reduction over the row's invocations (lane group: subgroup
 * shuffles when valid on `caps`, else workgroup memory; coalesced map: a strided gather from
 * workgroup memory) and one store per row. Returns the text (its own pipeline key).
 * @example slicedWgsl({ workgroupSize: 256, lanes: 1, padLast: false, lengths: false, perm: false }, caps)
 */
export function slicedWgsl(v: SlicedShader, caps: GpuCaps): string {
  const L = v.lanes;
  const wg = v.workgroupSize;
  if (!(Number.isInteger(Math.log2(L)) && L <= 32 && wg % L === 0)) throw new RangeError(`sliced ELL shader: lanes expected a power of two ≤ 32 dividing ${wg}, got ${L}`);
  const stride = v.padLast ? 'u.count' : 'min(u.count, u.rows - c * u.count)';
  const co = v.coalesced === true && L > 1;
  const R = wg / L;
  // coalesced: the head's lane/row (lanes 1) are replaced by position p = group·R + lid % R
  const head = spmvLanesHead(slicedBindings(v), { workgroupSize: wg, lanes: co ? 1 : L, subgroups: !co && useSubgroupPath(L, caps) });
  const [p, first, total, store] = co
    ? [`wg_linear(wid, nwg) * ${R}u + lid % ${R}u`, `lid / ${R}u`, `part_sum(lid, s, lid % ${R}u)`, `lid < ${R}u`]
    : ['row', 'lane', 'red_seg(lid, s)', 'lane == 0u'];
  return `${head}
  let p = ${p};
  var s = 0.0;
  if (p < u.rows) {
    let c = p / u.count;
    let r = p - c * u.count;
    let off = sl[2u * c];
    let stride = ${stride};
    let end = ${v.lengths ? 'rl[p]' : 'sl[2u * c + 1u]'};
    for (var k = ${first}; k < end; k += ${L}u) {
      let q = off + k * stride + r;
      s = s + vals[q] * x[col_idx[q]];
    }
  }
  let t = ${total};
  if (p < u.rows && ${store}) { store_y(${v.perm ? 'perm[p]' : 'p'}, t); }
}${co ? `\n${stridedSum('part', L, wg)}` : ''}`;
}

/**
 * `supports` of the sliced kernels: x and y fit a binding, and so do the rows of one slice
 * (a slice is split by slot ranges, never by rows). O(1).
 * @example slicedSupports(m, m.sliceHeight, ctx.limits) // true
 */
export function slicedSupports(m: { rows: number; cols: number }, height: number, limits: GpuLimits): true | string {
  if (height * 4 > limits.maxStorageBufferBindingSize) return `slice height ${height} exceeds one binding (${limits.maxStorageBufferBindingSize} bytes) of row data`;
  return csrVectorsFit(m, limits.maxStorageBufferBindingSize);
}

/**
 * Pieces of a sliced matrix for bindings of `cap` elements: runs of whole slices whose slots,
 * rows and slice table fit; a slice with more than `cap` slots alone, in slot ranges of
 * ⌊cap / stride⌋ (later ranges accumulate; rl clamped to each range). `rowLength` and `perm`
 * are indexed by row position. Cost: O(slices) to plan, O(slots) host copies only when a
 * slice is re-packed. Throws RangeError when one slice's rows exceed a binding.
 * @example [...slicedPieces(layout, null, null, 1 << 25)].length // 1 when the matrix fits
 */
export function* slicedPieces(m: SlicedLayout, rowLength: Int32Array | null, perm: Int32Array | null, cap: number): Generator<HostPiece> {
  const H = m.height;
  const ns = m.sliceWidth.length;
  const count = (s: number) => Math.min(H, m.rows - s * H);
  const stride = (s: number) => (m.padLast ? H : count(s));
  const cost = (s: number) => stride(s) * m.sliceWidth[s]!;
  if (ns > 0 && (H > cap || cap < 2)) throw new RangeError(`sliced ELL upload: slice height ${H} expected at most ${cap} rows (one binding); lower the slice height or raise maxBindingBytes`);
  const rowArrays = (p0: number, n: number, k0: number, kk: number) => [
    ...(rowLength ? [clampLengths(rowLength, p0, n, k0, kk)] : []),
    ...(perm ? [perm.subarray(p0, p0 + n)] : []),
  ];
  let s = 0;
  while (s < ns) {
    const p0 = s * H;
    if (cost(s) > cap) {
      const st = stride(s);
      const w = m.sliceWidth[s]!;
      const step = Math.floor(cap / st);
      for (let k0 = 0; k0 < w; k0 += step) {
        const kk = Math.min(step, w - k0);
        const t = repackSlots(m.colIdx, m.values, m.slicePtr[s]!, st, 0, st, k0, kk);
        const n = count(s);
        yield { rows: n, rowBase: perm ? 0 : p0, count: m.padLast ? H : n, accumulate: k0 > 0, data: [t.col, t.val, Uint32Array.of(0, kk), ...rowArrays(p0, n, k0, kk)] };
      }
      s++;
      continue;
    }
    let s1 = s;
    let slots = 0;
    while (s1 < ns && slots + cost(s1) <= cap && Math.min((s1 + 1) * H, m.rows) - p0 <= cap && 2 * (s1 + 1 - s) <= cap) slots += cost(s1++);
    const base = m.slicePtr[s]!;
    const sl = new Uint32Array(2 * (s1 - s));
    for (let q = s; q < s1; q++) {
      sl[2 * (q - s)] = m.slicePtr[q]! - base;
      sl[2 * (q - s) + 1] = m.sliceWidth[q]!;
    }
    const n = Math.min(s1 * H, m.rows) - p0;
    const end = m.slicePtr[s1]!;
    yield { rows: n, rowBase: perm ? 0 : p0, count: H, accumulate: false, data: [m.colIdx.subarray(base, end), m.values.subarray(base, end), sl, ...rowArrays(p0, n, 0, Number.MAX_SAFE_INTEGER)] };
    s = s1;
  }
}
