/**
 * Compacted layouts (seed 004 §2.3.3–§2.3.4): the entries of all rows, in CSR order, back to
 * back with no padding between rows (only after the last entry).
 *
 * AXTCH1 (TH = 1): entry k sits in slot k (tile ⌊k/THW⌋, lane k mod THW). The arrays are padded
 * to whole tiles; the slots are grouped in blocks of BS (a whole number of tiles), one block scan
 * each, the last block possibly shorter (Listing 8 clamps it: `ep = min(blkOff + 512, lenHDR)`;
 * a GPU kernel must guard it the same way).
 *
 * AXTCH (TH > 1): entry k goes to tile column ⌊k/TH⌋, step k mod TH (column-major in the tile
 * like AXTUH, but columns may mix rows); arrays padded to whole tiles.
 *
 * In both, a "group" is what one scan covers — a block of BS slots (AXTCH1) or a tile column of
 * TH slots (AXTCH) — and a partition is the run of one row's entries inside one group. hdr[] holds
 * at each partition head (first slot of the group, or first entry of a row) the packed
 * (row, offset = index of the partition's last entry − index of its head, in group steps); other
 * slots hold 0. See hdr.ts for the row-0 caveat.
 * @module
 */

import { axCheckSlots, axCsrBuilder, axValuePos } from '../axc/ax-array';
import { InvalidMatrixError } from '../core/errors';
import type { CsrMatrix } from '../core/types';
import { csrNnz } from '../csr/csr';
import { axtHdrOffset, axtHdrPack, axtHdrRow } from './hdr';
import type { AxtComMatrix, AxtResolvedParams } from './types';

/**
 * Slot of compacted entry k: k for AXTCH1 (th = 1), else tile ⌊c/THW⌋, step k mod TH, lane
 * c mod THW with c = ⌊k/TH⌋. Cost O(1).
 * @example
 * axtComSlot(3, 4, 2); // column 1, step 1 → slot 1·4 + 1 = 5
 */
export function axtComSlot(k: number, thw: number, th: number): number {
  if (th === 1) return k;
  const c = Math.floor(k / th);
  const t = Math.floor(c / thw);
  return t * th * thw + (k - c * th) * thw + (c - t * thw);
}

/**
 * Build AXTCH1 (p.th = 1, block size p.bs) or AXTCH (p.th > 1) from canonical CSR.
 * Cost O(rows + slots).
 * @example
 * axtComFromCsr(a, axtResolveParams(a.rows, { mode: 'COM', th: 1, thw: 4, bs: 4 })).hdr;
 */
export function axtComFromCsr(a: CsrMatrix, p: AxtResolvedParams): AxtComMatrix {
  const { thw, th, offsetBits } = p;
  const { rows, rowPtr, colIdx, values } = a;
  const nnz = csrNnz(a);
  const ch1 = th === 1;
  const groupLen = ch1 ? p.bs : th;
  const slots = Math.ceil(nnz / (th * thw)) * th * thw;
  axCheckSlots(slots, ch1 ? 'bs' : 'th', ch1 ? p.bs : th);
  const ax = new Float64Array(2 * slots);
  const xIdx = new Int32Array(slots).fill(-1);
  const hdr = new Uint32Array(slots);
  // entry k goes to slot s = axtComSlot(k), whose value sits at ax[2·THW·⌊s/THW⌋ + s mod THW]:
  // walk k in order and step (c, f) = (⌊k/TH⌋, k mod TH) instead of dividing per entry
  let c = 0;
  let f = 0;
  let q = 0; // k mod groupLen
  for (let i = 0; i < rows; i++) {
    const p0 = rowPtr[i]!;
    const p1 = rowPtr[i + 1]!;
    for (let k = p0; k < p1; k++) {
      let s: number;
      let pos: number;
      if (ch1) {
        s = k;
        const g = Math.floor(k / thw);
        pos = 2 * thw * g + (k - g * thw);
      } else {
        const t = Math.floor(c / thw);
        const lane = c - t * thw;
        const g = t * th + f;
        s = g * thw + lane;
        pos = 2 * thw * g + lane;
        if (++f === th) {
          f = 0;
          c++;
        }
      }
      ax[pos] = values[k]!;
      xIdx[s] = colIdx[k]!;
      if (q === 0 || k === p0) {
        // offset = last entry of this row inside the group − k
        const last = Math.min(p1 - 1, k - q + groupLen - 1);
        hdr[s] = axtHdrPack(i, last - k, offsetBits);
      }
      if (++q === groupLen) q = 0;
    }
  }
  return {
    format: ch1 ? 'axtch1' : 'axtch',
    variant: ch1 ? 'AXTCH1' : 'AXTCH',
    mode: 'COM',
    rows,
    cols: a.cols,
    nnz,
    thw,
    th,
    nTiles: slots / (th * thw),
    ax,
    xIdx,
    bs: ch1 ? p.bs : undefined,
    offsetBits,
    hdr,
  };
}

/**
 * AXTCH1 / AXTCH back to canonical CSR by walking the partitions of hdr[] group by group (which
 * also checks hdr[]: a head where one is due, zeros elsewhere, offsets inside the group).
 * Cost O(slots). Throws InvalidMatrixError naming the slot and row.
 * @example
 * csrEquals(axtComToCsr(axtComFromCsr(a, p)), a); // true
 */
export function axtComToCsr(m: AxtComMatrix): CsrMatrix {
  const { thw, th, hdr, xIdx, ax, offsetBits, nnz } = m;
  const where = `axtToCsr (${m.variant})`;
  const groupLen = th === 1 ? m.bs ?? 0 : th;
  if (!(groupLen >= 1) || hdr.length !== xIdx.length || ax.length !== 2 * xIdx.length || nnz > xIdx.length) {
    throw new InvalidMatrixError(where, `inconsistent arrays: hdr ${hdr.length}, xIdx ${xIdx.length}, ax ${ax.length}, nnz ${nnz}, group ${groupLen}`);
  }
  const b = axCsrBuilder(m.rows, m.cols, nnz, where);
  let k = 0;
  while (k < nnz) {
    const s = axtComSlot(k, thw, th);
    const h = hdr[s]!;
    const q = k % groupLen;
    if (q !== 0 && h === 0) throw new InvalidMatrixError(where, `slot ${s} (entry ${k}): expected a partition head (hdr ≠ 0), got 0`);
    const r = axtHdrRow(h, offsetBits);
    const o = axtHdrOffset(h, offsetBits);
    if (q + o >= groupLen || k + o >= nnz) {
      throw new InvalidMatrixError(where, `row ${r}, slot ${s}: offset ${o} runs past the end of its group of ${groupLen} or of the ${nnz} entries`);
    }
    for (let j = 0; j <= o; j++) {
      const sj = axtComSlot(k + j, thw, th);
      if (j > 0 && hdr[sj] !== 0) throw new InvalidMatrixError(where, `row ${r}, slot ${sj}: hdr ${hdr[sj]} inside a partition, expected 0`);
      b.push(r, xIdx[sj]!, ax[axValuePos(sj, thw)]!);
    }
    k += o + 1;
  }
  for (let kk = nnz; kk < xIdx.length; kk++) {
    const s = axtComSlot(kk, thw, th);
    if (hdr[s] !== 0 || xIdx[s] !== -1) throw new InvalidMatrixError(where, `slot ${s}: padding expected (hdr 0, xIdx −1), got hdr ${hdr[s]}, xIdx ${xIdx[s]}`);
  }
  return b.finish();
}
