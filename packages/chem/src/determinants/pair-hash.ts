/**
 * An open-addressing hash table from a pair of 32-bit keys to a non-negative int32, in flat
 * typed arrays so that it can be shared with worker threads (SharedArrayBuffer) and probed by
 * the self-contained assembly kernel (../hamiltonian/kernel.ts repeats {@link pairHashSlot}).
 * @module
 */

/** The flat arrays of a pair hash. `vals[slot] = −1` marks an empty slot. */
export interface PairHash {
  /** capacity − 1 (capacity is a power of two ≥ 2·count). */
  readonly mask: number;
  readonly keyLo: Uint32Array;
  readonly keyHi: Uint32Array;
  readonly vals: Int32Array;
}

/** First probe slot of (lo, hi). */
export function pairHashSlot(lo: number, hi: number, mask: number): number {
  let h = Math.imul(lo ^ Math.imul(hi ^ 0x7f4a7c15, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h & mask;
}

/**
 * Build a hash of `count` keys (lo[i], hi[i]) → i; keys must be distinct. Cost O(count),
 * 12 bytes per slot (2–4 slots per key). `shared` puts the arrays in SharedArrayBuffers.
 * @example
 * const h = buildPairHash(lo, hi, lo.length);
 * pairHashGet(h, lo[3], hi[3]); // 3
 */
export function buildPairHash(lo: ArrayLike<number>, hi: ArrayLike<number>, count: number, shared = false): PairHash {
  let cap = 16;
  while (cap < 2 * count) cap *= 2;
  const mk = <T>(ctor: new (b: ArrayBufferLike) => T, bytes: number): T =>
    new ctor(shared ? new SharedArrayBuffer(cap * bytes) : new ArrayBuffer(cap * bytes));
  const keyLo = mk(Uint32Array, 4);
  const keyHi = mk(Uint32Array, 4);
  const vals = mk(Int32Array, 4);
  vals.fill(-1);
  const mask = cap - 1;
  for (let i = 0; i < count; i++) {
    const a = lo[i]! >>> 0;
    const b = hi[i]! >>> 0;
    let s = pairHashSlot(a, b, mask);
    while (vals[s] !== -1) {
      if (keyLo[s] === a && keyHi[s] === b) throw new RangeError(`duplicate key (${a}, ${b}) at ${i} and ${vals[s]}`);
      s = (s + 1) & mask;
    }
    keyLo[s] = a;
    keyHi[s] = b;
    vals[s] = i;
  }
  return { mask, keyLo, keyHi, vals };
}

/** Value stored for (lo, hi), or −1. Expected O(1). */
export function pairHashGet(h: PairHash, lo: number, hi: number): number {
  const a = lo >>> 0;
  const b = hi >>> 0;
  let s = pairHashSlot(a, b, h.mask);
  for (;;) {
    const v = h.vals[s]!;
    if (v === -1) return -1;
    if (h.keyLo[s] === a && h.keyHi[s] === b) return v;
    s = (s + 1) & h.mask;
  }
}
