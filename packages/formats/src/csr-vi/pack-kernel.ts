/**
 * The one pass of the csr-vi conversion over a range of rows, self-contained (no imports, no
 * closures over module state) so that worker threads can run it from its source text
 * (`./parallel.ts`) and the serial conversion (`./csr-vi.ts`) runs the same code.
 * @module
 */

/** Input of {@link packChunk}: rows with local row pointers, their columns and value words, the value hash's arrays. */
export interface PackJob {
  /** Row pointers of the chunk, from 0. */
  readonly rowPtr: Int32Array;
  readonly colIdx: Int32Array;
  /** The float64 values as 32-bit words (low, high) per entry. */
  readonly words: Uint32Array;
  /** ValueHash's key words, slot indices (−1: empty) and mask. */
  readonly keyLo: Uint32Array;
  readonly keyHi: Uint32Array;
  readonly slot: Int32Array;
  readonly mask: number;
  /** 32 − v. */
  readonly sh: number;
}

/** Output of {@link packChunk}: chunk-local pointers, words, segments (ends chunk-local), raw columns and value words. */
export interface PackOut {
  readonly packPtr: Int32Array;
  readonly segPtr: Int32Array;
  readonly rawPtr: Int32Array;
  readonly packed: Uint32Array;
  readonly segEnd: Int32Array;
  readonly segBase: Uint32Array;
  readonly rawCols: Int32Array;
  readonly rawWords: Uint32Array;
}

/**
 * Each entry's table index (one probe of its two value words — the hash must equal ValueHash.mix;
 * −0 and NaN are never in the table, so they go raw), the words with their segments (a word opens
 * a segment when its window differs from the row's last one), the raw entries. O(entries); the
 * words go into an entries-long array, kept as a view when they are most of the entries.
 */
export function packChunk(job: PackJob): PackOut {
  // Long by design (a house-style exception): shipped to worker threads by its source text, so self-contained.
  const { rowPtr, colIdx, words, keyLo, keyHi, slot, mask, sh } = job;
  const rows = rowPtr.length - 1;
  const nnz = rowPtr[rows]!;
  const grown = <T extends Int32Array | Uint32Array>(arr: T, need: number): T => {
    if (need <= arr.length) return arr;
    const out = new (arr.constructor as new (n: number) => T)(Math.max(need, 2 * arr.length));
    out.set(arr);
    return out;
  };
  const packPtr = new Int32Array(rows + 1);
  const segPtr = new Int32Array(rows + 1);
  const rawPtr = new Int32Array(rows + 1);
  let packed = new Uint32Array(nnz);
  let segEnd = new Int32Array(Math.max(16, 2 * rows));
  let segBase = new Uint32Array(segEnd.length);
  let rawCols = new Int32Array(Math.max(16, nnz >>> 5));
  let rawWords = new Uint32Array(2 * rawCols.length);
  let np = 0;
  let ns = 0;
  let nr = 0;
  for (let r = 0; r < rows; r++) {
    const s0 = ns;
    for (let k = rowPtr[r]!, k1 = rowPtr[r + 1]!; k < k1; k++) {
      const c = colIdx[k]!;
      const lo = words[2 * k]!;
      const hi = words[2 * k + 1]!;
      let p = (Math.imul(lo ^ Math.imul(hi, 0x9e3779b1) ^ (hi >>> 15), 0x85ebca6b) ^ (lo >>> 13)) & mask;
      while (slot[p] !== -1 && (keyLo[p] !== lo || keyHi[p] !== hi)) p = (p + 1) & mask;
      const i = slot[p]!;
      if (i < 0) {
        if (nr === rawCols.length) {
          rawCols = grown(rawCols, nr + 1);
          rawWords = grown(rawWords, 2 * rawCols.length);
        }
        rawCols[nr] = c;
        rawWords[2 * nr] = lo;
        rawWords[2 * nr++ + 1] = hi;
        continue;
      }
      const base = ((c >>> sh) << sh) >>> 0;
      if (ns === s0 || segBase[ns - 1] !== base) {
        if (ns === segEnd.length) {
          segEnd = grown(segEnd, ns + 1);
          segBase = grown(segBase, ns + 1);
        }
        segBase[ns++] = base;
      }
      segEnd[ns - 1] = np + 1;
      packed[np++] = ((c - base) | (i << sh)) >>> 0;
    }
    packPtr[r + 1] = np;
    segPtr[r + 1] = ns;
    rawPtr[r + 1] = nr;
  }
  if (np < 0.75 * nnz) packed = packed.slice(0, np);
  return { packPtr, segPtr, rawPtr, packed: packed.subarray(0, np), segEnd: segEnd.slice(0, ns), segBase: segBase.slice(0, ns), rawCols: rawCols.slice(0, nr), rawWords: rawWords.slice(0, 2 * nr) };
}
