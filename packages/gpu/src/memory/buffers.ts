/**
 * Device buffers owned by the context: explicit `dispose()` returns a buffer to a pool keyed
 * by usage and size class, so Krylov loops allocate nothing after their first iteration.
 * @module
 */
import { ResourceLimitError } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';

/** Storage usage of every data buffer: bindable, writable from the host, copyable both ways. */
export const STORAGE_USAGE = 0x80 | 0x08 | 0x04; // STORAGE | COPY_DST | COPY_SRC

let nextId = 1;

/**
 * A pooled device buffer. `bytes` is what was asked for; `size` (≥ bytes, ≥ 16) what exists.
 * Contents of a buffer fresh from the pool are undefined.
 */
export class GpuBuf {
  private released = false;
  constructor(
    /** Stable id of the underlying GPUBuffer (bind-group cache key). */
    readonly id: number,
    readonly buffer: GPUBuffer,
    readonly size: number,
    readonly usage: number,
    readonly bytes: number,
    private readonly pool: BufferPool,
  ) {}
  /** True after dispose(). */
  get isDisposed(): boolean {
    return this.released;
  }
  /** Return the buffer to the context's pool (idempotent). */
  dispose(): void {
    if (this.released) return;
    this.released = true;
    this.pool.release(this);
  }
}

/** Round a byte count to its pool size class: powers of two up to 16 MiB, then 1 MiB steps. */
export function sizeClass(bytes: number): number {
  const b = Math.max(16, Math.ceil(bytes / 16) * 16);
  if (b <= 1 << 24) return 2 ** Math.ceil(Math.log2(b));
  return Math.ceil(b / (1 << 20)) * (1 << 20);
}

/**
 * Bytes to allocate for a request of `bytes`: its {@link sizeClass}, except that a request that
 * fits one binding (≤ `maxBinding`) never gets a class past it — whole-buffer bindings of a
 * rounded-up buffer would exceed the limit (issue 14: 2 147 483 644 bytes became a 2 GiB class,
 * NVIDIA's limit is 2 GiB − 4) — and no class passes `maxBuffer`; such requests get their own
 * size rounded up to 16 (or to 4 right under the limit). O(1).
 * @returns the size, or -1 when `bytes` itself exceeds `maxBuffer`
 * @example poolSize(2_147_483_640, 2_147_483_644, 2 ** 34) // 2_147_483_640
 */
export function poolSize(bytes: number, maxBinding: number, maxBuffer: number): number {
  const own16 = Math.max(16, Math.ceil(bytes / 16) * 16);
  const own4 = Math.max(16, Math.ceil(bytes / 4) * 4);
  const cls = sizeClass(bytes);
  if (bytes <= maxBinding && cls > maxBinding) return own16 <= maxBinding ? own16 : own4;
  if (cls <= maxBuffer) return cls;
  if (own16 <= maxBuffer) return own16;
  return own4 <= maxBuffer ? own4 : -1;
}

/**
 * The buffer pool of a context. Cost: acquire is a Map lookup on a hit, a `createBuffer` on a
 * miss. Released buffers are kept for reuse up to the larger of `maxPooledBytes` and the most
 * bytes ever live at once (the working set a solver has shown it needs: a Lanczos basis of 20
 * vectors of 2.9·10^6 rows is 236 MB); the rest are destroyed. With a fixed 256 MiB cap such a
 * basis was destroyed and re-created at every restart — each destroy flushed the recorder and
 * dropped the cached bind groups — which made a Lanczos step on the H100 3.3× its GPU time.
 * A size class hands out its lowest buffer id first (not the last released): bind groups are
 * cached by buffer ids, and a solver that releases its basis in some order and acquires it
 * again (a Lanczos restart, a second solve) then gets the same buffers in the same roles, where
 * last-in-first-out permuted them and every basis kernel missed the cache (374 bind groups
 * created by a repeated Hubbard L = 8 Lanczos on lavapipe, ~0.1 ms each there; 0 now).
 */
export class BufferPool {
  private readonly free = new Map<string, GPUBuffer[]>();
  private readonly live = new Set<GPUBuffer>();
  private readonly ids = new WeakMap<GPUBuffer, number>();
  /** Buffers whose creation failed (out of memory): destroyed on release, never reused. */
  private readonly failed = new WeakSet<GPUBuffer>();
  private pooledBytes = 0;
  /** Bytes of released buffers kept for reuse at least (default 256 MiB; see the class note). */
  maxPooledBytes = 256 * 2 ** 20;
  /** Bytes currently held by live (acquired, not yet released) buffers. */
  private liveBytes = 0;
  /** The most bytes ever live at once: the pool may keep this much for reuse. */
  peakLiveBytes = 0;
  /** Bytes currently allocated on the device by this pool (live + pooled). */
  allocatedBytes = 0;

  constructor(private readonly ctx: GpuContext) {}

  /** Buffers acquired and not yet released (what a leak check counts). O(1). */
  get liveBuffers(): number {
    return this.live.size;
  }

  /**
   * A buffer of at least `bytes` bytes with `usage` (default {@link STORAGE_USAGE}). A new
   * buffer is created in its own error scope: if the device runs out of memory, the next
   * `ctx.check()` throws a ResourceLimitError and the buffer is destroyed on dispose, never pooled.
   * @throws ResourceLimitError when `bytes` exceeds the device's maxBufferSize
   */
  acquire(bytes: number, usage = STORAGE_USAGE, label = 'buf'): GpuBuf {
    this.ctx.check();
    const lim = this.ctx.deviceLimits;
    const size = poolSize(bytes, lim.maxStorageBufferBindingSize, lim.maxBufferSize);
    if (size < 0) {
      throw new ResourceLimitError(`GPU buffer '${label}'`, bytes, lim.maxBufferSize, 'one buffer cannot exceed the device\'s maxBufferSize: use a format that splits the matrix, or a smaller one');
    }
    const key = `${usage}:${size}`;
    const list = this.free.get(key);
    let buffer = list?.pop();
    if (buffer) this.pooledBytes -= size;
    else {
      this.trimFor(size);
      const created: GPUBuffer = this.ctx.scoped(`buffer '${label}' (${size} bytes)`, () => this.ctx.device.createBuffer({ size, usage, label }), {
        bytes: size,
        onError: (): void => {
          this.failed.add(created);
        },
      });
      buffer = created;
      this.allocatedBytes += size;
    }
    this.live.add(buffer);
    this.liveBytes += size;
    this.peakLiveBytes = Math.max(this.peakLiveBytes, this.liveBytes);
    let id = this.ids.get(buffer);
    if (id === undefined) this.ids.set(buffer, (id = nextId++));
    return new GpuBuf(id, buffer, size, usage, bytes, this);
  }

  /** Called by {@link GpuBuf.dispose}. */
  release(b: GpuBuf): void {
    if (!this.live.delete(b.buffer)) return;
    this.liveBytes -= b.size;
    if (this.failed.has(b.buffer) || this.pooledBytes + b.size > Math.max(this.maxPooledBytes, this.peakLiveBytes)) {
      // flush first: pending commands may still use it
      this.ctx.recorder.flush();
      this.ctx.pipelines.forgetBuffer(b.id);
      b.buffer.destroy();
      this.allocatedBytes -= b.size;
      return;
    }
    const key = `${b.usage}:${b.size}`;
    let list = this.free.get(key);
    if (!list) this.free.set(key, (list = []));
    // kept in descending id order, so that acquire() hands out the lowest id first (see the class note)
    let at = list.length;
    while (at > 0 && (this.ids.get(list[at - 1]!) ?? 0) < b.id) at--;
    list.splice(at, 0, b.buffer);
    this.pooledBytes += b.size;
  }

  /**
   * Before a new buffer of `size` bytes: destroy pooled buffers (largest first) until the
   * device holds no more than the larger of the peak working set and the live bytes plus
   * `maxPooledBytes` — the pool never makes a run need more memory than it has already used.
   */
  private trimFor(size: number): void {
    const live = this.liveBytes + size;
    const bound = Math.max(this.peakLiveBytes, live + this.maxPooledBytes);
    if (this.allocatedBytes + size <= bound || this.pooledBytes === 0) return;
    this.ctx.recorder.flush(); // pending commands may still use a pooled buffer
    const lists = [...this.free.entries()].sort((a, b) => Number(b[0].split(':')[1]) - Number(a[0].split(':')[1]));
    for (const [, list] of lists) {
      while (list.length > 0 && this.allocatedBytes + size > bound) {
        const buf = list.pop()!;
        this.pooledBytes -= buf.size;
        this.allocatedBytes -= buf.size;
        const id = this.ids.get(buf);
        if (id !== undefined) this.ctx.pipelines.forgetBuffer(id);
        buf.destroy();
      }
    }
  }

  /** Destroy every buffer, pooled or live (context disposal). */
  destroyAll(): void {
    for (const l of this.free.values()) for (const b of l) b.destroy();
    for (const b of this.live) b.destroy();
    this.free.clear();
    this.live.clear();
    this.pooledBytes = 0;
    this.allocatedBytes = 0;
    this.liveBytes = 0;
  }
}
