/**
 * Sliced ELL-R with each row split over `parts` invocations and `unroll` slots in flight per
 * invocation (issue 20, CI Hamiltonians). Layout: the sliced ELL-R format (seed 001 §3.5),
 * column-major slots per slice, each row stopping at its length (padding never read).
 *
 * Why this shape for a determinant CI Hamiltonian in alpha-major order: consecutive rows share
 * the alpha string and have the same number of entries in each alpha block of columns, so the
 * k-th entries of a slice's consecutive rows lie in one alpha block (a few cache lines of x) or
 * at consecutive columns (alpha-only excitations). A warp of consecutive rows on the same slot
 * therefore gathers x from a handful of lines, where a CSR kernel's lanes on one row touch one
 * line per entry (H10: ~1 line per 72 columns) — on the H100 cuSPARSE reaches about one gathered
 * entry per SM cycle on H10, which is that limit. The thread-per-row sliced kernels were
 * latency-bound (one dependent col → x chain in flight, 1.4–1.9 ms on H10); here invocation
 * (part, row) walks the slots part, part + parts, … of its row and loads `unroll` column words
 * and values before their gathers, so parts·unroll chains per row are in flight. The parts'
 * partial sums meet in workgroup memory ({@link stridedSum}, fixed order: deterministic).
 *
 * `pack` 1 stores the columns as 16-bit offsets from a base per (slice, slot)
 * ({@link packedSlicedPieces}): 6 + 4/height bytes per entry instead of 8.
 *
 * Invocation lid works on row position lid % R of the workgroup's R = workgroupSize / parts
 * rows (consecutive invocations on consecutive rows: coalesced slot loads) and part lid / R.
 * No float atomics: one invocation stores each row; slot-range pieces accumulate with β = 1.
 * @module
 */
import { type SlicedEllRMatrix, validateSlicedEllR } from '@gpusparse/formats';
import type { CostTerms } from '../../autotune/cost-terms';
import type { SpmvKernel } from '../types';
import { signature, type WgslBinding } from '../wgsl/index';
import { spmvLanesHead, stridedSum } from '../wgsl/lanes';
import { bindingCapElems, type EllDeviceMatrix, encodeEll, uploadPieces } from './ell-device';
import { slicedBindings, slicedPieces, slicedSupports } from './sliced-device';
import { groupedSlicedPieces, interleavedSlicedPieces, packedSlicedPieces, packFits, packFitsCsr } from './sliced-split-device';

/** Parameters of {@link slicedSplitKernel}. */
export type SlicedSplitParams = { sliceHeight: number; parts: number; unroll: number; pack: number; interleave: number; workgroupSize: number };

const PARTS = [1, 2, 4, 8, 16, 32];
const UNROLL = [1, 2, 4, 8];
const BINDINGS = slicedBindings({ lengths: true, perm: false });
/** pack 1: cw (16-bit offsets), vals, sl (3 words per slice), rl, cb (bases), x, y. */
const PACKED_BINDINGS: readonly WgslBinding[] = [
  { name: 'cw', type: 'array<u32>', access: 'r' },
  { name: 'vals', type: 'array<f32>', access: 'r' },
  { name: 'sl', type: 'array<u32>', access: 'r' },
  { name: 'rl', type: 'array<u32>', access: 'r' },
  { name: 'cb', type: 'array<u32>', access: 'r' },
  { name: 'x', type: 'array<f32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
];

/** interleave 1 (pack 0): one array of (column, value bits) pairs, sl (2 words per slice), rl, x, y. */
const PAIR_BINDINGS: readonly WgslBinding[] = [
  { name: 'cv', type: 'array<vec2<u32>>', access: 'r' },
  { name: 'sl', type: 'array<u32>', access: 'r' },
  { name: 'rl', type: 'array<u32>', access: 'r' },
  { name: 'x', type: 'array<f32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
];

/** pack 1, interleave 1: groups of 4 slots as vec2 words (offsets, values 0–1, values 2–3), sl (2 words per slice), rl, cb (vec4 bases per group), x, y. */
const GROUPED_BINDINGS: readonly WgslBinding[] = [
  { name: 'cv', type: 'array<vec2<u32>>', access: 'r' },
  { name: 'sl', type: 'array<u32>', access: 'r' },
  { name: 'rl', type: 'array<u32>', access: 'r' },
  { name: 'cb', type: 'array<vec4<u32>>', access: 'r' },
  { name: 'x', type: 'array<f32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
];

/** The storage bindings of a (pack, interleave) layout. */
const layoutBindings = (pack: number, interleave: number): readonly WgslBinding[] =>
  interleave === 1 ? (pack === 1 ? GROUPED_BINDINGS : PAIR_BINDINGS) : pack === 1 ? PACKED_BINDINGS : BINDINGS;

/** The loads of group `g` (slot group of the row) into o, w, z (vec2 words) and b (vec4 bases), suffix `i`. */
const groupLoads = (i: string, g: string): string[] => [
  `let q${i} = off + (${g}) * 3u * stride + r;`,
  `let o${i} = cv[q${i}];`,
  `let w${i} = cv[q${i} + stride];`,
  `let z${i} = cv[q${i} + 2u * stride];`,
  `let b${i} = cb[gb + ${g}];`,
];

/** The 4 products of a loaded group, in slot order. */
const groupTerms = (i: string): string[] => [
  `bitcast<f32>(w${i}.x) * x[b${i}.x + (o${i}.x & 0xffffu)]`,
  `bitcast<f32>(w${i}.y) * x[b${i}.y + (o${i}.x >> 16u)]`,
  `bitcast<f32>(z${i}.x) * x[b${i}.z + (o${i}.y & 0xffffu)]`,
  `bitcast<f32>(z${i}.y) * x[b${i}.w + (o${i}.y >> 16u)]`,
];

/**
 * The grouped 16-bit layout's shader (pack 1, interleave 1): invocation part walks the row's
 * full groups of 4 slots part, part + parts, …, `unroll` groups per step (every load first, then
 * the 4·unroll gathers); the row's last, partial group (1–3 slots) is added by the one
 * invocation whose turn it is, masked by slot (padding never read).
 */
function groupedSplitWgsl(parts: number, unroll: number, wg: number): string {
  const R = wg / parts;
  const ix = Array.from({ length: unroll }, (_, i) => i);
  const t = groupTerms('');
  return `${spmvLanesHead(GROUPED_BINDINGS, { workgroupSize: wg, lanes: 1, subgroups: false })}
  let p = wg_linear(wid, nwg) * ${R}u + lid % ${R}u;
  let part = lid / ${R}u;
  var s = 0.0;
  if (p < u.rows) {
    let c = p / u.count;
    let r = p - c * u.count;
    let off = sl[2u * c];
    let gb = sl[2u * c + 1u];
    let stride = min(u.count, u.rows - c * u.count);
    let end = rl[p];
    let full = end / 4u;
    ${ix.map((i) => `var a${i} = 0.0;`).join(' ')}
    var j = part;
    for (; j + ${(unroll - 1) * parts}u < full; j += ${unroll * parts}u) {
      ${[...ix.flatMap((i) => groupLoads(`${i}`, i === 0 ? 'j' : `j + ${i * parts}u`)), ...ix.map((i) => `a${i} = a${i} + ((${groupTerms(`${i}`).join(' + ')}));`)].join('\n      ')}
    }
    for (; j < full; j += ${parts}u) {
      ${[...groupLoads('', 'j'), `a0 = a0 + ((${t.join(' + ')}));`].join('\n      ')}
    }
    if (full * 4u < end && full % ${parts}u == part) {
      ${groupLoads('', 'full').join('\n      ')}
      let n = end - full * 4u;
      a0 = a0 + ${t[0]};
      if (n > 1u) { a0 = a0 + ${t[1]}; }
      if (n > 2u) { a0 = a0 + ${t[2]}; }
    }
    s = ${pairwise(unroll)};
  }
  let t = part_sum(lid, s, lid % ${R}u);
  if (p < u.rows && lid < ${R}u) { store_y(p, t); }
}
${stridedSum('part', parts, wg)}`;
}



/** The column of slot `q` (slot number `k` of the row's slice): a u32 word, or base + 16-bit offset. */
const colText = (pack: number, q: string, k: string): string => (pack === 1 ? `cb[cbase + ${k}] + ((cw[${q} >> 1u] >> ((${q} & 1u) * 16u)) & 0xffffu)` : `col_idx[${q}]`);

/** Pairwise sum of the accumulators a0 … a(n−1), a fixed order. */
function pairwise(n: number): string {
  let t = Array.from({ length: n }, (_, i) => `a${i}`);
  while (t.length > 1) t = Array.from({ length: Math.ceil(t.length / 2) }, (_, i) => (t[2 * i + 1] ? `(${t[2 * i]} + ${t[2 * i + 1]})` : t[2 * i]!));
  return t[0]!;
}

/**
 * The shader for `parts` invocations per row, `unroll` slots per step, `wg` invocations.
 * @example slicedSplitWgsl(8, 4, 256)
 */
export function slicedSplitWgsl(parts: number, unroll: number, wg: number, pack = 0, interleave = 0): string {
  if (pack !== 0 && pack !== 1) throw new RangeError(`sliced-ell-split: pack expected 0 or 1, got ${pack}`);
  if (interleave !== 0 && interleave !== 1) throw new RangeError(`sliced-ell-split: interleave expected 0 or 1, got ${interleave}`);
  if (!PARTS.includes(parts) || wg % parts !== 0) throw new RangeError(`sliced-ell-split: parts expected one of ${PARTS.join(', ')} dividing ${wg}, got ${parts}`);
  if (!UNROLL.includes(unroll)) throw new RangeError(`sliced-ell-split: unroll expected one of ${UNROLL.join(', ')}, got ${unroll}`);
  if (interleave === 1 && pack === 1) return groupedSplitWgsl(parts, unroll, wg);
  const R = wg / parts;
  const ix = Array.from({ length: unroll }, (_, i) => i);
  const step = interleave === 1
    ? [...ix.map((i) => `let e${i} = cv[q + ${i * parts}u * stride];`), ...ix.map((i) => `a${i} = a${i} + bitcast<f32>(e${i}.y) * x[e${i}.x];`)].join('\n      ')
    : [
        ...ix.map((i) => `let q${i} = q + ${i * parts}u * stride;`),
        ...ix.map((i) => `let c${i} = ${colText(pack, `q${i}`, i === 0 ? 'k' : `k + ${i * parts}u`)};`),
        ...ix.map((i) => `let v${i} = vals[q${i}];`),
        ...ix.map((i) => `a${i} = a${i} + v${i} * x[c${i}];`),
      ].join('\n      ');
  const tail = interleave === 1 ? 'let e = cv[q];\n      a0 = a0 + bitcast<f32>(e.y) * x[e.x];' : `a0 = a0 + vals[q] * x[${colText(pack, 'q', 'k')}];`;
  return `${spmvLanesHead(layoutBindings(pack, interleave), { workgroupSize: wg, lanes: 1, subgroups: false })}
  let p = wg_linear(wid, nwg) * ${R}u + lid % ${R}u;
  let part = lid / ${R}u;
  var s = 0.0;
  if (p < u.rows) {
    let c = p / u.count;
    let r = p - c * u.count;
    let off = sl[${pack === 1 ? '3u' : '2u'} * c];${pack === 1 ? '\n    let cbase = sl[3u * c + 2u];' : ''}
    let stride = min(u.count, u.rows - c * u.count);
    let end = rl[p];
    ${ix.map((i) => `var a${i} = 0.0;`).join(' ')}
    var k = part;
    for (; k + ${(unroll - 1) * parts}u < end; k += ${unroll * parts}u) {
      let q = off + k * stride + r;
      ${step}
    }
    for (; k < end; k += ${parts}u) {
      let q = off + k * stride + r;
      ${tail}
    }
    s = ${pairwise(unroll)};
  }
  let t = part_sum(lid, s, lid % ${R}u);
  if (p < u.rows && lid < ${R}u) { store_y(p, t); }
}
${stridedSum('part', parts, wg)}`;
}

/**
 * What the autotuner's model needs of this kernel (`autotune/cost-terms.ts`): slots read
 * coalesced across a slice's rows (a stream over the padded-free sliced layout, one dispatch per
 * binding piece), predicted by analogy with the streaming kernels, hence the widest interval:
 * on the H100 it moved 45–49 % of the copy bandwidth on the H10 Hamiltonian but 30 % on the
 * CI-like generator (bench/RESULTS.md, issue 20), a gap no statistic of the profile predicts.
 */
export const SLICED_SPLIT_COST_TERMS: CostTerms = { lanes: { kind: 'stream' }, passes: 1, spread: 2 };

/**
 * Split-row sliced ELL-R SpMV. Cost per apply: one dispatch per piece; 8·nnz bytes of matrix
 * traffic + 4·rows (rl) + 8 per slice, plus the x gathers; host conversion O(slices·width).
 * @example const h = slicedSplitKernel.upload(ctx, slicedEllRFromCsr(a, { sliceHeight: 32 }), { parts: 8, unroll: 4 });
 */
export const slicedSplitKernel: SpmvKernel<SlicedEllRMatrix, SlicedSplitParams, EllDeviceMatrix> & { readonly costTerms: CostTerms } = {
  id: 'sliced-ell-split',
  format: 'sliced-ell-r',
  title: 'Sliced ELL-R, rows split over parts × unrolled slots, coalesced row map (CI Hamiltonians: x gathers shared by a slice’s rows)',
  params: {
    sliceHeight: { description: 'rows per slice (format parameter); the shader takes any height', values: [32, 16] },
    parts: { description: 'invocations per row (1, 2, 4, 8, 16 or 32, dividing the workgroup); each walks every parts-th slot (group of 4 slots in the grouped layout)', values: [8, 16] },
    unroll: { description: 'slots (groups) each invocation loads before their gathers (1, 2, 4, 8)', values: [2] },
    pack: { description: '0: u32 columns (8 bytes per entry); 1: 16-bit offsets from a base column per (slice, slot) (6 + 4/height bytes; each slot’s columns within 2^16 − 1, whole slices per binding)', values: [1] },
    interleave: {
      description:
        '0: columns and values in separate arrays; 1: one array per piece — pack 0: (column, value bits) pairs, one 8-byte load per entry; pack 1: groups of 4 slots, three 8-byte loads per 4 entries (16-bit offsets, 4 values) and a broadcast vec4 of bases',
      values: [1],
    },
    workgroupSize: { description: 'invocations per workgroup (workgroupSize / parts rows each: sliceHeight 16 with parts 16 keeps each slice in one workgroup)', values: [256] },
  },
  // the declared values are the tuner's grid: the H100 winners on the H10 Hamiltonian (first
  // wave of session 8: slice 32, parts 8, unroll 2, 16-bit offsets in groups of 4 slots 0.235–0.240
  // ms, cuSPARSE 0.247; slice 16 and parts 16 within 8 %); every other value the shader takes
  // (PARTS, UNROLL, pack 0, interleave 0) stays reachable by explicit parameters and bench --grid
  defaults: { sliceHeight: 32, parts: 8, unroll: 2, pack: 1, interleave: 1, workgroupSize: 256 },
  costTerms: SLICED_SPLIT_COST_TERMS,
  formatParams: (p) => ({ sliceHeight: p.sliceHeight }),
  // pack 1's 16-bit offsets decided on the CSR source, so that a tuner never converts (seconds at
  // 10^7 entries) only to be refused
  precheck: (a, _limits, p) => (p.pack === 1 ? packFitsCsr(a, p.sliceHeight) : true),
  supports(m, limits, p) {
    const ok = slicedSupports(m, m.sliceHeight, limits);
    if (ok !== true) return ok;
    return p?.pack === 1 ? packFits(m) : true;
  },
  wgsl: (p) => slicedSplitWgsl(p.parts, p.unroll, p.workgroupSize, p.pack, p.interleave),
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    validateSlicedEllR(m); // the shader reads without bounds checks of its own
    const text = this.wgsl(p, ctx.caps);
    const bindings = signature(layoutBindings(p.pack, p.interleave));
    const pipe = ctx.pipelines.get({ key: text, label: `${this.id}(parts=${p.parts},unroll=${p.unroll},pack=${p.pack},interleave=${p.interleave})`, bindings, wgsl: () => text });
    const cap = bindingCapElems(ctx, opts);
    const layout = { ...m, height: m.sliceHeight, padLast: false };
    const pieces = p.interleave === 1 ? (p.pack === 1 ? groupedSlicedPieces(m, cap) : interleavedSlicedPieces(m, cap)) : p.pack === 1 ? packedSlicedPieces(m, cap) : slicedPieces(layout, m.rowLength, null, cap);
    return uploadPieces(ctx, this.id, m, pipe, pieces, p.workgroupSize / p.parts);
  },
  encode: encodeEll,
};
