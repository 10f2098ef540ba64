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

/**
 * The work is valid but does not fit the memory (host or device) or a hard limit of the machine
 * (a GPU binding, a 32-bit index). The message names what was needed, what is available and
 * what to change; the CLI maps it to exit code 5.
 * @example
 * throw new ResourceLimitError('CI Hamiltonian (host)', 41e9, 24e9, 'use point-group symmetry or --backend webgpu');
 * // "CI Hamiltonian (host): needs 41.0 GB, 24.0 GB available — use point-group symmetry or ..."
 */
export class ResourceLimitError extends GpuSparseError {
  constructor(
    readonly what: string,
    readonly bytesNeeded: number,
    readonly bytesAvailable: number,
    readonly advice = '',
  ) {
    super(`${what}: needs ${formatBytes(bytesNeeded)}, ${formatBytes(bytesAvailable)} available${advice ? ` — ${advice}` : ''}`);
  }
}

/** Bytes as a short human figure (B, kB, MB, GB, TB; powers of 1000). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return String(bytes);
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let v = bytes;
  let u = 0;
  while (Math.abs(v) >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  if (u === units.length - 1 && Math.abs(v) >= 1000) return `${bytes.toExponential(2)} B`;
  return u === 0 ? `${v} B` : `${v.toFixed(1)} ${units[u]}`;
}
