/**
 * The GPU context: one WebGPU device with its real limits, features, toggles, error surfacing
 * and every cache (pipelines, bind groups, buffers). Kernels are pure descriptions; all state
 * lives here.
 * @module
 */
import type {} from 'webgpu';
import { BufferPool } from '../memory/buffers';
import { Recorder } from '../memory/recorder';
import { InvalidParameterError, ResourceLimitError } from '@gpusparse/formats';
import { DeviceLostError, GpuValidationError, NoAdapterError } from './errors';
import { PipelineCache } from './pipelines';
import { probeSubgroups } from './probe';

/** Limits requested from the adapter (its real maxima, not the WebGPU defaults). */
export interface GpuLimits {
  readonly maxStorageBufferBindingSize: number;
  readonly maxBufferSize: number;
  readonly maxComputeWorkgroupStorageSize: number;
  readonly maxComputeInvocationsPerWorkgroup: number;
  readonly maxComputeWorkgroupsPerDimension: number;
  readonly maxStorageBuffersPerShaderStage: number;
  readonly minStorageBufferOffsetAlignment: number;
  readonly minUniformBufferOffsetAlignment: number;
}

/** What the device can do beyond core WebGPU; what changes shader text is read from here. */
export interface GpuCaps {
  /** `subgroups` feature enabled on the device. */
  readonly subgroups: boolean;
  /** Smallest / largest subgroup size the adapter reports (0 when unknown). */
  readonly subgroupMinSize: number;
  readonly subgroupMaxSize: number;
  /** `timestamp-query` feature enabled (quantization disabled by toggle in Node). */
  readonly timestampQuery: boolean;
  /** Robustness (bounds checks) disabled: only safe because uploads are validated. */
  readonly unsafe: boolean;
  /** Subgroup size observed in a 256-wide compute workgroup (0 without subgroups). */
  readonly subgroupSize: number;
  /** Subgroups are contiguous ranges of local_invocation_index (probed at creation). */
  readonly subgroupContiguous: boolean;
}

/** Options of {@link createGpuContext}. */
export interface GpuContextOptions {
  /** Disable robustness and allow unsafe APIs (faster; indices are validated on upload). Default false. */
  readonly unsafe?: boolean;
  readonly powerPreference?: 'low-power' | 'high-performance';
  /**
   * Node only: drop Dawn's "max…BuffersPerPipelineLayout artificially reduced" notices, which it
   * prints from native code on adapter discovery; other native stderr output of that call is
   * re-emitted after it (see device/native-stderr.ts). Default false; the CLI sets it unless --debug.
   */
  readonly quietNativeNotices?: boolean;
  /** Extra Dawn toggles (Node only), e.g. 'enable-dawn-features=dump_shaders'. */
  readonly toggles?: readonly string[];
  /** Use this GPU object instead of navigator.gpu / npm `webgpu` (tests, custom setups). */
  readonly gpu?: GPU;
  /** Ask for the `subgroups` feature when present (default true). */
  readonly subgroups?: boolean;
  /**
   * Plan with this many bytes per storage binding instead of the device's
   * maxStorageBufferBindingSize (only when smaller): `ctx.limits` reports it, so every kernel's
   * `supports()` and upload split as they would past the real limit. The device keeps its real
   * limit (`ctx.deviceLimits`; BLAS-1 vectors may still bind more). Tests and the medium
   * conformance tier use a few hundred kB to exercise splitting on small matrices. Without this
   * option, the environment variable `GPUSPARSE_MAX_BINDING_BYTES` (Node) emulates a device
   * whose limit is that many bytes (planning and the check of every binding), so the CLI and the
   * one-call API run as they would past a real device's 2 GiB; else the device's own limit.
   */
  readonly maxBindingBytes?: number;
}

/**
 * `GPUSPARSE_MAX_BINDING_BYTES` (Node): an integer ≥ 256, or undefined when unset or empty.
 * @throws InvalidParameterError naming the variable for any other text (a typo must not run at the device's limit unnoticed)
 */
export function envBindingCap(env: Record<string, string | undefined> | undefined = typeof process === 'undefined' ? undefined : process.env): number | undefined {
  const raw = env?.GPUSPARSE_MAX_BINDING_BYTES;
  if (raw === undefined || raw === '') return undefined;
  const v = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(Number.isSafeInteger(v) && v >= 256)) throw new InvalidParameterError('GPUSPARSE_MAX_BINDING_BYTES (environment variable)', 'an integer number of bytes ≥ 256', raw);
  return v;
}

/** Plain-data description of a context, from {@link GpuContext.describe}. */
export interface GpuDescription {
  readonly adapter: { vendor: string; architecture: string; device: string; description: string };
  readonly limits: GpuLimits;
  readonly features: readonly string[];
  readonly caps: GpuCaps;
  readonly toggles: readonly string[];
}

// Dawn's GPU object must stay referenced while any device lives (else a later segfault):
// one per toggle set, held for the life of the process.
const dawnInstances = new Map<string, GPU>();
// The same for a GPU object the caller passed (`opts.gpu`, e.g. their own `create()` from npm
// `webgpu`) and the adapter: held as long as the context is reachable, so a caller who drops
// their reference does not free Dawn's instance under a live device (a segfault at a later
// call after a collection; session 12).
const ownerOf = new WeakMap<GpuContext, { gpu: GPU; adapter: GPUAdapter }>();

async function nodeGpu(toggles: readonly string[]): Promise<GPU> {
  const key = toggles.join('|');
  const held = dawnInstances.get(key);
  if (held) return held;
  const modName = 'webgpu';
  // biome-ignore lint/suspicious/noExplicitAny: the npm module's globals object is untyped
  const mod: any = await import(/* @vite-ignore */ modName);
  Object.assign(globalThis, mod.globals);
  const gpu = mod.create([...toggles]) as GPU;
  dawnInstances.set(key, gpu);
  return gpu;
}

function findGpu(): GPU | undefined {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  return nav?.gpu;
}

const LIMIT_NAMES = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

/**
 * Create a GPU context: adapter (npm `webgpu` in Node, `navigator.gpu` in a browser), device
 * with the adapter's real limits and the `subgroups` / `timestamp-query` features when present.
 * Cost: tens of milliseconds (device creation).
 * @throws NoAdapterError when no adapter exists (message says how to install lavapipe)
 * @example
 * const ctx = await createGpuContext({ unsafe: false });
 * console.log(ctx.describeText());
 */
export async function createGpuContext(opts: GpuContextOptions = {}): Promise<GpuContext> {
  const envCap = opts.maxBindingBytes === undefined ? envBindingCap() : undefined;
  const unsafe = opts.unsafe ?? false;
  const toggles = ['disable-dawn-features=timestamp_quantization', ...(opts.toggles ?? [])];
  if (unsafe) toggles.push('enable-dawn-features=allow_unsafe_apis,disable_robustness');
  let gpu = opts.gpu ?? findGpu();
  let inNode = false;
  if (!gpu) {
    try {
      gpu = await nodeGpu(toggles);
      inNode = true;
    } catch (e) {
      throw new NoAdapterError(`no navigator.gpu and the npm package 'webgpu' failed to load: ${(e as Error).message}`);
    }
  }
  let adapter: GPUAdapter | null = null;
  try {
    const request = () => gpu.requestAdapter({ powerPreference: opts.powerPreference ?? 'high-performance' });
    adapter = await (inNode && opts.quietNativeNotices ? (await import('./native-stderr')).captureNativeStderr(request) : request());
  } catch (e) {
    throw new NoAdapterError(`requestAdapter threw: ${(e as Error).message}`);
  }
  if (!adapter) throw new NoAdapterError('requestAdapter returned null');
  const want: GPUFeatureName[] = [];
  const useSubgroups = (opts.subgroups ?? true) && adapter.features.has('subgroups');
  if (useSubgroups) want.push('subgroups');
  const ts = adapter.features.has('timestamp-query');
  if (ts) want.push('timestamp-query');
  const requiredLimits: Record<string, number> = {};
  for (const n of LIMIT_NAMES) requiredLimits[n] = adapter.limits[n];
  const device = await adapter.requestDevice({ requiredFeatures: want, requiredLimits, label: 'gpusparse' });
  const info = adapter.info as GPUAdapterInfo & { subgroupMinSize?: number; subgroupMaxSize?: number };
  const probe = useSubgroups ? await probeSubgroups(device) : { size: 0, contiguous: false };
  const caps: GpuCaps = {
    subgroupSize: probe.size,
    subgroupContiguous: probe.contiguous,
    subgroups: useSubgroups,
    subgroupMinSize: info.subgroupMinSize ?? 0,
    subgroupMaxSize: info.subgroupMaxSize ?? 0,
    timestampQuery: ts,
    unsafe,
  };
  const l = device.limits;
  const limits: GpuLimits = {
    maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
    maxBufferSize: l.maxBufferSize,
    maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
    maxComputeInvocationsPerWorkgroup: l.maxComputeInvocationsPerWorkgroup,
    maxComputeWorkgroupsPerDimension: l.maxComputeWorkgroupsPerDimension,
    maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
    minStorageBufferOffsetAlignment: l.minStorageBufferOffsetAlignment,
    minUniformBufferOffsetAlignment: l.minUniformBufferOffsetAlignment,
  };
  const adapterInfo = {
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    device: info.device ?? '',
    description: info.description ?? '',
  };
  const ctx = new GpuContext(device, limits, caps, adapterInfo, [...device.features] as string[], inNode ? toggles : []);
  ownerOf.set(ctx, { gpu, adapter });
  if (opts.maxBindingBytes !== undefined) ctx.capBindings(opts.maxBindingBytes);
  else if (envCap !== undefined) ctx.capBindings(envCap, true);
  return ctx;
}

/**
 * One device and its caches. Create with {@link createGpuContext}; release with `dispose()`.
 * Every method that touches the device first checks for loss ({@link DeviceLostError}) and for
 * validation errors reported since the last check ({@link GpuValidationError}).
 */
export class GpuContext {
  /** The device's own limits (`limits` may carry a smaller planning cap, see {@link GpuContextOptions.maxBindingBytes}); an emulated binding limit ({@link capBindings} strict) lowers them too. */
  get deviceLimits(): GpuLimits {
    return this.ownLimits;
  }
  private ownLimits: GpuLimits;
  readonly buffers: BufferPool;
  readonly pipelines: PipelineCache;
  readonly recorder: Recorder;
  private lostError: DeviceLostError | undefined;
  private readonly errors: Error[] = [];
  /** Error-scope pops not yet resolved (awaited by {@link settle}). */
  private readonly pendingScopes = new Set<Promise<void>>();
  private disposed = false;

  constructor(
    readonly device: GPUDevice,
    public limits: GpuLimits,
    readonly caps: GpuCaps,
    readonly adapterInfo: GpuDescription['adapter'],
    readonly features: readonly string[],
    readonly toggles: readonly string[],
  ) {
    device.lost.then((i) => {
      this.lostError = new DeviceLostError(String(i.reason), i.message || (this.disposed ? 'context disposed' : 'no message'));
    });
    device.addEventListener('uncapturederror', (ev) => {
      const err = (ev as GPUUncapturedErrorEvent).error;
      const m =
        /(?:ShaderModule|ComputePipeline|BindGroup|Buffer)[A-Za-z]* "+([^"]+)"/.exec(err.message) ?? /"([^"]+)"/.exec(err.message);
      const kind = err.constructor?.name?.replace(/^GPU|Error$/g, '') || 'GPU';
      if (kind === 'OutOfMemory') {
        const held = this.buffers.allocatedBytes;
        this.errors.push(new ResourceLimitError(`GPU operation '${m?.[1] ?? 'unlabelled'}'`, held, held, `the device is out of memory (${err.message.split('\n')[0]}): free GPU memory or use a smaller matrix`));
      } else this.errors.push(new GpuValidationError(m?.[1] ?? 'unlabelled', kind.toLowerCase(), err.message));
    });
    this.ownLimits = limits;
    this.buffers = new BufferPool(this);
    this.pipelines = new PipelineCache(this);
    this.recorder = new Recorder(this);
  }

  /**
   * Plan with at most `bytes` per storage binding (rounded down to 4; only lowers the limit).
   * `strict`: also lower the device limits every binding is checked against, so that a binding
   * past `bytes` is refused (ResourceLimitError) as a device with that maxStorageBufferBindingSize
   * would refuse it — the emulation `GPUSPARSE_MAX_BINDING_BYTES` asks for.
   * @throws RangeError when `bytes` is not a number ≥ 256
   */
  capBindings(bytes: number, strict = false): void {
    if (!(bytes >= 256)) throw new RangeError(`maxBindingBytes: expected a number ≥ 256, got ${bytes}`);
    const cap = Math.min(this.deviceLimits.maxStorageBufferBindingSize, Math.floor(bytes / 4) * 4);
    this.limits = { ...this.deviceLimits, maxStorageBufferBindingSize: cap };
    if (strict) this.ownLimits = this.limits;
  }

  /**
   * Run `fn` (one device operation: a buffer, pipeline or bind group creation, a submit) in its
   * own 'validation' and 'out-of-memory' error scopes, so that its error is attributed to it and
   * to nothing else: an out-of-memory error becomes a {@link ResourceLimitError} naming `what`
   * and `bytes`, a validation error a {@link GpuValidationError} (a library bug). The error is
   * thrown by the next {@link check} after the scopes resolve ({@link settle} waits for them);
   * `onError` runs first, so the caller can drop what it cached from the failed operation.
   * Cost: two scope pushes and pops (microseconds); only operations that can fail use it.
   */
  scoped<T>(what: string, fn: () => T, opts: { bytes?: number; label?: string; onError?: () => void } = {}): T {
    const d = this.device;
    d.pushErrorScope('out-of-memory');
    d.pushErrorScope('validation');
    try {
      return fn();
    } finally {
      const pops = Promise.all([d.popErrorScope(), d.popErrorScope()]);
      const done: Promise<void> = pops.then(
        ([invalid, oom]) => {
          this.pendingScopes.delete(done);
          if (!invalid && !oom) return;
          opts.onError?.();
          if (oom) {
            const held = this.buffers.allocatedBytes;
            this.errors.push(new ResourceLimitError(`GPU ${what}`, held + (opts.bytes ?? 0), held, `the device is out of memory (${oom.message.split('\n')[0]}); the available figure is what gpusparse already holds on it: free GPU memory, or use a smaller matrix or a format with fewer device bytes`));
          }
          if (invalid) this.errors.push(new GpuValidationError(opts.label ?? what, 'validation', `${what}: ${invalid.message}`));
        },
        () => {
          this.pendingScopes.delete(done); // the device was lost: check() reports it
        },
      );
      this.pendingScopes.add(done);
    }
  }

  /** Wait until every error scope opened so far has resolved (their errors then reach {@link check}). */
  async settle(): Promise<void> {
    while (this.pendingScopes.size > 0) await Promise.all([...this.pendingScopes]);
  }

  /** True once the device is lost or disposed. */
  get isLost(): boolean {
    return this.lostError !== undefined || this.disposed;
  }

  /**
   * Throw the pending device loss, or the first error reported since the last check (the
   * others of the same failure are dropped, so the next operation starts clean) — an
   * out-of-memory one first: a buffer whose creation ran out of memory is an error object, and
   * every later use of it (a write, a bind group, a submit) reports a validation error that may
   * arrive before the allocation's own out-of-memory scope resolves; that consequence would read
   * as a gpusparse bug (GpuValidationError, exit 70) instead of "does not fit" (exit 5).
   * O(pending errors).
   */
  check(): void {
    if (this.lostError) throw this.lostError;
    if (this.disposed) throw new DeviceLostError('destroyed', 'context disposed');
    if (this.errors.length === 0) return;
    const e = this.errors.find((x) => x instanceof ResourceLimitError) ?? this.errors[0]!;
    this.errors.length = 0;
    throw e;
  }

  /** Wait for all submitted work and surface errors (a synchronisation point). */
  async finish(): Promise<void> {
    this.check();
    this.recorder.flush();
    await this.device.queue.onSubmittedWorkDone();
    await this.settle();
    // device.lost resolves asynchronously: give it a turn
    await new Promise((r) => setTimeout(r, 0));
    this.check();
  }

  /** Plain-data adapter info, limits, features and subgroup size. */
  describe(): GpuDescription {
    return { adapter: this.adapterInfo, limits: this.limits, features: this.features, caps: this.caps, toggles: this.toggles };
  }

  /** {@link describe} as printable text (one line per fact). */
  describeText(): string {
    const d = this.describe();
    const a = d.adapter;
    const lines = [
      `adapter: ${[a.vendor, a.architecture, a.device, a.description].filter(Boolean).join(' / ') || '(no info)'}`,
      `subgroups: ${d.caps.subgroups ? `yes, adapter range ${d.caps.subgroupMinSize}..${d.caps.subgroupMaxSize}, observed ${d.caps.subgroupSize} (contiguous: ${d.caps.subgroupContiguous})` : 'no'}`,
      `timestamp-query: ${d.caps.timestampQuery ? 'yes' : 'no'}; unsafe (no bounds checks): ${d.caps.unsafe}`,
      ...Object.entries(d.limits).map(([k, v]) => `${k}: ${v}`),
      `features: ${d.features.join(', ')}`,
    ];
    return lines.join('\n');
  }

  /** Destroy the device and every buffer. The context is unusable afterwards. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.buffers.destroyAll();
    this.device.destroy();
  }
}
