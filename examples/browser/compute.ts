/**
 * The work behind the browser page, free of the DOM: build or parse the matrix, open WebGPU
 * (`navigator.gpu`) or say why not, autotune the SpMV kernel, check one tuned product against
 * the float64 reference, and solve A·x = b with CG on the GPU vector space (float32) next to
 * the float64 host backend. Everything is imported from the workspace packages by name, the
 * same code the node examples and the CLI run.
 * @module
 */
import {
  type CsrMatrix,
  csrSpmv,
  generators,
  HostOperator,
  HostVectorSpace,
  InvalidParameterError,
  parseMatrixMarket,
  type VectorSpace,
} from '@gpusparse/formats';
import { createGpuContext, type GpuContext, GpuVectorSpace, type TuningReport, tunedOperator } from '@gpusparse/gpu';
import { cg, type SolveResult } from '@gpusparse/solvers';

/** Where the matrix comes from. */
export type MatrixSource =
  | { readonly kind: 'poisson2d'; readonly grid: number }
  | { readonly kind: 'banded'; readonly n: number; readonly half: number }
  | { readonly kind: 'file'; readonly name: string; readonly bytes: Uint8Array };

/** A matrix with a name for the page. */
export interface LabelledMatrix {
  readonly a: CsrMatrix;
  readonly label: string;
}

const MAX_GENERATED_ROWS = 4_000_000;

function checkSize(what: string, v: number, lo: number, hi: number): void {
  if (!Number.isInteger(v) || v < lo || v > hi) throw new InvalidParameterError(what, `an integer in [${lo}, ${hi}]`, v);
}

/**
 * A chosen file's bytes, gunzipped when they are gzip data (magic bytes 1f 8b): a `.mtx.gz` from
 * SuiteSparse was refused by the page ("gzip-compressed data"). Uses the browser's (and Node's)
 * DecompressionStream; a damaged stream is an InvalidParameterError naming the file.
 * @example const bytes = await gunzipIfNeeded(new Uint8Array(await file.arrayBuffer()), file.name);
 */
export async function gunzipIfNeeded(bytes: Uint8Array, name: string): Promise<Uint8Array> {
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  try {
    const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  } catch (e) {
    throw new InvalidParameterError(`file ${name}`, 'a complete gzip stream of Matrix Market text', `a damaged one (${(e as Error).message})`);
  }
}

/**
 * Build (generators) or parse (Matrix Market text, `parseMatrixMarket`) the matrix.
 * Cost: O(nnz). Throws InvalidParameterError / MatrixMarketError with the offending value or line.
 * @example makeMatrix({ kind: 'poisson2d', grid: 32 }).a.rows // 1024
 */
export function makeMatrix(src: MatrixSource): LabelledMatrix {
  if (src.kind === 'poisson2d') {
    checkSize('grid', src.grid, 2, Math.floor(Math.sqrt(MAX_GENERATED_ROWS)));
    return { a: generators.poisson2d(src.grid), label: `poisson2d ${src.grid}×${src.grid}` };
  }
  if (src.kind === 'banded') {
    checkSize('banded n', src.n, 2, MAX_GENERATED_ROWS);
    checkSize('banded half-width', src.half, 1, Math.min(src.n - 1, 64));
    return { a: generators.banded(src.n, src.half, src.half, { spd: true }), label: `banded n=${src.n} ±${src.half} (SPD)` };
  }
  // an unknown kind fell through to here and threw "Cannot read properties of undefined"
  const kind = (src as { kind?: unknown }).kind;
  if (kind !== 'file' || !(src.bytes instanceof Uint8Array)) {
    throw new InvalidParameterError('matrix source', "{ kind: 'poisson2d', grid }, { kind: 'banded', n, half } or { kind: 'file', name, bytes: Uint8Array }", kind === 'file' ? 'a file without its bytes' : JSON.stringify(kind));
  }
  const { matrix, header } = parseMatrixMarket(src.bytes, { name: src.name });
  return { a: matrix, label: `${src.name} (${header.symmetry})` };
}

/** The backend the page runs on: WebGPU, or the float64 host with the reason WebGPU is absent. */
export type Backend =
  | {
      readonly kind: 'webgpu';
      readonly ctx: GpuContext;
      readonly adapter: string;
      /** Set when the adapter is a CPU emulation of a GPU: what gave it away (e.g. 'SwiftShader'). */
      readonly software?: string;
    }
  | { readonly kind: 'cpu'; readonly reason: string };

/** Names of software (CPU-emulated) WebGPU/Vulkan adapters, as they show in the adapter info. */
const SOFTWARE_ADAPTERS: readonly [RegExp, string][] = [
  [/swiftshader/i, 'SwiftShader'],
  [/lavapipe/i, 'lavapipe'],
  [/llvmpipe/i, 'llvmpipe'],
  [/softpipe/i, 'softpipe'],
  [/microsoft basic render/i, 'Microsoft Basic Render Driver (WARP)'],
];

/**
 * The name of the software renderer behind an adapter, or undefined for a hardware one.
 * Looks at vendor, architecture, device and description, and at the spec's `isFallbackAdapter`.
 * @example softwareAdapter({ vendor: 'google', architecture: 'swiftshader' }) // 'SwiftShader'
 */
export function softwareAdapter(info: { vendor?: string; architecture?: string; device?: string; description?: string; isFallbackAdapter?: boolean }): string | undefined {
  const text = [info.vendor, info.architecture, info.device, info.description].filter((s) => s).join(' ');
  for (const [re, name] of SOFTWARE_ADAPTERS) if (re.test(text)) return name;
  return info.isFallbackAdapter ? 'a fallback (software) adapter' : undefined;
}

/**
 * Open WebGPU through `navigator.gpu` (via `createGpuContext`), or return the reason it is not
 * there ('navigator.gpu is missing', 'requestAdapter returned null', ...). Never throws.
 * Cost: tens of milliseconds (adapter and device creation).
 * @example const be = await openBackend(); if (be.kind === 'cpu') console.log(be.reason);
 */
export async function openBackend(): Promise<Backend> {
  const nav = (globalThis as { navigator?: { gpu?: unknown } }).navigator;
  if (!nav?.gpu) return { kind: 'cpu', reason: 'navigator.gpu is missing (this browser has WebGPU off or unsupported)' };
  try {
    // Ask once here for a browser-worded reason; createGpuContext's own message speaks of node.
    const probe = await (nav.gpu as GPU).requestAdapter();
    if (!probe) return { kind: 'cpu', reason: 'navigator.gpu.requestAdapter() returned null (WebGPU is disabled or blocked for this GPU; in Chromium try chrome://flags/#enable-unsafe-webgpu or --enable-unsafe-webgpu)' };
    const fallback = (probe.info as { isFallbackAdapter?: boolean } | undefined)?.isFallbackAdapter === true;
    const ctx = await createGpuContext();
    const d = ctx.describe();
    const a = d.adapter;
    const name = [a.vendor, a.architecture, a.device, a.description].filter((s) => s).join(' / ') || 'unnamed adapter';
    const sub = ctx.caps.subgroups ? `subgroups ${ctx.caps.subgroupMinSize}–${ctx.caps.subgroupMaxSize}` : 'no subgroups';
    const software = softwareAdapter({ ...a, isFallbackAdapter: fallback });
    return { kind: 'webgpu', ctx, adapter: `${name}; ${sub}; timestamp-query ${ctx.caps.timestampQuery ? 'yes' : 'no'}`, ...(software ? { software } : {}) };
  } catch (e) {
    return { kind: 'cpu', reason: (e as Error).message.split('\n')[0]! };
  }
}

/** Outcome of checking one device product against the float64 reference. */
export interface SpmvCheck {
  /** max over rows of |y − y_ref| / bound_i, bound_i = 2·max(1, nnz_i)·ε_f32·Σ_j|a_ij·x_j|. */
  readonly maxErrOverBound: number;
  /** Row where that maximum sits. */
  readonly row: number;
  readonly maxAbsErr: number;
  readonly ok: boolean;
}

const EPS_F32 = 2 ** -23;

/** The deterministic test vector x_j = 1 + (j·7919 mod 13)/13 (no zeros, no symmetry). */
export function testVector(n: number): Float64Array {
  const x = new Float64Array(n);
  for (let j = 0; j < n; j++) x[j] = 1 + ((j * 7919) % 13) / 13;
  return x;
}

/**
 * Compare a float32 product `y` with the float64 reference A·x, row by row, with the bound
 * 2·max(1, nnz_i)·ε_f32·Σ_j|a_ij·x_j| (the conformance-tier rule of HOUSE_STYLE.md).
 * Cost: O(nnz). @example checkProduct(a, x, y).ok
 */
export function checkProduct(a: CsrMatrix, x: Float64Array, y: Float64Array): SpmvCheck {
  const ref = csrSpmv(a, x);
  let worst = 0;
  let row = 0;
  let maxAbsErr = 0;
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) s += Math.abs(a.values[k]! * x[a.colIdx[k]!]!);
    const err = Math.abs(y[i]! - ref[i]!);
    const bound = 2 * Math.max(1, a.rowPtr[i + 1]! - a.rowPtr[i]!) * EPS_F32 * s;
    const q = err === 0 ? 0 : bound > 0 ? err / bound : Number.POSITIVE_INFINITY;
    if (!(q <= worst)) {
      worst = q;
      row = i;
    }
    maxAbsErr = Math.max(maxAbsErr, err);
  }
  return { maxErrOverBound: worst, row, maxAbsErr, ok: worst <= 1 };
}

/** ‖b − A·x‖₂ / ‖b‖₂ in float64. Cost: one host product. */
export function relativeResidual(a: CsrMatrix, x: Float64Array, b: Float64Array): number {
  const ax = csrSpmv(a, x);
  let rr = 0;
  let bb = 0;
  for (let i = 0; i < a.rows; i++) {
    rr += (b[i]! - ax[i]!) ** 2;
    bb += b[i]! ** 2;
  }
  return Math.sqrt(rr) / (Math.sqrt(bb) || 1);
}

/** One CG run as the page shows it. */
export interface CgSummary {
  readonly backend: string;
  readonly converged: boolean;
  readonly reason: string;
  readonly iterations: number;
  /** ‖b − A·x‖₂ / ‖b‖₂ recomputed in float64 on the host from the returned x. */
  readonly relTrueResidual: number;
  readonly ms: number;
  readonly matvecs: number;
  readonly readbacks: number;
  /** (iteration, ‖r‖/‖b‖) of the solver's history. */
  readonly history: readonly { iteration: number; relative: number }[];
}

/** Settings of one run. */
export interface RunSettings {
  /** Tuning time (ms) the autotuner may spend. */
  readonly tuneMs: number;
  /** CG relative tolerance. */
  readonly rtol: number;
  /** Also solve on the float64 host for comparison (always done when WebGPU is absent). */
  readonly hostToo: boolean;
}

/** Everything one run produced (also serialised into the page for the headless test). */
export interface RunSummary {
  readonly matrix: { label: string; rows: number; cols: number; nnz: number };
  readonly backend: 'webgpu' | 'cpu';
  readonly adapter?: string;
  /** The software renderer behind the adapter (its timings are CPU timings), when it is one. */
  readonly software?: string;
  readonly noWebGpuReason?: string;
  readonly tuning?: { winner: string; timed: number; pruned: number; spentMs: number; method: string };
  readonly spmv?: SpmvCheck;
  readonly gpuCg?: CgSummary;
  readonly hostCg?: CgSummary;
}

async function summarise<V, S>(name: string, space: VectorSpace<V, S>, res: SolveResult<V>, a: CsrMatrix, b: Float64Array): Promise<CgSummary> {
  const x = await space.toArray(res.x);
  const bNorm = res.bNorm || 1;
  return {
    backend: name,
    converged: res.converged,
    reason: res.reason,
    iterations: res.iterations,
    relTrueResidual: relativeResidual(a, x, b),
    ms: res.stats.ms,
    matvecs: res.stats.matvecs,
    readbacks: res.stats.readbacks,
    history: res.history.map((h) => ({ iteration: h.iteration, relative: h.residual / bNorm })),
  };
}

const FLOAT32_MAX = 3.4028234663852886e38;
const FLOAT32_MIN_NORMAL = 1.1754943508222875e-38;

/**
 * Why float32 cannot hold A, or undefined: a value above its range (±Infinity on the device),
 * every value below its normal range (all flushed to 0), or one row so (a zero row). O(nnz).
 */
export function float32Trouble(a: CsrMatrix): string | undefined {
  let maxAbs = 0;
  let tinyRow = -1; // a row of non-zeros all below the normal range is a zero row on the device
  for (let r = 0; r < a.rows; r++) {
    let rowMax = 0;
    for (let k = a.rowPtr[r]!; k < a.rowPtr[r + 1]!; k++) rowMax = Math.max(rowMax, Math.abs(a.values[k]!));
    if (rowMax > 0 && rowMax < FLOAT32_MIN_NORMAL && tinyRow < 0) tinyRow = r;
    maxAbs = Math.max(maxAbs, rowMax);
  }
  if (maxAbs > FLOAT32_MAX) return `a value of magnitude ${maxAbs.toExponential(2)} is above float32's 3.4e38`;
  if (maxAbs > 0 && maxAbs < FLOAT32_MIN_NORMAL) return `every value is below float32's normal range (largest magnitude ${maxAbs.toExponential(2)})`;
  if (tinyRow >= 0) return `row ${tinyRow + 1} has non-zeros only below float32's normal range (1.2e-38): a zero row on the device`;
  return undefined;
}

/** CG's iteration cap for an n×n system: 10·n, at least 100, at most 20 000. */
const maxIterationsFor = (n: number) => Math.min(20_000, Math.max(100, 10 * n));

/**
 * Products the tuner is told the solve will need: its objective is set-up time + this many
 * products. The page cannot know CG's iteration count before it runs; 1000 is the tuner's own
 * default when nothing is known, and the page shows it next to the count CG really needed.
 */
export const EXPECTED_PRODUCTS = 1000;

/** What the page is told while a run goes on: the stage's name and the run's share done (0–1). */
export type Progress = (stage: string, fraction: number) => void;

/** Progress of a CG run as a share of [lo, hi]: how far log ‖r‖/‖b‖ has come towards log rtol. */
function cgProgress(progress: Progress, stage: string, lo: number, hi: number, rtol: number) {
  let best = 0; // CG's residual is not monotone; the bar never goes back
  return (info: { iteration: number; relativeResidual: number }) => {
    const f = Math.min(1, Math.max(0, Math.log(info.relativeResidual) / Math.log(rtol)));
    if (Number.isFinite(f)) best = Math.max(best, f);
    progress(`${stage} (iteration ${info.iteration}, ‖r‖/‖b‖ ${info.relativeResidual.toExponential(1)})`, lo + (hi - lo) * best);
  };
}

/**
 * The float64 host CG on A·x = b. Cost: iterations × (one host product + 5 vector passes).
 * @example const s = await hostCg(a, b, 1e-8);
 */
export async function hostCg(a: CsrMatrix, b: Float64Array, rtol: number, onIteration?: (info: { iteration: number; relativeResidual: number }) => void): Promise<CgSummary> {
  const space = new HostVectorSpace();
  const res = await cg(space, HostOperator.fromCsr(a), space.fromArray(b), { rtol, maxIterations: maxIterationsFor(a.rows), checkEvery: 1, ...(onIteration ? { onIteration } : {}) });
  return summarise('host f64', space, res, a, b);
}

/** The tuning step: the tuned operator, with the tuner's progress mapped onto [0.05, 0.6]. */
function tune(ctx: GpuContext, a: CsrMatrix, s: RunSettings, progress: Progress) {
  return tunedOperator(ctx, a, {
    budgetMs: s.tuneMs,
    fraction: 1,
    expectedProducts: EXPECTED_PRODUCTS,
    cache: false,
    reps: 5,
    warmup: 1,
    warn: () => {},
    onProgress: (p) => {
      const what = p.phase === 'verify' ? 'verifying the winner' : p.phase === 'stats' ? 'matrix statistics' : `candidate ${p.done} of ${p.total}`;
      const f = p.phase === 'verify' || p.phase === 'done' ? 1 : p.total > 0 ? p.done / p.total : 0;
      progress(`autotuning the SpMV kernel: ${what} (${p.spentMs.toFixed(0)} of ${p.budgetMs.toFixed(0)} ms budget)`, 0.05 + 0.55 * f);
    },
  });
}

/**
 * The whole demo on a square matrix: autotune the SpMV on WebGPU within `tuneMs`, check one
 * tuned product against float64, solve A·x = b (b = A·1) with CG on the GPU vector space, and
 * with the float64 host CG when `hostToo` or when WebGPU is absent.
 * Cost: the tuning time, plus two CG solves of O(iterations · nnz).
 * @example const { summary, report } = await runDemo(be, makeMatrix({ kind: 'poisson2d', grid: 32 }), { tuneMs: 300, rtol: 1e-5, hostToo: true }, console.log);
 */
export async function runDemo(be: Backend, m: LabelledMatrix, s: RunSettings, progress: Progress): Promise<{ summary: RunSummary; report?: TuningReport }> {
  const { a } = m;
  if (a.rows !== a.cols) throw new InvalidParameterError('matrix shape', 'a square matrix (CG solves A·x = b)', `${a.rows}×${a.cols}`);
  if (!(s.rtol > 0 && s.rtol < 1)) throw new InvalidParameterError('rtol', 'a number in (0, 1), e.g. 1e-5', s.rtol);
  if (!(Number.isFinite(s.tuneMs) && s.tuneMs >= 1)) throw new InvalidParameterError('tuning budget (ms)', 'a number ≥ 1', s.tuneMs);
  const matrix = { label: m.label, rows: a.rows, cols: a.cols, nnz: a.rowPtr[a.rows]! };
  const b = csrSpmv(a, new Float64Array(a.cols).fill(1)); // b = A·1, so x = 1 solves it
  // the device holds A in float32: outside its range no kernel passed the tuner's verification
  // and the page showed "TuningError … 162 rejected"; such a matrix is solved on the host
  const outOfRange = be.kind === 'webgpu' ? float32Trouble(a) : undefined;
  if (be.kind === 'cpu' || outOfRange) {
    const stage = 'CG on the CPU (float64 host backend)';
    progress(stage, 0.05);
    const reason = be.kind === 'cpu' ? be.reason : `${outOfRange} (WebGPU holds A in float32): solved on the CPU in float64`;
    return { summary: { matrix, backend: 'cpu', noWebGpuReason: reason, hostCg: await hostCg(a, b, s.rtol, cgProgress(progress, stage, 0.05, 1, s.rtol)) } };
  }
  const { ctx } = be;
  progress(`autotuning the SpMV kernel (budget ${s.tuneMs} ms)`, 0.05);
  const op = await tune(ctx, a, s, progress);
  const space = new GpuVectorSpace(ctx);
  try {
    const report = op.tuning;
    const tuning = { winner: op.label, timed: report.timed, pruned: report.pruned, spentMs: report.spentMs, method: report.method };
    progress('checking the tuned product against float64', 0.6);
    const xt = testVector(a.cols);
    const dx = space.fromArray(xt);
    const dy = space.create(a.rows);
    op.apply(dx, dy); // y = A·x on the device with the tuned kernel
    const spmv = checkProduct(a, xt, await space.toArray(dy));
    space.release(dx);
    space.release(dy);
    const stage = 'CG on WebGPU (float32)';
    progress(stage, 0.65);
    const hi = s.hostToo ? 0.9 : 1;
    const db = space.fromArray(b);
    const res = await cg(space, op, db, { rtol: s.rtol, maxIterations: maxIterationsFor(a.rows), checkEvery: 4, onIteration: cgProgress(progress, stage, 0.65, hi, s.rtol) });
    const gpuCg = await summarise(`webgpu f32, ${op.kernel.id}`, space, res, a, b);
    space.release(res.x);
    space.release(db);
    let host: CgSummary | undefined;
    if (s.hostToo) {
      const hs = 'CG on the CPU (float64) for comparison';
      progress(hs, 0.9);
      host = await hostCg(a, b, s.rtol, cgProgress(progress, hs, 0.9, 1, s.rtol));
    }
    const software = be.software ? { software: be.software } : {};
    return { summary: { matrix, backend: 'webgpu', adapter: be.adapter, ...software, tuning, spmv, gpuCg, ...(host ? { hostCg: host } : {}) }, report };
  } finally {
    op.dispose();
  }
}
