/**
 * Host plan of the merge-path CSR kernel (csr-merge, issue 20): how one binding block's rows are
 * cut into work for equal-sized workgroups. Pure functions of the row pointers, no device.
 *
 * Merrill & Garland's merge-based CSR SpMV walks the merge of the row-end offsets with the
 * entries: a row of ℓ entries is ℓ + 1 items (its entries, then its end), and every workgroup
 * takes the same number of items, so that a row of 20 000 entries and a run of empty rows cost
 * what their items cost. Here the cut between workgroups follows row boundaries — a tile is a run
 * of consecutive rows of at most `tileItems` items — and rows of `longMin` entries or more leave
 * the tiles: each is a unit of its own, reduced by a whole workgroup, listed first so that it
 * starts in the first wave. Inside a tile the invocations split its items equally (the kernel's
 * merge-path search). So no partial sum crosses workgroups, except in rows longer than
 * `chunkMax` entries: those are cut into units of `chunkMax` entries, each unit writes its
 * partial sum to a carry slot, and a second, ordered dispatch sums each row's slots (a fix-up
 * segment) — no float atomics anywhere.
 * @module
 */

/** Marks a unit that stores its row's y itself (no carry slot). */
export const NO_SLOT = 0xffffffff;

/** The plan of one binding block (local row and entry indices). */
export interface MergePlan {
  /** Long-row units, 4 words each: row, first entry, end entry, carry slot (NO_SLOT: store y). */
  readonly units: Uint32Array;
  /** Tiles, 2 words each: first row, end row (rows of fewer than `longMin` entries). */
  readonly tiles: Uint32Array;
  /** Fix-up segments, 3 words each: row, first slot, end slot (rows cut into several units). */
  readonly segments: Uint32Array;
  /** Carry slots (units that belong to a segment). */
  readonly slots: number;
}

/** Sizes that shape a {@link MergePlan}. */
export interface MergeShape {
  /** Items (entries + row ends) of one tile at most: perThread · workgroupSize. */
  readonly tileItems: number;
  /** Rows of one tile at most (the workgroup's row-end array). */
  readonly tileRows: number;
  /** Rows with at least this many entries are long-row units (≥ 1). */
  readonly longMin: number;
  /** Entries of one long-row unit at most; longer rows are cut and fixed up (≥ 1). */
  readonly chunkMax: number;
}

/**
 * Plan the work of one block with local row pointers `rp` (rows + 1 entries). O(rows + units).
 * @throws RangeError when a size of `s` is not a positive integer or tileItems < 2
 * @example planMerge(Int32Array.of(0, 1, 5000, 5002), 3, { tileItems: 2048, tileRows: 1024, longMin: 1024, chunkMax: 32768 })
 */
export function planMerge(rp: Int32Array | Uint32Array, rows: number, s: MergeShape): MergePlan {
  for (const [name, v, min] of [['tileItems', s.tileItems, 2], ['tileRows', s.tileRows, 1], ['longMin', s.longMin, 1], ['chunkMax', s.chunkMax, 1]] as const) {
    if (!Number.isInteger(v) || v < min) throw new RangeError(`planMerge: ${name} expected an integer ≥ ${min}, got ${v}`);
  }
  // a row short enough for a tile must fit one (ℓ + 1 ≤ tileItems)
  const longMin = Math.min(s.longMin, s.tileItems - 1);
  const units: number[] = [];
  const tiles: number[] = [];
  const segments: number[] = [];
  let slots = 0;
  let r = 0;
  while (r < rows) {
    const len = rp[r + 1]! - rp[r]!;
    if (len >= longMin) {
      const k0 = rp[r]!;
      if (len <= s.chunkMax) units.push(r, k0, k0 + len, NO_SLOT);
      else {
        segments.push(r, slots, 0);
        for (let k = k0; k < k0 + len; k += s.chunkMax) units.push(r, k, Math.min(k0 + len, k + s.chunkMax), slots++);
        segments[segments.length - 1] = slots;
      }
      r++;
      continue;
    }
    // a tile: consecutive short rows while their items fit
    const start = r;
    let items = 0;
    while (r < rows && r - start < s.tileRows) {
      const l = rp[r + 1]! - rp[r]!;
      if (l >= longMin || items + l + 1 > s.tileItems) break;
      items += l + 1;
      r++;
    }
    tiles.push(start, r);
  }
  return { units: Uint32Array.from(units), tiles: Uint32Array.from(tiles), segments: Uint32Array.from(segments), slots };
}

/**
 * The one table the kernel reads (units, then tiles, then segments) and the offsets of its parts
 * in words. O(size of the plan).
 * @example const t = mergeTable(planMerge(rp, rows, shape)); // t.table.length === t.fixOffset + 3 · segments
 */
export function mergeTable(p: MergePlan): { table: Uint32Array; tileOffset: number; fixOffset: number } {
  const table = new Uint32Array(Math.max(1, p.units.length + p.tiles.length + p.segments.length));
  table.set(p.units, 0);
  table.set(p.tiles, p.units.length);
  table.set(p.segments, p.units.length + p.tiles.length);
  return { table, tileOffset: p.units.length, fixOffset: p.units.length + p.tiles.length };
}
