/**
 * ELL kernel: one invocation per row over the column-major slots (seed 001 §3.2, Algorithm 2),
 * slot k of row r at k·rows + r, so the invocations of a workgroup read consecutive addresses
 * (coalesced). Every slot is multiplied without a branch: padding holds value 0 and a valid
 * column (the ELL-family convention), so it adds exactly 0.
 * Caveat of multiplying padding: an empty row's slots point at column 0, so its result is
 * 0·x[0], NaN when x[0] is ±Inf or NaN (the -R kernels and the hybrid stop at the row length). Matrices past one binding are split
 * into row blocks (and a row wider than a binding into slot ranges): see `ell-device`.
 *
 * No float atomics: invocation r alone computes and stores y[r] within a dispatch; a later
 * slot-range piece of the same rows accumulates with beta = 1 in a later, ordered dispatch.
 * @module
 */
import { type CsrMatrix, type EllMatrix, ellRowLengths, InvalidParameterError } from '@gpusparse/formats';
import { csrVectorsFit } from '../csr/csr-device';
import type { MatrixShape, SpmvKernel } from '../types';
import { signature, type WgslBinding } from '../wgsl/index';
import { spmvLanesHead } from '../wgsl/lanes';
import { type DeviceEllMatrix, isDeviceEll } from './ell-build';
import { bindingCapElems, type EllDeviceMatrix, type EllLayout, ellPieces, encodeEll, uploadPieces } from './ell-device';

/** Parameters of {@link ellKernel} and the ELL-R kernel. */
export type EllParams = { workgroupSize: number };

/** Bindings of the ELL kernels; ELL-R adds `rl` (row lengths) before x. */
export function ellBindings(withLengths: boolean): WgslBinding[] {
  return [
    { name: 'col_idx', type: 'array<u32>', access: 'r' },
    { name: 'vals', type: 'array<f32>', access: 'r' },
    ...(withLengths ? [{ name: 'rl', type: 'array<u32>', access: 'r' } as const] : []),
    { name: 'x', type: 'array<f32>', access: 'r' },
    { name: 'y', type: 'array<f32>', access: 'w' },
  ];
}

/**
 * The thread-per-row ELL shader: row r sums slots k < u.count (ELL: every slot) or k < rl[r]
 * (ELL-R, Algorithm 3) at k·u.rows + r. Uniform `count` is the piece's width.
 * @example ellWgsl(256, false)
 */
export function ellWgsl(wg: number, withLengths: boolean): string {
  return `${spmvLanesHead(ellBindings(withLengths), { workgroupSize: wg, lanes: 1, subgroups: false })}
  if (row >= u.rows) { return; }
  var s = 0.0;
  let end = ${withLengths ? 'rl[row]' : 'u.count'};
  for (var k = 0u; k < end; k++) {
    let q = k * u.rows + row;
    s = s + vals[q] * x[col_idx[q]];
  }
  store_y(row, s);
}`;
}

/** What distinguishes ELL from ELL-R for {@link ellFamilyKernel}. */
export interface EllFamilySpec<M> {
  readonly id: string;
  readonly title: string;
  /** Full validation of `m` (throws InvalidMatrixError): the shader reads without bounds checks. */
  readonly validate: (m: M) => void;
  /** rl[] to stop each row at (ELL-R), or null to multiply every slot (ELL). */
  readonly rowLength: (m: M) => Int32Array | null;
}

/**
 * Most slots (rows × longest row) an ELL / ELL-R matrix may have: 2^31, i.e. 16 GiB on the device
 * (8 bytes a slot, split over bindings) and 24 GiB on the host while converting (f64 values).
 * The 10^6-row power-law matrix of issue 14 (rows up to 2000) is just under it.
 */
export const ELL_MAX_SLOTS = 2 ** 31;

/** True, or why `a` would not fit ELL (its padded slots), from the CSR row pointer. O(rows). */
export function ellPrecheck(a: CsrMatrix): true | string {
  let w = 0;
  for (let i = 0; i < a.rows; i++) w = Math.max(w, a.rowPtr[i + 1]! - a.rowPtr[i]!);
  const slots = a.rows * w;
  if (slots <= ELL_MAX_SLOTS) return true;
  return `ELL would pad ${a.rows} rows to the longest row (${w}): ${slots.toExponential(2)} slots (${((8 * slots) / 2 ** 30).toFixed(0)} GiB on the device, ${(slots / Math.max(1, a.rowPtr[a.rows]!)).toFixed(0)}× the non-zeros), more than ${ELL_MAX_SLOTS} slots: use sliced-ell, sell or hybrid`;
}

/**
 * A thread-per-row kernel over an ELL-layout format (`id` is also the format name).
 * @example ellFamilyKernel({ id: 'ell', title: '…', validate: ellRowLengths, rowLength: () => null })
 */
export function ellFamilyKernel<M extends EllLayout & { cols: number; nnz: number }>(spec: EllFamilySpec<M>): SpmvKernel<M, EllParams, EllDeviceMatrix> {
  const lengths = spec.id.endsWith('-r');
  return {
    id: spec.id,
    format: spec.id,
    title: spec.title,
    params: { workgroupSize: { description: 'invocations per workgroup', values: [256, 64] } },
    defaults: { workgroupSize: 256 },
    supports: (m, limits) => csrVectorsFit(m, limits.maxStorageBufferBindingSize),
    precheck: (a) => ellPrecheck(a),
    wgsl: (p) => ellWgsl(p.workgroupSize, lengths),
    // declared so that the tuner compiles it ahead of time (autotune/prewarm.ts)
    pipelineSpec(p, caps) {
      const text = this.wgsl(p, caps);
      return { key: text, label: `${spec.id}(wg=${p.workgroupSize})`, bindings: signature(ellBindings(lengths)), wgsl: () => text };
    },
    upload(ctx, m, params = {}, opts) {
      const p = { ...this.defaults, ...params };
      spec.validate(m);
      const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
      return uploadPieces(ctx, spec.id, m, pipe, ellPieces(m, spec.rowLength(m), bindingCapElems(ctx, opts)), p.workgroupSize);
    },
    encode: encodeEll,
  };
}

/** ELL from a host `EllMatrix` (the layout converted on the host). */
const hostEll = ellFamilyKernel<EllMatrix>({
  id: 'ell',
  title: 'ELL: one invocation per row over column-major slots, padding multiplied by 0 (seed 001 §3.2, Algorithm 2)',
  validate: (m) => void ellRowLengths(m), // columns and padding
  rowLength: () => null,
});

/**
 * Thread-per-row ELL SpMV. Cost per apply: one dispatch per piece (one when the matrix fits a
 * binding), 8·rows·width bytes of matrix traffic (padding included) plus the x gathers. Takes
 * a host `EllMatrix` or the slots of a {@link DeviceEllMatrix} built on the device from the CSR
 * arrays (`ell-build.ts`: no host conversion, no transfer; the handle holds the matrix).
 * @example const h = ellKernel.upload(ctx, ellFromCsr(a)); ellKernel.encode(ctx, h, x, y);
 */
export const ellKernel: SpmvKernel<EllMatrix | DeviceEllMatrix, EllParams, EllDeviceMatrix> = withDeviceBuild(hostEll);

/**
 * `host` (ELL or ELL-R) taking also a {@link DeviceEllMatrix} of its own format: the handle
 * binds the device-built arrays (no validation: they came from validated CSR arrays). O(1).
 */
export function withDeviceBuild<M extends MatrixShape>(host: SpmvKernel<M, EllParams, EllDeviceMatrix>): SpmvKernel<M | DeviceEllMatrix, EllParams, EllDeviceMatrix> {
  return {
    ...(host as SpmvKernel<M | DeviceEllMatrix, EllParams, EllDeviceMatrix>),
    upload(ctx, m, params = {}, opts) {
      if (!isDeviceEll(m)) return host.upload.call(this, ctx, m, params, opts);
      if (m.format !== host.id) throw new InvalidParameterError(`${host.id} upload`, `a device-built ${host.id} matrix`, `one of format ${m.format}`);
      const p = { ...this.defaults, ...params };
      const pipeline = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
      return deviceEllHandle(m, pipeline, p.workgroupSize);
    },
  };
}

/** A handle on the slots of device matrix `m` (one piece; holds `m` until its dispose). O(1). */
function deviceEllHandle(m: DeviceEllMatrix, pipeline: EllDeviceMatrix['pipeline'], rowsPerGroup: number): EllDeviceMatrix {
  m.retain();
  let held = true;
  const part = { rows: m.rows, rowBase: 0, count: m.width, accumulate: false, groups: Math.ceil(m.rows / rowsPerGroup), arrays: m.arrays };
  return {
    kernelId: m.format,
    rows: m.rows,
    cols: m.cols,
    nnz: m.nnz,
    deviceBytes: m.arrays.reduce((s, b) => s + b.bytes, 0),
    blocks: 1,
    parts: [part],
    pipeline,
    dispose() {
      if (held) m.release();
      held = false;
    },
  };
}
