/**
 * CSR-VI with column windows: 4 bytes per entry for matrices that repeat few values over many
 * entries (CI Hamiltonians: a few thousand integral combinations over 10^9 entries). Value
 * indexing follows CSR-VI (Kourtis, Goumas and Koziris, 2008); the column windows are ours.
 *
 * Each entry whose value is in the matrix's table of at most 2^v distinct values (v = valueBits,
 * 1…16) is one 32-bit word: the column's offset in its window of 2^(32 − v) columns in the low
 * 32 − v bits, the value's table index in the top v bits. A row's word entries are grouped in
 * segments, one per window the row touches (sorted columns: a run), each segment with its end
 * and its window's first column. Every other entry (a value outside the table: the diagonal of
 * a CI Hamiltonian, its single excitations) goes to the row's raw stream: column and value.
 * So every CSR matrix is representable; the bytes per entry are 4·(table share) + 8·(raw share)
 * plus 8 per segment and 12 per row. On the 2.39·10^6-determinant N2 6-31G CAS(10e,16o) FCI
 * (1.376·10^9 entries, every row spanning ~2.4·10^6 columns) sampled rows give v = 12: 97.6 %
 * of the entries in the table, 2.9 segments per row, ≈ 4.2 bytes per entry against CSR's 8.
 *
 * The table holds float64 bit patterns, so the conversion is lossless (−0 and NaN payloads go
 * to the raw stream); a device upload rounds the table and raw values to float32.
 * @module
 */
import { InvalidMatrixError, InvalidParameterError } from '../core/errors';
import type { CsrMatrix, SparseMatrix, StorageInfo, StorageOptions } from '../core/types';
import { makeStorageInfo } from '../core/types';
import { validateCsr } from '../csr/csr';
import { isVouched, STRUCTURE, vouch } from '../core/validate';
import { type PackJob, packChunk } from './pack-kernel';
import { ValueHash } from './value-hash';

/** A CSR-VI matrix with column windows (see the module comment). */
export interface CsrViMatrix extends SparseMatrix {
  readonly format: 'csr-vi';
  /** v: bits of a table index (1…16); a word's column offset has 32 − v bits. */
  readonly valueBits: number;
  /** The distinct values of the word entries (≤ 2^v), most frequent first. */
  readonly table: Float64Array;
  /** Row r's word entries are packed[packPtr[r] … packPtr[r + 1]). */
  readonly packPtr: Int32Array;
  /** (column − segment base) | (table index << (32 − v)). */
  readonly packed: Uint32Array;
  /** Row r's segments are segEnd / segBase [segPtr[r] … segPtr[r + 1]). */
  readonly segPtr: Int32Array;
  /** Each segment's end (exclusive) in `packed`. */
  readonly segEnd: Int32Array;
  /** Each segment's window: its first column, a multiple of 2^(32 − v). */
  readonly segBase: Uint32Array;
  /** Row r's raw entries are rawCols / rawValues [rawPtr[r] … rawPtr[r + 1]). */
  readonly rawPtr: Int32Array;
  readonly rawCols: Int32Array;
  readonly rawValues: Float64Array;
}

/** Parameters of {@link csrViFromCsr}: `valueBits` 0 chooses v from sampled rows ({@link csrViPlan}). */
export interface CsrViParams {
  readonly valueBits: number;
}

/** What {@link csrViPlan} chose: v, the table, and the predicted bytes per entry of every v. */
export interface CsrViPlan {
  readonly valueBits: number;
  readonly table: Float64Array;
  /** Predicted bytes per stored entry for v = 1…16 (index v − 1), from the sampled rows. */
  readonly bytesPerEntry: readonly number[];
  readonly sampledRows: number;
}

/** Most entries the plan samples (whole rows, evenly spaced). */
const SAMPLE_ENTRIES = 1 << 22;

/** Whether `v` can go in the table (−0 and NaN keep their bits only in the raw stream). */
const tableable = (v: number): boolean => !Number.isNaN(v) && !Object.is(v, -0);

/** Rows sampled by the plan: every `step`-th. */
function sampleStep(a: CsrMatrix): number {
  const nnz = a.rowPtr[a.rows]!;
  return Math.max(1, Math.ceil(nnz / SAMPLE_ENTRIES));
}

/** Value counts (tableable values only) and per-v segment counts over the sampled rows. */
function sampleCounts(a: CsrMatrix, step: number): { counts: Map<number, number>; entries: number; segs: Float64Array; rows: number } {
  const counts = new Map<number, number>();
  const segs = new Float64Array(17);
  let entries = 0;
  let rows = 0;
  for (let r = 0; r < a.rows; r += step) {
    rows++;
    const k0 = a.rowPtr[r]!;
    const k1 = a.rowPtr[r + 1]!;
    entries += k1 - k0;
    for (let k = k0; k < k1; k++) {
      const v = a.values[k]!;
      if (tableable(v)) counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    for (let v = 1; v <= 16; v++) {
      const sh = 32 - v;
      let prev = -1;
      for (let k = k0; k < k1; k++) {
        const w = a.colIdx[k]! >>> sh;
        if (w !== prev) {
          segs[v]!++;
          prev = w;
        }
      }
    }
  }
  return { counts, entries, segs, rows };
}

/**
 * Choose v and the table from sampled rows: the table is the 2^v most frequent values seen at
 * least twice; v minimises the predicted bytes per entry 4·share + 8·(1 − share) + 8·segments
 * per entry (segments as if every entry were a word: an upper bound). `valueBits` ≠ 0 fixes v.
 * O(sampled entries · 16 + distinct · log distinct).
 * @example csrViPlan(a).valueBits // 12 on the N2 CAS(10e,16o) FCI
 */
export function csrViPlan(a: CsrMatrix, valueBits = 0): CsrViPlan {
  if (!(Number.isInteger(valueBits) && valueBits >= 0 && valueBits <= 16)) throw new InvalidParameterError('valueBits', 'an integer in 1…16, or 0 to choose from the matrix', valueBits);
  const step = sampleStep(a);
  const s = sampleCounts(a, step);
  const ranked = [...s.counts.entries()].filter(([, c]) => c >= 2).sort((x, y) => y[1] - x[1] || x[0] - y[0]);
  const prefix = new Float64Array(ranked.length + 1);
  for (let i = 0; i < ranked.length; i++) prefix[i + 1] = prefix[i]! + ranked[i]![1];
  const bytesPerEntry: number[] = [];
  for (let v = 1; v <= 16; v++) {
    if (s.entries === 0) {
      bytesPerEntry.push(0);
      continue;
    }
    const share = prefix[Math.min(ranked.length, 2 ** v)]! / s.entries;
    bytesPerEntry.push(4 * share + 8 * (1 - share) + (8 * s.segs[v]!) / s.entries);
  }
  let best = valueBits;
  if (best === 0) {
    best = 16;
    for (let v = 16; v >= 1; v--) if (bytesPerEntry[v - 1]! < bytesPerEntry[best - 1]!) best = v;
  }
  const table = Float64Array.from(ranked.slice(0, 2 ** best), ([v]) => v);
  return { valueBits: best, table, bytesPerEntry, sampledRows: s.rows };
}

/** The pack job of the whole of `a` (no copies) under `hash`. */
export function packJob(a: CsrMatrix, hash: ValueHash, sh: number): PackJob {
  const words = new Uint32Array(a.values.buffer, a.values.byteOffset, 2 * a.rowPtr[a.rows]!);
  return { rowPtr: a.rowPtr, colIdx: a.colIdx, words, keyLo: hash.lo, keyHi: hash.hi, slot: hash.slot, mask: hash.mask, sh };
}

/** The value hash of a plan's table. O(table). */
export function tableHash(table: Float64Array): ValueHash {
  const hash = new ValueHash(table.length);
  for (let i = 0; i < table.length; i++) hash.add(table[i]!, i);
  return hash;
}

/**
 * CSR-VI with column windows from canonical CSR (validated; sorted columns). `valueBits` 0
 * (default) lets {@link csrViPlan} choose v. Lossless: {@link csrViToCsr} gives `a` back bit for
 * bit. Cost: one O(nnz) pass (one hash probe per entry; the words are written into an nnz-long
 * array) plus the plan's sample.
 * @throws InvalidParameterError for valueBits outside 0…16
 * @throws InvalidMatrixError for a non-canonical CSR (named by validateCsr)
 * @example const m = csrViFromCsr(a); m.packed.length + m.rawCols.length === csrNnz(a)
 */
export function csrViFromCsr(a: CsrMatrix, params: Partial<CsrViParams> = {}): CsrViMatrix {
  validateCsr(a, 'csrViFromCsr');
  const plan = csrViPlan(a, params.valueBits ?? 0);
  const v = plan.valueBits;
  const sh = 32 - v;
  const nnz = a.rowPtr[a.rows]!;
  const o = packChunk(packJob(a, tableHash(plan.table), sh));
  const { packPtr, packed, segPtr, segEnd, segBase, rawPtr, rawCols } = o;
  const rawValues = new Float64Array(o.rawWords.buffer, o.rawWords.byteOffset, rawCols.length);
  return vouchCsrVi({ format: 'csr-vi', rows: a.rows, cols: a.cols, nnz, valueBits: v, table: plan.table, packPtr, packed, segPtr, segEnd, segBase, rawPtr, rawCols, rawValues });
}

/** Check one pointer array: length rows + 1, starts at 0, non-decreasing, ends at `total`. */
function checkPtr(where: string, name: string, p: Int32Array, rows: number, total: number): void {
  if (p.length !== rows + 1) throw new InvalidMatrixError(where, `${name} has length ${p.length}, expected ${rows + 1}`);
  if (p[0] !== 0 || p[rows] !== total) throw new InvalidMatrixError(where, `${name} runs ${p[0]}…${p[rows]}, expected 0…${total}`);
  for (let r = 0; r < rows; r++) if (p[r + 1]! < p[r]!) throw new InvalidMatrixError(where, `${name} decreases at row ${r} (${p[r]} → ${p[r + 1]})`);
}

/** The fields a csr-vi validation covers (shape, v, every array reference): see core/validate's vouch. */
const viFields = (m: CsrViMatrix): unknown[] => [m.rows, m.cols, m.valueBits, m.table, m.packPtr, m.packed, m.segPtr, m.segEnd, m.segBase, m.rawPtr, m.rawCols, m.rawValues];

/** `m` vouched for as valid (built by a conversion, or validated): {@link validateCsrVi} then costs O(1). */
export const vouchCsrVi = (m: CsrViMatrix): CsrViMatrix => vouch(m, viFields(m), STRUCTURE);

/**
 * Validate every array of `m`: pointers, segments covering each row's words in order, columns
 * inside [0, cols), table indices inside the table. O(rows + nnz) the first time; O(1) for a matrix
 * the conversion built or a check passed (same object, same arrays: an array edited in place is not
 * seen, as for CSR).
 * @throws InvalidMatrixError naming the first bad row, segment or entry
 */
export function validateCsrVi(m: CsrViMatrix, where = 'csr-vi'): void {
  if (isVouched(m, viFields(m), STRUCTURE)) return;
  if (!(Number.isInteger(m.valueBits) && m.valueBits >= 1 && m.valueBits <= 16)) throw new InvalidMatrixError(where, `valueBits ${m.valueBits}, expected an integer in 1…16`);
  if (m.table.length > 2 ** m.valueBits) throw new InvalidMatrixError(where, `${m.table.length} table values, more than 2^${m.valueBits}`);
  checkPtr(where, 'packPtr', m.packPtr, m.rows, m.packed.length);
  checkPtr(where, 'segPtr', m.segPtr, m.rows, m.segEnd.length);
  checkPtr(where, 'rawPtr', m.rawPtr, m.rows, m.rawCols.length);
  if (m.segBase.length !== m.segEnd.length || m.rawValues.length !== m.rawCols.length) throw new InvalidMatrixError(where, 'segBase / segEnd or rawCols / rawValues lengths differ');
  // s14-harden-e: a wrong nnz made csrViToCsr return a CSR whose rowPtr ran past its colIdx
  if (m.nnz !== m.packed.length + m.rawCols.length) throw new InvalidMatrixError(where, `nnz ${m.nnz}, expected ${m.packed.length + m.rawCols.length} (${m.packed.length} words + ${m.rawCols.length} raw entries)`);
  for (let r = 0; r < m.rows; r++) checkRow(m, r, where);
  vouch(m, viFields(m), STRUCTURE);
}

/**
 * Row r of `m` in one pass: its segments cover its words in order, on window multiples; every
 * column inside [0, cols) and table index inside the table; the words and the raw entries each in
 * strictly increasing column order, and no column in both (csrViToCsr merges the two runs into
 * canonical CSR: s14-harden-e, a hand-built matrix breaking this gave unsorted or duplicate columns).
 */
function checkRow(m: CsrViMatrix, r: number, where: string): void {
  const sh = 32 - m.valueBits;
  const low = 2 ** sh - 1;
  const [q0, q1] = [m.rawPtr[r]!, m.rawPtr[r + 1]!];
  for (let k = q0; k < q1; k++) {
    const c = m.rawCols[k]!;
    if (!(c >= 0 && c < m.cols)) throw new InvalidMatrixError(where, `row ${r}, raw entry ${k}: column ${c} outside [0, ${m.cols})`);
    if (k > q0 && !(c > m.rawCols[k - 1]!)) throw new InvalidMatrixError(where, `row ${r}, raw entry ${k}: column ${c} after column ${m.rawCols[k - 1]} (expected increasing columns)`);
  }
  let at = m.packPtr[r]!;
  let prev = -1;
  let q = q0;
  for (let s = m.segPtr[r]!; s < m.segPtr[r + 1]!; s++) {
    const end = m.segEnd[s]!;
    const base = m.segBase[s]!;
    if (!(end > at && end <= m.packPtr[r + 1]!)) throw new InvalidMatrixError(where, `row ${r}, segment ${s}: end ${end} outside (${at}, ${m.packPtr[r + 1]}]`);
    if ((base & low) !== 0) throw new InvalidMatrixError(where, `row ${r}, segment ${s}: base ${base} not a multiple of 2^${sh}`);
    for (; at < end; at++) {
      const w = m.packed[at]!;
      const c = base + (w & low);
      const i = w >>> sh;
      if (c >= m.cols || i >= m.table.length) throw new InvalidMatrixError(where, `row ${r}, word ${at}: column ${c} (of ${m.cols}) or table index ${i} (of ${m.table.length}) out of range`);
      if (!(c > prev)) throw new InvalidMatrixError(where, `row ${r}, word ${at}: column ${c} after column ${prev} (expected increasing columns)`);
      while (q < q1 && m.rawCols[q]! < c) q++;
      if (q < q1 && m.rawCols[q] === c) throw new InvalidMatrixError(where, `row ${r}: column ${c} both in a word and in the raw stream (raw entry ${q})`);
      prev = c;
    }
  }
  if (at !== m.packPtr[r + 1]) throw new InvalidMatrixError(where, `row ${r}: segments end at ${at}, its words at ${m.packPtr[r + 1]}`);
}

/** Visit row r's entries: words (column, value) in order, then raw ones. */
function forRow(m: CsrViMatrix, r: number, f: (c: number, v: number) => void): void {
  const sh = 32 - m.valueBits;
  const low = 2 ** sh - 1;
  let at = m.packPtr[r]!;
  for (let s = m.segPtr[r]!; s < m.segPtr[r + 1]!; s++) {
    for (; at < m.segEnd[s]!; at++) {
      const w = m.packed[at]!;
      f(m.segBase[s]! + (w & low), m.table[w >>> sh]!);
    }
  }
  for (let k = m.rawPtr[r]!; k < m.rawPtr[r + 1]!; k++) f(m.rawCols[k]!, m.rawValues[k]!);
}

/**
 * y = A·x in float64: per row, the word entries (table values), then the raw ones.
 * Cost: 2·nnz flops plus O(rows + segments).
 * @example csrViSpmv(csrViFromCsr(a), x) // = csrSpmv(a, x) up to the order of the sums
 */
export function csrViSpmv(m: CsrViMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  if (x.length !== m.cols) throw new InvalidParameterError('x', `length ${m.cols} (the matrix's columns)`, `length ${x.length}`);
  if (y !== undefined && y.length !== m.rows) throw new InvalidParameterError('y', `length ${m.rows} (the matrix's rows)`, `length ${y.length}`);
  const out = y ?? new Float64Array(m.rows);
  let sum = 0;
  const add = (c: number, v: number) => {
    sum += v * x[c]!;
  };
  for (let r = 0; r < m.rows; r++) {
    sum = 0;
    forRow(m, r, add);
    out[r] = sum;
  }
  return out;
}

/** CSR-VI → canonical CSR, bit for bit (each row's words and raw entries merged by column). O(nnz + rows). */
export function csrViToCsr(m: CsrViMatrix): CsrMatrix {
  validateCsrVi(m, 'csrViToCsr');
  const rowPtr = new Int32Array(m.rows + 1);
  const colIdx = new Int32Array(m.nnz);
  const values = new Float64Array(m.nnz);
  let w = 0;
  const put = (c: number, v: number) => {
    colIdx[w] = c;
    values[w++] = v;
  };
  for (let r = 0; r < m.rows; r++) {
    const k0 = w;
    forRow(m, r, put);
    // two sorted runs (words, raw): merge by column with an insertion pass over the raw ones
    for (let k = k0 + m.packPtr[r + 1]! - m.packPtr[r]!; k < w; k++) {
      const c = colIdx[k]!;
      const v = values[k]!;
      let j = k;
      for (; j > k0 && colIdx[j - 1]! > c; j--) {
        colIdx[j] = colIdx[j - 1]!;
        values[j] = values[j - 1]!;
      }
      colIdx[j] = c;
      values[j] = v;
    }
    rowPtr[r + 1] = w;
  }
  return { format: 'csr', rows: m.rows, cols: m.cols, rowPtr, colIdx, values };
}

/**
 * Storage: 4 bytes per word, a value and an index per raw entry, the table's values, two words
 * per segment, three row pointers per row (valueBytes for values, indexBytes for indices). O(1).
 */
export function csrViStorageBytes(m: CsrViMatrix, opts: StorageOptions = {}): StorageInfo {
  const vb = opts.valueBytes ?? 8;
  const ib = opts.indexBytes ?? 4;
  const raw = m.rawCols.length;
  return makeStorageInfo(m.nnz, m.nnz, {
    packed: 4 * m.packed.length,
    table: vb * m.table.length,
    segments: 2 * ib * m.segEnd.length,
    raw: raw * (vb + ib),
    rowPointers: 3 * ib * (m.rows + 1),
  });
}
