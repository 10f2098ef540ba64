/**
 * The csr-vi / csr-vi-slice cases of session 14's hardening (s14-harden-e), shared by the lavapipe
 * test (hostile-s14a-csr-vi-device.test.ts) and the device bench (bench/hostile-s14.ts): matrices a
 * user may pass — NaN, ±Inf, −0, subnormals beside normal values, ±3e38, float64 values that round
 * to one float32, every value distinct, the table at its capacity and one past it, 0×0, 1×1, n×0,
 * 0×n, rectangular, rows over several column windows, row blocks split over small bindings — and
 * the product of each kernel against the float64 product of the float32-rounded matrix: a
 * non-finite reference row must come back as the same non-finite value, every other row within the
 * conformance tier's float32 bound.
 */
import { type CsrMatrix, csrFromTriplets, csrSpmv, csrViFromCsr } from '@gpusparse/formats';
import { type AnySpmvKernel, csrViKernel, csrViSliceKernel, type GpuContext, readF32, type UploadOptions, uploadF32 } from '../src/index';
import { rowBounds } from '../src/testing/conformance';

export const VI_KERNELS: readonly AnySpmvKernel[] = [csrViKernel, csrViSliceKernel];

/** One case: a matrix, the kernel parameters and upload options, the table entries it must keep (when it tests the table). */
export interface ViCase {
  readonly name: string;
  readonly a: CsrMatrix;
  readonly params?: Record<string, number>;
  readonly opts?: UploadOptions;
  readonly tableSize?: number;
}

/** Two rows of 3 entries over 5 columns holding `v` (row 0: columns 0, 2, 4; row 1: 1, 3, 4). */
const two = (v: number[]) => csrFromTriplets(2, 5, [0, 0, 0, 1, 1, 1], [0, 2, 4, 1, 3, 4], v);

/** n rows of `per` entries over `cols` columns, values from `value(r, j)`. */
function rows(n: number, cols: number, per: number, value: (r: number, j: number) => number): CsrMatrix {
  const [ri, ci, v] = [[], [], []] as number[][];
  for (let r = 0; r < n; r++) for (let j = 0; j < per; j++) [ri.push(r), ci.push((r * 7 + j * Math.ceil(cols / per)) % cols), v.push(value(r, j))];
  return csrFromTriplets(n, cols, ri, ci, v);
}

/** The cases (the same for both kernels; slice height 8 where a slice must fit a small binding). */
export function viCases(): ViCase[] {
  const split = rows(400, 1000, 5, (r, j) => (j === 0 ? r + 0.5 : (j % 3) + 1));
  return [
    { name: 'NaN in the raw stream', a: two([Number.NaN, 1, 1, Number.NaN, 1, 1]) },
    { name: '+Inf and −Inf (table and raw)', a: two([Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, 1, Number.NEGATIVE_INFINITY, 1, 2]) },
    { name: '−0 (raw) beside +0 and 1', a: two([-0, -0, 0, -0, 1, 1]) },
    { name: 'float32 subnormals beside normal values', a: two([1e-40, 1e-40, 1, 1, 1, 3e-39]) },
    { name: '±3e38 (float32 holds them; products stay finite)', a: csrFromTriplets(2, 4, [0, 1], [0, 3], [3e38, -3e38]) },
    { name: 'float64 values that round to one float32 (three table entries, one device value)', a: two([1 + 1e-12, 1 + 2e-12, 1 + 1e-12, 1 + 2e-12, 1, 1]), tableSize: 3 },
    { name: 'every value distinct: an empty table, all raw', a: rows(50, 60, 4, (r, j) => r * 4 + j + 0.25), tableSize: 0 },
    { name: 'v = 1: the table at its capacity (2 values)', a: csrFromTriplets(1, 9, [0, 0, 0, 0], [0, 1, 2, 3], [1, 1, 2, 2]), params: { valueBits: 1 }, tableSize: 2 },
    { name: 'v = 1: one value past the capacity goes raw', a: csrFromTriplets(1, 9, [0, 0, 0, 0, 0, 0], [0, 1, 2, 3, 4, 5], [1, 1, 2, 2, 3, 3]), params: { valueBits: 1 }, tableSize: 2 },
    { name: '0×0', a: csrFromTriplets(0, 0, [], [], []) },
    { name: '1×1', a: csrFromTriplets(1, 1, [0], [0], [2]) },
    { name: '3×0 (y = 0)', a: csrFromTriplets(3, 0, [], [], []) },
    { name: '0×3', a: csrFromTriplets(0, 3, [], [], []) },
    { name: 'rectangular 3×1000 with an empty row', a: csrFromTriplets(3, 1000, [0, 0, 2, 2], [0, 999, 5, 998], [2, 2, 2, 3]) },
    { name: 'v = 16: rows over 4–5 column windows of 65 536', a: rows(40, 300_000, 6, (_r, j) => (j % 2) + 1), params: { valueBits: 16 } },
    { name: 'row blocks over 1 KiB bindings (slice height 8)', a: split, params: { sliceHeight: 8 }, opts: { maxBindingBytes: 1024 } },
    { name: 'row blocks over 512-byte bindings (slice height 8)', a: split, params: { sliceHeight: 8, valueBits: 2 }, opts: { maxBindingBytes: 512 } },
  ];
}

/** x for `a`: float32 values 1, 2, 3, 1, 2, 3, … */
const xFor = (a: CsrMatrix) => Float64Array.from({ length: a.cols }, (_, i) => 1 + (i % 3));

/**
 * y = A·x with `kernel` on `c` (its matrix rounded to float32 on the device, as every float32
 * kernel does): pass when each row matches the float64 product of the rounded matrix — the same
 * non-finite value where that is non-finite, else within the per-row float32 bound — and the
 * conversion kept `c.tableSize` table entries when given.
 */
export async function viProduct(ctx: GpuContext, kernel: AnySpmvKernel, c: ViCase): Promise<{ pass: boolean; detail: string }> {
  const params = c.params ?? {};
  const m = csrViFromCsr(c.a, { valueBits: params.valueBits ?? 0 });
  const a32 = { ...c.a, values: Float64Array.from(c.a.values, Math.fround) };
  const x = xFor(c.a);
  const h = kernel.upload(ctx, m, params, c.opts);
  const dx = uploadF32(ctx, x.length > 0 ? x : new Float64Array(1));
  const dy = uploadF32(ctx, new Float64Array(Math.max(1, c.a.rows)).fill(Number.NaN)); // beta = 0 must overwrite
  try {
    kernel.encode(ctx, h, dx, dy, { alpha: 1, beta: 0 });
    const y = await readF32(ctx, dy, c.a.rows);
    const want = csrSpmv(a32, x);
    const bound = rowBounds(a32, x, 1, 0, new Float64Array(c.a.rows));
    const bad: string[] = [];
    for (let i = 0; i < c.a.rows; i++) {
      const ok = Number.isFinite(want[i]!) ? Math.abs(y[i]! - want[i]!) <= bound[i]! : Object.is(y[i], want[i]);
      if (!ok) bad.push(`row ${i}: ${y[i]} against ${want[i]} (bound ${bound[i]!.toExponential(1)})`);
    }
    const tableOk = c.tableSize === undefined || m.table.length === c.tableSize;
    const detail = `${h.blocks} block(s), table ${m.table.length}, raw ${m.rawCols.length}${bad.length ? `; ${bad.slice(0, 3).join('; ')}` : ''}${tableOk ? '' : `; expected a table of ${c.tableSize}`}`;
    return { pass: bad.length === 0 && tableOk, detail };
  } finally {
    for (const b of [h, dx, dy]) b.dispose();
  }
}

/**
 * Values float32 cannot hold, each a matrix that every float32 path must refuse (gpuOperatorFromCsr
 * does; the csr-vi uploads rounded them to ±Infinity or flushed them before s14-harden-e).
 */
export const VI_OUT_OF_RANGE: readonly { name: string; a: CsrMatrix; where: RegExp }[] = [
  { name: '1e39 in the table', a: two([1e39, 1e39, 1, 1, 1, 1]), where: /value-table entry \d, A\(row 1, column 1\).*got 1e\+39/ },
  { name: '−1e39 in the raw stream', a: two([1, 1, 1, 1, -1e39, 2]), where: /raw entry \d, A\(row 2, column 4\).*got -1e\+39/ },
  { name: 'every value below float32 normals (1e-40)', a: two([1e-40, 1e-40, 1e-40, 1e-40, 1e-40, 2e-40]), where: /expected a largest \|value\| ≥ 1\.2e-38/ },
];
