/**
 * ELL-R kernel: one invocation per row that stops at the row's length rl[r] (seed 001 §3.3,
 * Algorithm 3), so padding is neither read nor multiplied; loads stay coalesced across rows
 * (slot k of row r at k·rows + r). Split over bindings as the ELL kernel (row blocks, slot
 * ranges with row lengths clamped to each range).
 *
 * No float atomics: invocation r alone computes and stores y[r] within a dispatch; a later
 * slot-range piece of the same rows accumulates with beta = 1 in a later, ordered dispatch.
 * @module
 */
import { type EllRMatrix, validateEllR } from '@gpusparse/formats';
import type { SpmvKernel } from '../types';
import type { DeviceEllMatrix } from './ell-build';
import type { EllDeviceMatrix } from './ell-device';
import { type EllParams, ellFamilyKernel, withDeviceBuild } from './ell.kernel';

/**
 * Thread-per-row ELL-R SpMV. Cost per apply: one dispatch per piece; 8·nnz bytes of matrix
 * traffic plus 4·rows for rl and the x gathers (padding is skipped). Takes a host `EllRMatrix`
 * or a {@link DeviceEllMatrix} of format 'ell-r' built from the CSR arrays (`ell-build.ts`).
 * @example const h = ellRKernel.upload(ctx, ellRFromCsr(a)); ellRKernel.encode(ctx, h, x, y);
 */
export const ellRKernel: SpmvKernel<EllRMatrix | DeviceEllMatrix, EllParams, EllDeviceMatrix> = withDeviceBuild(
  ellFamilyKernel<EllRMatrix>({
    id: 'ell-r',
    title: 'ELL-R: one invocation per row, loop to rl[r] (seed 001 §3.3, Algorithm 3)',
    validate: validateEllR, // rl ≤ width, columns, padding
    rowLength: (m) => m.rowLength,
  }),
);
