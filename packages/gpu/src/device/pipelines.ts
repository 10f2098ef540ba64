/**
 * Pipeline, bind-group-layout and bind-group caches of a context. Kernels never hold GPU
 * objects: they describe a pipeline by a key (only what changes the WGSL text) and a binding
 * signature, and the context caches the compiled result.
 * @module
 */
import { ResourceLimitError } from '@gpusparse/formats';
import type { GpuBuf } from '../memory/buffers';
import type { GpuContext } from './context';
import { GpuValidationError } from './errors';

/** Bytes of the per-dispatch uniform block (binding 0, dynamic offset). */
export const UNIFORM_BYTES = 256;

/**
 * A compute pipeline description. Binding 0 is always the per-dispatch uniform block
 * (dynamic offset); `bindings` lists storage bindings 1…k: 'r' read-only, 'w' read-write.
 */
export interface PipelineSpec {
  /** Cache key: everything that changes the WGSL text, and nothing else. */
  readonly key: string;
  /** Label shown in validation errors. */
  readonly label: string;
  readonly bindings: string;
  /** Pure function returning the shader text (called once per key). */
  readonly wgsl: () => string;
}

/** A compiled pipeline with its layout. */
export interface PipelineEntry {
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
  readonly bindings: string;
  readonly label: string;
  readonly key: string;
}

/** A storage binding: a buffer, optionally a byte range of it. */
export interface BufferRef {
  readonly buf: GpuBuf;
  readonly offset?: number;
  readonly size?: number;
}

/** Anything bindable: a buffer or a range of one. */
export type Bindable = GpuBuf | BufferRef;

const asRef = (b: Bindable): BufferRef => ('buf' in b ? b : { buf: b });

/** Caches of one context. Cost of a hit: one Map lookup. */
export class PipelineCache {
  private readonly pipelines = new Map<string, PipelineEntry>();
  private readonly layouts = new Map<string, GPUBindGroupLayout>();
  /** Bind groups by layout, then arena id, then one key per binding ({@link GroupNode}). */
  private readonly groupRoots = new Map<GPUBindGroupLayout, GroupNode>();
  private groupCount = 0;
  /** Number of pipelines compiled so far (tests check the cache key discipline). */
  compiled = 0;
  /**
   * Pipelines dropped after a failed compile so far: a caller that keeps entries of its own
   * (BLAS-1's per-name table) drops them when this changes.
   */
  evictions = 0;
  /**
   * Every compile in order: key, whether it ran blocking (`get` on a miss) or ahead of time
   * ({@link prewarm}), and its milliseconds (for async ones: from request to ready, overlapped
   * with other work). Lets a caller count the blocking compiles of a phase.
   */
  readonly log: { key: string; mode: 'sync' | 'async'; ms: number }[] = [];
  private readonly pending = new Map<string, Promise<void>>();

  constructor(private readonly ctx: GpuContext) {}

  private layout(bindings: string): GPUBindGroupLayout {
    let l = this.layouts.get(bindings);
    if (l) return l;
    const entries: GPUBindGroupLayoutEntry[] = [
      { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform', hasDynamicOffset: true } },
    ];
    for (let i = 0; i < bindings.length; i++) {
      entries.push({
        binding: i + 1,
        visibility: GPUShaderStage.COMPUTE,
        buffer: { type: bindings[i] === 'w' ? 'storage' : 'read-only-storage' },
      });
    }
    l = this.ctx.device.createBindGroupLayout({ entries, label: `layout-${bindings}` });
    this.layouts.set(bindings, l);
    return l;
  }

  /** The pipeline for `spec`, compiled on first use. */
  get(spec: PipelineSpec): PipelineEntry {
    const hit = this.pipelines.get(spec.key);
    if (hit) return hit;
    const t0 = performance.now();
    const device = this.ctx.device;
    const layout = this.layout(spec.bindings);
    // a failed compile is reported once for this key and dropped, so nothing later reuses it
    const pipeline = this.ctx.scoped(`pipeline '${spec.label}'`, () => {
      const module = device.createShaderModule({ code: spec.wgsl(), label: spec.label });
      return device.createComputePipeline({
        label: spec.label,
        layout: device.createPipelineLayout({ bindGroupLayouts: [layout], label: spec.label }),
        compute: { module, entryPoint: 'main' },
      });
    }, {
      label: spec.label,
      onError: () => {
        this.pipelines.delete(spec.key);
        this.evictions++;
      },
    });
    const e: PipelineEntry = { pipeline, layout, bindings: spec.bindings, label: spec.label, key: spec.key };
    this.pipelines.set(spec.key, e);
    this.compiled++;
    this.log.push({ key: spec.key, mode: 'sync', ms: performance.now() - t0 });
    return e;
  }

  /** Whether `key` is compiled (not merely requested by {@link prewarm}). */
  has(key: string): boolean {
    return this.pipelines.has(key);
  }

  /**
   * Compile `specs` ahead of time without blocking (createComputePipelineAsync), so that a
   * later phase finds them in the cache instead of compiling on first use. Keys already
   * compiled or requested are skipped; a `get` before an async compile is ready compiles
   * blocking as before (the async result is then dropped). A failed async compile is not
   * cached (the later `get` reports it with its label). The promise resolves when all are
   * settled and never rejects.
   * @example void ctx.pipelines.prewarm(df64Space.prewarmSpecs()); // while float32 work runs
   */
  prewarm(specs: readonly PipelineSpec[]): Promise<void> {
    const device = this.ctx.device;
    const jobs: Promise<void>[] = [];
    for (const spec of specs) {
      if (this.pipelines.has(spec.key)) continue;
      const running = this.pending.get(spec.key);
      if (running) {
        jobs.push(running);
        continue;
      }
      const t0 = performance.now();
      const layout = this.layout(spec.bindings);
      const job = (async () => {
        try {
          // a shader error here is swallowed (own scope): the blocking get() reports it with its label
          device.pushErrorScope('validation');
          const module = device.createShaderModule({ code: spec.wgsl(), label: spec.label });
          const pl = device.createPipelineLayout({ bindGroupLayouts: [layout], label: spec.label });
          const invalid = device.popErrorScope();
          const pipeline = await device.createComputePipelineAsync({ label: spec.label, layout: pl, compute: { module, entryPoint: 'main' } });
          if ((await invalid) || this.pipelines.has(spec.key)) return; // failed, or compiled blocking meanwhile
          this.pipelines.set(spec.key, { pipeline, layout, bindings: spec.bindings, label: spec.label, key: spec.key });
          this.compiled++;
          this.log.push({ key: spec.key, mode: 'async', ms: performance.now() - t0 });
        } catch {
          // not cached: the first get() compiles it blocking and reports the error there
        } finally {
          this.pending.delete(spec.key);
        }
      })();
      this.pending.set(spec.key, job);
      jobs.push(job);
    }
    return Promise.all(jobs).then(() => undefined);
  }

  /**
   * A bind group for `entry` over the uniform arena and `refs`, cached by buffer ids and ranges
   * in a trie (one Map step per binding: small-integer keys for whole buffers, a string only for
   * ranges), so that a hit allocates nothing — a string key of 16 ids cost more host time than
   * Dawn's dispatch itself.
   */
  bindGroup(entry: PipelineEntry, arena: GPUBuffer, arenaId: number, refs: readonly Bindable[]): GPUBindGroup {
    let node = this.groupRoots.get(entry.layout);
    if (!node) this.groupRoots.set(entry.layout, (node = new GroupNode()));
    node = node.step(arenaId);
    for (let i = 0; i < refs.length; i++) node = node.step(refKey(refs[i]!));
    return node.group ?? this.createGroup(entry, arena, refs, node);
  }

  /** Create, check and cache the bind group of a trie leaf (dropped again if Dawn reports it invalid). */
  private createGroup(entry: PipelineEntry, arena: GPUBuffer, refs: readonly Bindable[], leaf: GroupNode): GPUBindGroup {
    if (this.groupCount >= 8192) {
      this.groupRoots.clear();
      this.groupCount = 0;
    }
    const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: arena, offset: 0, size: UNIFORM_BYTES } }];
    refs.forEach((b, i) => {
      const r = asRef(b);
      const offset = r.offset ?? 0;
      const size = r.size ?? r.buf.size - offset;
      this.checkBinding(entry, i + 1, r, offset, size);
      entries.push({ binding: i + 1, resource: { buffer: r.buf.buffer, offset, size } });
    });
    // an invalid group must not stay cached: pooled buffers keep their ids, so a later kernel
    // with the same buffers would hit it ('invalid due to a previous error', issue 14)
    const g = this.ctx.scoped(`bind group of '${entry.label}'`, () => this.ctx.device.createBindGroup({ layout: entry.layout, entries, label: entry.label }), {
      onError: () => {
        if (leaf.group === g) {
          leaf.group = undefined;
          this.groupCount--;
        }
      },
    });
    leaf.group = g;
    this.groupCount++;
    return g;
  }

  /**
   * Check one storage binding against the device before any call: a range past the limit is a
   * resource limit (the kernel's plan should have split it), a range outside its buffer or a
   * misaligned offset a bug. Cost O(1).
   * @throws ResourceLimitError | GpuValidationError
   */
  private checkBinding(entry: PipelineEntry, binding: number, r: BufferRef, offset: number, size: number): void {
    const lim = this.ctx.deviceLimits;
    const where = `binding ${binding} of '${entry.label}' (buffer ${r.buf.buffer.label || r.buf.id})`;
    if (size > lim.maxStorageBufferBindingSize) {
      throw new ResourceLimitError(where, size, lim.maxStorageBufferBindingSize, "one storage binding cannot exceed the device's maxStorageBufferBindingSize: this kernel should have split the matrix or refused it in supports() (please report it); choose another format meanwhile");
    }
    if (offset % lim.minStorageBufferOffsetAlignment !== 0 || size % 4 !== 0 || size <= 0 || offset + size > r.buf.size) {
      throw new GpuValidationError(where, 'binding', `expected offset a multiple of ${lim.minStorageBufferOffsetAlignment} and 0 < size (multiple of 4) with offset + size ≤ ${r.buf.size}, got offset ${offset}, size ${size}`);
    }
  }

  /** Forget bind groups that reference buffer `id` (called when a buffer is destroyed). O(cached groups). */
  forgetBuffer(id: number): void {
    const tag = `${id}:`;
    for (const root of this.groupRoots.values()) this.groupCount -= root.prune((k) => k === id || (typeof k === 'string' && k.startsWith(tag)));
  }

  /** Bind groups cached (tests). */
  get cachedGroups(): number {
    return this.groupCount;
  }
}

/** The trie key of one binding: the buffer id, or `id:offset:size` for a range. */
function refKey(b: Bindable): number | string {
  if (!('buf' in b)) return b.id;
  return b.offset === undefined && b.size === undefined ? b.buf.id : `${b.buf.id}:${b.offset ?? 0}:${b.size ?? -1}`;
}

/** A node of the bind-group trie: children by binding key, the group at the end of a path. */
class GroupNode {
  group: GPUBindGroup | undefined;
  private readonly next = new Map<number | string, GroupNode>();

  step(key: number | string): GroupNode {
    let n = this.next.get(key);
    if (!n) this.next.set(key, (n = new GroupNode()));
    return n;
  }

  /** Drop every subtree entered by a key that `hits`; returns the number of groups dropped. */
  prune(hits: (key: number | string) => boolean): number {
    let dropped = 0;
    for (const [k, n] of this.next) {
      if (hits(k)) {
        dropped += n.count();
        this.next.delete(k);
      } else dropped += n.prune(hits);
    }
    return dropped;
  }

  private count(): number {
    let c = this.group ? 1 : 0;
    for (const n of this.next.values()) c += n.count();
    return c;
  }
}
