/**
 * Header and option types of the Matrix Market reader and writer.
 * Matrix Market reference: Boisvert, Pozo, Remington, "The Matrix Market Exchange Formats:
 * Initial Design" (NIST IR 5935, 1996).
 * @module
 */
import type { CsrMatrix } from '../core/types';

/** `coordinate` (sparse triplets) or `array` (dense, column-major). */
export type MatrixMarketFormat = 'coordinate' | 'array';
/** Value fields this library reads; `complex` is recognised and rejected. */
export type MatrixMarketField = 'real' | 'integer' | 'pattern';
/** Symmetry structures; all are expanded to the full matrix on read. */
export type MatrixMarketSymmetry = 'general' | 'symmetric' | 'skew-symmetric' | 'hermitian';

/** Everything the reader learned from the banner, the comments and the size line. */
export interface MatrixMarketHeader {
  readonly object: 'matrix';
  readonly format: MatrixMarketFormat;
  readonly field: MatrixMarketField;
  readonly symmetry: MatrixMarketSymmetry;
  readonly rows: number;
  readonly cols: number;
  /**
   * Entries the size line announces: L for coordinate files; rows·cols (general),
   * n(n+1)/2 (symmetric, hermitian) or n(n−1)/2 (skew-symmetric) for array files.
   */
  readonly declaredEntries: number;
  /** Entry lines actually read (before symmetric expansion). */
  readonly actualEntries: number;
  /**
   * Comment lines between the banner and the size line, without the leading '%': the first
   * ones only, up to `maxCommentLines` lines and `maxCommentBytes` bytes.
   */
  readonly comments: readonly string[];
  /** Header comment lines read but not kept (past the caps). */
  readonly omittedComments: number;
}

/** A parsed file: canonical CSR (symmetry expanded, duplicates summed) plus its header. */
export interface MatrixMarketReadResult {
  readonly matrix: CsrMatrix;
  readonly header: MatrixMarketHeader;
  /** Every warning issued (also passed to `onWarning` as it happens). */
  readonly warnings: readonly MatrixMarketWarning[];
}

/** A problem the reader tolerated because an option told it to (e.g. `strictCount: false`). */
export interface MatrixMarketWarning {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** Options of {@link parseMatrixMarket} and `readMatrixMarket`. */
export interface MatrixMarketReadOptions {
  /** Name used in errors and warnings (the path for `readMatrixMarket`; `'<input>'` otherwise). */
  readonly name?: string;
  /**
   * Default true: a coordinate file with more entries than its size line declares is an error.
   * With false the extra entries are kept and a warning is issued. Fewer entries than declared
   * is always an error (the file is truncated).
   */
  readonly strictCount?: boolean;
  /** Called once per warning, when it happens. */
  readonly onWarning?: (w: MatrixMarketWarning) => void;
  /** Array files: drop exact zeros (default) or keep every value as a stored entry. */
  readonly arrayZeros?: 'drop' | 'keep';
  /** Longest accepted line in bytes (default 1 MiB); a longer line is an error, not a hang. */
  readonly maxLineBytes?: number;
  /**
   * Largest accepted row or column count. Default: max(2^22, 16 · entries read), so a tiny file
   * claiming a 2·10^9-row matrix cannot make the reader allocate gigabytes of row pointers; pass
   * a number (or Infinity) to read very large, very empty matrices.
   */
  readonly maxDimension?: number;
  /** Header comment lines kept in `header.comments` (default 1000); later ones are only counted. */
  readonly maxCommentLines?: number;
  /** Bytes of header comments kept (default 64 KiB); later ones are only counted. */
  readonly maxCommentBytes?: number;
  /**
   * Memory the reader may use for its arrays, in bytes. A size line whose arrays cannot fit
   * (estimated before allocation), or triplet storage that would grow past it, throws
   * ResourceLimitError. Default: unlimited for the in-memory parsers; `readMatrixMarket` in node
   * uses the memory available to the process.
   */
  readonly maxBytes?: number;
}

/** Options of `formatMatrixMarket` and `writeMatrixMarket`. */
export interface MatrixMarketWriteOptions {
  /** `coordinate` (default) or `array` (dense column-major; every zero written). */
  readonly format?: MatrixMarketFormat;
  /** `real` (default; shortest round-trip decimal), `integer` (values must be integers) or `pattern`. */
  readonly field?: MatrixMarketField;
  /**
   * `general` (default) or `symmetric`: then only the lower triangle is written, and the matrix
   * must be square with A[i][j] === A[j][i] for every stored entry (InvalidMatrixError otherwise).
   */
  readonly symmetry?: 'general' | 'symmetric';
  /** Comment lines written after the banner (a leading '%' is added; newlines are split). */
  readonly comments?: readonly string[];
  /** Gzip the output file (writeMatrixMarket only); default: the path ends in `.gz`. */
  readonly gzip?: boolean;
}
