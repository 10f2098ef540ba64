/**
 * The hybrid ELL + CSR format (seed 001 §4.1) on the device: the host plan of pieces. Each
 * piece binds [ell_col, ell_val, info, csr_col, csr_val] then x, y. `info` holds two u32 per
 * row of the piece — the row's ELL length min(rl, BOUNDARY) and its CSR start — plus a final
 * pair whose second word is the CSR end of the last row; row i's Expansion entries are
 * [info[2i + 1], info[2i + 3]) (seed 001's StartArr/EndArr, which the format keeps contiguous,
 * in 8 bytes per row instead of 12, so the kernel needs 7 storage bindings, under the
 * WebGPU default of 8).
 * @module
 */
import type { HybridMatrix } from '@gpusparse/formats';
import { clampLengths, type HostPiece, repackSlots } from '../ell/ell-device';

/** The info table of rows r0 … r0 + h − 1 for ELL slot window [k0, k0 + kk), CSR offsets relative to `base`. O(h). */
function infoTable(m: HybridMatrix, r0: number, h: number, k0: number, kk: number, base: number): Uint32Array {
  const ellLen = clampLengths(m.rowLength, r0, h, k0, Math.min(kk, m.boundary - k0));
  const info = new Uint32Array(2 * h + 2);
  for (let i = 0; i < h; i++) {
    info[2 * i] = ellLen[i]!;
    info[2 * i + 1] = m.startArr[r0 + i]! - base;
  }
  info[2 * h + 1] = h > 0 ? m.endArr[r0 + h - 1]! - base : 0;
  return info;
}

const NO_U32 = new Uint32Array(0);
const NO_F32 = new Float32Array(0);

/**
 * Pieces of a (validated) hybrid matrix for bindings of `cap` elements: the whole matrix when
 * it fits; otherwise row blocks whose ELL slots (h·BOUNDARY), CSR entries and info table fit;
 * a row that fits nowhere alone, as ELL slot ranges then CSR entry ranges, each later piece
 * accumulating. `count` is the piece's ELL width. Cost: O(rows + nnz) host copies when split.
 * @example [...hybridPieces(hybridFromCsr(a), 1 << 25)].length // 1
 */
export function* hybridPieces(m: HybridMatrix, cap: number): Generator<HostPiece> {
  const { rows, boundary: B } = m;
  if (rows * B <= cap && m.csrNnz <= cap && 2 * (rows + 1) <= cap) {
    yield { rows, rowBase: 0, count: B, accumulate: false, data: [m.ellColIdx, m.ellValues, infoTable(m, 0, rows, 0, B, 0), m.csrColIdx, m.csrValues] };
    return;
  }
  let r0 = 0;
  while (r0 < rows) {
    const base = m.startArr[r0]!;
    let h = 0;
    while (r0 + h < rows && (h + 1) * B <= cap && 2 * (h + 2) <= cap && m.endArr[r0 + h]! - base <= cap) h++;
    if (h > 0) {
      const t = repackSlots(m.ellColIdx, m.ellValues, 0, rows, r0, h, 0, B);
      const end = m.endArr[r0 + h - 1]!;
      yield { rows: h, rowBase: r0, count: B, accumulate: false, data: [t.col, t.val, infoTable(m, r0, h, 0, B, base), m.csrColIdx.subarray(base, end), m.csrValues.subarray(base, end)] };
      r0 += h;
      continue;
    }
    // one row wider than a binding: ELL slot ranges, then CSR entry ranges (later ones accumulate)
    let first = true;
    for (let k0 = 0; k0 < B; k0 += cap) {
      const kk = Math.min(cap, B - k0);
      const t = repackSlots(m.ellColIdx, m.ellValues, 0, rows, r0, 1, k0, kk);
      const info = infoTable(m, r0, 1, k0, kk, base);
      info[3] = info[1]!; // no CSR entries in this piece
      yield { rows: 1, rowBase: r0, count: kk, accumulate: !first, data: [t.col, t.val, info, NO_U32, NO_F32] };
      first = false;
    }
    for (let c0 = base; c0 < m.endArr[r0]!; c0 += cap) {
      const c1 = Math.min(c0 + cap, m.endArr[r0]!);
      yield { rows: 1, rowBase: r0, count: 0, accumulate: !first, data: [NO_U32, NO_F32, Uint32Array.of(0, 0, 0, c1 - c0), m.csrColIdx.subarray(c0, c1), m.csrValues.subarray(c0, c1)] };
      first = false;
    }
    r0++;
  }
}
