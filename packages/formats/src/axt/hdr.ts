/**
 * Bit packing of the compacted variants' hdr[] (seed 004 §2.3.3–§2.3.4): a 32-bit word whose
 * low `offsetBits` bits hold the partition offset (distance from its first to its last element:
 * < BS for AXTCH1, so log2(BS) bits; vertical, < TH for AXTCH, so ⌈log2 TH⌉ bits) and whose high
 * 32 − offsetBits bits hold the row index. Decoding is `row = h >>> offsetBits`,
 * `offset = h & (2^offsetBits − 1)` (Listing 9 lines 50–51, Listing 11 lines 16–17). The listings
 * write the mask as `BS − 1` / `TH − 1`, which is the same only for powers of two: this library
 * allows any TH ≥ 2 for AXTCH, so kernels must mask with 2^offsetBits − 1.
 *
 * A head of row 0 with offset 0 packs to 0, the same word as "no head". Row 0's partitions all
 * start at the first slot of a block (AXTCH1) or the top of a column (AXTCH), which are always
 * heads, so a kernel must test `h ≠ 0 or first slot of the block/column` — not `h ≠ 0` alone as
 * Listings 8–10 do.
 * @module
 */
import { InvalidParameterError } from '../core/errors';

/**
 * ⌈log2 n⌉ for an integer n ≥ 1 (0 for n = 1), computed exactly. Cost O(log n).
 * @example
 * axtCeilLog2(1024); // 10
 */
export function axtCeilLog2(n: number): number {
  let b = 0;
  while (2 ** b < n) b++;
  return b;
}

/**
 * Pack (row, offset) into one hdr word: row·2^offsetBits + offset. Cost O(1).
 * Throws InvalidParameterError if either field does not fit.
 * @example
 * axtHdrPack(5, 2, 2); // 22 = 0b101_10
 */
export function axtHdrPack(row: number, offset: number, offsetBits: number): number {
  if (!(Number.isInteger(offset) && offset >= 0 && offset < 2 ** offsetBits)) {
    throw new InvalidParameterError('hdr offset', `an integer in [0, ${2 ** offsetBits}) (${offsetBits} bits)`, offset);
  }
  if (!(Number.isInteger(row) && row >= 0 && row < 2 ** (32 - offsetBits))) {
    throw new InvalidParameterError('hdr row', `an integer in [0, 2^${32 - offsetBits})`, row);
  }
  return row * 2 ** offsetBits + offset;
}

/**
 * Row index of a packed hdr word (`h >>> offsetBits`). Cost O(1).
 * @example
 * axtHdrRow(22, 2); // 5
 */
export function axtHdrRow(h: number, offsetBits: number): number {
  return h >>> offsetBits;
}

/**
 * Offset of a packed hdr word (`h & (2^offsetBits − 1)`). Cost O(1).
 * @example
 * axtHdrOffset(22, 2); // 2
 */
export function axtHdrOffset(h: number, offsetBits: number): number {
  return (h & (2 ** offsetBits - 1)) >>> 0;
}

/**
 * Check that row indices 0 … rows − 1 fit in the 32 − offsetBits high bits of hdr[]
 * (rows ≤ 2^(32 − offsetBits)); otherwise throw InvalidParameterError saying which value of the
 * parameter (`bs` for AXTCH1, `th` for AXTCH) would fit. Cost O(1).
 * @example
 * axtCheckHdrFit(5_000_000, 10, 'bs', 1024, 32); // throws: "... BS ≤ 512 fits ..."
 */
export function axtCheckHdrFit(rows: number, offsetBits: number, parameter: 'bs' | 'th', got: number, thw: number): void {
  if (rows <= 2 ** (32 - offsetBits)) return;
  const rowBits = axtCeilLog2(rows);
  const maxBits = 32 - rowBits;
  const name = parameter === 'bs' ? 'BS' : 'TH';
  let hint: string;
  if (parameter === 'bs') {
    const best = Math.min(10, maxBits);
    hint = 2 ** best >= thw ? `BS ≤ ${2 ** best} fits` : `no BS ≥ THW = ${thw} fits (use a smaller THW, or TH > 1)`;
  } else {
    hint = maxBits >= 1 ? `TH ≤ ${2 ** maxBits} fits` : 'no TH > 1 fits';
  }
  throw new InvalidParameterError(
    parameter,
    `a ${name} whose ${offsetBits} offset bits leave room for the row index in hdr[] (rows = ${rows} need ${rowBits} of the 32 bits, so ${hint})`,
    got,
  );
}
