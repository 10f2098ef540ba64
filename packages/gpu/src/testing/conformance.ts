/**
 * The conformance tier's cases and check, shared by the vitest suite
 * (test/conformance.test.ts, lavapipe in CI) and the stand-alone runner bench/gpu-conformance.ts
 * (the GPU machine, where vitest is not available): every kernel of the registry × generators ×
 * seeds against the float64 reference with the per-row bound
 * |y − y_ref| ≤ c · nnz_row · ε · Σ_j |a_ij x_j|, c = 2, ε = 2^-24 (plus the α/β terms, and a
 * kernel's own `errorBound` where its reduction is not per row).
 * @module
 */
import { type CsrMatrix, csrSpmv, generators as g, getFormat } from '@gpusparse/formats';
import { Blas1, imm } from '../blas1/ops';
import type { GpuContext } from '../device/context';
import { readF32 } from '../memory/readback';
import { uploadF32 } from '../memory/upload';
import { kernels, kernelVariants } from '../kernels/registry';
import { type AnySpmvKernel, supportsCsr, type UploadOptions } from '../kernels/types';

/** ε of float32 (unit roundoff 2^-24). */
export const EPS32 = 2 ** -24;

/** Deterministic random values in [-1, 1). */
export function randomVector(n: number, seed: number): Float64Array {
  let a = seed >>> 0;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  }
  return out;
}

/** Round every entry to float32 (the values the device holds). */
export const f32 = (v: Float64Array): Float64Array => Float64Array.from(Float32Array.from(v));

/** The constant c of the per-row bound. */
export const C = 2;
export const SEEDS = [1, 2];

/** The generator cases (name, matrix of a seed, upload options). */
export const CASES: [string, (s: number) => CsrMatrix, UploadOptions?][] = [
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
export const round32 = (a: CsrMatrix): CsrMatrix => ({ ...a, values: f32(a.values) });

/** Per-row bound vector: c·(nnz_row + 2)·ε·(|α|·Σ|a_ij x_j| + |β y0_i|) (the +2 covers α, β). */
export function rowBounds(a: CsrMatrix, x: Float64Array, alpha: number, beta: number, y0: Float64Array): Float64Array {
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
export async function checkKernel(ctx: GpuContext, kernel: AnySpmvKernel, params: Record<string, number>, a0: CsrMatrix, seed: number, alpha: number, beta: number, opts?: UploadOptions): Promise<string | null> {
  const a = round32(a0);
  if (supportsCsr(kernel, a, ctx.limits, params) !== true) return null;
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


/** One (kernel, parameters) variant's outcome over every case and seed. */
export interface ConformanceOutcome {
  kernel: string;
  params: Record<string, number>;
  /** Cases that ran and passed. */
  passed: number;
  /** Cases the kernel declared unsupported (supports() !== true). */
  unsupported: number;
  /** Failures: case name, seed and the first violating row. */
  failures: string[];
}

/**
 * Run the whole tier (every registered kernel and parameter variant, or those `filter` keeps)
 * on `ctx`; `onOutcome` sees each variant as it finishes.
 */
export async function runConformance(
  ctx: GpuContext,
  opts: { filter?: (k: AnySpmvKernel) => boolean; onOutcome?: (o: ConformanceOutcome) => void } = {},
): Promise<ConformanceOutcome[]> {
  const out: ConformanceOutcome[] = [];
  for (const k of kernels) {
    if (opts.filter && !opts.filter(k)) continue;
    for (const params of kernelVariants(k)) {
      const o: ConformanceOutcome = { kernel: k.id, params, passed: 0, unsupported: 0, failures: [] };
      for (const [name, gen, uopts] of CASES) {
        for (const seed of SEEDS) {
          const a = gen(seed);
          const runs: [number, number][] = seed === SEEDS[0] ? [[1, 0], [2, -0.5]] : [[1, 0]];
          for (const [alpha, beta] of runs) {
            try {
              const r = await checkKernel(ctx, k, params, a, seed, alpha, beta, uopts);
              if (r === null) o.unsupported++;
              else if (r === '') o.passed++;
              else o.failures.push(`${name}, seed ${seed}, alpha ${alpha}, beta ${beta}: ${r}`);
            } catch (e) {
              o.failures.push(`${name}, seed ${seed}: threw ${(e as Error).name}: ${(e as Error).message}`);
            }
          }
        }
      }
      out.push(o);
      opts.onOutcome?.(o);
    }
  }
  return out;
}
