/**
 * The typed error of the FCIDUMP reader.
 * @module
 */
import { GpuSparseError } from '@gpusparse/formats';

/**
 * A malformed or unsupported FCIDUMP file. The message names the file, the line (1-based, when
 * the problem is on one line), what was expected and what came.
 * @example
 * throw new FcidumpError('h2.FCIDUMP', 12, 'five fields "value i j k l"', '"0.5 1 1"');
 * // "h2.FCIDUMP:12: expected five fields "value i j k l", got "0.5 1 1""
 */
export class FcidumpError extends GpuSparseError {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly expected: string,
    readonly got: string,
  ) {
    super(`${file}${line === undefined ? '' : `:${line}`}: expected ${expected}, got ${got}`);
  }
}
