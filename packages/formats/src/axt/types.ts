/**
 * AXT types and parameters (seed 004 §2.3): tile half width THW, tile height TH, MODE
 * (UNC = rows padded apart, COM = rows packed back to back) and, for AXTCH1, the block size BS.
 * (MODE, TH) select one of four variants, each with its own layout and kernel:
 * AXTUH1 (UNC, TH = 1), AXTUH (UNC, TH > 1), AXTCH1 (COM, TH = 1), AXTCH (COM, TH > 1).
 * @module
 */
import { InvalidParameterError } from '../core/errors';
import type { SparseMatrix } from '../core/types';
import { axCheckHalfWidth } from '../axc/ax-array';
import { axtCheckHdrFit, axtCeilLog2 } from './hdr';

/** MODE: uncompact (zero padding between rows, auxiliary array rwp[]) or compacted (hdr[]). */
export type AxtMode = 'UNC' | 'COM';

/** The four data arrangements of §2.3.1–§2.3.4. */
export type AxtVariant = 'AXTUH1' | 'AXTUH' | 'AXTCH1' | 'AXTCH';

/** AXT parameters. */
export interface AxtParams {
  /** Tile half width THW: a power of two in 1…64 (8 for AVX-512 doubles, 32 for a warp). */
  readonly thw: number;
  /** Tile height TH ≥ 1: number of THW-wide steps in a tile. */
  readonly th: number;
  /** 'UNC' (uncompact) or 'COM' (compacted). */
  readonly mode: AxtMode;
  /** Block size BS of AXTCH1 (the length of one block scan): a power of two, THW ≤ BS ≤ 1024. Ignored by the other variants. */
  readonly bs: number;
}

/** Fields common to the four variants. */
interface AxtBase extends SparseMatrix {
  readonly variant: AxtVariant;
  readonly thw: number;
  readonly th: number;
  /** Number of tiles NT; a tile holds TH·THW slots, i.e. 2·TH·THW entries of ax[]. */
  readonly nTiles: number;
  /** Entries and x values interleaved per THW-wide step: THW entries, then their THW x values. */
  readonly ax: Float64Array;
  /** Column of each slot (NT·TH·THW of them), −1 for padding: the gather index that fills ax's x halves. */
  readonly xIdx: Int32Array;
}

/** AXTUH1 / AXTUH: rows separated by zero padding; rwp[] gives the row of each tile (TH = 1) or tile column (TH > 1). */
export interface AxtUncMatrix extends AxtBase {
  readonly format: 'axtuh1' | 'axtuh';
  readonly variant: 'AXTUH1' | 'AXTUH';
  readonly mode: 'UNC';
  /** Row index per tile (AXTUH1, length NT) or per tile column (AXTUH, length NT·THW; unused columns 0). */
  readonly rwp: Int32Array;
}

/** AXTCH1 / AXTCH: rows packed without padding; hdr[] marks the partitions of the fast segmented sum. */
export interface AxtComMatrix extends AxtBase {
  readonly format: 'axtch1' | 'axtch';
  readonly variant: 'AXTCH1' | 'AXTCH';
  readonly mode: 'COM';
  /** Block size (AXTCH1 only; undefined for AXTCH, whose partitions are bounded by TH). */
  readonly bs: number | undefined;
  /** Number of low hdr bits holding the offset: log2(BS) for AXTCH1, ⌈log2 TH⌉ for AXTCH. */
  readonly offsetBits: number;
  /**
   * One packed word per slot: at the head of a partition, row << offsetBits | offset (offset =
   * distance to the partition's last element, vertical for AXTCH); 0 elsewhere. Heads are the
   * first slot of each block (AXTCH1) / the top of each tile column (AXTCH) and the first
   * element of each row.
   */
  readonly hdr: Uint32Array;
}

/** Any AXT matrix. */
export type AxtMatrix = AxtUncMatrix | AxtComMatrix;

/** Parameters after validation, with the derived variant and hdr offset width. */
export interface AxtResolvedParams extends AxtParams {
  readonly variant: AxtVariant;
  /** hdr offset bits (0 for the uncompact variants). */
  readonly offsetBits: number;
}

/** Default parameters: the paper's CUDA choices (THW = 32, TH = 4, BS = 1024; Table 3). */
export const axtDefaultParams: Readonly<AxtParams> = { thw: 32, th: 4, mode: 'UNC', bs: 1024 };

/**
 * The variant selected by (MODE, TH), §2.3. Cost O(1).
 * @example
 * axtVariant('COM', 1); // 'AXTCH1'
 */
export function axtVariant(mode: AxtMode, th: number): AxtVariant {
  if (mode === 'UNC') return th === 1 ? 'AXTUH1' : 'AXTUH';
  return th === 1 ? 'AXTCH1' : 'AXTCH';
}

/**
 * Validate AXT parameters for a matrix of `rows` rows and derive the variant and hdr offset
 * width. Throws InvalidParameterError naming the parameter; when the row index does not fit
 * in the 32 − offsetBits high bits of hdr[], the message says which BS (or TH) would fit.
 * Cost O(1).
 * @example
 * axtResolveParams(1000, { mode: 'COM', th: 1, thw: 32, bs: 512 }).offsetBits; // 9
 */
export function axtResolveParams(rows: number, params: Partial<AxtParams> = {}): AxtResolvedParams {
  const thw = axCheckHalfWidth('thw', params.thw ?? axtDefaultParams.thw);
  const th = params.th ?? axtDefaultParams.th;
  if (typeof th !== 'number' || !Number.isInteger(th) || th < 1) throw new InvalidParameterError('th', 'an integer ≥ 1', th);
  const mode = params.mode ?? axtDefaultParams.mode;
  if (mode !== 'UNC' && mode !== 'COM') throw new InvalidParameterError('mode', "'UNC' or 'COM'", mode);
  const bs = params.bs ?? axtDefaultParams.bs;
  const variant = axtVariant(mode, th);
  let offsetBits = 0;
  if (variant === 'AXTCH1') {
    if (typeof bs !== 'number' || !Number.isInteger(bs) || bs < thw || bs > 1024 || (bs & (bs - 1)) !== 0) {
      throw new InvalidParameterError('bs', `a power of two with THW = ${thw} ≤ BS ≤ 1024 (a block is a whole number of tiles)`, bs);
    }
    offsetBits = axtCeilLog2(bs);
    axtCheckHdrFit(rows, offsetBits, 'bs', bs, thw);
  } else if (variant === 'AXTCH') {
    offsetBits = axtCeilLog2(th);
    axtCheckHdrFit(rows, offsetBits, 'th', th, thw);
  }
  return { thw, th, mode, bs, variant, offsetBits };
}
