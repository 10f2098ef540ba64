/**
 * What the two worker pools of this package (Hamiltonian assembly in ./workers.ts, ⟨S²⟩ in
 * ./spin-worker.ts) share: a worker script built from kernels' source text with one message loop
 * (`new Worker(code, { eval: true })` runs the same code under tsx, vitest and a bundle, without
 * a TypeScript loader in the worker), and the copy of typed arrays into shared memory.
 * @module
 */

/**
 * The source of a worker that defines `kernels` (by their source text) and answers
 * `{ type: 'init', … }` with `init` (statements; `msg` in scope) and every other message
 * `{ id, … }` with `{ id, ok: true, out }`, `out` = the expression `compute`, transferring the
 * buffers listed by the expression `transfer` (in terms of `out`); errors come back as
 * `{ id, ok: false, error }`. `state` declares the worker's variables.
 * @example workerScript({ double: (x: number) => 2 * x }, 'let k = 0;', 'k = msg.k;', 'new Float64Array([double(k)])', '[out.buffer]')
 */
export function workerScript(kernels: Record<string, (...args: never[]) => unknown>, state: string, init: string, compute: string, transfer: string): string {
  const defs = Object.entries(kernels)
    .map(([name, f]) => `const ${name} = (${f.toString()});`)
    .join('\n');
  return `"use strict";
var __name = function (f) { return f; };
const { parentPort } = require('node:worker_threads');
${defs}
${state}
parentPort.on('message', (msg) => {
  if (msg.type === 'init') { ${init} return; }
  try {
    const out = ${compute};
    parentPort.postMessage({ id: msg.id, ok: true, out }, ${transfer});
  } catch (e) {
    parentPort.postMessage({ id: msg.id, ok: false, error: String(e && e.stack || e) });
  }
});`;
}

type Typed = Int32Array | Uint32Array | Float64Array;

/** The same typed array in a SharedArrayBuffer (no copy when it already is). */
export function toShared<T extends Typed>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const ctor = a.constructor as new (b: SharedArrayBuffer) => T;
  const out = new ctor(new SharedArrayBuffer(a.byteLength));
  (out as Float64Array).set(a as Float64Array);
  return out;
}

/** Copy every typed array of a (nested) object into shared memory; a shared sub-object stays shared. */
export function shareDeep<T extends object>(o: T, seen = new Map<object, object>()): T {
  const hit = seen.get(o);
  if (hit) return hit as T;
  const out: Record<string, unknown> = {};
  seen.set(o, out);
  for (const [k, v] of Object.entries(o)) {
    if (v instanceof Int32Array || v instanceof Uint32Array || v instanceof Float64Array) out[k] = toShared(v);
    else if (v !== null && typeof v === 'object') out[k] = shareDeep(v as object, seen);
    else out[k] = v;
  }
  return out as T;
}

/** What {@link runWorkerPool} runs. */
export interface WorkerPoolJob<T> {
  /** The worker script ({@link workerScript}). */
  code: string;
  /** Fields of the one `{ type: 'init', … }` message each worker gets first. */
  init: Record<string, unknown>;
  /** Half-open ranges, one `{ id, start, end, …extra }` message each. */
  chunks: readonly [number, number][];
  nworkers: number;
  /** Extra fields of every range message. */
  extra?: Record<string, unknown>;
  /** The same computation on the main thread, which then takes ranges too (yielding between them). */
  main?: (start: number, end: number) => T;
  onChunk?: (done: number, total: number) => void;
  /**
   * Streaming: each output is handed over in chunk order as soon as it and all before it are
   * done, and not kept (the pool then resolves to []). At most `maxAhead` chunks (default
   * 2·(workers + 1)) are in flight or waiting beyond the last one handed over, which bounds memory.
   * When `onResult` returns a promise, no further chunk is handed over or started until it settles.
   */
  onResult?: (index: number, out: T) => void | Promise<void>;
  maxAhead?: number;
  /** Names the work in errors: `${what} ${start}..${end}: …`. */
  what: string;
}

/**
 * Run `job.chunks` on `job.nworkers` worker threads (plus the main thread with `job.main`),
 * handing out ranges dynamically. Resolves to the outputs in chunk order (the same whatever the
 * scheduling), or to undefined when worker threads are unavailable (e.g. in a browser); a
 * worker's error rejects with the range it failed on. Workers are terminated in every case.
 * @example const outs = await runWorkerPool({ code, init: { ctx }, chunks: [[0, 500], [500, 1000]], nworkers: 2, what: 'rows' });
 */
export async function runWorkerPool<T>(job: WorkerPoolJob<T>): Promise<T[] | undefined> {
  if (job.chunks.length === 0) return [];
  const workers = await startWorkers(job);
  if (!workers) return undefined;
  const pool = new PoolRun(job, workers);
  try {
    await pool.run();
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return job.onResult ? [] : pool.results;
}

type Worker = import('node:worker_threads').Worker;

/** node:worker_threads, or undefined where it is missing or has no Worker (a browser). */
export async function workerThreads(): Promise<typeof import('node:worker_threads') | undefined> {
  try {
    const wt = await import('node:worker_threads');
    return typeof wt.Worker === 'function' ? wt : undefined;
  } catch {
    return undefined;
  }
}

/** `job.nworkers` workers running `job.code`, or undefined where worker threads are unavailable. */
async function startWorkers<T>(job: WorkerPoolJob<T>): Promise<Worker[] | undefined> {
  const wt = await workerThreads();
  if (!wt) return undefined;
  const workers: Worker[] = [];
  try {
    for (let w = 0; w < job.nworkers; w++) workers.push(new wt.Worker(job.code, { eval: true }));
  } catch {
    for (const w of workers) void w.terminate();
    return undefined;
  }
  return workers;
}

/**
 * One run of {@link runWorkerPool}: the ranges handed out to the workers and the main thread,
 * the outputs kept (or streamed in chunk order), the promise settled when all are done.
 */
class PoolRun<T> {
  readonly results: T[];
  private readonly chunks: readonly [number, number][];
  private readonly stream: WorkerPoolJob<T>['onResult'];
  private readonly maxAhead: number;
  private next = 0;
  private done = 0;
  private delivered = 0;
  private readonly idle: Worker[] = [];
  /** The range each worker holds (named when it dies). */
  private readonly held = new Map<Worker, number>();
  private blocked = false;
  private consumed = 0;
  private resolve: () => void = () => {};
  private reject: (e: unknown) => void = () => {};

  constructor(
    private readonly job: WorkerPoolJob<T>,
    private readonly workers: Worker[],
  ) {
    this.chunks = job.chunks;
    this.results = new Array(job.chunks.length);
    this.stream = job.onResult;
    this.maxAhead = job.maxAhead ?? 2 * (job.nworkers + 1);
  }

  run(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
      for (const w of this.workers) this.attach(w);
      // the main thread takes ranges too, yielding to the event loop between them so that
      // finished workers are fed without waiting
      setImmediate(() => this.runMain());
    });
  }

  private canTake(): boolean {
    return !this.blocked && this.next < this.chunks.length && (!this.stream || this.next < this.delivered + this.maxAhead);
  }

  private complete(): void {
    if (this.done === this.chunks.length && (!this.stream || this.consumed === this.chunks.length)) this.resolve();
  }

  /** Hand over the contiguous prefix (pausing on a pending promise), then wake parked workers. */
  private deliver(): void {
    const { results, chunks } = this;
    while (!this.blocked && this.delivered < chunks.length && results[this.delivered] !== undefined) {
      const r = results[this.delivered]!;
      results[this.delivered] = undefined as T;
      const p = this.stream!(this.delivered++, r);
      if (p && typeof (p as Promise<void>).then === 'function') {
        this.blocked = true;
        (p as Promise<void>).then(
          () => {
            this.blocked = false;
            this.consumed++;
            this.deliver();
            this.complete();
          },
          (e) => this.reject(e),
        );
      } else this.consumed++;
    }
    while (this.idle.length > 0 && this.canTake()) this.feed(this.idle.pop()!);
  }

  private store(id: number, out: T): void {
    this.results[id] = out;
    if (this.stream) this.deliver();
  }

  private finished(): boolean {
    this.done++;
    this.job.onChunk?.(this.done, this.chunks.length);
    this.complete();
    return this.done === this.chunks.length;
  }

  private feed(w: Worker): void {
    if (!this.canTake()) {
      if (this.next < this.chunks.length) this.idle.push(w);
      return;
    }
    const id = this.next++;
    this.held.set(w, id);
    w.postMessage({ ...this.job.extra, type: 'run', id, start: this.chunks[id]![0], end: this.chunks[id]![1] });
  }

  /** The worker's message and error handlers, its init message and its first range. */
  private attach(w: Worker): void {
    w.on('error', (e) => this.reject(e));
    // a worker that dies without an error (terminated, killed for memory, process.exit in it)
    // would leave its range pending and the run unsettled for ever: reject, naming the range
    w.on('exit', (code) => {
      if (this.done === this.chunks.length) return;
      const id = this.held.get(w);
      const range = id === undefined ? 'no range' : `range ${this.chunks[id]!.join('..')}`;
      this.reject(new Error(`${this.job.what}: a worker thread exited (code ${code}) while holding ${range}, ${this.chunks.length - this.done} of ${this.chunks.length} ranges unfinished: it was terminated, ran out of memory or called process.exit; rerun with fewer threads (GPUSPARSE_THREADS) or more memory`));
    });
    w.on('message', (msg: { id: number; ok: boolean; out?: T; error?: string }) => {
      if (!msg.ok) {
        this.reject(new Error(`${this.job.what} ${this.chunks[msg.id]!.join('..')}: ${msg.error}`));
        return;
      }
      try {
        this.store(msg.id, msg.out!);
      } catch (e) {
        this.reject(e);
        return;
      }
      if (!this.finished()) this.feed(w);
    });
    w.postMessage({ ...this.job.init, type: 'init' });
    this.feed(w);
  }

  private runMain(): void {
    const { job, chunks } = this;
    if (!job.main || this.next >= chunks.length) return;
    if (!this.canTake()) {
      if (this.next < chunks.length) setTimeout(() => this.runMain(), 1);
      return;
    }
    const id = this.next++;
    try {
      this.store(id, job.main(chunks[id]![0], chunks[id]![1]));
    } catch (e) {
      this.reject(e);
      return;
    }
    if (!this.finished()) setImmediate(() => this.runMain());
  }
}
