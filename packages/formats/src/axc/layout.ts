/**
 * AXC layout (seed 004 §2.2, Listings 1–2): each row is cut into bricks of HBRs entries; a
 * brick is HBRs matrix entries followed by the HBRs x values they multiply, in `ax[]`; the last
 * brick of a row is padded with zeros. `brp[i]` is the ax[] position of row i's first brick
 * (length rows + 1, so row i's bricks are ax[brp[i] .. brp[i+1]) in steps of 2·HBRs); an empty
 * row has no brick. `xIdx[s]` is the column of slot s (−1 for padding), see ax-array.ts.
 * @module
 */
import { InvalidMatrixError } from '../core/errors';
import type { CsrMatrix, SparseMatrix } from '../core/types';
import { csrNnz, validateCsr } from '../csr/csr';
import { axCheckHalfWidth, axCheckSlots, axCsrBuilder, axValuePos } from './ax-array';

/** AXC parameters. */
export interface AxcParams {
  /** Brick half size HBRs (= AXT's THW): a power of two in 1…64; 8 on AVX-512, 32 on a warp. */
  readonly hbrs: number;
}

/** AXC matrix (seed 004 §2.2). */
export interface AxcMatrix extends SparseMatrix {
  readonly format: 'axc';
  /** Brick half size HBRs. */
  readonly hbrs: number;
  /** Number of bricks NB; ax has 2·HBRs·NB entries. */
  readonly nBricks: number;
  /** Matrix entries and x values interleaved per brick (HBRs entries, then HBRs x values). */
  readonly ax: Float64Array;
  /** ax[] position of each row's first brick; length rows + 1, brp[rows] = ax.length. */
  readonly brp: Int32Array;
  /** Column of each slot (HBRs·NB of them), −1 for padding: the gather index that fills ax's x halves. */
  readonly xIdx: Int32Array;
}

/** Default AXC parameters: the paper's CUDA kernel (Listing 2) uses HBRs = 32. */
export const axcDefaultParams: Readonly<AxcParams> = { hbrs: 32 };

/**
 * Convert canonical CSR to AXC. Cost O(rows + slots) time and memory, slots = HBRs·Σ⌈nnz_i/HBRs⌉.
 * Throws InvalidParameterError for a bad HBRs, InvalidMatrixError for a non-canonical CSR.
 * @example
 * const m = axcFromCsr(csrFromDense([[1, 0], [2, 3]]), { hbrs: 2 });
 * // m.ax = [1, 0, x0, 0,  2, 3, x0, x1] once x is loaded; m.brp = [0, 4, 8]
 */
export function axcFromCsr(a: CsrMatrix, params: Partial<AxcParams> = {}): AxcMatrix {
  const hbrs = axCheckHalfWidth('hbrs', params.hbrs ?? axcDefaultParams.hbrs);
  validateCsr(a, 'axcFromCsr', true);
  const { rows, rowPtr, colIdx, values } = a;
  let nBricks = 0;
  for (let i = 0; i < rows; i++) nBricks += Math.ceil((rowPtr[i + 1]! - rowPtr[i]!) / hbrs);
  const slots = nBricks * hbrs;
  axCheckSlots(slots, 'hbrs', hbrs);
  const brp = new Int32Array(rows + 1);
  const ax = new Float64Array(2 * slots);
  const xIdx = new Int32Array(slots).fill(-1);
  let s0 = 0;
  for (let i = 0; i < rows; i++) {
    brp[i] = 2 * s0;
    const p0 = rowPtr[i]!;
    const p1 = rowPtr[i + 1]!;
    // brick by brick: slot s0 + e sits at ax[2·s0 + 2·HBRs·⌊e/HBRs⌋ + e mod HBRs] (axValuePos)
    for (let p = p0; p < p1; p += hbrs, s0 += hbrs) {
      const n = Math.min(hbrs, p1 - p);
      const v0 = 2 * s0;
      for (let j = 0; j < n; j++) {
        ax[v0 + j] = values[p + j]!;
        xIdx[s0 + j] = colIdx[p + j]!;
      }
    }
  }
  brp[rows] = 2 * s0;
  return { format: 'axc', rows, cols: a.cols, nnz: csrNnz(a), hbrs, nBricks, ax, brp, xIdx };
}

/**
 * Convert AXC back to canonical CSR (explicit zeros kept, padding dropped by xIdx = −1).
 * Cost O(rows + slots). Throws InvalidMatrixError naming the row if brp/xIdx are inconsistent.
 * @example
 * csrEquals(axcToCsr(axcFromCsr(a)), a); // true
 */
export function axcToCsr(m: AxcMatrix): CsrMatrix {
  const { rows, hbrs, brp, ax, xIdx } = m;
  const stride = 2 * hbrs;
  if (brp.length !== rows + 1) throw new InvalidMatrixError('axcToCsr', `brp: expected length ${rows + 1}, got ${brp.length}`);
  if (brp[rows] !== ax.length || ax.length !== 2 * xIdx.length) {
    throw new InvalidMatrixError('axcToCsr', `brp[rows] = ${brp[rows]} must equal ax.length = ${ax.length} = 2·xIdx.length = ${2 * xIdx.length}`);
  }
  const b = axCsrBuilder(rows, m.cols, m.nnz, 'axcToCsr');
  for (let i = 0; i < rows; i++) {
    const p1 = brp[i]!;
    const p2 = brp[i + 1]!;
    if (p2 < p1 || p1 % stride !== 0 || p2 % stride !== 0) {
      throw new InvalidMatrixError('axcToCsr', `row ${i}: brp ${p1} → ${p2} is not a whole number of bricks of ${stride}`);
    }
    for (let s = p1 / 2; s < p2 / 2; s++) {
      const c = xIdx[s]!;
      if (c >= 0) b.push(i, c, ax[axValuePos(s, hbrs)]!);
    }
  }
  return b.finish();
}
