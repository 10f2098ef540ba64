/**
 * Writing a solution vector as a Matrix Market array file (n × 1, column-major, values in the
 * shortest decimal that reads back to the same double), so `solve -o x.mtx` output is read back
 * by any Matrix Market reader, this package's included.
 * @module
 */
import { type CsrMatrix, MatrixMarketError, writeMatrixMarket } from '@gpusparse/formats';
import { info } from './context';
import { asOutputError } from './output';

/** x as an n × 1 CSR matrix with every entry stored (zeros included: an array file has them all). */
function columnOf(x: Float64Array): CsrMatrix {
  const n = x.length;
  const rowPtr = new Int32Array(n + 1);
  for (let i = 0; i <= n; i++) rowPtr[i] = i;
  return { format: 'csr', rows: n, cols: 1, rowPtr, colIdx: new Int32Array(n), values: x };
}

/** The index of the first non-finite entry of x, or −1. */
export function firstNonFinite(x: Float64Array): number {
  for (let i = 0; i < x.length; i++) if (!Number.isFinite(x[i]!)) return i;
  return -1;
}

/**
 * Write x to `path` as `%%MatrixMarket matrix array real general`, n × 1, with `comment` lines in
 * the header. A full disk is an output error naming the path (exit 5). The caller checks that x
 * is finite first ({@link firstNonFinite}); a non-finite entry is refused by the writer.
 */
export async function writeVectorMatrixMarket(path: string, x: Float64Array, comments: readonly string[]): Promise<void> {
  try {
    await writeMatrixMarket(path, columnOf(x), { format: 'array', comments: [...comments] });
  } catch (e) {
    throw e instanceof MatrixMarketError && e.code ? asOutputError(path, e) : e;
  }
}

/**
 * Write x to `path` for `solve -o` (Matrix Market array, `comment` in the header); returns the
 * path, or undefined when x is not finite (said on stderr: a diverged solve writes no file).
 */
export async function writeSolution(path: string, x: Float64Array, comment: string): Promise<string | undefined> {
  const bad = firstNonFinite(x);
  if (bad >= 0) {
    info(`x not written to ${path}: x[${bad}] = ${x[bad]} (the solve diverged)`);
    return undefined;
  }
  await writeVectorMatrixMarket(path, x, [` x from gpusparse solve — ${comment}`]);
  return path;
}
