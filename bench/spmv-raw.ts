/**
 * Read back the raw CSR triple that `bench/spmv.ts --dump` writes (NAME.rowptr / .cols as u32,
 * .vals as f32; `.gpukit/cusparse_anchor.py` and `bench/spmv_cuda_twin.py` read the same files), so
 * that several bench passes in one GPU call time the very matrices cuSPARSE and the CUDA twins
 * timed, without building them again (the CI-like generator alone takes 15–20 s, an FCIDUMP
 * assembly longer). Named on the command line as `NAME.csr`, like the anchor.
 * @module
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { type CsrMatrix, InvalidMatrixError } from '@gpusparse/formats';

/**
 * A whole file of 4-byte words, read in pieces of ≤ 1 GiB straight into the typed array (readFileSync
 * refuses files over 2 GiB: the columns of a 10^9-entry dump are 5.5 GB).
 */
function words<T extends Uint32Array | Float32Array>(path: string, make: (n: number) => T): T {
  const fd = openSync(path, 'r');
  try {
    const bytes = fstatSync(fd).size;
    if (bytes % 4 !== 0) throw new InvalidMatrixError(path, `expected a whole number of 4-byte words, got ${bytes} bytes`);
    const out = make(bytes / 4);
    const view = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    for (let at = 0; at < bytes; ) {
      const n = readSync(fd, view, at, Math.min(1 << 30, bytes - at), at);
      if (n <= 0) throw new InvalidMatrixError(path, `expected ${bytes} bytes, the file ended at ${at}`);
      at += n;
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/**
 * The square CSR matrix of `base`.rowptr / .cols / .vals (`base` may end in `.csr`): rows from the
 * row pointers, cols = max(rows, largest column + 1), values widened to float64. Checks what a
 * kernel relies on: row pointers from 0, non-decreasing, ending at the entry count, and as many
 * columns as values. O(rows + nnz).
 * @throws InvalidMatrixError naming the file and the first inconsistency
 * @example const a = readRawCsr('/tmp/m/cilike-60000-1000.csr');
 */
export function readRawCsr(base: string): CsrMatrix {
  const stem = base.replace(/\.csr$/, '');
  const rp = words(`${stem}.rowptr`, (n) => new Uint32Array(n));
  const ci = words(`${stem}.cols`, (n) => new Uint32Array(n));
  const v = words(`${stem}.vals`, (n) => new Float32Array(n));
  const rows = rp.length - 1;
  if (rows < 0 || rp[0] !== 0) throw new InvalidMatrixError(`${stem}.rowptr`, `expected row pointers starting at 0, got ${rows < 0 ? 'an empty file' : rp[0]}`);
  for (let r = 0; r < rows; r++) if (rp[r + 1]! < rp[r]!) throw new InvalidMatrixError(`${stem}.rowptr`, `row ${r} ends at ${rp[r + 1]} before it starts at ${rp[r]}`);
  if (rp[rows] !== ci.length || ci.length !== v.length) throw new InvalidMatrixError(stem, `expected ${rp[rows]} entries (the last row pointer) in .cols and .vals, got ${ci.length} and ${v.length}`);
  let maxCol = -1;
  for (let k = 0; k < ci.length; k++) if (ci[k]! > maxCol) maxCol = ci[k]!;
  return { format: 'csr', rows, cols: Math.max(rows, maxCol + 1), rowPtr: Int32Array.from(rp), colIdx: Int32Array.from(ci), values: Float64Array.from(v) };
}
