/**
 * The conformance tier at scale (issue 14), run by bench/gpu-conformance.ts `--medium` (here, on
 * lavapipe, with a planning cap on bindings so that splitting runs on small matrices) and
 * `--large` (the GPU machine: arrays of ≥ 2^28 elements, a CSR past 2^31 bytes, power-law rows up
 * to 10^4, CI-like rows of ~10^3). Every registered kernel, with its default parameters, either
 * passes the float64 per-row check of the small tier (c = 2, plus its own `errorBound` where it
 * declares one) or is declared unsupported — by its format's conversion or by `supports()`, with
 * the reason. One failure never stops the run: the context drops what the failure touched and
 * the next kernel runs. The reference y and the bounds are computed once per matrix.
 * @module
 */
import { type CsrMatrix, csrSpmv, GpuSparseError, generators as g, getFormat } from '@gpusparse/formats';
import { Blas1, imm } from '../blas1/ops';
import type { GpuContext } from '../device/context';
import { readF32 } from '../memory/readback';
import { uploadF32 } from '../memory/upload';
import { kernels } from '../kernels/registry';
import { type AnySpmvKernel, type DeviceMatrix, supportsCsr } from '../kernels/types';
import type { GpuBuf } from '../memory/buffers';
import { f32, randomVector, rowBounds } from './conformance';

/** One matrix of a scale tier: a name, what it tests, and a builder (run when its turn comes). */
export interface ScaleCase {
  readonly name: string;
  readonly why: string;
  readonly make: () => CsrMatrix;
}

/** A (matrix, kernel) outcome. */
export interface ScaleResult {
  matrix: string;
  kernel: string;
  status: 'pass' | 'unsupported' | 'FAIL' | 'not run';
  /** The reason (unsupported), the first violating row or the error (FAIL), or why not run. */
  detail?: string;
  /** Largest |y − y_ref| / bound over the rows (pass and wrong results). */
  maxErrOverBound?: number;
  /** Binding blocks the device matrix was split into. */
  blocks?: number;
  deviceBytes?: number;
  convertMs?: number;
  uploadMs?: number;
  runMs?: number;
}

/**
 * Uniform rows of `perRow` entries at sorted, distinct columns (one per stride of cols/perRow,
 * jittered), values in [-1, 1), written straight into typed arrays: 2^28 entries in seconds,
 * where the generic generators build a Set and an array per row. Cost O(nnz).
 * @example stripedRandom(1 << 24, 1 << 24, 16, 1) // 2^28 entries: CSR of 2^31 + 2^26 bytes (f32, i32)
 */
export function stripedRandom(rows: number, cols: number, perRow: number, seed: number): CsrMatrix {
  const stride = Math.floor(cols / perRow);
  if (stride < 1) throw new RangeError(`stripedRandom: expected perRow ≤ cols, got ${perRow} > ${cols}`);
  const nnz = rows * perRow;
  const rowPtr = new Int32Array(rows + 1);
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  let a = seed >>> 0;
  let k = 0;
  for (let i = 0; i < rows; i++) {
    for (let t = 0; t < perRow; t++) {
      a = (Math.imul(a, 1664525) + 1013904223) >>> 0; // LCG: fast, deterministic
      colIdx[k] = t * stride + (a % stride);
      values[k] = a / 2 ** 31 - 1;
      k++;
    }
    rowPtr[i + 1] = k;
  }
  return { format: 'csr', rows, cols, rowPtr, colIdx, values };
}

/** The medium tier: sizes for lavapipe, meant to run with a binding cap of `capBytes`. */
export function mediumCases(capBytes: number): ScaleCase[] {
  const n = Math.floor(capBytes / 4); // x and y must still fit one binding
  return [
    { name: `uniform-${n}x16`, why: `CSR column and value arrays ${Math.round((16 * n * 4) / capBytes)}× the binding cap`, make: () => stripedRandom(n, n, 16, 1) },
    // 16 384 rows: ELL pads to rows × longest row, 10^4 would make it 5 GB on lavapipe
    { name: 'powerlaw-16384-2000', why: 'power-law rows of 2 to 2000 entries', make: () => g.powerLaw(16_384, n, { alpha: 2.2, minLen: 2, maxLen: 2000, seed: 3 }) },
    { name: 'cilike-2000-1000', why: 'CI-like rows of ~10^3 entries (dense Reference band)', make: () => g.ciLike(2000, { refFraction: 0.1, refDensity: 0.8 * 1000 / 200, expDensity: 0.2 * 1000 / 1800, seed: 4 }) },
    { name: `longrow-${n}`, why: 'one row longer than a binding', make: () => g.oneDenseRow(200, n, 3, Math.min(n, Math.ceil((1.5 * capBytes) / 4)), 17, 5) },
  ];
}

/**
 * The large tier for the GPU machine (no cap: the device's own limits). `scale` < 1 shrinks the
 * row counts (same row lengths) to rehearse it on a small machine.
 */
export function largeCases(scale = 1): ScaleCase[] {
  const pl = Math.round(2e6 * scale);
  const ci = Math.round(30_000 * Math.min(1, scale * 4));
  const un = Math.round(2 ** 24 * scale);
  // the 2^28-entry matrix first: it is the case that needs the GPU machine
  return [
    { name: `uniform-${un}x16`, why: `arrays of ${un * 16} elements (2^28 at scale 1); CSR of ${((un * 16 * 8) / 2 ** 30).toFixed(2)} GiB (f32 values, i32 indices)`, make: () => stripedRandom(un, un, 16, 1) },
    { name: `powerlaw-${pl}-1e4`, why: 'power-law rows of 2 to 10^4 entries (issue 14: 10^6-row power-law)', make: () => g.powerLaw(pl, pl, { alpha: 2.2, minLen: 2, maxLen: 10_000, seed: 3 }) },
    { name: `cilike-${ci}-1000`, why: 'CI-like rows of ~10^3 entries', make: () => g.ciLike(ci, { refFraction: 0.1, refDensity: 800 / (0.1 * ci), expDensity: 200 / (0.9 * ci), seed: 4 }) },
  ];
}

/** Convert, check supports(), upload, run once, compare. Never throws: errors become FAIL. */
async function runOne(ctx: GpuContext, k: AnySpmvKernel, a: CsrMatrix, name: string, ref: { x: Float64Array; y: Float64Array; bound: Float64Array }): Promise<ScaleResult> {
  const r: ScaleResult = { matrix: name, kernel: k.id, status: 'FAIL' };
  const params = { ...k.defaults };
  let h: DeviceMatrix | undefined;
  let dx: GpuBuf | undefined;
  let dy: GpuBuf | undefined;
  try {
    const pre = supportsCsr(k, a, ctx.limits, params);
    if (pre !== true) return { ...r, status: 'unsupported', detail: pre };
    let t = performance.now();
    let m: unknown;
    try {
      m = k.format === 'csr' ? a : getFormat(k.format).fromCsr(a, k.formatParams?.(params));
    } catch (e) {
      if (!(e instanceof GpuSparseError)) throw e;
      return { ...r, status: 'unsupported', detail: `conversion refused: ${e.message}` };
    }
    r.convertMs = performance.now() - t;
    const ok = k.supports(m, ctx.limits, params);
    if (ok !== true) return { ...r, status: 'unsupported', detail: ok };
    t = performance.now();
    dx = uploadF32(ctx, ref.x, 'scale-x');
    dy = ctx.buffers.acquire(a.rows * 4, undefined, 'scale-y');
    Blas1.of(ctx).fill(dy, a.rows, imm(Number.NaN)); // beta = 0 must ignore y
    const dm: DeviceMatrix = k.upload(ctx, m, params);
    h = dm;
    await ctx.finish();
    r.uploadMs = performance.now() - t;
    r.blocks = dm.blocks;
    r.deviceBytes = dm.deviceBytes;
    t = performance.now();
    k.encode(ctx, dm, dx, dy, { alpha: 1, beta: 0 });
    const y = await readF32(ctx, dy, a.rows);
    r.runMs = performance.now() - t;
    const extra = k.errorBound?.(m, params, ref.x);
    let worst = 0;
    let first = -1;
    for (let i = 0; i < a.rows; i++) {
      const b = ref.bound[i]! + (extra?.[i] ?? 0);
      const e = Math.abs(y[i]! - ref.y[i]!);
      const q = b > 0 ? e / b : e > 0 || Number.isNaN(e) ? Number.POSITIVE_INFINITY : 0;
      if (!(q <= 1) && first < 0) first = i;
      if (!(q <= worst)) worst = Number.isNaN(q) ? Number.POSITIVE_INFINITY : q;
    }
    r.maxErrOverBound = worst;
    if (first < 0) r.status = 'pass';
    else r.detail = `row ${first}: got ${y[first]}, want ${ref.y[first]}, bound ${ref.bound[first]}`;
  } catch (e) {
    r.detail = `${(e as Error).name}: ${(e as Error).message}`;
    // errors of the same failure still in flight are dropped here, not charged to the next kernel
    await ctx.finish().catch(() => undefined);
  } finally {
    h?.dispose();
    dx?.dispose();
    dy?.dispose();
  }
  return r;
}

/**
 * Run every registered kernel (or those `filter` keeps) on every case. Stops starting new
 * (matrix, kernel) runs once `budgetS` seconds have passed (they are recorded as 'not run').
 */
export async function runScaleTier(
  ctx: GpuContext,
  cases: readonly ScaleCase[],
  opts: { filter?: (k: AnySpmvKernel) => boolean; budgetS?: number; onResult?: (r: ScaleResult) => void; onMatrix?: (name: string, a: CsrMatrix, ms: number) => void } = {},
): Promise<ScaleResult[]> {
  const t0 = performance.now();
  const over = () => (performance.now() - t0) / 1e3 > (opts.budgetS ?? Number.POSITIVE_INFINITY);
  const out: ScaleResult[] = [];
  for (const c of cases) {
    const list = kernels.filter((k) => !opts.filter || opts.filter(k));
    if (over()) {
      for (const k of list) out.push({ matrix: c.name, kernel: k.id, status: 'not run', detail: 'time budget spent' });
      continue;
    }
    const tb = performance.now();
    const a0 = c.make();
    const a = { ...a0, values: f32(a0.values) };
    const x = f32(randomVector(a.cols, 7));
    const ref = { x, y: csrSpmv(a, x), bound: rowBounds(a, x, 1, 0, new Float64Array(0)) };
    opts.onMatrix?.(c.name, a, performance.now() - tb);
    for (const k of list) {
      const r = over() ? { matrix: c.name, kernel: k.id, status: 'not run' as const, detail: 'time budget spent' } : await runOne(ctx, k, a, c.name, ref);
      out.push(r);
      opts.onResult?.(r);
    }
  }
  return out;
}

/** The results as a markdown table: one row per kernel, one column per matrix. */
export function scaleTable(results: readonly ScaleResult[]): string {
  const mats = [...new Set(results.map((r) => r.matrix))];
  const ks = [...new Set(results.map((r) => r.kernel))];
  const cell = (r?: ScaleResult): string => {
    if (!r) return '';
    if (r.status === 'pass') return `pass (${r.maxErrOverBound!.toFixed(2)}, ${r.blocks} block${r.blocks === 1 ? '' : 's'})`;
    const d = (r.detail ?? '').replace(/\|/g, '/').replace(/\s+/g, ' ');
    return `${r.status}: ${d.length > 90 ? `${d.slice(0, 87)}...` : d}`;
  };
  const lines = [`| kernel | ${mats.join(' | ')} |`, `|---|${mats.map(() => '---').join('|')}|`];
  for (const k of ks) lines.push(`| ${k} | ${mats.map((m) => cell(results.find((r) => r.kernel === k && r.matrix === m))).join(' | ')} |`);
  return `${lines.join('\n')}\n\npass (e, b): max |y − y_ref| / bound = e, b binding blocks.\n`;
}
