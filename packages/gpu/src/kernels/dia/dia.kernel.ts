/**
 * DIA kernel (survey §2.1.1; Bell & Garland's DIA kernel): one invocation per row loops over
 * the stored diagonals; the padded, diagonal-major layout `data[d·rows + i]` makes the loads of
 * consecutive rows consecutive (coalesced), and x is read at i + offset[d], also consecutive.
 * The offsets travel in a small table (4 i32 per diagonal: offset, base, valid row range), so
 * out-of-matrix padding slots are skipped instead of reading x out of range (rectangular
 * matrices included). Refuses (in `supports`, with the reason) matrices with more diagonals
 * than the DIA format's default maxDiagonals.
 *
 * No float atomics: invocation t of a dispatch alone computes and stores y[row_base + t]; when a
 * matrix is split over bindings (row blocks × diagonal ranges), a later diagonal range of the
 * same rows runs in a later dispatch with beta = 1 (dispatches execute in order).
 * @module
 */
import { type DiaMatrix, diaDefaultParams, InvalidMatrixError, validateDia } from '@gpusparse/formats';
import { bindingCapElems, type EllDeviceMatrix } from '../ell/ell-device';
import type { SpmvKernel } from '../types';
import { signature } from '../wgsl/index';
import { type DeviceDiaMatrix, deviceDiaHandle, isDeviceDia } from './dia-build';
import { DIAGONAL_BINDINGS, type DiagonalKernelParams, type DiagonalLayout, diagonalKernel } from './diagonal-device';

/**
 * A DIA matrix as a {@link DiagonalLayout} (slot of row i on diagonal d: d·rows + i), after
 * validating it once (offsets inside the matrix, ascending: none dropped silently). O(ndiag).
 * Shared by the DIA kernels.
 * @example diaLayout(diaFromCsr(a)).base(2) // 2·rows
 */
export function diaLayout(m: DiaMatrix): DiagonalLayout {
  validateDia(m, 'dia upload');
  const { rows, cols, offsets, data } = m;
  if (offsets.length * rows !== data.length) throw new InvalidMatrixError('dia upload', `expected data of rows·ndiag = ${rows * offsets.length} slots, got ${data.length}`);
  return { rows, cols, offsets, values: data, base: (d) => d * rows };
}

/**
 * The DIA conversion of the float32 DIA kernels: values written as float32 straight from the CSR
 * (no float64 array of rows·ndiag slots, no second pass to round it at upload). Shared by `dia`
 * and `dia-tiled`, so that the tuner converts once for both.
 */
export const DIA_DEVICE_FORMAT = { valueType: 'f32' } as const;

const threadPerRow = diagonalKernel<DiaMatrix>({
  id: 'dia',
  format: 'dia',
  title: 'DIA: one invocation per row over the padded diagonals, coalesced (survey §2.1.1)',
  maxDiagonals: diaDefaultParams.maxDiagonals,
  count: (m) => m.offsets.length,
  formatParams: DIA_DEVICE_FORMAT,
  layout: diaLayout,
});

/**
 * Thread-per-row DIA SpMV. Cost per apply: one dispatch per piece; 4·rows·ndiag bytes of values
 * (padding included, β = nnz / (rows·ndiag)) plus the x reads. Uploads a host `DiaMatrix`, or
 * takes the layout of a {@link DeviceDiaMatrix} built on the device (no transfer).
 * @example const h = diaKernel.upload(ctx, diaFromCsr(a)); diaKernel.encode(ctx, h, x, y);
 */
export const diaKernel: SpmvKernel<DiaMatrix | DeviceDiaMatrix, DiagonalKernelParams, EllDeviceMatrix> = {
  ...threadPerRow,
  // reads the shape and the offsets only, which both kinds have
  supports: (m, limits, params) => threadPerRow.supports(m as DiaMatrix, limits, params),
  upload(ctx, m, params = {}, opts) {
    if (!isDeviceDia(m)) return threadPerRow.upload.call(this, ctx, m, params, opts);
    const p = { ...this.defaults, ...params };
    const text = this.wgsl(p, ctx.caps);
    const pipe = ctx.pipelines.get({ key: text, label: `dia(wg=${p.workgroupSize})`, bindings: signature(DIAGONAL_BINDINGS), wgsl: () => text });
    return deviceDiaHandle(m, this.id, pipe, bindingCapElems(ctx, opts), Number.POSITIVE_INFINITY, p.workgroupSize);
  },
};
