/**
 * The 16-bit column layout of sliced-ell-split (`pack` 1, issue 20): in a determinant CI
 * Hamiltonian the k-th entries of a slice's rows lie in one alpha block or at consecutive
 * columns, so each (slice, slot) stores one u32 base column (the smallest column of the slot)
 * and every entry a 16-bit offset from it: 6 + 4/height bytes per entry instead of 8. The values,
 * rl[] and the slot order are the sliced ELL-R format's; only the column words change.
 *
 * Piece data, in binding order: cw (two 16-bit offsets per u32, slot q in half q mod 2 of word
 * ⌊q/2⌋, q relative to the piece), vals, sl (three u32 per slice: first slot, width, first base),
 * rl, cb (the bases). Pieces are runs of whole slices that fit one binding each, or slot ranges
 * of one slice wider than a binding (accumulating, like the pack 0 pieces).
 * @module
 */
import type { SlicedEllRMatrix } from '@gpusparse/formats';
import { clampLengths, type HostPiece, type PieceArray } from './ell-device';
import { slicedPieces } from './sliced-device';

/** Largest column offset a 16-bit word holds. */
const MAX_OFFSET = 0xffff;

/** Slots [k0, k1) of slice s: a whole slice (0, width) or one slot range of a wide slice. */
interface SlotRun {
  readonly s: number;
  readonly k0: number;
  readonly k1: number;
}

/**
 * The bases and packed offsets of consecutive `runs` of `m` (slot q of the result counted from
 * the first run's first slot). Throws RangeError naming the slice, slot and row when a slot's
 * columns span more than 2^16 − 1 (use pack 0 there). O(slots of the runs).
 */
function packRuns(m: SlicedEllRMatrix, runs: readonly SlotRun[]): { cw: Uint32Array; sl: Uint32Array; cb: Uint32Array } {
  const H = m.sliceHeight;
  const h = (s: number) => Math.min(H, m.rows - s * H);
  const first = m.slicePtr[runs[0]!.s]! + runs[0]!.k0 * h(runs[0]!.s);
  const last = runs[runs.length - 1]!;
  const cw = new Uint32Array(Math.ceil((m.slicePtr[last.s]! + last.k1 * h(last.s) - first) / 2));
  const sl = new Uint32Array(3 * runs.length);
  const cb = new Uint32Array(runs.reduce((n, r) => n + r.k1 - r.k0, 0));
  let b = 0;
  runs.forEach(({ s, k0, k1 }, i) => {
    const hs = h(s);
    sl.set([m.slicePtr[s]! + k0 * hs - first, k1 - k0, b], 3 * i);
    for (let k = k0; k < k1; k++, b++) {
      let lo = Number.POSITIVE_INFINITY;
      for (let r = 0; r < hs; r++) if (k < m.rowLength[s * H + r]!) lo = Math.min(lo, m.colIdx[m.slicePtr[s]! + k * hs + r]!);
      cb[b] = Number.isFinite(lo) ? lo : 0;
      for (let r = 0; r < hs; r++) {
        if (k >= m.rowLength[s * H + r]!) continue; // padding: never read
        const d = m.colIdx[m.slicePtr[s]! + k * hs + r]! - cb[b]!;
        if (d > MAX_OFFSET) throw new RangeError(`sliced-ell-split pack 1: slot ${k} of slice ${s} spans more than ${MAX_OFFSET} columns (row ${s * H + r}, column ${cb[b]! + d}, base ${cb[b]}): use pack 0`);
        const q = m.slicePtr[s]! + k * hs + r - first;
        cw[q >> 1] = (cw[q >> 1] ?? 0) | (d << (16 * (q & 1)));
      }
    }
  });
  return { cw, sl, cb };
}

/**
 * True, or why `m` cannot take 16-bit column offsets: the first (slice, slot) whose stored
 * columns span more than 2^16 − 1. O(slots), no allocation.
 * @example packFits(slicedEllRFromCsr(a, { sliceHeight: 32 })) // true for an alpha-major CI Hamiltonian
 */
export function packFits(m: SlicedEllRMatrix): true | string {
  const H = m.sliceHeight;
  for (let s = 0; s < m.sliceWidth.length; s++) {
    const h = Math.min(H, m.rows - s * H);
    for (let k = 0; k < m.sliceWidth[s]!; k++) {
      let lo = Number.POSITIVE_INFINITY;
      let hi = Number.NEGATIVE_INFINITY;
      for (let r = 0; r < h; r++) {
        if (k >= m.rowLength[s * H + r]!) continue;
        const c = m.colIdx[m.slicePtr[s]! + k * h + r]!;
        lo = Math.min(lo, c);
        hi = Math.max(hi, c);
      }
      if (hi - lo > MAX_OFFSET) return `sliced-ell-split pack 1: slot ${k} of slice ${s} spans columns ${lo}…${hi}, more than ${MAX_OFFSET} apart: use pack 0`;
    }
  }
  return true;
}

/**
 * {@link packFits} decided from the CSR source before any conversion (the autotuner's precheck):
 * slot k of a slice holds the k-th stored entry of each of its rows, so the span of every
 * (slice, slot) is the spread of the k-th columns of `height` consecutive rows. True, or the
 * first slot that spans more than 2^16 − 1 columns. O(nnz), one array of the longest row's length.
 * @example packFitsCsr(a, 32) // true for an alpha-major CI Hamiltonian of fewer than 65 536 columns
 */
export function packFitsCsr(a: { rows: number; rowPtr: ArrayLike<number>; colIdx: ArrayLike<number> }, height: number): true | string {
  let longest = 0;
  for (let r = 0; r < a.rows; r++) longest = Math.max(longest, a.rowPtr[r + 1]! - a.rowPtr[r]!);
  const lo = new Float64Array(longest);
  const hi = new Float64Array(longest);
  for (let s0 = 0; s0 < a.rows; s0 += height) {
    const s1 = Math.min(a.rows, s0 + height);
    let width = 0;
    for (let r = s0; r < s1; r++) width = Math.max(width, a.rowPtr[r + 1]! - a.rowPtr[r]!);
    lo.fill(Number.POSITIVE_INFINITY, 0, width);
    hi.fill(Number.NEGATIVE_INFINITY, 0, width);
    for (let r = s0; r < s1; r++) {
      const start = a.rowPtr[r]!;
      for (let k = 0; k < a.rowPtr[r + 1]! - start; k++) {
        const c = a.colIdx[start + k]!;
        if (c < lo[k]!) lo[k] = c;
        if (c > hi[k]!) hi[k] = c;
      }
    }
    for (let k = 0; k < width; k++) {
      if (hi[k]! - lo[k]! > MAX_OFFSET) return `sliced-ell-split pack 1: slot ${k} of slice ${s0 / height} spans columns ${lo[k]}…${hi[k]}, more than ${MAX_OFFSET} apart: use pack 0`;
    }
  }
  return true;
}

/**
 * Pieces of `m` with 16-bit column offsets for bindings of `cap` elements: runs of whole slices
 * whose slots, rows and tables fit; a slice with more slots than `cap` alone, in slot ranges of
 * ⌊cap / rows of the slice⌋ (later ranges accumulate, rl clamped to each range), as pack 0 does.
 * Cost O(slots) host work, arrays of 6 bytes per slot.
 * @example [...packedSlicedPieces(slicedEllRFromCsr(a, { sliceHeight: 32 }), 1 << 28)].length // 1
 */
export function* packedSlicedPieces(m: SlicedEllRMatrix, cap: number): Generator<HostPiece> {
  const H = m.sliceHeight;
  const ns = m.sliceWidth.length;
  if (ns > 0 && (H > cap || cap < 3)) throw new RangeError(`sliced-ell-split pack 1: slice height ${H} expected at most ${cap} rows (one binding); lower the slice height or raise maxBindingBytes`);
  const slots = (s: number) => m.slicePtr[s + 1]! - m.slicePtr[s]!;
  const piece = (runs: SlotRun[], rowLength: Int32Array | Uint32Array, accumulate: boolean): HostPiece => {
    const { cw, sl, cb } = packRuns(m, runs);
    const r0 = runs[0]!.s * H;
    const r1 = Math.min(m.rows, (runs[runs.length - 1]!.s + 1) * H);
    const h0 = Math.min(H, m.rows - r0);
    const v0 = m.slicePtr[runs[0]!.s]! + runs[0]!.k0 * h0;
    const last = runs[runs.length - 1]!;
    const v1 = m.slicePtr[last.s]! + last.k1 * Math.min(H, m.rows - last.s * H);
    return { rows: r1 - r0, rowBase: r0, count: H, accumulate, data: [cw, m.values.subarray(v0, v1), sl, rowLength, cb] };
  };
  let s0 = 0;
  while (s0 < ns) {
    const h = Math.min(H, m.rows - s0 * H);
    if (slots(s0) > cap) {
      const step = Math.floor(cap / h);
      for (let k0 = 0; k0 < m.sliceWidth[s0]!; k0 += step) {
        const kk = Math.min(step, m.sliceWidth[s0]! - k0);
        yield piece([{ s: s0, k0, k1: k0 + kk }], clampLengths(m.rowLength, s0 * H, h, k0, kk), k0 > 0);
      }
      s0++;
      continue;
    }
    let s1 = s0 + 1;
    while (s1 < ns && m.slicePtr[s1 + 1]! - m.slicePtr[s0]! <= cap && (s1 + 1 - s0) * H <= cap && 3 * (s1 + 1 - s0) <= cap) s1++;
    const runs = Array.from({ length: s1 - s0 }, (_, i) => ({ s: s0 + i, k0: 0, k1: m.sliceWidth[s0 + i]! }));
    yield piece(runs, m.rowLength.subarray(s0 * H, Math.min(m.rows, s1 * H)), false);
    s0 = s1;
  }
}

/**
 * The column word and value bits of each entry side by side (`interleave` 1, pack 0): entry q at
 * words 2q (column) and 2q + 1 (the f32 value's bits), read as one vec2<u32>. Padding slots keep
 * their stored column (never read: rows stop at rl). O(entries) host work.
 */
function pairWords(col: PieceArray, val: PieceArray): Uint32Array {
  const w = new Uint32Array(2 * col.length);
  const f = new Float32Array(w.buffer);
  for (let i = 0; i < col.length; i++) {
    w[2 * i] = col[i]!;
    f[2 * i + 1] = val[i]!;
  }
  return w;
}

/**
 * Pieces of `m` for `interleave` 1 with u32 columns: the sliced ELL-R pieces for bindings of
 * ⌊cap / 2⌋ entries (each entry is two words), their column and value arrays merged into one
 * array of (column, value bits) pairs. Why: the kernel then reads one stream of 8-byte entries
 * (one load instruction per entry, one contiguous 8·height-byte run per slot of a slice) where
 * pack 0 reads two streams at the same index from two buffers placed anywhere by the allocator.
 * @example [...interleavedSlicedPieces(slicedEllRFromCsr(a, { sliceHeight: 32 }), 1 << 28)].length // 1
 */
export function* interleavedSlicedPieces(m: SlicedEllRMatrix, cap: number): Generator<HostPiece> {
  const layout = { ...m, height: m.sliceHeight, padLast: false };
  for (const p of slicedPieces(layout, m.rowLength, null, Math.floor(cap / 2))) {
    const [col, val, ...rest] = p.data;
    yield { ...p, data: [pairWords(col!, val!), ...rest] };
  }
}

/**
 * One piece of the grouped 16-bit layout (pack 1, interleave 1) for `runs` (whole slices, or one
 * slot range [k0, k1) of a wide slice, k0 a multiple of 4): per run, groups of 4 slots (the last
 * group padded), per group and row three vec2<u32> words at g·3·stride + r, + stride,
 * + 2·stride: the four 16-bit offsets, values 0–1, values 2–3 (f32 bits); per group a vec4 of
 * the four slots' base columns (cb). sl: two words per run (first vec2 word, first group).
 * Throws RangeError naming the slot when an offset exceeds 16 bits.
 */
function groupedPiece(m: SlicedEllRMatrix, runs: readonly SlotRun[], rowLength: Int32Array | Uint32Array, accumulate: boolean): HostPiece {
  const H = m.sliceHeight;
  const h = (s: number) => Math.min(H, m.rows - s * H);
  const groups = runs.reduce((n, r) => n + Math.ceil((r.k1 - r.k0) / 4), 0);
  const cv = new Uint32Array(2 * 3 * runs.reduce((n, r) => n + h(r.s) * Math.ceil((r.k1 - r.k0) / 4), 0));
  const f = new Float32Array(cv.buffer);
  const cb = new Uint32Array(4 * groups);
  const sl = new Uint32Array(2 * runs.length);
  let p = 0;
  let g = 0;
  runs.forEach(({ s, k0, k1 }, n) => {
    const hs = h(s);
    sl.set([p, g], 2 * n);
    for (let kg = k0; kg < k1; kg += 4, g++, p += 3 * hs) {
      for (let i = 0; i < 4 && kg + i < k1; i++) {
        const k = kg + i;
        const at = m.slicePtr[s]! + k * hs;
        let lo = Number.POSITIVE_INFINITY;
        for (let r = 0; r < hs; r++) if (k < m.rowLength[s * H + r]!) lo = Math.min(lo, m.colIdx[at + r]!);
        const base = Number.isFinite(lo) ? lo : 0;
        cb[4 * g + i] = base;
        for (let r = 0; r < hs; r++) {
          if (k >= m.rowLength[s * H + r]!) continue; // padding: never read
          const d = m.colIdx[at + r]! - base;
          if (d > MAX_OFFSET) throw new RangeError(`sliced-ell-split pack 1: slot ${k} of slice ${s} spans more than ${MAX_OFFSET} columns (row ${s * H + r}, column ${base + d}, base ${base}): use pack 0`);
          cv[2 * (p + r) + (i >> 1)]! |= d << (16 * (i & 1));
          f[2 * (p + hs * (1 + (i >> 1)) + r) + (i & 1)] = m.values[at + r]!;
        }
      }
    }
  });
  const r0 = runs[0]!.s * H;
  const r1 = Math.min(m.rows, (runs[runs.length - 1]!.s + 1) * H);
  return { rows: r1 - r0, rowBase: r0, count: H, accumulate, data: [cv, sl, rowLength, cb] };
}

/**
 * Pieces of `m` in the grouped 16-bit layout (pack 1, interleave 1) for bindings of `cap` u32
 * elements: runs of whole slices whose vec2 words (3·rows per group of 4 slots, two u32 each),
 * vec4 bases, rows and slice table fit; a slice too wide for one binding alone, in slot ranges
 * (multiples of 4 slots; later ranges accumulate, rl clamped to each range). Why the layout: a
 * row reads 4 entries with three 8-byte loads from one contiguous 24·height-byte run (plus one
 * broadcast vec4 of bases), 6 + 16/height bytes per entry, where pack 1 issues an offset, a
 * value and a base load per entry from three buffers. O(slots) host work, 6 bytes per slot.
 * @example [...groupedSlicedPieces(slicedEllRFromCsr(a, { sliceHeight: 32 }), 1 << 28)].length // 1
 */
export function* groupedSlicedPieces(m: SlicedEllRMatrix, cap: number): Generator<HostPiece> {
  const H = m.sliceHeight;
  const ns = m.sliceWidth.length;
  if (ns > 0 && (6 * 4 * H > cap || H > cap)) throw new RangeError(`sliced-ell-split pack 1, interleave 1: slice height ${H} expected at most ${Math.floor(cap / 24)} rows (a group of 4 slots in one binding of ${cap} u32 elements); lower the slice height or raise maxBindingBytes`);
  const h = (s: number) => Math.min(H, m.rows - s * H);
  const groups = (s: number) => Math.ceil(m.sliceWidth[s]! / 4);
  const fits = (w: number, g: number, n: number) => 6 * w <= cap && 4 * g <= cap && n * H <= cap && 2 * n <= cap;
  let s0 = 0;
  while (s0 < ns) {
    if (!fits(h(s0) * groups(s0), groups(s0), 1)) {
      const step = 4 * Math.min(Math.floor(cap / (6 * h(s0))), Math.floor(cap / 4));
      for (let k0 = 0; k0 < m.sliceWidth[s0]!; k0 += step) {
        const kk = Math.min(step, m.sliceWidth[s0]! - k0);
        yield groupedPiece(m, [{ s: s0, k0, k1: k0 + kk }], clampLengths(m.rowLength, s0 * H, h(s0), k0, kk), k0 > 0);
      }
      s0++;
      continue;
    }
    let s1 = s0 + 1;
    let w = h(s0) * groups(s0);
    let g = groups(s0);
    while (s1 < ns && fits(w + h(s1) * groups(s1), g + groups(s1), s1 + 1 - s0)) {
      w += h(s1) * groups(s1);
      g += groups(s1++);
    }
    const runs = Array.from({ length: s1 - s0 }, (_, i) => ({ s: s0 + i, k0: 0, k1: m.sliceWidth[s0 + i]! }));
    yield groupedPiece(m, runs, m.rowLength.subarray(s0 * H, Math.min(m.rows, s1 * H)), false);
    s0 = s1;
  }
}
