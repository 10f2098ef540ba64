/**
 * Uncompact layouts (seed 004 §2.3.1–§2.3.2).
 *
 * AXTUH1 (TH = 1): each row is cut into ⌈nnz_i/THW⌉ tiles of THW entries (row-major in the tile,
 * last tile zero padded); `ax[]` is identical to AXC with HBRs = THW, and `rwp[t]` is the row of
 * tile t (NT entries).
 *
 * AXTUH (TH > 1): a tile is TH steps × THW columns. Row i occupies ⌈nnz_i/TH⌉ consecutive tile
 * columns (column c is lane c mod THW of tile ⌊c/THW⌋), filled top to bottom (column-major), the
 * last one zero padded at the bottom; no column mixes rows. `rwp[c]` is the row of column c
 * (NT·THW entries; the unused columns at the end of the last tile hold 0 and only padding).
 * Slot of (tile t, step f, lane l) = t·TH·THW + f·THW + l.
 * @module
 */

import { axCheckSlots, axCsrBuilder, axValuePos } from '../axc/ax-array';
import type { CsrMatrix } from '../core/types';
import { csrNnz } from '../csr/csr';
import type { AxtUncMatrix } from './types';

/**
 * Build AXTUH1 (th = 1) or AXTUH (th > 1) from canonical CSR. Cost O(rows + slots).
 * @example
 * axtUncFromCsr(a, 32, 4).rwp; // row of each tile column
 */
export function axtUncFromCsr(a: CsrMatrix, thw: number, th: number): AxtUncMatrix {
  const { rows, rowPtr, colIdx, values } = a;
  let units = 0; // tiles (TH = 1) or tile columns (TH > 1)
  const per = th === 1 ? thw : th;
  for (let i = 0; i < rows; i++) units += Math.ceil((rowPtr[i + 1]! - rowPtr[i]!) / per);
  const nTiles = th === 1 ? units : Math.ceil(units / thw);
  const slots = nTiles * th * thw;
  axCheckSlots(slots, th === 1 ? 'thw' : 'th', th === 1 ? thw : th);
  const ax = new Float64Array(2 * slots);
  const xIdx = new Int32Array(slots).fill(-1);
  const rwp = new Int32Array(th === 1 ? nTiles : nTiles * thw);
  let u = 0; // first tile / column of the current row
  for (let i = 0; i < rows; i++) {
    const p0 = rowPtr[i]!;
    const p1 = rowPtr[i + 1]!;
    const nu = Math.ceil((p1 - p0) / per);
    rwp.fill(i, u, u + nu);
    // unit c (tile, or tile column) takes entries p0 + (c − u)·per …; entry f of column c of tile
    // t = ⌊c/THW⌋ is slot s = t·TH·THW + f·THW + c mod THW, at ax[2·THW·(t·TH + f) + c mod THW]
    for (let c = u, p = p0; p < p1; c++, p += per) {
      const n = Math.min(per, p1 - p);
      if (th === 1) {
        const s0 = c * thw;
        for (let j = 0; j < n; j++) {
          ax[2 * s0 + j] = values[p + j]!;
          xIdx[s0 + j] = colIdx[p + j]!;
        }
      } else {
        const t = Math.floor(c / thw);
        const lane = c - t * thw;
        for (let f = 0; f < n; f++) {
          const g = t * th + f;
          ax[2 * thw * g + lane] = values[p + f]!;
          xIdx[g * thw + lane] = colIdx[p + f]!;
        }
      }
    }
    u += nu;
  }
  const uh1 = th === 1;
  return {
    format: uh1 ? 'axtuh1' : 'axtuh',
    variant: uh1 ? 'AXTUH1' : 'AXTUH',
    mode: 'UNC',
    rows,
    cols: a.cols,
    nnz: csrNnz(a),
    thw,
    th,
    nTiles,
    ax,
    xIdx,
    rwp,
  };
}

/**
 * AXTUH1 / AXTUH back to canonical CSR, reading rows from rwp[] and columns from xIdx[].
 * Cost O(slots). Throws InvalidMatrixError naming the row on an inconsistent layout.
 * @example
 * csrEquals(axtUncToCsr(axtUncFromCsr(a, 8, 4)), a); // true
 */
export function axtUncToCsr(m: AxtUncMatrix): CsrMatrix {
  const { thw, th, rwp, xIdx, ax } = m;
  const b = axCsrBuilder(m.rows, m.cols, m.nnz, `axtToCsr (${m.variant})`);
  const units = th === 1 ? m.nTiles : m.nTiles * thw;
  for (let u = 0; u < units; u++) {
    for (let f = 0; f < (th === 1 ? thw : th); f++) {
      let s: number;
      if (th === 1) s = u * thw + f;
      else {
        const t = Math.floor(u / thw);
        s = t * th * thw + f * thw + (u - t * thw);
      }
      const c = xIdx[s]!;
      if (c >= 0) b.push(rwp[u]!, c, ax[axValuePos(s, thw)]!);
    }
  }
  return b.finish();
}
