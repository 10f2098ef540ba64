/**
 * Worker threads for the wasm host backend: each worker instantiates the host kernel module on
 * the same shared memory and waits on a control block in that memory; a job is one kernel
 * call per thread (its own row or element range), the calling thread doing part 0 itself.
 * No message passing per job: the arguments are written to the control block, the workers are
 * woken with `Atomics.notify`, and the caller waits (`Atomics.wait`) until all have finished.
 * The split is fixed by the caller, so results do not depend on which thread ran which part.
 * @module
 */
import type { WasmHeap } from './heap';
import type { HostKernels } from './kernels';

/** Kernel names a job may run, and their numeric ids in the control block. */
const KERNELS = ['spmv', 'dotBlocks', 'multiDotBlocks', 'axpy0', 'axpy1', 'axpby2', 'scale', 'multiply', 'combine', 'cgUpdateBlocks'] as const;
/** A kernel a thread can run. */
export type ThreadKernel = (typeof KERNELS)[number];
const MAX_ARGS = 10;
/** Control block: i32 [seq, done, exit, pad], then per thread (1 + MAX_ARGS) f64. */
const HEADER = 16;
const SLOT = 8 * (1 + MAX_ARGS);

function workerSource(): string {
  return `"use strict";
const { workerData } = require('node:worker_threads');
const { module, memory, ctrl, index, names } = workerData;
const k = new WebAssembly.Instance(module, { env: { memory } }).exports;
const fns = names.map((n) => k[n]);
const i32 = new Int32Array(memory.buffer, ctrl, 4);
const f64 = new Float64Array(memory.buffer, ctrl + ${HEADER} + index * ${SLOT}, ${1 + MAX_ARGS});
let seen = 0;
for (;;) {
  let s = Atomics.load(i32, 0);
  for (let spin = 0; s === seen && spin < 2000; spin++) s = Atomics.load(i32, 0);
  while (s === seen) { Atomics.wait(i32, 0, seen); s = Atomics.load(i32, 0); }
  seen = s;
  if (Atomics.load(i32, 2) !== 0) break;
  const f = fns[f64[0]];
  f(f64[1], f64[2], f64[3], f64[4], f64[5], f64[6], f64[7], f64[8], f64[9], f64[10]);
  Atomics.add(i32, 1, 1);
  Atomics.notify(i32, 1);
}`;
}

/**
 * A pool of `threads − 1` workers plus the calling thread over one heap.
 * @example
 * const pool = ThreadPool.create(heap, 2);
 * pool?.run('axpy1', [[a, x, y, n / 2], [a, x + 4 * n, y + 4 * n, n - n / 2]]);
 */
export class ThreadPool {
  private readonly i32: Int32Array;
  private readonly slots: Float64Array;
  private closed = false;

  private constructor(
    private readonly heap: WasmHeap,
    private readonly workers: { terminate(): Promise<number> }[],
    ctrl: number,
    readonly threads: number,
  ) {
    this.i32 = heap.i32View(ctrl, 4);
    this.slots = heap.f64View(ctrl + HEADER, threads * (1 + MAX_ARGS));
  }

  /**
   * A pool of `threads` (≥ 2), or undefined where node:worker_threads cannot be loaded
   * synchronously (a browser, or Node before 20.16 without `process.getBuiltinModule`): the
   * backend then runs on one thread.
   */
  static create(heap: WasmHeap, threads: number): ThreadPool | undefined {
    const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    if (typeof proc?.getBuiltinModule !== 'function') return undefined;
    const wt = proc.getBuiltinModule('node:worker_threads') as typeof import('node:worker_threads') | undefined;
    if (wt === undefined) return undefined;
    const ctrl = heap.alloc(HEADER + threads * SLOT, 'thread control block');
    heap.i32View(ctrl, 4).fill(0);
    const src = workerSource();
    const workers = [];
    for (let t = 1; t < threads; t++) {
      const w = new wt.Worker(src, { eval: true, workerData: { module: heap.module, memory: heap.memory, ctrl, index: t, names: KERNELS } });
      w.unref(); // an idle pool never keeps the process alive
      workers.push(w);
    }
    return new ThreadPool(heap, workers, ctrl, threads);
  }

  /**
   * Run `kernel` once per part: part 0 on this thread, part t on worker t (parts.length ≤
   * threads; a missing part leaves its worker idle). Returns when all parts are done.
   */
  run(kernel: ThreadKernel, parts: readonly (readonly number[])[]): void {
    const id = KERNELS.indexOf(kernel);
    const s = this.slots;
    const w = 1 + MAX_ARGS;
    for (let t = 1; t < this.threads; t++) {
      const p = parts[t];
      // an idle worker runs a zero-length scale (y = b·y over 0 elements)
      s[t * w] = p ? id : KERNELS.indexOf('scale');
      if (p) for (let i = 0; i < p.length; i++) s[t * w + 1 + i] = p[i]!;
      else s.fill(0, t * w + 1, t * w + w);
    }
    Atomics.store(this.i32, 1, 0);
    Atomics.add(this.i32, 0, 1);
    Atomics.notify(this.i32, 0);
    const p0 = parts[0];
    if (p0) (this.heap.kernels[kernel] as (...a: number[]) => void)(...p0);
    const want = this.threads - 1;
    let d = Atomics.load(this.i32, 1);
    for (let spin = 0; d < want && spin < 20_000; spin++) d = Atomics.load(this.i32, 1);
    while (d < want) {
      Atomics.wait(this.i32, 1, d, 50);
      d = Atomics.load(this.i32, 1);
    }
  }

  /** Stop the workers (the pool is unusable afterwards). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    Atomics.store(this.i32, 2, 1);
    Atomics.add(this.i32, 0, 1);
    Atomics.notify(this.i32, 0);
    for (const w of this.workers) void w.terminate();
  }
}

export type { HostKernels };
