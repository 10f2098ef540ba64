/**
 * An open-addressing hash from float64 bit patterns to small integers, in typed arrays: the
 * value-table lookup of {@link csrViFromCsr}, one probe sequence per entry over 10^9 entries
 * (a JS Map keyed by numbers costs 30–60 ns per lookup and merges +0 with −0; this reads the
 * two 32-bit words of each value and compares them).
 * @module
 */

/** Index of the float64 `values[k]`'s bit pattern in a {@link ValueHash}, or −1. */
export class ValueHash {
  /** The keys' low and high words, each slot's index (−1: empty) and the slot mask (read by `pack-kernel.ts`, which inlines {@link ValueHash.getWords}). */
  readonly lo: Uint32Array;
  readonly hi: Uint32Array;
  readonly slot: Int32Array;
  readonly mask: number;
  private readonly view = new Float64Array(1);
  private readonly words = new Uint32Array(this.view.buffer);
  /** Number of keys added. */
  size = 0;

  /** A hash for at most `capacity` keys (load ≤ 1/2). O(capacity). */
  constructor(capacity: number) {
    let n = 16;
    while (n < 2 * capacity) n *= 2;
    this.lo = new Uint32Array(n);
    this.hi = new Uint32Array(n);
    this.slot = new Int32Array(n).fill(-1);
    this.mask = n - 1;
  }

  /** The hash of the words (lo, hi) before the mask (`pack-kernel.ts` repeats it inline). */
  static mix(lo: number, hi: number): number {
    return Math.imul(lo ^ Math.imul(hi, 0x9e3779b1) ^ (hi >>> 15), 0x85ebca6b) ^ (lo >>> 13);
  }

  /** The slot of (lo, hi): its index, or where it would go (slot −1). */
  private find(lo: number, hi: number): number {
    let p = ValueHash.mix(lo, hi) & this.mask;
    while (this.slot[p] !== -1 && (this.lo[p] !== lo || this.hi[p] !== hi)) p = (p + 1) & this.mask;
    return p;
  }

  /** Add `v` (by bit pattern) with index `i`; a key already present keeps its index. */
  add(v: number, i: number): void {
    this.view[0] = v;
    const lo = this.words[0]!;
    const hi = this.words[1]!;
    const p = this.find(lo, hi);
    if (this.slot[p] !== -1) return;
    if (this.size + 1 > (this.mask + 1) / 2) throw new RangeError(`ValueHash: more than ${(this.mask + 1) / 2} keys`);
    this.lo[p] = lo;
    this.hi[p] = hi;
    this.slot[p] = i;
    this.size++;
  }

  /** The index of the bit pattern at words (lo, hi), or −1. */
  getWords(lo: number, hi: number): number {
    return this.slot[this.find(lo, hi)]!;
  }
}
