/**
 * The typed error of the FCIDUMP reader.
 * @module
 */
import { GpuSparseError } from '@gpusparse/formats';

/**
 * A malformed, damaged or unsupported FCIDUMP file. The message names the file, the line
 * (1-based, when the problem is on one line) and column (when it is one token), what was
 * expected and what came. For two lines that disagree, `otherLine` is the earlier one.
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
    readonly column?: number,
    readonly otherLine?: number,
  ) {
    super(`${file}${line === undefined ? '' : `:${line}`}${line !== undefined && column !== undefined ? `:${column}` : ''}: expected ${expected}, got ${got}`);
  }
}
