/**
 * The memory of the wasm host backend: one shared WebAssembly memory holding the vectors of a
 * solve and its matrices, a first-fit allocator over it, and the kernels instantiated on it.
 *
 * Vectors are Float64Array views on the memory. The memory is shared (SharedArrayBuffer), so
 * growing it never detaches a view: a vector made before a grow stays valid, and its byte
 * offset is its address for the kernels. Blocks are freed by {@link WasmHeap.free} (the space's
 * `release`) or, for a vector the caller drops, when its view is garbage-collected.
 * @module
 */
import { ResourceLimitError } from '../core/errors';
import { HOST_MAX_PAGES, type HostKernels, hostKernelModule, instantiateHostKernels } from './kernels';

const PAGE = 65_536;
/** Allocation granule: a cache line, so vectors never share one (threads write disjoint lines). */
const ALIGN = 64;

interface Block {
  addr: number;
  bytes: number;
}

/** The last token written by {@link WasmHeap.owns}'s probe (process-wide). */
let probeToken = 0;

/**
 * A shared wasm memory with an allocator. Address 0 is never handed out (the first 64 bytes are
 * reserved), so 0 can mean "none"; its first word is the probe of {@link WasmHeap.owns}.
 * @example
 * const h = WasmHeap.create();
 * const v = h.allocF64(1000); // a Float64Array in wasm memory
 */
export class WasmHeap {
  readonly kernels: HostKernels;
  private readonly free_: Block[] = [];
  private top = ALIGN;
  private readonly buffers = new Set<ArrayBufferLike>();
  /** Every view {@link allocF64} made (a fast path of {@link owns}). */
  private readonly views = new WeakSet<ArrayBufferView>();
  private readonly sizes = new Map<number, number>();
  private readonly registry = new FinalizationRegistry<number>((addr) => this.freeAddr(addr));
  /** Views on the whole memory, remade after each grow: the kernels' tables and partials without a view per call. */
  private f64All_: Float64Array;
  private i32All_: Int32Array;

  private constructor(
    readonly memory: WebAssembly.Memory,
    readonly module: WebAssembly.Module,
  ) {
    this.kernels = instantiateHostKernels(module, memory);
    this.buffers.add(memory.buffer);
    this.f64All_ = new Float64Array(memory.buffer);
    this.i32All_ = new Int32Array(memory.buffer);
  }

  /** The whole memory as float64 (index = byte address / 8); valid until the next allocation grows it. */
  get f64All(): Float64Array {
    return this.f64All_;
  }
  /** The whole memory as int32 (index = byte address / 4); valid until the next allocation grows it. */
  get i32All(): Int32Array {
    return this.i32All_;
  }

  /** A new heap, or undefined when the engine lacks WebAssembly SIMD or shared memory. */
  static create(initialBytes = 16 * PAGE): WasmHeap | undefined {
    const module = hostKernelModule();
    if (module === null) return undefined;
    const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(initialBytes / PAGE)), maximum: HOST_MAX_PAGES, shared: true });
    return new WasmHeap(memory, module);
  }

  /** Bytes of the memory now (it only grows). */
  get memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }
  /** Bytes handed out and not yet freed (including the reserved first line). */
  get usedBytes(): number {
    let f = 0;
    for (const b of this.free_) f += b.bytes;
    return this.top - f;
  }

  /**
   * True when `v` is a vector this heap allocated (allocF64) — two such vectors never overlap
   * unless they are the same (or one was freed and its memory handed out again: a use after
   * release). A WeakSet lookup, where an overlap test reads byteOffset and byteLength of both.
   */
  made(v: ArrayBufferView): boolean {
    return this.views.has(v);
  }

  /** True when `v` is a view on this heap's memory (its byteOffset is then its address). */
  owns(v: ArrayBufferView): boolean {
    // the vectors this heap made, by identity: `.buffer` of a view on shared memory costs
    // 100–200 ns in V8 (a host Lanczos step asks 30–60 times), a WeakSet lookup a fraction
    if (this.views.has(v)) return true;
    const buf = v.buffer;
    if (this.buffers.has(buf)) return true;
    // a view made on a newer SharedArrayBuffer object of the same memory (after a grow)
    const cur = this.memory.buffer;
    if (buf === cur) {
      this.buffers.add(cur);
      return true;
    }
    if (!(buf instanceof SharedArrayBuffer) || buf.byteLength > cur.byteLength || buf.byteLength < ALIGN) return false;
    // V8 may hand out a new SharedArrayBuffer object for the same shared memory that this heap
    // never saw (seen under vitest with a worker pool: a vector made before a grow was taken for
    // a foreign array, and every operation on it fell back to the JavaScript kernels). Probe it:
    // a word of the reserved first line written through the memory must read back through `buf`.
    const probe = new Int32Array(cur, 0, 1);
    const view = new Int32Array(buf, 0, 1);
    const token = (probeToken = (probeToken + 1) | 0); // unique across heaps: another memory holds an older one
    probe[0] = token;
    if (view[0] !== token) return false;
    this.buffers.add(buf);
    return true;
  }

  /**
   * Allocate `bytes` (rounded up to 64) and return the address. Throws ResourceLimitError when
   * the 4 GiB wasm32 memory (or the engine) cannot hold it. Amortised O(free blocks).
   */
  alloc(bytes: number, what = 'WasmHeap.alloc'): number {
    const need = Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
    for (let i = 0; i < this.free_.length; i++) {
      const b = this.free_[i]!;
      if (b.bytes < need) continue;
      const addr = b.addr;
      if (b.bytes === need) this.free_.splice(i, 1);
      else {
        b.addr += need;
        b.bytes -= need;
      }
      this.sizes.set(addr, need);
      return addr;
    }
    const addr = this.top;
    this.ensure(addr + need, what);
    this.top = addr + need;
    this.sizes.set(addr, need);
    return addr;
  }

  private ensure(end: number, what: string): void {
    const have = this.memory.buffer.byteLength;
    if (end <= have) return;
    const max = HOST_MAX_PAGES * PAGE;
    // grow by at least a quarter, so that a solve's many vectors cost few grows
    const want = Math.min(max, Math.max(end, have + Math.floor(have / 4)));
    const pages = Math.ceil((want - have) / PAGE);
    try {
      if (end > max) throw new Error('beyond the wasm32 address space');
      this.memory.grow(pages);
    } catch (e) {
      throw new ResourceLimitError(what, end, Math.min(max, have), `the host backend keeps vectors and matrices in one WebAssembly memory of at most 4 GiB (${(e as Error).message}); use HostVectorSpace/HostOperator (plain arrays) for larger problems`);
    }
    this.buffers.add(this.memory.buffer);
    this.f64All_ = new Float64Array(this.memory.buffer);
    this.i32All_ = new Int32Array(this.memory.buffer);
  }

  /** Free the block at `addr` (a no-op for an address not allocated or already freed). */
  freeAddr(addr: number): void {
    const bytes = this.sizes.get(addr);
    if (bytes === undefined) return;
    this.sizes.delete(addr);
    // insert sorted by address, merging with neighbours
    let i = 0;
    while (i < this.free_.length && this.free_[i]!.addr < addr) i++;
    this.free_.splice(i, 0, { addr, bytes });
    const next = this.free_[i + 1];
    if (next && addr + bytes === next.addr) {
      this.free_[i]!.bytes += next.bytes;
      this.free_.splice(i + 1, 1);
    }
    const prev = this.free_[i - 1];
    if (prev && prev.addr + prev.bytes === addr) {
      prev.bytes += this.free_[i]!.bytes;
      this.free_.splice(i, 1);
      i--;
    }
    const last = this.free_[this.free_.length - 1];
    if (last && last.addr + last.bytes === this.top) {
      this.top = last.addr;
      this.free_.pop();
    }
  }

  /**
   * A new Float64Array of n zeros in the heap, freed when it is garbage-collected unless
   * {@link free} frees it first.
   */
  allocF64(n: number, what?: string, zero = true): Float64Array {
    const addr = this.alloc(8 * n, what);
    const v = new Float64Array(this.memory.buffer, addr, n);
    // zeros by a write pass even where the memory was never handed out (still memory.grow's
    // zeros): the first touch of a fresh page is then a write, one page fault. Skipping the pass
    // there (sessions 10–11) made a vector's first touch a read — the kernel maps the shared zero
    // page — and its first write a second fault: CG's x (x += α·p) on a fresh space cost 1.0–1.7
    // ms per 1.6 MB vector against 0.6 ms with the fill (bench/RESULTS.md, session 12).
    // TypedArray.fill on shared memory is V8's slow path, hence the kernel. zero = false: the
    // caller overwrites every element before reading any (a product's output), so the old
    // contents may stay.
    if (zero) this.kernels.fill(0, addr, n);
    this.registry.register(v, addr, v);
    this.views.add(v);
    return v;
  }

  /** Free a vector made by {@link allocF64} (a no-op for other arrays and for a second call). */
  free(v: Float64Array): void {
    if (!this.owns(v) || !this.registry.unregister(v)) return;
    this.freeAddr(v.byteOffset);
  }

  /** A view on [addr, addr + 8n) (no ownership: the caller manages the block). */
  f64View(addr: number, n: number): Float64Array {
    return new Float64Array(this.memory.buffer, addr, n);
  }
  /** An Int32Array view on [addr, addr + 4n). */
  i32View(addr: number, n: number): Int32Array {
    return new Int32Array(this.memory.buffer, addr, n);
  }
}

/**
 * A scratch region of a heap that grows on demand (tables of addresses and coefficients, dot
 * partials). `get(bytes)` returns its address, valid until the next `get` with more bytes.
 */
export class Scratch {
  private addr = 0;
  private bytes = 0;
  constructor(private readonly heap: WasmHeap) {}
  get(bytes: number): number {
    if (bytes <= this.bytes) return this.addr;
    if (this.addr !== 0) this.heap.freeAddr(this.addr);
    this.bytes = Math.max(bytes, 2 * this.bytes, 4096);
    this.addr = this.heap.alloc(this.bytes, 'host scratch');
    return this.addr;
  }
}
