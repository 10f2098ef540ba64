/**
 * CSR streaming kernel (issue 20): cuSPARSE's access pattern — `lanes` invocations per row, each
 * lane reading single entries k, k + lanes, … so one load instruction of the lane group covers
 * consecutive values and columns (coalesced 4-byte words, and the x gathers of one instruction
 * hit consecutive entries of a sorted row: fewest cache lines) — with csr-long's memory-level
 * parallelism: each lane loads `unroll` independent entries per step before their gathers, and
 * with `prefetch` 1 it issues the next step's column and value loads before this step's gathers,
 * so the column-load → x-gather chain of one step overlaps the loads of the next.
 *
 * Why: on the H100 csr-long (quad-padded, vec4 values) moved 29 % of copy bandwidth on the
 * CI-like matrix and cuSPARSE's plain CSR 1.7 TB/s (≈ 58 %); csr-vector (the same pattern, one
 * entry in flight) was 2.2× slower than csr-long. This kernel tests whether the loss was the
 * quad layout or the loads in flight. Answer (H100, session 10): neither — it moved 37–42 % of
 * copy on CI rows (pack 1: 26–33 %), below csr-long and sliced-ell-split, while cuSPARSE moved 72–75 %;
 * the prefetch cost 4–12 %. Session 11 showed those rounds ran at a low SM clock: at 1 980 MHz this
 * kernel (lanes 32, unroll 4, no prefetch) moves 85–88 % of copy, 1.14–1.15× cuSPARSE on CI-like
 * and H10, within 3 % of its CUDA twin (bench/spmv_cuda_twin.py). It reads the plain CSR arrays (shared upload, no
 * conversion: the tuner pays nothing to try it) and, with lanes < the subgroup size, puts several
 * rows on one subgroup (short uniform rows). `pack` 1 reads csr-long's 6-byte quad arrays (16-bit
 * column offsets) in the same pattern, two entries per slot: the bytes of csr-long with the
 * access pattern of cuSPARSE.
 *
 * No float atomics: a row's partial sums are combined by a fixed-order tree of the `unroll`
 * accumulators, then the lane group's segmented sum; one invocation stores y[r].
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { CostTerms } from '../../autotune/cost-terms';
import type { GpuCaps } from '../../device/context';
import { CSR_BINDINGS, type CsrDeviceMatrix, csrVectorsFit, encodeCsr, uploadLanesCsr } from '../csr/csr-device';
import { useSubgroupPath } from '../csr/vector.kernel';
import { encodeQuad, QUAD_MASK, type QuadDeviceMatrix, quadBindings, quadPrecheck, uploadQuad } from '../csr4/quad-device';
import type { SpmvKernel } from '../types';
import { signature, type WgslBinding } from '../wgsl/index';
import { pairwiseSum, spmvLanesHead } from '../wgsl/lanes';

/** Parameters of {@link csrStreamKernel}. */
export type CsrStreamParams = { lanes: number; unroll: number; prefetch: number; pack: number; index: number; workgroupSize: number };

const LANES = [1, 2, 4, 8, 16, 32, 64, 128, 256];
const UNROLL = [1, 2, 4, 8];

const ids = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
/** Slot index i of a step starting at `k` (slot i is k + i·lanes); `t` the literal suffix of the index type (u32 'u', i32 'i'). */
const at = (k: string, i: number, lanes: number, t = 'u'): string => (i === 0 ? k : `${k} + ${i * lanes}${t}`);

/**
 * How one slot is read. pack 0: a CSR entry (u32 column, f32 value). pack 1: a pair of entries of
 * csr-long's quad arrays read two entries at a time (one u32 of two 16-bit column offsets from the
 * row base `b`, one vec2<f32> of values: 6 bytes per entry).
 */
interface Slot {
  readonly bindings: readonly WgslBinding[];
  readonly cols: string;
  readonly vals: string;
  /** The zero of a value slot and of an accumulator. */
  readonly zero: string;
  /** Literal suffix of the entry index `k` ('u': u32; 'i': i32, the `index` 1 variant of pack 0). */
  readonly t: string;
  gather(i: number): string;
}
const CSR_SLOT: Slot = { bindings: CSR_BINDINGS, cols: 'col_idx', vals: 'vals', zero: '0.0', t: 'u', gather: (i) => `let x${i} = x[c${i}];` };
/**
 * pack 0 with signed indices (`index` 1): the entry index and the gather index are i32. Session 11
 * (issue 20) asks whether the driver strength-reduces i32 addressing (no wrap to preserve) better
 * than u32 on the H100; the loads and the order are those of {@link CSR_SLOT}.
 */
const CSR_SLOT_I32: Slot = { ...CSR_SLOT, t: 'i', gather: (i) => `let x${i} = x[i32(c${i})];` };
const PAIR_SLOT: Slot = {
  bindings: quadBindings(1).map((b) => (b.name === 'vals' ? { ...b, type: 'array<vec2<f32>>' } : b.name === 'cols' ? { ...b, type: 'array<u32>' } : b)),
  cols: 'cols',
  vals: 'vals',
  zero: 'vec2<f32>(0.0)',
  t: 'u',
  gather: (i) => `let x${i} = vec2<f32>(x[b + (c${i} & 0xffffu)], x[b + (c${i} >> 16u)]);`,
};

/** The unrolled loop without prefetch: n column loads, n value loads, n gathers, n FMAs per step. */
function plainLoop(m: Slot, n: number, lanes: number): string {
  const ix = ids(n);
  return `for (; k + ${(n - 1) * lanes}${m.t} < end; k += ${n * lanes}${m.t}) {
      ${ix.map((i) => `let c${i} = ${m.cols}[${at('k', i, lanes, m.t)}];`).join(' ')}
      ${ix.map((i) => `let v${i} = ${m.vals}[${at('k', i, lanes, m.t)}];`).join(' ')}
      ${ix.map((i) => m.gather(i)).join(' ')}
      ${ix.map((i) => `a${i} = fma(v${i}, x${i}, a${i});`).join(' ')}
    }`;
}

/**
 * The unrolled loop with prefetch: the first step's columns and values are loaded before the
 * loop; each step loads the next step's (when there is one) before gathering its own x.
 */
function prefetchLoop(m: Slot, n: number, lanes: number): string {
  const ix = ids(n);
  const span = (n - 1) * lanes;
  const load = (c: string, v: string, k: string) => ix.map((i) => `${c}${i} = ${m.cols}[${at(k, i, lanes, m.t)}]; ${v}${i} = ${m.vals}[${at(k, i, lanes, m.t)}];`).join(' ');
  return `var full = k + ${span}${m.t} < end;
    ${ix.map((i) => `var c${i} = 0u; var v${i} = ${m.zero};`).join(' ')}
    if (full) { ${load('c', 'v', 'k')} }
    while (full) {
      let kn = k + ${n * lanes}${m.t};
      let more = kn + ${span}${m.t} < end;
      ${ix.map((i) => `var cn${i} = 0u; var vn${i} = ${m.zero};`).join(' ')}
      if (more) { ${load('cn', 'vn', 'kn')} }
      ${ix.map((i) => m.gather(i)).join(' ')}
      ${ix.map((i) => `a${i} = fma(v${i}, x${i}, a${i});`).join(' ')}
      ${ix.map((i) => `c${i} = cn${i}; v${i} = vn${i};`).join(' ')}
      k = kn;
      full = more;
    }`;
}

/**
 * The row's slot range (`k` the lane's first slot, `end` past the last whole slot) and its tail,
 * run after the loops with `a0`. pack 0: entries [row_ptr[r], row_ptr[r+1]), single-entry tail
 * steps. pack 1: the row's quads [q0, q1) are pairs [2·q0, 2·q1); the last quad holds e >> 30
 * pads, so the real entries end at 4·q1 − pads: the whole pairs run in the loops, and an odd last
 * entry (a pair whose high half is a pad) is added alone by the one lane whose stride lands on it
 * — a pad never enters a product (0·Inf would be NaN).
 */
function rowRange(pack: number, lanes: number, index = 0): { head: string; tail: string } {
  if (pack === 0 && index === 1) {
    return {
      head: `let end = i32(row_ptr[row + 1u]);
    var k = i32(row_ptr[row] + lane);`,
      tail: `for (; k < end; k += ${lanes}i) { a0 = a0 + vals[k] * x[i32(col_idx[k])]; }`,
    };
  }
  if (pack === 0) {
    return {
      head: `let end = row_ptr[row + 1u];
    var k = row_ptr[row] + lane;`,
      tail: `for (; k < end; k += ${lanes}u) { a0 = a0 + vals[k] * x[col_idx[k]]; }`,
    };
  }
  return {
    head: `let q0 = rowq[row] & ${QUAD_MASK}u;
    let e = rowq[row + 1u];
    let stop = 4u * (e & ${QUAD_MASK}u) - (e >> 30u);
    let end = stop >> 1u;
    let b = rbase[row];
    var k = 2u * q0 + lane;`,
    tail: `for (; k < end; k += ${lanes}u) { let c = cols[k]; a0 = a0 + vals[k] * vec2<f32>(x[b + (c & 0xffffu)], x[b + (c >> 16u)]); }
    if ((stop & 1u) == 1u && k == end) { a0.x = a0.x + vals[k].x * x[b + (cols[k] & 0xffffu)]; }`,
  };
}

/** WGSL of the kernel for `p` on a device with `caps`. */
function streamWgsl(p: CsrStreamParams, caps: GpuCaps): string {
  const { lanes, unroll: n, workgroupSize: wg } = p;
  const m = p.pack === 1 ? PAIR_SLOT : p.index === 1 ? CSR_SLOT_I32 : CSR_SLOT;
  const accs = ids(n).map((i) => `a${i}`);
  const range = rowRange(p.pack, lanes, p.index);
  const sum = pairwiseSum(accs);
  return `${spmvLanesHead(m.bindings, { workgroupSize: wg, lanes, subgroups: useSubgroupPath(lanes, caps) })}
  var s = 0.0;
  if (row < u.rows) {
    ${range.head}
    ${accs.map((a) => `var ${a} = ${m.zero};`).join(' ')}
    ${p.prefetch === 1 && n > 1 ? prefetchLoop(m, n, lanes) : plainLoop(m, n, lanes)}
    ${range.tail}
    ${p.pack === 1 ? `let acc = ${sum};
    s = acc.x + acc.y;` : `s = ${sum};`}
  }
  let t = red_seg(lid, s);
  if (row < u.rows && lane == 0u) { store_y(row, t); }
}`;
}

/**
 * What the autotuner's cost model needs of csr-stream: `lanes` invocations per row like
 * csr-vector (the calibration's lanes-per-row rate), one dispatch per binding block, the interval
 * of a kernel predicted by analogy until H100 timings calibrate it.
 */
export const CSR_STREAM_COST_TERMS: CostTerms = { lanes: { kind: 'lanes', param: 'lanes' }, passes: 1, spread: 1.6 };

/** The device matrix of either packing: the shared CSR arrays (pack 0) or csr-long's quad arrays (pack 1). */
export type StreamDeviceMatrix = CsrDeviceMatrix | QuadDeviceMatrix;

/**
 * Streaming CSR SpMV: lanes per row, `unroll` single entries (pack 1: pairs) in flight per lane,
 * optional prefetch of the next step. Cost per apply: one dispatch per binding block; pack 0: 8
 * bytes per entry + 4 per row, no upload conversion (the shared CSR arrays); pack 1: 6 bytes per
 * padded entry + 8 per row (≤ 3 pads per row), the quad arrays packed on the host at upload
 * O(rows + nnz); plus the x gathers.
 * @example const h = csrStreamKernel.upload(ctx, a, { lanes: 32, unroll: 4, prefetch: 1, pack: 1 });
 */
export const csrStreamKernel: SpmvKernel<CsrMatrix, CsrStreamParams, StreamDeviceMatrix> & { readonly costTerms: CostTerms } = {
  id: 'csr-stream',
  costTerms: CSR_STREAM_COST_TERMS,
  format: 'csr',
  title: 'CSR streaming: lanes per row reading single coalesced entries (or 16-bit column pairs), `unroll` in flight per lane, optional prefetch of the next step’s columns and values',
  params: {
    lanes: { description: 'invocations per row (1..256, a power of two; below the subgroup size several rows share a subgroup; 256 = the whole workgroup on one row)', values: [32, 4, 256] },
    unroll: { description: 'entries (pack 1: pairs) each invocation loads per step before their gathers (1, 2, 4, 8; separate accumulators)', values: [4, 1, 8] },
    prefetch: { description: '0: no prefetch (the default: the prefetch cost 4–12 % on the H100, session 10); 1: load the next step’s columns and values before this step’s x gathers (needs unroll ≥ 2)', values: [0, 1] },
    pack: {
      description: '0: the CSR arrays (u32 columns, 8 bytes per entry, shared with the other CSR kernels); 1: csr-long’s quad arrays read as pairs of 16-bit column offsets from each row’s smallest column and vec2 values (6 bytes per entry; rows spanning < 65 536 columns)',
      values: [0, 1],
    },
    index: {
      description: '0: u32 entry and gather indices; 1: i32 (pack 0 only; the same loads in the same order — a code-generation experiment, session 11)',
      values: [0, 1],
    },
    workgroupSize: { description: 'invocations per workgroup (64, 128 or 256; lanes must divide it)', values: [256, 128, 64] },
  },
  defaults: { lanes: 32, unroll: 4, prefetch: 0, pack: 0, index: 0, workgroupSize: 256 },
  supports: (m, limits) => csrVectorsFit(m, limits.maxStorageBufferBindingSize),
  precheck: (a, limits, p) => (p.pack === 1 ? quadPrecheck(a, limits, 1) : csrVectorsFit(a, limits.maxStorageBufferBindingSize)),
  wgsl(p, caps) {
    if (!LANES.includes(p.lanes) || p.workgroupSize % p.lanes !== 0) throw new RangeError(`csr-stream: lanes expected one of ${LANES.join(', ')} dividing ${p.workgroupSize}, got ${p.lanes}`);
    if (!UNROLL.includes(p.unroll)) throw new RangeError(`csr-stream: unroll expected one of ${UNROLL.join(', ')}, got ${p.unroll}`);
    if (p.prefetch !== 0 && p.prefetch !== 1) throw new RangeError(`csr-stream: prefetch expected 0 or 1, got ${p.prefetch}`);
    if (p.pack !== 0 && p.pack !== 1) throw new RangeError(`csr-stream: pack expected 0 or 1, got ${p.pack}`);
    if (p.index !== 0 && !(p.index === 1 && p.pack === 0)) throw new RangeError(`csr-stream: index expected 0, or 1 with pack 0, got index ${p.index} with pack ${p.pack}`);
    if (![64, 128, 256].includes(p.workgroupSize)) throw new RangeError(`csr-stream: workgroupSize expected 64, 128 or 256, got ${p.workgroupSize}`);
    return streamWgsl(p, caps);
  },
  pipelineSpec(p, caps) {
    const text = this.wgsl(p, caps);
    const mode = useSubgroupPath(p.lanes, caps) ? 'subgroup' : 'wgmem';
    const label = `${this.id}(lanes=${p.lanes},unroll=${p.unroll},prefetch=${p.prefetch},pack=${p.pack},index=${p.index},wg=${p.workgroupSize},${mode})`;
    return { key: text, label, bindings: signature(p.pack === 1 ? PAIR_SLOT.bindings : CSR_BINDINGS), wgsl: () => text };
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    if (p.pack === 0) return uploadLanesCsr(ctx, this.id, m, pipe, p.lanes, p.workgroupSize, opts);
    const rowsPerGroup = p.workgroupSize / p.lanes;
    return uploadQuad(ctx, this.id, m, 1, pipe, (rows) => Math.ceil(rows / rowsPerGroup), opts);
  },
  encode: (ctx, h, x, y, scale) => ('quadBlocks' in h ? encodeQuad(ctx, h, x, y, scale) : encodeCsr(ctx, h, x, y, scale)),
};
