/**
 * Error classes shared by every gpusparse package. Each message names what was expected,
 * what came, and where (file, line, row, argument), so that a user can act on it.
 * @module
 */

/** Base class: every error thrown on purpose by gpusparse extends it. */
export class GpuSparseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * Two shapes that must agree do not.
 * @example
 * throw new DimensionMismatchError('spmv x', 10, 9); // "spmv x: expected length 10, got 9"
 */
export class DimensionMismatchError extends GpuSparseError {
  constructor(
    readonly where: string,
    readonly expected: number | string,
    readonly got: number | string,
  ) {
    super(`${where}: expected length ${expected}, got ${got}`);
  }
}

/** A sparse structure is not valid (unsorted row pointers, column out of range, ...). */
export class InvalidMatrixError extends GpuSparseError {
  constructor(
    readonly where: string,
    detail: string,
  ) {
    super(`${where}: ${detail}`);
  }
}

/** A format parameter is outside the range its paper allows. */
export class InvalidParameterError extends GpuSparseError {
  constructor(
    readonly parameter: string,
    readonly expected: string,
    readonly got: unknown,
  ) {
    super(`parameter ${parameter}: expected ${expected}, got ${String(got)}`);
  }
}

/** The operation exists in the interface but this object does not provide it. */
export class NotSupportedError extends GpuSparseError {}
