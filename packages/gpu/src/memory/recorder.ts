/**
 * Command recording: work is encoded into one command encoder / compute pass and submitted in
 * batches. Per-dispatch sizes and scalars travel in a uniform arena (one 256-byte block per
 * dispatch, bound with a dynamic offset) written once per batch, so recording never waits.
 * @module
 */
import type { GpuContext } from '../device/context';
import { UseAfterDisposeError } from '../device/errors';
import { type Bindable, type PipelineEntry, UNIFORM_BYTES } from '../device/pipelines';
import type { GpuBuf } from './buffers';

/** Bytes of the uniform arena; a batch holds at most ARENA_BYTES / 256 dispatches. */
export const ARENA_BYTES = 1 << 18;

/**
 * Dispatches after which a batch is submitted without waiting, so that the GPU starts on the
 * first part of a long recording (a solver records hundreds of dispatches between two
 * readbacks) while the host records the rest. A submit costs ~20–60 µs of host time, 1/100 of
 * recording this many dispatches, so the overlap is nearly free.
 */
export const AUTO_FLUSH_DISPATCHES = 96;

/**
 * The first automatic submit after an explicit one (a readback or `finish` flushes and then
 * waits, so the GPU is idle) comes after this many dispatches, and each later batch holds twice
 * as many as the one before, up to {@link AUTO_FLUSH_DISPATCHES}: the GPU restarts after ~16
 * dispatches recorded (~0.1 ms of host time on the H100) instead of 96 (~0.8 ms, the same as
 * the readback itself). A solver that reads once per GMRES cycle pays that idle once per cycle;
 * the ramp costs three extra submits (~0.1 ms of host time, overlapped with the GPU).
 */
export const FIRST_BATCH_DISPATCHES = 16;

/**
 * Split a workgroup count over x and y so that neither exceeds `maxPerDim` (65 535 by default).
 * Kernels recover the linear id with `wg_linear()` from the WGSL helpers and must ignore
 * ids ≥ `groups` (x·y may exceed it by less than x).
 * @example fold2d(100_000, 65_535) // [65535, 2]
 */
export function fold2d(groups: number, maxPerDim = 65_535): [number, number] {
  if (groups <= maxPerDim) return [groups, 1];
  const y = Math.ceil(groups / maxPerDim);
  if (y > maxPerDim) throw new RangeError(`dispatch: expected at most ${maxPerDim}² workgroups, got ${groups}`);
  return [Math.ceil(groups / y), y];
}

/** Uniform blocks live in one shared ring of this many slots (see {@link Uniforms}). */
const UNIFORM_RING_SLOTS = 1024;
const uniformRing = new ArrayBuffer(UNIFORM_RING_SLOTS * UNIFORM_BYTES);
let uniformNext = 0;
/** The ring's blocks with their views, made once ({@link Uniforms.take}). */
const uniformBlocks: Uniforms[] = [];

/**
 * A zeroed 64-word uniform block with u32 / i32 / f32 views of the same bytes. The bytes are a
 * slot of a shared ring (1024 blocks), not an ArrayBuffer of their own: a block per dispatch
 * used to cost a backing-store allocation and its garbage collection (~20 µs per dispatch in a
 * Krylov loop). `Recorder.dispatch` copies the block when it records, so a block must be
 * filled and dispatched before 1024 newer blocks are made — every call site fills and
 * dispatches at once. {@link Uniforms.take} hands out the ring's blocks themselves (their four
 * views made once), where `new Uniforms()` makes four views per dispatch.
 */
export class Uniforms {
  readonly u!: Uint32Array;
  readonly i!: Int32Array;
  readonly f!: Float32Array;
  /** The block's bytes (what the recorder copies). */
  readonly bytes!: Uint8Array;

  /**
   * `new Uniforms()` is {@link Uniforms.take}: the next ring block, zeroed, with the views made
   * once (the same contract; kernels that construct their block allocate nothing per dispatch).
   * `slot` ≥ 0 makes the views of that slot (what take() does once per slot).
   */
  constructor(slot = -1) {
    if (slot < 0) {
      // biome-ignore lint/correctness/noConstructorReturn: the ring's block, so that kernels constructing theirs make no four views per dispatch
      return Uniforms.take();
    }
    const offset = slot * UNIFORM_BYTES;
    this.bytes = new Uint8Array(uniformRing, offset, UNIFORM_BYTES);
    this.bytes.fill(0);
    this.u = new Uint32Array(uniformRing, offset, UNIFORM_BYTES / 4);
    this.i = new Int32Array(uniformRing, offset, UNIFORM_BYTES / 4);
    this.f = new Float32Array(uniformRing, offset, UNIFORM_BYTES / 4);
  }

  /**
   * The next block of the ring, zeroed (fill and dispatch it before 1024 newer blocks are made),
   * without allocating. O(64).
   * @example const u = Uniforms.take(); u.u[0] = n; rec.dispatch(pipe, refs, u, groups);
   */
  static take(): Uniforms {
    const at = uniformNext;
    uniformNext = (uniformNext + 1) % UNIFORM_RING_SLOTS;
    let b = uniformBlocks[at];
    if (b) b.u.fill(0);
    else uniformBlocks[at] = b = new Uniforms(at);
    return b;
  }
}

/** The batch recorder of a context. */
export class Recorder {
  private encoder: GPUCommandEncoder | undefined;
  private pass: GPUComputePassEncoder | undefined;
  private readonly arena: GpuBuf;
  private readonly staging = new Uint8Array(ARENA_BYTES);
  /** The one dynamic offset of a dispatch (reused: no array per call). */
  private readonly offsets = [0];
  private used = 0;
  private sinceFlush = 0;
  /** Dispatches of the batch being recorded before its automatic submit (the ramp after an idle GPU). */
  private batchTarget = FIRST_BATCH_DISPATCHES;
  private first = FIRST_BATCH_DISPATCHES;
  /**
   * The first batch after an explicit submit ({@link FIRST_BATCH_DISPATCHES} by default; a
   * property so that benches can try others: fewer restart the GPU sooner after a readback,
   * for one extra submit each halving). Rounded down, at least 1; applies at once when no
   * batch is being recorded.
   */
  get firstBatch(): number {
    return this.first;
  }
  set firstBatch(v: number) {
    this.first = Math.max(1, Math.floor(v));
    if (this.sinceFlush === 0) this.batchTarget = this.first;
  }
  /** A pass opened with a descriptor (timestamps) is open: no automatic submit may end it. */
  private describedPass = false;
  /** The pipeline last set in the open pass (setPipeline is skipped when a dispatch repeats it). */
  private passPipeline: GPUComputePipeline | undefined;
  /** Submit after this many dispatches (0: only when the arena is full or on demand). */
  autoFlush = AUTO_FLUSH_DISPATCHES;
  /** Dispatches recorded since the context was created (for tests and stats). */
  dispatches = 0;
  /** Batches submitted so far. */
  submits = 0;
  private dispatchesSinceSubmit = 0;

  constructor(private readonly ctx: GpuContext) {
    this.arena = ctx.buffers.acquire(ARENA_BYTES, 0x40 | 0x08, 'uniform-arena'); // UNIFORM | COPY_DST
  }

  private enc(): GPUCommandEncoder {
    return (this.encoder ??= this.ctx.device.createCommandEncoder({ label: 'gpusparse-batch' }));
  }

  /** The open compute pass (opened on demand). */
  computePass(desc?: GPUComputePassDescriptor): GPUComputePassEncoder {
    if (desc) {
      this.endPass();
      this.describedPass = true;
    }
    if (!this.pass) {
      this.pass = this.enc().beginComputePass(desc ?? {});
      this.passPipeline = undefined;
    }
    return this.pass;
  }

  /** Close the open compute pass, if any. */
  endPass(): void {
    this.pass?.end();
    this.pass = undefined;
    this.passPipeline = undefined;
    this.describedPass = false;
  }

  /** The command encoder with no pass open (for copies and query resolves). */
  commandEncoder(): GPUCommandEncoder {
    this.endPass();
    return this.enc();
  }

  /**
   * Record one dispatch of `groups` workgroups (folded to 2-D past the per-dimension limit).
   * `uni` is the 256-byte uniform block of this dispatch. Cost: O(1) host work, no GPU wait.
   */
  dispatch(pipe: PipelineEntry, refs: readonly Bindable[], uni: Uniforms, groups: number): void {
    if (groups <= 0) return;
    for (let i = 0; i < refs.length; i++) {
      const r = refs[i]!;
      const b = 'buf' in r ? r.buf : r;
      if (b.isDisposed) throw new UseAfterDisposeError(`dispatch of '${pipe.label}', binding ${i + 1}`, b.id, b.buffer.label);
    }
    if (this.used + UNIFORM_BYTES > ARENA_BYTES) this.flush();
    this.ctx.check();
    const offset = this.used;
    this.staging.set(uni.bytes, offset);
    this.used += UNIFORM_BYTES;
    const maxDim = this.ctx.limits.maxComputeWorkgroupsPerDimension;
    const bg = this.ctx.pipelines.bindGroup(pipe, this.arena.buffer, this.arena.id, refs);
    const pass = this.pass ?? this.computePass();
    // the pipeline is pass state: a dispatch that repeats the last one's skips the call (~3 µs in Dawn)
    if (this.passPipeline !== pipe.pipeline) {
      pass.setPipeline(pipe.pipeline);
      this.passPipeline = pipe.pipeline;
    }
    this.offsets[0] = offset;
    pass.setBindGroup(0, bg, this.offsets);
    if (groups <= maxDim) pass.dispatchWorkgroups(groups);
    else {
      const [gx, gy] = fold2d(groups, maxDim);
      pass.dispatchWorkgroups(gx, gy);
    }
    this.dispatches++;
    this.dispatchesSinceSubmit++;
    if (++this.sinceFlush >= Math.min(this.autoFlush, this.batchTarget) && this.autoFlush > 0 && !this.describedPass) {
      const next = 2 * this.batchTarget;
      this.flush();
      this.batchTarget = next; // an automatic submit: the GPU is busy, the next batch may be longer
    }
  }

  /** Record a buffer-to-buffer copy (byte offsets and size multiples of 4). */
  copy(src: GpuBuf, srcOffset: number, dst: GpuBuf, dstOffset: number, bytes: number): void {
    if (bytes <= 0) return;
    if (src.isDisposed) throw new UseAfterDisposeError('buffer copy (source)', src.id, src.buffer.label);
    if (dst.isDisposed) throw new UseAfterDisposeError('buffer copy (destination)', dst.id, dst.buffer.label);
    this.commandEncoder().copyBufferToBuffer(src.buffer, srcOffset, dst.buffer, dstOffset, bytes);
  }

  /** True when commands are waiting to be submitted. */
  get pending(): boolean {
    return this.encoder !== undefined;
  }

  /** Submit everything recorded so far (no wait). */
  flush(): void {
    if (!this.encoder) return;
    const encoder = this.encoder;
    // forget the encoder first: a batch that fails validation is reported (in its own error
    // scope) and dropped, and the next recording starts on a fresh encoder
    this.encoder = undefined;
    this.sinceFlush = 0;
    this.batchTarget = this.first; // an explicit submit is usually waited on: start the ramp again
    const used = this.used;
    this.used = 0;
    this.ctx.scoped(`batch of ${this.dispatchesSinceSubmit} dispatches`, () => {
      this.pass?.end();
      this.pass = undefined;
      this.passPipeline = undefined;
      this.describedPass = false;
      const cb = encoder.finish();
      if (used > 0) this.ctx.device.queue.writeBuffer(this.arena.buffer, 0, this.staging, 0, used);
      this.ctx.device.queue.submit([cb]);
    });
    this.dispatchesSinceSubmit = 0;
    this.submits++;
  }
}
