/**
 * A small pool of node:worker_threads running {@link assembleRowsKernel} from its source
 * text (`new Worker(code, { eval: true })`): the same code runs under tsx, vitest and a
 * bundle, without a build step and without a TypeScript loader in the worker. Large inputs
 * are copied once into SharedArrayBuffers, so every worker reads the same memory.
 * Returns undefined when worker threads are unavailable (e.g. in a browser).
 * @module
 */
import { assembleRowsKernel, type KernelContext, type KernelOutput } from './kernel';
import { assembleRowsProduct, type ProductContext } from './product-kernel';

/** The worker's script: the kernel's source plus a message loop. */
function workerSource(): string {
  return `"use strict";
var __name = function (f) { return f; };
const { parentPort } = require('node:worker_threads');
const assembleRowsKernel = (${assembleRowsKernel.toString()});
const assembleRowsProduct = (${assembleRowsProduct.toString()});
let ctx = null;
let kernel = null;
const scratch = { cols: new Int32Array(0), vals: new Float64Array(0) };
parentPort.on('message', (msg) => {
  if (msg.type === 'init') { ctx = msg.ctx; kernel = msg.kernel === 'product' ? assembleRowsProduct : assembleRowsKernel; return; }
  try {
    const out = kernel(ctx, msg.start, msg.end, scratch);
    parentPort.postMessage({ id: msg.id, ok: true, out },
      [out.lengths.buffer, out.cols.buffer, out.vals.buffer, out.diag.buffer]);
  } catch (e) {
    parentPort.postMessage({ id: msg.id, ok: false, error: String(e && e.stack || e) });
  }
});`;
}

function share<T extends Int32Array | Uint32Array | Float64Array>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const ctor = a.constructor as new (b: SharedArrayBuffer) => T;
  const out = new ctor(new SharedArrayBuffer(a.byteLength));
  (out as Float64Array).set(a as Float64Array);
  return out;
}

/** Copy every typed array of a (nested) context into shared memory; the same object stays the same. */
function shareDeep<T extends object>(o: T, seen = new Map<object, object>()): T {
  const hit = seen.get(o);
  if (hit) return hit as T;
  const out: Record<string, unknown> = {};
  seen.set(o, out);
  for (const [k, v] of Object.entries(o)) {
    if (v instanceof Int32Array || v instanceof Uint32Array || v instanceof Float64Array) out[k] = share(v);
    else if (v !== null && typeof v === 'object') out[k] = shareDeep(v as object, seen);
    else out[k] = v;
  }
  return out as T;
}

/** A contiguous block of rows and its kernel output. */
export interface RowChunk {
  start: number;
  end: number;
  out: KernelOutput;
}

/**
 * Run the kernel (`kernel`: the hash kernel of ./kernel.ts or the string-driven one of
 * ./product-kernel.ts) over `chunks` (row ranges) on `nworkers` worker threads, with dynamic
 * scheduling; with `mainKernel` the main thread takes chunks as well (between two chunks it
 * yields to the event loop). Resolves to the outputs in chunk order, or to undefined when worker threads
 * cannot be created (the caller then runs the kernel on the main thread).
 * @example
 * const parts = await runOnWorkers(ctx, [[0, 500], [500, 1000]], 2);
 */
export async function runOnWorkers(
  ctx: KernelContext | ProductContext,
  chunks: readonly [number, number][],
  nworkers: number,
  onChunk?: (done: number, total: number) => void,
  kernel: 'hash' | 'product' = 'hash',
  mainKernel?: (start: number, end: number) => KernelOutput,
): Promise<RowChunk[] | undefined> {
  if (chunks.length === 0) return [];
  let wt: typeof import('node:worker_threads');
  try {
    wt = await import('node:worker_threads');
    if (typeof wt.Worker !== 'function') return undefined;
  } catch {
    return undefined;
  }
  const shared = shareDeep(ctx);
  const code = workerSource();
  const workers: import('node:worker_threads').Worker[] = [];
  try {
    for (let w = 0; w < nworkers; w++) workers.push(new wt.Worker(code, { eval: true }));
  } catch {
    for (const w of workers) void w.terminate();
    return undefined;
  }
  const results: RowChunk[] = new Array(chunks.length);
  let next = 0;
  let done = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const feed = (w: import('node:worker_threads').Worker) => {
        if (next >= chunks.length) return;
        const id = next++;
        const [start, end] = chunks[id]!;
        w.postMessage({ type: 'run', id, start, end });
      };
      for (const w of workers) {
        w.on('error', reject);
        w.on('message', (msg: { id: number; ok: boolean; out?: KernelOutput; error?: string }) => {
          if (!msg.ok) {
            reject(new Error(`assembly worker failed on rows ${chunks[msg.id]!.join('..')}: ${msg.error}`));
            return;
          }
          const [start, end] = chunks[msg.id]!;
          results[msg.id] = { start, end, out: msg.out! };
          done++;
          onChunk?.(done, chunks.length);
          if (done === chunks.length) resolve();
          else feed(w);
        });
        w.postMessage({ type: 'init', ctx: shared, kernel });
        feed(w);
      }
      // the main thread takes chunks too, yielding to the event loop between them so that
      // finished workers are fed without waiting
      const runMain = () => {
        if (!mainKernel || next >= chunks.length) return;
        const id = next++;
        const [start, end] = chunks[id]!;
        try {
          results[id] = { start, end, out: mainKernel(start, end) };
        } catch (e) {
          reject(e);
          return;
        }
        done++;
        onChunk?.(done, chunks.length);
        if (done === chunks.length) resolve();
        else setImmediate(runMain);
      };
      setImmediate(runMain);
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return results;
}
