/** A small dense matrix (rows of numbers) as CSR, zeros dropped: the hand-written cases of the session-13 device tests. */
import { type CsrMatrix, csrFromTriplets } from '@gpusparse/formats';

export function denseToCsrHelper(rows: number[][]): CsrMatrix {
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  rows.forEach((row, i) => {
    row.forEach((x, j) => {
      if (x !== 0) {
        ri.push(i);
        ci.push(j);
        v.push(x);
      }
    });
  });
  return csrFromTriplets(rows.length, rows[0]!.length, ri, ci, v);
}
