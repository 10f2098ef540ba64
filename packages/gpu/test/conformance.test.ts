/**
 * THE conformance tier: every kernel of the registry × generators × seeds against the float64
 * reference, with the per-row bound |y − y_ref| ≤ c · nnz_row · ε · Σ_j |a_ij x_j|, c = 2,
 * ε = 2^-24 (plus the α/β terms for applyScaled). The reference runs on the float32-rounded
 * matrix and x (what the device holds), so the bound measures the device's accumulation only.
 * A kernel added to the registry is tested here automatically: the CSR test matrix is converted
 * with its format's descriptor (`getFormat(kernel.format)` from @gpusparse/formats).
 */
import { type CsrMatrix, csrSpmv, generators as g, getFormat } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { type AnySpmvKernel, Blas1, type GpuContext, imm, kernels, kernelVariants, readF32, type UploadOptions, uploadF32 } from '../src/index';
import { EPS32, f32, randomVector, testContext } from './helpers';

/** The constant c of the per-row bound. */
const C = 2;
const SEEDS = [1, 2];

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

/** The generator cases (name, matrix of a seed, upload options). */
const CASES: [string, (s: number) => CsrMatrix, UploadOptions?][] = [
  ['uniform', (s) => g.uniformRandom(300, 280, 7, s)],
  ['power-law', (s) => g.powerLaw(500, 500, { seed: s, maxLen: 400 })],
  ['empty rows', (s) => g.withEmptyRows(400, 400, 5, 0.3, s)],
  ['one dense row', (s) => g.oneDenseRow(300, 2000, 4, 2000, 17, s)],
  ['banded', (s) => g.banded(500, 3, 5, { seed: s })],
  ['block-structured', (s) => g.blockStructured(40, 40, 3, 4, 3, s)],
  ['rectangular wide', (s) => g.uniformRandom(100, 900, 12, s)],
  ['rectangular tall', (s) => g.uniformRandom(900, 100, 3, s)],
  ['n = 0', (s) => g.uniformRandom(0, 0, 0, s)],
  ['0 × 5', (s) => g.uniformRandom(0, 5, 0, s)],
  ['n = 1', (s) => g.uniformRandom(1, 1, 1, s)],
  ['n = 255 (wg - 1)', (s) => g.uniformRandom(255, 255, 5, s)],
  ['n = 257 (wg + 1)', (s) => g.uniformRandom(257, 257, 5, s)],
  ['all rows empty', () => ({ format: 'csr', rows: 70, cols: 70, rowPtr: new Int32Array(71), colIdx: new Int32Array(0), values: new Float64Array(0) })],
  ['long row 1e5', (s) => g.oneDenseRow(40, 100_000, 3, 100_000, 7, s)],
  ['power-law split over bindings', (s) => g.powerLaw(500, 500, { seed: s, maxLen: 400 }), { maxBindingBytes: 4096 }],
  ['long row split over bindings', (s) => g.oneDenseRow(40, 20_000, 3, 20_000, 7, s), { maxBindingBytes: 4096 }],
];

/** Round the values of `a` to float32 (the device's copy). */
const round32 = (a: CsrMatrix): CsrMatrix => ({ ...a, values: f32(a.values) });

/** Per-row bound vector: c·(nnz_row + 2)·ε·(|α|·Σ|a_ij x_j| + |β y0_i|) (the +2 covers α, β). */
function rowBounds(a: CsrMatrix, x: Float64Array, alpha: number, beta: number, y0: Float64Array): Float64Array {
  const out = new Float64Array(a.rows);
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) s += Math.abs(a.values[k]! * x[a.colIdx[k]!]!);
    const nnz = a.rowPtr[i + 1]! - a.rowPtr[i]!;
    const extra = alpha === 1 && beta === 0 ? 0 : 2;
    out[i] = C * (nnz + extra) * EPS32 * (Math.abs(alpha) * s + (beta === 0 ? 0 : Math.abs(beta * y0[i]!)));
  }
  return out;
}

/** Run `kernel` with `params` on `a`; returns the first violating row or -1. */
async function check(kernel: AnySpmvKernel, params: Record<string, number>, a0: CsrMatrix, seed: number, alpha: number, beta: number, opts?: UploadOptions): Promise<string | null> {
  const a = round32(a0);
  const fmt = getFormat(kernel.format);
  const m = fmt.fromCsr(a, kernel.formatParams?.(params));
  const ok = kernel.supports(m, ctx.limits, params);
  if (ok !== true) return null;
  const x = f32(randomVector(a.cols, seed + 100));
  const y0 = f32(randomVector(a.rows, seed + 200));
  const dx = uploadF32(ctx, x);
  const dy = beta === 0 ? ctx.buffers.acquire(a.rows * 4) : uploadF32(ctx, y0);
  if (beta === 0) Blas1.of(ctx).fill(dy, a.rows, imm(Number.NaN)); // beta = 0 must ignore NaN
  const h = kernel.upload(ctx, m, params, opts);
  kernel.encode(ctx, h, dx, dy, { alpha, beta });
  const y = await readF32(ctx, dy, a.rows);
  h.dispose();
  dx.dispose();
  dy.dispose();
  const ax = csrSpmv(a, x);
  const bound = rowBounds(a, x, alpha, beta, y0);
  const extra = kernel.errorBound?.(m, params, x); // kernels whose reduction is not per row (types.ts)
  if (extra) for (let i = 0; i < a.rows; i++) bound[i]! += Math.abs(alpha) * extra[i]!;
  for (let i = 0; i < a.rows; i++) {
    const ref = alpha * ax[i]! + (beta === 0 ? 0 : beta * y0[i]!);
    const err = Math.abs(y[i]! - ref);
    if (!(err <= bound[i]!)) return `row ${i}: got ${y[i]}, want ${ref}, |err| ${err} > bound ${bound[i]}`;
  }
  return '';
}

const variantCases = kernels.flatMap((k) => kernelVariants(k).map((p) => [`${k.id} ${JSON.stringify(p)}`, k, p] as const));

describe('conformance: registry × generators × seeds', () => {
  it('the registry is not empty and every kernel format is known', () => {
    expect(kernels.length).toBeGreaterThanOrEqual(3);
    for (const k of kernels) expect(getFormat(k.format).name).toBe(k.format);
  });

  it.each(variantCases)('%s', async (_name, kernel, params) => {
    let ran = 0;
    for (const [name, gen, opts] of CASES) {
      for (const seed of SEEDS) {
        const a = gen(seed);
        const r = await check(kernel, params, a, seed, 1, 0, opts);
        expect(r, `${name}, seed ${seed}: ${r}`).toBeOneOf(['', null]);
        if (r === '') ran++;
        if (seed === SEEDS[0]) {
          const s = await check(kernel, params, a, seed, 2, -0.5, opts);
          expect(s, `${name} (alpha 2, beta -0.5): ${s}`).toBeOneOf(['', null]);
        }
      }
    }
    expect(ran).toBeGreaterThan(0);
  });
});

/** Build a large CSR directly (the generators' per-row arrays are too slow at this size). */
function bigCsr(rows: number, cols: number, perRow: number, seed: number): CsrMatrix {
  const nnz = rows * perRow;
  const rowPtr = new Int32Array(rows + 1);
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  const r = g.rng(seed);
  for (let i = 0; i < rows; i++) {
    rowPtr[i + 1] = (i + 1) * perRow;
    const base = i * perRow;
    const stride = Math.floor(cols / perRow);
    for (let t = 0; t < perRow; t++) {
      colIdx[base + t] = t * stride + Math.floor(r() * stride); // sorted, unique
      values[base + t] = Math.fround(r() * 2 - 1);
    }
  }
  return { format: 'csr', rows, cols, rowPtr, colIdx, values };
}

/**
 * Run every CSR kernel (default parameters) on one large matrix whose values are float32
 * already; the reference and bounds are computed once.
 */
async function runLarge(a: CsrMatrix, label: string, minBlocks: number): Promise<void> {
  const x = f32(randomVector(a.cols, 9));
  const ax = csrSpmv(a, x);
  const bound = rowBounds(a, x, 1, 0, ax);
  const dx = uploadF32(ctx, x);
  const dy = ctx.buffers.acquire(a.rows * 4);
  for (const k of kernels) {
    if (k.format !== 'csr') continue; // other formats: covered by the loop above at small sizes
    const t1 = performance.now();
    const h = k.upload(ctx, a, k.defaults);
    expect(h.blocks).toBeGreaterThanOrEqual(minBlocks);
    const before = ctx.recorder.dispatches;
    k.encode(ctx, h, dx, dy);
    expect(ctx.recorder.dispatches - before).toBe(h.blocks);
    const y = await readF32(ctx, dy, a.rows);
    h.dispose();
    let bad = -1;
    for (let i = 0; i < a.rows && bad < 0; i++) if (!(Math.abs(y[i]! - ax[i]!) <= bound[i]!)) bad = i;
    expect(bad, `${k.id} row ${bad}: got ${y[bad]}, want ${ax[bad]}`).toBe(-1);
    console.log(`${label} ${k.id}: ${h.blocks} binding block(s), upload+apply+readback+check ${(performance.now() - t1).toFixed(0)} ms`);
  }
  dx.dispose();
  dy.dispose();
}

describe('conformance: large cases (default parameters of every CSR kernel)', () => {
  it('a dispatch past 65 535 workgroups (16 777 217 rows, mostly empty)', async () => {
    const rows = 65_536 * 256 + 1;
    const rowPtr = new Int32Array(rows + 1);
    const every = 4099;
    let nnz = 0;
    for (let i = 0; i < rows; i++) {
      if (i % every === 0) nnz += 2;
      rowPtr[i + 1] = nnz;
    }
    const colIdx = new Int32Array(nnz);
    const values = new Float64Array(nnz);
    for (let k = 0; k < nnz; k++) {
      colIdx[k] = k;
      values[k] = (k % 5) - 2;
    }
    await runLarge({ format: 'csr', rows, cols: nnz, rowPtr, colIdx, values }, '2-D dispatch', 1);
  });

  it('a matrix past the binding limit is split over bindings (~40 M non-zeros on lavapipe)', async () => {
    const perRow = 100;
    const bytes = ctx.limits.maxStorageBufferBindingSize;
    const rows = Math.ceil((1.2 * bytes) / 4 / perRow); // values alone exceed one binding by 20 %
    const t0 = performance.now();
    const a = bigCsr(rows, rows, perRow, 5);
    console.log(`big matrix: ${rows} rows, ${rows * perRow} nnz, built in ${(performance.now() - t0).toFixed(0)} ms`);
    await runLarge(a, 'past binding limit', 2);
  });
});
