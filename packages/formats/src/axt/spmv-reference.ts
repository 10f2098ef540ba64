/**
 * AXT reference products, float64, computed the way the paper's kernels do (seed 004
 * Listings 3–11): first gather x into the x halves of ax[] (axtLoadX), then y from ax[] and the
 * auxiliary array alone, with y zeroed first and accumulated as the kernels' atomic adds would.
 *
 * - AXTUH1 (Listing 4): per tile, red = Σ_lanes entry·x; y[rwp[t]] += red.
 * - AXTUH (Listing 6): per tile and lane, val = Σ_steps entry·x; y[rwp[t·THW + l]] += val.
 * - AXTCH1 (Listing 9): per block of BS slots (the last one may be shorter, whole tiles), the
 *   fast segmented sum (Liu et al., §2.3.3): is = entry·x, tmp = is, inclusive scan of is over
 *   the block, then at each partition head i os[i] = scan[i + off] − scan[i] + tmp[i] (Eq. (1)),
 *   y[row] += os[i]. A head is a slot with hdr ≠ 0 or the first slot of the block (hdr.ts).
 * - AXTCH (Listing 10): the same per tile, the scan running down each tile column and the
 *   offset counted in steps (position i + off·THW).
 *
 * Eq. (1) subtracts two prefix sums, so its rounding error scales with the scanned block's
 * Σ|a·x|, not the row's; and one non-finite product would turn every later prefix in the group
 * into Inf/NaN. When a group's scan is not finite, this reference sums each partition directly,
 * so non-finite values reach only the rows whose entries meet them (as in CSR); a GPU kernel
 * using Eq. (1) alone would spread them to the whole block.
 * @module
 */
import { DimensionMismatchError, InvalidMatrixError } from '../core/errors';
import { axGatherX } from '../axc/ax-array';
import { axtHdrOffset, axtHdrRow } from './hdr';
import type { AxtComMatrix, AxtMatrix, AxtUncMatrix } from './types';

/**
 * Fill the x halves of `m.ax` from x through `m.xIdx` (padding gets 0): the gather a GPU kernel
 * runs before the product. Cost O(slots). Mutates m.ax (entries untouched).
 * @example
 * axtLoadX(m, x); // m.ax[2·THW·g + THW + l] = x[m.xIdx[THW·g + l]]
 */
export function axtLoadX(m: AxtMatrix, x: Float64Array): void {
  axGatherX(m.ax, m.xIdx, m.thw, x, m.cols, 'axtLoadX');
}

/**
 * The fast segmented sum of one group (Eq. (1)), added into y. The group's products `is` are laid
 * out as `steps` rows of `lanes` (AXTCH1: 1 lane of BS steps; AXTCH: TH steps of THW lanes, one
 * scan per lane); hdr[hdrBase + i] is position i's header. A position is a head when its header
 * is non-zero or it is the first step of its lane. Cost O(steps·lanes); `scan` is scratch of the
 * same length. Throws InvalidMatrixError on an offset past the group or a row out of range.
 * @example
 * // is = [1, 2, 3, 4], heads at 0 (row 0, off 1) and 2 (row 1, off 1), 2 offset bits:
 * axtFastSegmentedSum(is, Uint32Array.from([1, 0, 5, 0]), 0, 4, 1, 2, y, new Float64Array(4)); // y = [3, 7]
 */
export function axtFastSegmentedSum(
  is: Float64Array,
  hdr: Uint32Array,
  hdrBase: number,
  steps: number,
  lanes: number,
  offsetBits: number,
  y: Float64Array,
  scan: Float64Array,
): void {
  // s1: tmp = is (kept in `is`); s2: scan[f·lanes + l] = Σ_{f' ≤ f} is[f'·lanes + l]
  let finite = true;
  for (let l = 0; l < lanes; l++) {
    let acc = 0;
    for (let f = 0, i = l; f < steps; f++, i += lanes) {
      acc += is[i]!;
      scan[i] = acc;
    }
    if (!Number.isFinite(acc)) finite = false;
  }
  // s3: at each head, os[i] = scan[i + off·lanes] − scan[i] + tmp[i]  (Eq. (1))
  for (let i = 0; i < steps * lanes; i++) {
    const h = hdr[hdrBase + i]!;
    if (h === 0 && i >= lanes) continue;
    const r = axtHdrRow(h, offsetBits);
    const o = axtHdrOffset(h, offsetBits);
    const f = Math.floor(i / lanes);
    if (f + o >= steps || r >= y.length) {
      throw new InvalidMatrixError('axtSpmvReference', `hdr slot ${hdrBase + i}: row ${r}, offset ${o} outside ${y.length} rows / ${steps} steps`);
    }
    let v: number;
    if (finite) v = scan[i + o * lanes]! - scan[i]! + is[i]!;
    else {
      v = 0;
      for (let j = 0; j <= o; j++) v += is[i + j * lanes]!;
    }
    y[r]! += v;
  }
}

function spmvUnc(m: AxtUncMatrix, y: Float64Array): void {
  const { ax, rwp, thw, th, nTiles, rows } = m;
  const stride = 2 * thw;
  for (let t = 0; t < nTiles; t++) {
    const base = t * th * stride;
    if (th === 1) {
      // red = Σ_l ax[base + l]·ax[base + thw + l]; y[rwp[t]] += red
      let red = 0;
      for (let l = 0; l < thw; l++) red += ax[base + l]! * ax[base + thw + l]!;
      const r = rwp[t]!;
      if (!(r >= 0 && r < rows)) throw new InvalidMatrixError('axtSpmvReference', `rwp[${t}] = ${r} outside [0, ${rows})`);
      y[r]! += red;
    } else {
      for (let l = 0; l < thw; l++) {
        // val = Σ_f ax[p]·ax[p + thw], p = base + f·2·thw + l; y[rwp[t·thw + l]] += val
        let val = 0;
        for (let f = 0, p = base + l; f < th; f++, p += stride) val += ax[p]! * ax[p + thw]!;
        const r = rwp[t * thw + l]!;
        if (!(r >= 0 && r < rows)) throw new InvalidMatrixError('axtSpmvReference', `rwp[${t * thw + l}] = ${r} outside [0, ${rows})`);
        y[r]! += val;
      }
    }
  }
}

function spmvCom(m: AxtComMatrix, y: Float64Array): void {
  const { ax, hdr, thw, th, offsetBits } = m;
  const slots = hdr.length;
  const groupSlots = th === 1 ? (m.bs ?? thw) : th * thw; // a block (AXTCH1) or a tile (AXTCH)
  if (ax.length !== 2 * slots || slots % (th * thw) !== 0 || groupSlots % thw !== 0) {
    throw new InvalidMatrixError('axtSpmvReference', `hdr length ${slots} is not whole tiles of ${th}·${thw}, or ax length ${ax.length} ≠ 2·${slots}`);
  }
  const is = new Float64Array(groupSlots);
  const scan = new Float64Array(groupSlots);
  for (let g0 = 0; g0 < slots; g0 += groupSlots) {
    // the last block of AXTCH1 may hold fewer than BS slots (whole tiles)
    const len = Math.min(groupSlots, slots - g0);
    // is[i] = entry·x of the group's slot i (slots are THW-wide runs of ax: entries, then x)
    for (let i = 0; i < len; i++) {
      const run = Math.floor(i / thw);
      const p = 2 * g0 + 2 * thw * run + (i - run * thw);
      is[i] = ax[p]! * ax[p + thw]!;
    }
    axtFastSegmentedSum(is, hdr, g0, th === 1 ? len : th, th === 1 ? 1 : thw, offsetBits, y, scan);
  }
}

/**
 * y = A·x in float64 for any AXT variant, computed as its kernel does (see the module note):
 * gather x into ax[], zero y, then accumulate per tile / per block. Cost 2·slots flops plus the
 * gather (and, for the compacted variants, one scan per group). Mutates m.ax's x halves.
 * @example
 * const y = axtSpmvReference(axtFromCsr(a, { thw: 8, th: 4, mode: 'UNC' }), x);
 */
export function axtSpmvReference(m: AxtMatrix, x: Float64Array, y?: Float64Array): Float64Array {
  const out = y ?? new Float64Array(m.rows);
  if (out.length !== m.rows) throw new DimensionMismatchError('axtSpmvReference y', m.rows, out.length);
  axtLoadX(m, x);
  out.fill(0);
  if (m.mode === 'UNC') spmvUnc(m, out);
  else spmvCom(m, out);
  return out;
}
