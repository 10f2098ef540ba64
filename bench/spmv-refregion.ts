/**
 * How much of a CI Hamiltonian seed 001's Reference region would hold (issue 20, session 11, before
 * building its hybrid): the entries in the first B columns (the Reference determinants, stored as
 * ELL), for several boundaries B, with the ELL width that region needs (its longest row), the
 * padding that width implies and the region's density. A small share, or a width far above the
 * mean, means the Reference block cannot carry the product. Host only; O(nnz) per boundary.
 *
 *   npx tsx bench/spmv-refregion.ts /tmp/m/ci-H10_sto6g_C1_dice.csr [more.csr]
 * Inputs: the raw CSR triples of `bench/spmv.ts --dump` (NAME.csr); one line per (matrix, B).
 * @module
 */
import { basename } from 'node:path';
import type { CsrMatrix } from '@gpusparse/formats';
import { readRawCsr } from './spmv-raw';

/** Share and shape of the entries in columns [0, b) of `a`. */
export function referenceShare(a: CsrMatrix, b: number): { share: number; refNnz: number; width: number; meanPerRow: number; padding: number; density: number; rowsTouching: number } {
  let refNnz = 0;
  let width = 0;
  let rowsTouching = 0;
  for (let r = 0; r < a.rows; r++) {
    let n = 0;
    for (let k = a.rowPtr[r]!; k < a.rowPtr[r + 1]!; k++) if (a.colIdx[k]! < b) n++;
    refNnz += n;
    width = Math.max(width, n);
    if (n > 0) rowsTouching++;
  }
  const nnz = a.rowPtr[a.rows]!;
  return {
    share: nnz ? refNnz / nnz : 0,
    refNnz,
    width,
    meanPerRow: refNnz / Math.max(1, a.rows),
    padding: refNnz ? (width * a.rows) / refNnz : 0,
    density: refNnz / Math.max(1, a.rows * Math.min(b, a.cols)),
    rowsTouching,
  };
}

if (process.argv[1]?.endsWith('spmv-refregion.ts')) {
  for (const f of process.argv.slice(2)) {
    const a = readRawCsr(f);
    const nnz = a.rowPtr[a.rows]!;
    console.log(`${basename(f, '.csr')}: ${a.rows} rows, ${nnz} nnz (${(nnz / a.rows).toFixed(0)} per row)`);
    const bs = [0.001, 0.01, 0.02, 0.05, 0.1, 0.2].map((p) => Math.max(1, Math.round(p * a.cols)));
    for (const b of [...new Set([...bs, 2048, 4096, 8192].filter((x) => x <= a.cols))].sort((p, q) => p - q)) {
      const s = referenceShare(a, b);
      console.log(
        `REFREGION ${basename(f, '.csr')} B=${b} (${((100 * b) / a.cols).toFixed(1)} % of columns) | ${(100 * s.share).toFixed(1)} % of entries | ELL width ${s.width}, mean ${s.meanPerRow.toFixed(1)} per row, padding ${s.padding.toFixed(2)}× | density ${(100 * s.density).toFixed(2)} % | rows touching ${((100 * s.rowsTouching) / a.rows).toFixed(1)} %`,
      );
    }
  }
}
