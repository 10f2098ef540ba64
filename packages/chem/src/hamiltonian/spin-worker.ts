/**
 * The S² expectation kernels of ./spin-kernel.ts on node:worker_threads, from their source
 * text (as ./workers.ts does for the Hamiltonian): the context and the vectors are copied
 * once into SharedArrayBuffers, chunks are handed out dynamically, and the main thread takes
 * chunks too. Resolves to undefined when worker threads are unavailable (e.g. in a browser).
 * @module
 */
import { type SpinContext, spinPairsKernel, spinRowsKernel } from './spin-kernel';

/** The worker's script: both kernels plus a message loop. */
function workerSource(): string {
  return `"use strict";
var __name = function (f) { return f; };
const { parentPort } = require('node:worker_threads');
const spinRowsKernel = (${spinRowsKernel.toString()});
const spinPairsKernel = (${spinPairsKernel.toString()});
let ctx = null;
let vecs = null;
parentPort.on('message', (msg) => {
  if (msg.type === 'init') { ctx = msg.ctx; vecs = msg.vecs; return; }
  try {
    const out = msg.kernel === 'pairs' ? spinPairsKernel(ctx, vecs, msg.start, msg.end) : spinRowsKernel(ctx, vecs, msg.start, msg.end);
    parentPort.postMessage({ id: msg.id, ok: true, out }, [out.buffer]);
  } catch (e) {
    parentPort.postMessage({ id: msg.id, ok: false, error: String(e && e.stack || e) });
  }
});`;
}

type Typed = Int32Array | Uint32Array | Float64Array;

/** The same typed array in a SharedArrayBuffer (no copy when it already is). */
function toShared<T extends Typed>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const out = new (a.constructor as new (b: SharedArrayBuffer) => T)(new SharedArrayBuffer(a.byteLength));
  out.set(a as never);
  return out;
}

/** A copy of `o` whose typed arrays (at any depth) live in shared memory. */
function sharedCopy<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v instanceof Int32Array || v instanceof Uint32Array || v instanceof Float64Array) out[k] = toShared(v);
    else if (v !== null && typeof v === 'object') out[k] = sharedCopy(v as object);
    else out[k] = v;
  }
  return out as T;
}

/**
 * `ctx` without the arrays `kernel` does not read (replaced by empty ones), so that they are
 * not copied into shared memory: on 10^7 determinants the determinant hash alone is ~400 MB.
 */
function usedParts(ctx: SpinContext, kernel: 'rows' | 'pairs'): SpinContext {
  const none = new Int32Array(0);
  const noHash = { hashMask: 0, hashLo: new Uint32Array(0), hashHi: new Uint32Array(0), hashVals: none };
  // string hashes are probed only without move tables
  const strings = (s: SpinContext['alpha']) => (s.move.length > 0 ? { ...s, ...noHash } : s);
  const out = { ...ctx, alpha: strings(ctx.alpha), beta: strings(ctx.beta) };
  if (kernel === 'pairs') return { ...out, ...noHash, detAlpha: none, detBeta: none };
  return ctx.lookup === 2 ? out : { ...out, ...noHash };
}

/**
 * Run `kernel` ('rows': {@link spinRowsKernel} over determinant ranges, 'pairs':
 * {@link spinPairsKernel} over alpha-string ranges) on `chunks` with `nworkers` worker
 * threads plus the main thread. Resolves to the sum of the chunk outputs, added in chunk
 * order (the same result whatever the scheduling), or undefined when workers cannot start.
 * @example
 * const sums = await runSpinOnWorkers(ctx, [c], 'rows', [[0, 5000], [5000, 10000]], 1);
 */
export async function runSpinOnWorkers(
  ctx: SpinContext,
  vecs: readonly Float64Array[],
  kernel: 'rows' | 'pairs',
  chunks: readonly [number, number][],
  nworkers: number,
): Promise<Float64Array | undefined> {
  if (chunks.length === 0) return new Float64Array(2 * vecs.length);
  let wt: typeof import('node:worker_threads');
  try {
    wt = await import('node:worker_threads');
    if (typeof wt.Worker !== 'function') return undefined;
  } catch {
    return undefined;
  }
  const code = workerSource();
  const workers: import('node:worker_threads').Worker[] = [];
  try {
    for (let w = 0; w < nworkers; w++) workers.push(new wt.Worker(code, { eval: true }));
  } catch {
    for (const w of workers) void w.terminate();
    return undefined;
  }
  const shared = sharedCopy(usedParts(ctx, kernel));
  const sharedVecs = vecs.map((v) => toShared(v));
  const run = kernel === 'pairs' ? spinPairsKernel : spinRowsKernel;
  const results: Float64Array[] = new Array(chunks.length);
  let next = 0;
  let done = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const finish = () => {
        done++;
        if (done === chunks.length) resolve();
      };
      const feed = (w: import('node:worker_threads').Worker) => {
        if (next >= chunks.length) return;
        const id = next++;
        w.postMessage({ id, kernel, start: chunks[id]![0], end: chunks[id]![1] });
      };
      for (const w of workers) {
        w.on('error', reject);
        w.on('message', (msg: { id: number; ok: boolean; out?: Float64Array; error?: string }) => {
          if (!msg.ok) {
            reject(new Error(`S² worker failed on ${kernel === 'pairs' ? 'alpha strings' : 'determinants'} ${chunks[msg.id]!.join('..')}: ${msg.error}`));
            return;
          }
          results[msg.id] = msg.out!;
          finish();
          feed(w);
        });
        w.postMessage({ type: 'init', ctx: shared, vecs: sharedVecs });
        feed(w);
      }
      // the main thread takes chunks too, yielding between them so that workers are fed
      const runMain = () => {
        if (next >= chunks.length) return;
        const id = next++;
        try {
          results[id] = run(shared, sharedVecs, chunks[id]![0], chunks[id]![1]);
        } catch (e) {
          reject(e);
          return;
        }
        finish();
        setImmediate(runMain);
      };
      setImmediate(runMain);
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  const sum = new Float64Array(2 * vecs.length);
  for (const part of results) for (let i = 0; i < sum.length; i++) sum[i]! += part[i]!;
  return sum;
}
