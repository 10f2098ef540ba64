/**
 * HM kernel (seed 002 §3.1 storage, Hossain & Mahmud): one invocation per row loops over the
 * stored diagonals of the Xlist. Entry (i, i + k) of diagonal d sits at starts[d] + min(i, i + k),
 * i.e. at starts[d] + min(k, 0) + i: stride 1 in i, so consecutive rows read consecutive slots
 * (coalesced) with no padding read at all (HM stores only the in-matrix part of each diagonal).
 * Same shader as DIA (the diagonal table gives each diagonal's base and valid row range).
 * Refuses (in `supports`) matrices with more diagonals than the HM format's default maxDiagonals.
 *
 * No float atomics: invocation t of a dispatch alone stores y[row_base + t]; split matrices
 * accumulate later diagonal ranges in later, ordered dispatches (beta = 1).
 * @module
 */
import { type HmMatrix, hmDefaultParams, InvalidMatrixError, validateHm } from '@gpusparse/formats';
import { type DiagonalKernelParams, diagonalKernel } from '../dia/diagonal-device';
import type { EllDeviceMatrix } from '../ell/ell-device';
import type { SpmvKernel } from '../types';

/**
 * Thread-per-row SpMV over HM storage. Cost per apply: one dispatch per piece; 4·Σ|diagonal|
 * bytes of values plus the x reads; each row reads the 4-word table entry of every diagonal.
 * @example const h = hmKernel.upload(ctx, hmFromCsr(a)); hmKernel.encode(ctx, h, x, y);
 */
export const hmKernel: SpmvKernel<HmMatrix, DiagonalKernelParams, EllDeviceMatrix> = diagonalKernel<HmMatrix>({
  id: 'hm',
  format: 'hm',
  title: 'HM: one invocation per row over the Xlist diagonals indexed by min(i, j) (seed 002 §3.1)',
  maxDiagonals: hmDefaultParams.maxDiagonals,
  count: (m) => m.numDiagonals,
  layout(m) {
    validateHm(m, 'hm upload'); // offsets inside the matrix, in HM order, once; starts consistent
    const { rows, cols, offsets, starts, values } = m;
    if (starts.length !== offsets.length) throw new InvalidMatrixError('hm upload', `expected ${offsets.length} diagonal starts, got ${starts.length}`);
    for (let d = 0; d < offsets.length; d++) {
      const k = offsets[d]!;
      const len = Math.max(0, Math.min(rows, cols - k) - Math.max(0, -k)); // rows i with 0 ≤ i + k < cols
      if (!(starts[d]! >= 0 && starts[d]! + len <= values.length)) {
        throw new InvalidMatrixError('hm upload', `diagonal ${k}: expected its ${len} slots from start ${starts[d]} inside the ${values.length} values`);
      }
    }
    return { rows, cols, offsets, values, base: (d) => starts[d]! + Math.min(offsets[d]!, 0) };
  },
});
