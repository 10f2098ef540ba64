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
  const { chunks } = job;
  if (chunks.length === 0) return [];
  let wt: typeof import('node:worker_threads');
  try {
    wt = await import('node:worker_threads');
    if (typeof wt.Worker !== 'function') return undefined;
  } catch {
    return undefined;
  }
  const workers: import('node:worker_threads').Worker[] = [];
  try {
    for (let w = 0; w < job.nworkers; w++) workers.push(new wt.Worker(job.code, { eval: true }));
  } catch {
    for (const w of workers) void w.terminate();
    return undefined;
  }
  const results: T[] = new Array(chunks.length);
  const stream = job.onResult;
  const maxAhead = job.maxAhead ?? 2 * (job.nworkers + 1);
  let next = 0;
  let done = 0;
  let delivered = 0;
  const idle: import('node:worker_threads').Worker[] = [];
  let blocked = false;
  let consumed = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const canTake = () => !blocked && next < chunks.length && (!stream || next < delivered + maxAhead);
      const complete = () => {
        if (done === chunks.length && (!stream || consumed === chunks.length)) resolve();
      };
      const deliver = () => {
        // hand over the contiguous prefix (pausing on a pending promise), then wake parked workers
        while (!blocked && delivered < chunks.length && results[delivered] !== undefined) {
          const r = results[delivered]!;
          results[delivered] = undefined as T;
          const p = stream!(delivered++, r);
          if (p && typeof (p as Promise<void>).then === 'function') {
            blocked = true;
            (p as Promise<void>).then(() => {
              blocked = false;
              consumed++;
              deliver();
              complete();
            }, reject);
          } else consumed++;
        }
        while (idle.length > 0 && canTake()) feed(idle.pop()!);
      };
      const store = (id: number, out: T) => {
        results[id] = out;
        if (stream) deliver();
      };
      const finished = () => {
        done++;
        job.onChunk?.(done, chunks.length);
        complete();
        return done === chunks.length;
      };
      const feed = (w: import('node:worker_threads').Worker) => {
        if (!canTake()) {
          if (next < chunks.length) idle.push(w);
          return;
        }
        const id = next++;
        w.postMessage({ ...job.extra, type: 'run', id, start: chunks[id]![0], end: chunks[id]![1] });
      };
      for (const w of workers) {
        w.on('error', reject);
        w.on('message', (msg: { id: number; ok: boolean; out?: T; error?: string }) => {
          if (!msg.ok) {
            reject(new Error(`${job.what} ${chunks[msg.id]!.join('..')}: ${msg.error}`));
            return;
          }
          try {
            store(msg.id, msg.out!);
          } catch (e) {
            reject(e);
            return;
          }
          if (!finished()) feed(w);
        });
        w.postMessage({ ...job.init, type: 'init' });
        feed(w);
      }
      // the main thread takes ranges too, yielding to the event loop between them so that
      // finished workers are fed without waiting
      const runMain = () => {
        if (!job.main || next >= chunks.length) return;
        if (!canTake()) {
          if (next < chunks.length) setTimeout(runMain, 1);
          return;
        }
        const id = next++;
        try {
          store(id, job.main(chunks[id]![0], chunks[id]![1]));
        } catch (e) {
          reject(e);
          return;
        }
        if (!finished()) setImmediate(runMain);
      };
      setImmediate(runMain);
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return stream ? [] : results;
}
