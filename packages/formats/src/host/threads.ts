/**
 * Worker threads for the wasm host backend: each worker instantiates the host kernel module on
 * the same shared memory and waits on a control block in that memory. A job is a list of parts
 * (kernel calls on fixed row or element ranges, usually a few per thread) that the calling
 * thread and the workers *claim* one by one from a shared counter (`Atomics.add`), so a worker
 * the OS has not scheduled yet costs nothing: the caller runs the parts it has not claimed, and
 * only waits for parts a worker is running. No message passing per job: the arguments are
 * written to the control block, the workers are woken with `Atomics.notify`, and the caller
 * waits (`Atomics.wait`) until every part is done. The split is fixed by the caller, so results
 * do not depend on which thread ran which part.
 * @module
 */
import type { WasmHeap } from './heap';
import type { HostKernels } from './kernels';

/** Kernel names a job may run, and their numeric ids in the control block. */
const KERNELS = ['spmv', 'dotBlocks', 'multiDotBlocks', 'axpy0', 'axpy1', 'axpby2', 'scale', 'multiply', 'combine', 'cgUpdateBlocks', 'spmvDotBlocks', 'combineDotBlocks', 'cgTrueUpdateBlocks', 'spmvPairDotBlocks', 'multiDotCopyBlocks'] as const;
/** A kernel a thread can run. */
export type ThreadKernel = (typeof KERNELS)[number];
const MAX_ARGS = 12;
/** Most parts of one job, per thread of the pool. */
export const MAX_PARTS_PER_THREAD = 8;
/**
 * Parts per thread of a threaded operation: each thread claims parts until none is left, so on
 * a busy machine a worker that is not running yet leaves its share to the others instead of
 * making the caller wait for it. (At load average 15–21 on 2 cores, 2 threads still ran CG
 * 1.5× slower than 1 after this change: a worker preempted while it holds a part stalls the
 * caller all the same.)
 */
export const PARTS_PER_THREAD = 4;
/** Control block: i32 [seq, done, exit, next, count, pad, pad, pad], then per part (1 + MAX_ARGS) f64. */
const HEADER = 32;
const SLOT = 8 * (1 + MAX_ARGS);
const [SEQ, DONE, EXIT, NEXT, COUNT] = [0, 1, 2, 3, 4];
/**
 * NEXT between jobs: far above any part count, so that a claim a late worker makes then (or
 * while the next job's arguments are being written) fails, and no part runs twice.
 */
const CLOSED = 1 << 30;

function workerSource(): string {
  return `"use strict";
const { workerData } = require('node:worker_threads');
const { module, memory, ctrl, names, maxParts } = workerData;
const k = new WebAssembly.Instance(module, { env: { memory } }).exports;
const fns = names.map((n) => k[n]);
const i32 = new Int32Array(memory.buffer, ctrl, ${HEADER / 4});
const f64 = new Float64Array(memory.buffer, ctrl + ${HEADER}, maxParts * ${1 + MAX_ARGS});
let seen = 0;
for (;;) {
  let s = Atomics.load(i32, ${SEQ});
  for (let spin = 0; s === seen && spin < 2000; spin++) s = Atomics.load(i32, ${SEQ});
  while (s === seen) { Atomics.wait(i32, ${SEQ}, seen); s = Atomics.load(i32, ${SEQ}); }
  seen = s;
  if (Atomics.load(i32, ${EXIT}) !== 0) break;
  // claim parts until none is left; the arguments are read after the claim, so a late claim
  // that lands in the next job runs that job's part with that job's arguments
  for (;;) {
    const p = Atomics.add(i32, ${NEXT}, 1);
    if (p >= Atomics.load(i32, ${COUNT})) break;
    const o = p * ${1 + MAX_ARGS};
    fns[f64[o]](${Array.from({ length: MAX_ARGS }, (_, i) => `f64[o + ${i + 1}]`).join(', ')});
    Atomics.add(i32, ${DONE}, 1);
    Atomics.notify(i32, ${DONE});
  }
}`;
}

/**
 * A pool of `threads − 1` workers plus the calling thread over one heap.
 * @example
 * const pool = ThreadPool.create(heap, 2);
 * pool?.run('axpy1', [[a, x, y, n / 2], [a, x + 4 * n, y + 4 * n, n - n / 2]]); // either thread may run either part
 */
export class ThreadPool {
  private readonly i32: Int32Array;
  private readonly slots: Float64Array;
  private closed = false;
  /** Most parts of one job: {@link MAX_PARTS_PER_THREAD} per thread. */
  readonly maxParts: number;

  private constructor(
    private readonly heap: WasmHeap,
    private readonly workers: { terminate(): Promise<number> }[],
    ctrl: number,
    readonly threads: number,
  ) {
    this.maxParts = threads * MAX_PARTS_PER_THREAD;
    this.i32 = heap.i32View(ctrl, HEADER / 4);
    this.slots = heap.f64View(ctrl + HEADER, this.maxParts * (1 + MAX_ARGS));
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
    const maxParts = threads * MAX_PARTS_PER_THREAD;
    const ctrl = heap.alloc(HEADER + maxParts * SLOT, 'thread control block');
    heap.i32View(ctrl, HEADER / 4).fill(0);
    heap.i32View(ctrl, HEADER / 4)[NEXT] = CLOSED;
    const src = workerSource();
    const workers = [];
    for (let t = 1; t < threads; t++) {
      const w = new wt.Worker(src, { eval: true, workerData: { module: heap.module, memory: heap.memory, ctrl, names: KERNELS, maxParts } });
      w.unref(); // an idle pool never keeps the process alive
      workers.push(w);
    }
    return new ThreadPool(heap, workers, ctrl, threads);
  }

  /**
   * Run `kernel` once per part (1 ≤ parts.length ≤ {@link maxParts}), the parts claimed by this
   * thread and the workers in turn. Returns when all parts are done; this thread runs every part
   * no worker has claimed, so a descheduled worker delays the job only by a part it already holds.
   */
  run(kernel: ThreadKernel, parts: readonly (readonly number[])[]): void {
    if (parts.length > this.maxParts) throw new RangeError(`ThreadPool.run: ${parts.length} parts, at most ${this.maxParts}`);
    const id = KERNELS.indexOf(kernel);
    const s = this.slots;
    const w = 1 + MAX_ARGS;
    for (let t = 0; t < parts.length; t++) {
      const p = parts[t]!;
      s[t * w] = id;
      for (let i = 0; i < p.length; i++) s[t * w + 1 + i] = p[i]!;
    }
    const c = this.i32;
    // the arguments and the count before the counter opens: a claim that succeeds sees both
    Atomics.store(c, COUNT, parts.length);
    Atomics.store(c, DONE, 0);
    Atomics.store(c, NEXT, 0);
    Atomics.add(c, SEQ, 1);
    Atomics.notify(c, SEQ);
    const f = this.heap.kernels[kernel] as (...a: number[]) => void;
    for (;;) {
      const p = Atomics.add(c, NEXT, 1);
      if (p >= parts.length) break;
      f(...parts[p]!);
      Atomics.add(c, DONE, 1);
    }
    const want = parts.length;
    let d = Atomics.load(c, DONE);
    for (let spin = 0; d < want && spin < 20_000; spin++) d = Atomics.load(c, DONE);
    while (d < want) {
      Atomics.wait(c, DONE, d, 50);
      d = Atomics.load(c, DONE);
    }
    Atomics.store(c, NEXT, CLOSED); // every part is claimed and done: claims until the next job fail
  }

  /** Stop the workers (the pool is unusable afterwards). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const c = this.i32;
    Atomics.store(c, COUNT, 0);
    Atomics.store(c, EXIT, 1);
    Atomics.add(c, SEQ, 1);
    Atomics.notify(c, SEQ);
    for (const w of this.workers) void w.terminate();
  }
}

export type { HostKernels };
