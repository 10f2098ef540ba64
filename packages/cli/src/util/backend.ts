/**
 * Backend selection for the CLI: WebGPU when asked for (or, with 'auto', when an adapter exists),
 * otherwise the float64 host backend — always saying which.
 * @module
 */
import { availableParallelism } from 'node:os';
import { type CsrMatrix, HostOperator, type HostScalar, HostVectorSpace, InvalidMatrixError, InvalidParameterError, type LinearOperator, type VectorSpace, WasmVectorSpace } from '@gpusparse/formats';
import type { GpuContext, GpuVector } from '@gpusparse/gpu';
import { type CommonOptions, info, UsageError } from './context';

/**
 * Check SpMV kernel ids against the registry of @gpusparse/gpu (importing it loads no GPU):
 * an unknown id is a usage error listing the valid ones, on every backend.
 */
export async function checkKernelIds(ids: readonly string[], option: string): Promise<void> {
  const { kernels } = await import('@gpusparse/gpu');
  const known = kernels.map((k) => k.id);
  for (const id of ids) if (!known.includes(id)) throw new UsageError(`${option}: unknown kernel '${id}': expected one of ${known.join(', ')}`);
}

/** How to build the device operator: a fixed kernel, or the autotuner. */
export interface OperatorChoice {
  kernel?: string;
  params?: Record<string, number>;
  /** Expected number of products (lets the tuner size its budget). */
  expectedProducts?: number;
  /** Autotune (default true when no kernel is given). */
  tune?: boolean;
  /**
   * Tune inside the solve: its first products run the short-listed kernels in turn, then the
   * fastest (gpu `tunedOperator` option `inSolve`). Default false: on the H100 an in-solve tuned
   * CG of 300 iterations took 1.61× and 1.88× the solve with the winner fixed, no less than
   * tuning before the solve (1.45× and 1.87×; bench/RESULTS.md, issue 16), so the CLI tunes before.
   */
  inSolve?: boolean;
}

/** A built operator with a label saying what runs it. */
export interface BuiltOperator<V> {
  op: LinearOperator<V>;
  label: string;
  /** Tuning summary when the autotuner chose (kernel, params, ms spent, cache hit). */
  tuning?: { kernel: string; params: Record<string, number>; spentMs: number; cacheHit: boolean };
}

/** A backend: a vector space and a way to make operators in it. */
export interface Backend<V, S> {
  kind: 'webgpu' | 'cpu';
  description: string;
  space: VectorSpace<V, S>;
  operator(a: CsrMatrix, choice?: OperatorChoice): Promise<BuiltOperator<V>>;
  /** Release device resources. */
  dispose(): void;
  /** Why the WebGPU backend was not used (when kind is 'cpu' under 'auto'). */
  fallbackReason?: string;
  ctx?: GpuContext;
}

/** Most worker threads of the CPU backend (WasmVectorSpace's limit). */
const MAX_HOST_THREADS = 64;

/**
 * Threads of the CPU backend: `threads` when given, else GPUSPARSE_THREADS, else the cores this
 * process may use (at most 8). Results do not depend on it (bit-identical for any count).
 * A value outside [1, 64] — option or variable (`0`, `-1`, `abc`, `1e6`) — is refused naming
 * where it came from (the variable was silently ignored, or refused as "WasmVectorSpace threads").
 * @throws InvalidParameterError for a bad count
 */
export function hostThreads(threads?: number): number {
  const ok = (t: number) => Number.isInteger(t) && t >= 1 && t <= MAX_HOST_THREADS;
  if (threads !== undefined) {
    if (!ok(threads)) throw new InvalidParameterError('threads', `an integer in [1, ${MAX_HOST_THREADS}]`, threads);
    return threads;
  }
  const raw = process.env.GPUSPARSE_THREADS;
  if (raw === undefined || raw.trim() === '') return Math.min(8, availableParallelism());
  const env = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!ok(env)) throw new InvalidParameterError('GPUSPARSE_THREADS (environment variable)', `an integer in [1, ${MAX_HOST_THREADS}]`, raw);
  return env;
}

/**
 * The host float64 backend: vectors in WebAssembly memory with SIMD kernels and worker threads
 * (WasmVectorSpace), or the plain-array HostVectorSpace where the engine lacks wasm SIMD or
 * shared memory.
 */
export function hostBackend(fallbackReason?: string, threads?: number): Backend<Float64Array, HostScalar> {
  const wasm = WasmVectorSpace.create({ threads: hostThreads(threads) });
  return {
    kind: 'cpu',
    description: wasm ? `CPU (float64 host backend, WebAssembly SIMD, ${wasm.threads} thread${wasm.threads > 1 ? 's' : ''})` : 'CPU (float64 host backend)',
    space: wasm ?? new HostVectorSpace(),
    async operator(a, choice = {}) {
      if (choice.kernel !== undefined) {
        await checkKernelIds([choice.kernel], '--kernel');
        info(`note: --kernel ${choice.kernel} selects a WebGPU kernel; the CPU backend multiplies with float64 host CSR`);
      }
      return wasm ? { op: wasm.csrOperator(a), label: 'host-wasm-csr (float64)' } : { op: HostOperator.fromCsr(a), label: 'host-csr (float64)' };
    },
    dispose() {
      wasm?.dispose();
    },
    fallbackReason,
  };
}

// Dawn's native limit notices on stderr: dropped unless --debug (main() sets this per run).
let quietNativeNotices = false;

/** Whether the GPU contexts the CLI opens drop Dawn's native limit notices (true unless --debug). */
export function setQuietNativeNotices(quiet: boolean): void {
  quietNativeNotices = quiet;
}

/** A GPU context as every CLI command opens it (Dawn's limit notices quiet unless --debug). */
export async function openGpuContext(): Promise<GpuContext> {
  const gpu = await import('@gpusparse/gpu');
  return gpu.createGpuContext({ quietNativeNotices });
}

const FLOAT32_MAX = 3.4028234663852886e38;
const FLOAT32_MIN_NORMAL = 1.1754943508222875e-38;

/**
 * The WebGPU kernels hold A in float32: a value above its range becomes ±Infinity, and a matrix
 * whose largest |value| is below its normal range flushes to zeros. Either is refused here with
 * the place and the way out, instead of an autotuner report that no kernel passed verification.
 * (Single tiny entries beside normal ones are kept: they vanish in float32 as they would in a sum.)
 */
export function checkFloat32Range(a: CsrMatrix): void {
  let maxAbs = 0;
  // a row whose every non-zero is below float32's normal range becomes a zero row on the device:
  // the tuner then found no kernel to pass verification (exit 3 with 170 rejections listed)
  let tinyRow = -1;
  for (let r = 0; r < a.rows; r++) {
    let rowMax = 0;
    for (let k = a.rowPtr[r]!; k < a.rowPtr[r + 1]!; k++) {
      const v = Math.abs(a.values[k]!);
      if (v > FLOAT32_MAX) throw new InvalidMatrixError(`A(row ${r + 1}, column ${a.colIdx[k]! + 1})`, `expected |value| ≤ 3.4e38 (the WebGPU kernels store A in float32), got ${a.values[k]}: scale A and b, or use --backend cpu (float64)`);
      if (v > rowMax) rowMax = v;
    }
    if (rowMax > 0 && rowMax < FLOAT32_MIN_NORMAL && tinyRow < 0) tinyRow = r;
    if (rowMax > maxAbs) maxAbs = rowMax;
  }
  if (maxAbs > 0 && maxAbs < FLOAT32_MIN_NORMAL) {
    throw new InvalidMatrixError('A', `expected a largest |value| ≥ 1.2e-38 (the WebGPU kernels store A in float32), got ${maxAbs}: every value underflows; scale A and b, or use --backend cpu (float64)`);
  }
  if (tinyRow >= 0) {
    throw new InvalidMatrixError(`A(row ${tinyRow + 1})`, `expected a row with some |value| ≥ 1.2e-38 (the WebGPU kernels store A in float32), got non-zeros all below it: the device would hold a zero row; scale that row (and b), or use --backend cpu (float64)`);
  }
}

/** Open the WebGPU backend; throws NoAdapterError when there is no adapter. */
export async function gpuBackend(): Promise<Backend<GpuVector, unknown>> {
  const gpu = await import('@gpusparse/gpu');
  const ctx = await openGpuContext();
  const d = ctx.describe();
  const space = new gpu.GpuVectorSpace(ctx);
  return {
    kind: 'webgpu',
    description: `WebGPU (${d.adapter.vendor || 'unknown vendor'} ${d.adapter.architecture || ''} ${d.adapter.device || d.adapter.description || ''}, subgroup ${d.caps.subgroupSize || 'n/a'})`.replace(/\s+/g, ' '),
    space: space as unknown as VectorSpace<GpuVector, unknown>,
    ctx,
    async operator(a, choice = {}) {
      checkFloat32Range(a);
      gpu.checkVectorBindings(ctx, a, 'A'); // before the tuner (which reported "no kernel passes" for this)
      const tune = choice.tune ?? choice.kernel === undefined;
      if (tune) {
        // a solve with maxIterations 0 still applies A once (the true residual); the tuner wants ≥ 1 product
        const op = await gpu.tunedOperator(ctx, a, { expectedProducts: Math.max(1, choice.expectedProducts ?? 100), inSolve: choice.inSolve ?? false, warn: () => {} });
        const r = op.tuning;
        return {
          op,
          label: op.label,
          tuning: r.winner ? { kernel: r.winner.kernel, params: r.winner.params, spentMs: r.spentMs, cacheHit: r.source === 'cache' } : undefined,
        };
      }
      if (choice.kernel !== undefined) await checkKernelIds([choice.kernel], '--kernel');
      const op = gpu.gpuOperatorFromCsr(ctx, a, { kernel: choice.kernel ?? 'csr-vector', params: choice.params });
      return { op, label: op.label };
    },
    dispose() {
      ctx.dispose();
    },
  };
}

/**
 * The backend the user asked for: 'webgpu' (fails without an adapter), 'cpu', or 'auto'
 * (WebGPU when an adapter exists, else the CPU, with the reason recorded).
 */
// biome-ignore lint/suspicious/noExplicitAny: the two backends have different vector types
export async function openBackend(choice: CommonOptions['backend'], threads?: number): Promise<Backend<any, any>> {
  if (choice === 'cpu') return hostBackend(undefined, threads);
  try {
    return await gpuBackend();
  } catch (e) {
    if (choice === 'webgpu') throw e;
    return hostBackend(e instanceof Error ? e.message.split('\n')[0] : String(e), threads);
  }
}
