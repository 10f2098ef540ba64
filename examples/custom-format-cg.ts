/**
 * Example: plug a storage format of your own into CG, on the host and on the GPU.
 *
 * The format here is a row-major ELLPACK ("ELL-RM": every row padded to the width w of the
 * longest row, the slots of one row contiguous — the layout a CPU likes, unlike the
 * column-major ELL that packages/formats ships). It is written entirely in this file:
 *   1. the data type and its conversion from CSR;
 *   2. a float64 host operator (LinearOperator<Float64Array>): CG runs on it directly;
 *   3. a WGSL kernel following the SpmvKernel contract of @gpusparse/gpu (shader text, upload,
 *      encode); gpuOperatorFromFormat turns it into a GPU operator, and the same CG — plus
 *      float64 iterative refinement — runs on it. It is checked against the CSR product first.
 *
 *   pnpm tsx examples/custom-format-cg.ts
 */
import { type CsrMatrix, csrSpmv, DimensionMismatchError, generators, type LinearOperator } from '@gpusparse/formats';
import {
  type DeviceMatrix,
  entryArgs,
  type GpuBuf,
  gpuOperatorFromFormat,
  preamble,
  readF32,
  SPMV_STORE,
  SPMV_UNIFORMS,
  type SpmvKernel,
  signature,
  Uniforms,
  uploadF32,
  uploadU32,
  validateIndexRange,
} from '@gpusparse/gpu';
import { cg, refinedSolve } from '@gpusparse/solvers';
import { exampleBackend } from './_backend';

// 1. The format ----------------------------------------------------------------------------
interface EllRowMajor {
  readonly format: 'ell-rm';
  readonly rows: number;
  readonly cols: number;
  readonly nnz: number;
  /** Slots per row. */
  readonly width: number;
  /** Column of slot k of row i at i·width + k; padding repeats the row index with value 0. */
  readonly colIdx: Uint32Array;
  readonly values: Float64Array;
}

function ellRmFromCsr(a: CsrMatrix): EllRowMajor {
  let width = 0;
  for (let i = 0; i < a.rows; i++) width = Math.max(width, a.rowPtr[i + 1]! - a.rowPtr[i]!);
  const colIdx = new Uint32Array(a.rows * width);
  const values = new Float64Array(a.rows * width);
  for (let i = 0; i < a.rows; i++) {
    const s = a.rowPtr[i]!;
    const len = a.rowPtr[i + 1]! - s;
    for (let k = 0; k < width; k++) {
      colIdx[i * width + k] = k < len ? a.colIdx[s + k]! : Math.min(i, a.cols - 1); // padding: a valid column, value 0
      values[i * width + k] = k < len ? a.values[s + k]! : 0;
    }
  }
  return { format: 'ell-rm', rows: a.rows, cols: a.cols, nnz: a.rowPtr[a.rows]!, width, colIdx, values };
}

// 2. A float64 host operator ---------------------------------------------------------------
class EllRmHostOperator implements LinearOperator<Float64Array> {
  readonly rows: number;
  readonly cols: number;
  readonly label = 'ell-rm (host, float64)';
  constructor(private readonly m: EllRowMajor) {
    this.rows = m.rows;
    this.cols = m.cols;
  }
  apply(x: Float64Array, y: Float64Array): void {
    this.applyScaled(1, x, 0, y);
  }
  applyScaled(alpha: number, x: Float64Array, beta: number, y: Float64Array): void {
    if (x.length !== this.cols) throw new DimensionMismatchError('ell-rm apply x', this.cols, x.length);
    if (y.length !== this.rows) throw new DimensionMismatchError('ell-rm apply y', this.rows, y.length);
    const { width, colIdx, values } = this.m;
    for (let i = 0; i < this.rows; i++) {
      let s = 0;
      for (let k = i * width; k < (i + 1) * width; k++) s += values[k]! * x[colIdx[k]!]!;
      y[i] = alpha * s + (beta === 0 ? 0 : beta * y[i]!); // y = α·A·x + β·y
    }
  }
}

// 3. A WGSL kernel on the SpmvKernel contract ----------------------------------------------
interface EllRmDevice extends DeviceMatrix {
  readonly colIdx: GpuBuf;
  readonly values: GpuBuf;
  readonly workgroupSize: number;
  readonly pipeline: ReturnType<import('@gpusparse/gpu').GpuContext['pipelines']['get']>;
}
const BINDINGS = [
  { name: 'col_idx', type: 'array<u32>', access: 'r' },
  { name: 'vals', type: 'array<f32>', access: 'r' },
  { name: 'x', type: 'array<f32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
] as const;

/** Thread per row over its `width` contiguous slots; invocation i alone stores y[i] (no atomics). */
const ellRmKernel: SpmvKernel<EllRowMajor, { workgroupSize: number }, EllRmDevice> = {
  id: 'ell-rm (user)',
  format: 'ell-rm',
  title: 'row-major ELLPACK, one invocation per row (user-defined)',
  params: { workgroupSize: { description: 'invocations per workgroup', values: [128] } },
  defaults: { workgroupSize: 128 },
  supports: (m, limits) => (m.rows * m.width * 4 <= limits.maxStorageBufferBindingSize ? true : 'matrix larger than one binding (this example does not split)'),
  wgsl: (p) => `${preamble(SPMV_UNIFORMS, BINDINGS)}
${SPMV_STORE}
@compute @workgroup_size(${p.workgroupSize})
fn main(${entryArgs()}) {
  let i = wg_linear(wid, nwg) * ${p.workgroupSize}u + lid;
  if (i >= u.rows) { return; }
  var s = 0.0;
  for (var k = i * u.count; k < (i + 1u) * u.count; k++) { s = s + vals[k] * x[col_idx[k]]; }
  store_y(i, s);
}`,
  upload(ctx, m, params = {}) {
    const p = { ...this.defaults, ...params };
    validateIndexRange(m.colIdx, m.cols, 'ell-rm column index'); // makes the unsafe (no bounds checks) mode safe
    const text = this.wgsl(p, ctx.caps);
    const pipeline = ctx.pipelines.get({ key: text, label: this.id, bindings: signature(BINDINGS), wgsl: () => text });
    const colIdx = uploadU32(ctx, m.colIdx, 'ell-rm-cols');
    const values = uploadF32(ctx, m.values, 'ell-rm-vals');
    return { kernelId: this.id, rows: m.rows, cols: m.cols, nnz: m.nnz, deviceBytes: colIdx.bytes + values.bytes, blocks: 1, colIdx, values, workgroupSize: p.workgroupSize, pipeline, dispose: () => {
        colIdx.dispose();
        values.dispose();
      },
    };
  },
  encode(ctx, h, x, y, scale = { alpha: 1, beta: 0 }) {
    const u = new Uniforms();
    u.u[0] = h.rows; // rows
    u.u[1] = 0; // row_base
    u.u[2] = 0; // cont
    u.f[3] = scale.alpha;
    u.f[4] = scale.beta;
    u.u[5] = h.colIdx.bytes / 4 / Math.max(1, h.rows); // count = width
    ctx.recorder.dispatch(h.pipeline, [h.colIdx, h.values, x, y], u, Math.ceil(h.rows / h.workgroupSize));
  },
};

// Use it -----------------------------------------------------------------------------------
const a = generators.poisson2d(64); // 4096 unknowns, SPD
const m = ellRmFromCsr(a);
const xStar = Float64Array.from({ length: a.rows }, (_, i) => Math.cos(i / 50));
const b = csrSpmv(a, xStar);
const hostOp = new EllRmHostOperator(m);
const be = await exampleBackend();
let ok = true;

if (be.kind === 'webgpu') {
  const gpuOp = gpuOperatorFromFormat(be.ctx, ellRmKernel, m);
  // check the kernel against the CSR product before trusting it
  const xs = be.space.fromArray(xStar);
  const ys = be.space.create(a.rows);
  gpuOp.apply(xs, ys);
  const y = await readF32(be.ctx, ys.buf, a.rows);
  let err = 0;
  for (let i = 0; i < a.rows; i++) err = Math.max(err, Math.abs(y[i]! - b[i]!) / (Math.abs(b[i]!) + 1));
  console.log(`user kernel vs CSR product: max relative error ${err.toExponential(2)} (float32)`);
  ok &&= err < 1e-5;
  const r32 = await cg(be.space, gpuOp, be.space.fromArray(b), { rtol: 1e-5 });
  console.log(`CG in float32 on the user kernel: ${r32.reason} in ${r32.iterations} iterations`);
  const r = await refinedSolve({ hostOperator: hostOp, innerOperator: gpuOp, innerSpace: be.space, b, rtol: 1e-10, inner: { method: 'cg', rtol: 1e-4 } });
  console.log(`refined CG (user kernel on the GPU, user host operator for float64 residuals): ${r.reason}, relative residual ${(r.trueResidual / r.bNorm).toExponential(2)}`);
  ok &&= r.converged;
  be.ctx.dispose();
} else {
  const r = await cg(be.space, hostOp, b, { rtol: 1e-10 });
  console.log(`CG on the user host operator: ${r.reason} in ${r.iterations} iterations, relative residual ${(r.trueResidual / r.bNorm).toExponential(2)}`);
  ok &&= r.converged;
}
if (!ok) process.exit(1);
