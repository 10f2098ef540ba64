/**
 * The worker pool of the parallel diagonal SpGEMM: node:worker_threads running the kernels of
 * ./parallel-kernels from their own source text (`new Worker(code, { eval: true })`),
 * so the same code runs under tsx, vitest and an esbuild bundle without a build step.
 *
 * node:worker_threads is imported dynamically (no static `node:` import): in a browser, or a
 * bundle that stubs node modules, {@link acquireSpgemmPool} resolves to undefined and the caller
 * runs the serial reference. The pool is created on first use, grows to the largest worker count
 * asked for, is reused across products (one product at a time; concurrent calls queue) and is
 * unref'ed while idle, so it never keeps the process alive. {@link shutdownSpgemmPool} ends it.
 * @module
 */
import type { Worker } from 'node:worker_threads';
import { cdmRowsKernel, type CdmRowsJob, type HmDiagonalsJob, hmDiagonalsKernel } from './parallel-kernels';

/** The worker's script: the two kernels' source plus a message loop. */
function workerSource(): string {
  return `"use strict";
var __name = function (f) { return f; };
const { parentPort } = require('node:worker_threads');
const kernels = { hm: (${hmDiagonalsKernel.toString()}), cdm: (${cdmRowsKernel.toString()}) };
let job = null;
parentPort.on('message', (msg) => {
  if (msg.type === 'job') { job = msg.job; return; }
  try {
    parentPort.postMessage({ id: msg.id, ok: true, nnz: kernels[job.kind](job, msg.start, msg.end) });
  } catch (e) {
    parentPort.postMessage({ id: msg.id, ok: false, error: String((e && e.stack) || e) });
  }
});`;
}

/** A reusable set of SpGEMM worker threads. */
export interface SpgemmPool {
  /** Threads available (≥ the count asked for in {@link acquireSpgemmPool}). */
  readonly size: number;
  /**
   * Run `job` over the `chunks` (ranges of C's diagonals for HM, of rows for CDM) on the first
   * `workers` threads, chunks handed out dynamically; resolves to the total number of C slots
   * marked present. Rejects when a worker fails.
   */
  run(job: HmDiagonalsJob | CdmRowsJob, chunks: readonly (readonly [number, number])[], workers: number): Promise<number>;
}

let threads: Worker[] = [];
let failed = false;
/** The tail of the queue of products: each run waits for the previous one. */
let queue: Promise<unknown> = Promise.resolve();
let jobSeq = 0;

/** Loads node:worker_threads, or undefined where there is none (browser, stubbed bundle). */
export async function loadWorkerThreads(): Promise<typeof import('node:worker_threads') | undefined> {
  try {
    const wt = await import('node:worker_threads');
    return typeof wt.Worker === 'function' ? wt : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Number of hardware threads (node:os availableParallelism), or undefined without node.
 * @example
 * const cores = (await hardwareThreads()) ?? 1;
 */
export async function hardwareThreads(): Promise<number | undefined> {
  try {
    const os = await import('node:os');
    if (typeof os.availableParallelism === 'function') return os.availableParallelism();
    return Array.isArray(os.cpus?.()) ? os.cpus().length : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The pool with at least `workers` threads, created or grown on demand; undefined when worker
 * threads are unavailable or cannot be started (the caller then runs serially). Cost: about
 * 10–50 ms per new thread (once), nothing when the pool is already large enough.
 * @example
 * const pool = await acquireSpgemmPool(2); if (pool) await pool.run(job, [[0, 50], [50, 100]], 2);
 */
export async function acquireSpgemmPool(workers: number): Promise<SpgemmPool | undefined> {
  if (failed) return undefined;
  if (threads.length < workers) {
    const wt = await loadWorkerThreads();
    if (!wt) return undefined;
    const code = workerSource();
    try {
      while (threads.length < workers) {
        const w = new wt.Worker(code, { eval: true });
        w.unref();
        threads.push(w);
      }
    } catch {
      failed = true;
      await shutdownSpgemmPool();
      return undefined;
    }
  }
  return { size: threads.length, run: (job, chunks, nw) => enqueue(() => runJob(job, chunks, nw)) };
}

function enqueue<T>(task: () => Promise<T>): Promise<T> {
  const result = queue.then(task, task);
  queue = result.catch(() => undefined);
  return result;
}

function runJob(job: HmDiagonalsJob | CdmRowsJob, chunks: readonly (readonly [number, number])[], nw: number): Promise<number> {
  const used = threads.slice(0, Math.max(1, Math.min(nw, threads.length)));
  const tag = ++jobSeq;
  if (chunks.length === 0) return Promise.resolve(0);
  if (used.length === 0) return Promise.reject(new Error('spgemm worker pool: shut down before the product ran (expected live threads, found 0)'));
  return new Promise<number>((resolve, reject) => {
    let next = 0;
    let done = 0;
    let nnz = 0;
    let settled = false;
    const cleanup = () => {
      for (const w of used) {
        w.off('message', handlers.get(w)!);
        w.off('error', onError);
        w.off('exit', onExit);
        w.unref();
      }
    };
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      cleanup();
      if (err) {
        // a thread that failed mid-product may hold a half-written chunk: drop the whole pool
        void shutdownSpgemmPool();
        reject(err);
      } else resolve(nnz);
    };
    const onError = (e: Error) => finish(e);
    const onExit = (code: number) => finish(new Error(`spgemm worker exited (code ${code}) before its chunks were done`));
    const feed = (w: Worker) => {
      if (next >= chunks.length) return;
      const id = next++;
      w.postMessage({ type: 'run', id, tag, start: chunks[id][0], end: chunks[id][1] });
    };
    const handlers = new Map<Worker, (msg: { id: number; ok: boolean; nnz?: number; error?: string }) => void>();
    for (const w of used) {
      const h = (msg: { id: number; ok: boolean; nnz?: number; error?: string }) => {
        if (!msg.ok) {
          finish(new Error(`spgemm worker failed on chunk ${chunks[msg.id].join('..')}: ${msg.error}`));
          return;
        }
        nnz += msg.nnz!;
        done++;
        if (done === chunks.length) finish();
        else feed(w);
      };
      handlers.set(w, h);
      w.on('message', h);
      w.on('error', onError);
      w.on('exit', onExit);
      w.ref(); // keep the process alive while this product runs
      w.postMessage({ type: 'job', job });
      feed(w);
    }
  });
}

/**
 * Terminate the SpGEMM worker threads (the next parallel product starts new ones). Idle threads
 * are unref'ed, so calling this is optional. Cost: one terminate per thread.
 * @example
 * await shutdownSpgemmPool();
 */
export async function shutdownSpgemmPool(): Promise<void> {
  const old = threads;
  threads = [];
  await Promise.all(old.map((w) => w.terminate()));
}
