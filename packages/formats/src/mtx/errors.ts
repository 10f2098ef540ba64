/**
 * The Matrix Market error class. Every failure of the reader (and every bad argument of the
 * writer that concerns the file) is a {@link MatrixMarketError}: a malformed file never crashes
 * the process with another exception type and never silently yields a wrong matrix.
 * @module
 */
import { GpuSparseError } from '../core/errors';

/** Longest excerpt of offending input quoted in a message. */
const MAX_QUOTE = 60;

/**
 * Quote a piece of input for an error message: printable ASCII kept, everything else escaped,
 * long input cut. O(min(length, 60)).
 * @example
 * quoteInput('1 2 x\u0000'); // '"1 2 x\\x00"'
 */
export function quoteInput(s: string): string {
  let out = '';
  const n = Math.min(s.length, MAX_QUOTE);
  for (let k = 0; k < n; k++) {
    const c = s.charCodeAt(k);
    if (c >= 32 && c < 127 && c !== 34 && c !== 92) out += s[k];
    else if (c === 34) out += '\\"';
    else if (c === 92) out += '\\\\';
    else if (c === 9) out += '\\t';
    else if (c === 13) out += '\\r';
    else out += `\\x${c.toString(16).padStart(2, '0')}`;
  }
  return `"${out}${s.length > MAX_QUOTE ? '…' : ''}"`;
}

/**
 * A Matrix Market file (or stream) is malformed, unsupported, or cannot be read or written.
 *
 * `line` is the 1-based line of the file where the problem was found (0 when it concerns the
 * file as a whole, e.g. it cannot be opened). The message reads
 * `file:line: expected <expected>, got <got>`.
 * @example
 * try {
 *   parseMatrixMarket('%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n', 'a.mtx');
 * } catch (e) {
 *   if (e instanceof MatrixMarketError) console.log(e.line, e.expected); // 1, 'field real, integer or pattern (complex matrices are not supported)'
 * }
 */
export class MatrixMarketError extends GpuSparseError {
  constructor(
    /** File name or stream label (`'<input>'` when none was given). */
    readonly file: string,
    /** 1-based line number; 0 when the error is not tied to one line. */
    readonly line: number,
    /** What the reader expected at that place. */
    readonly expected: string,
    /** What it found (already quoted or described). */
    readonly got: string,
    /** The system error code when reading or writing failed (`ENOENT`, `ENOSPC`, ...). */
    readonly code?: string,
  ) {
    super(`${file}:${line}: expected ${expected}, got ${got}`);
  }
}
