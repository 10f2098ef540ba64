/**
 * The direct σ on worker threads (Node): the tables and the integrals are copied once into
 * shared memory, every product publishes c into a shared vector, and the calling thread and
 * `threads − 1` workers take blocks of α strings from an atomic counter (dynamic scheduling:
 * rows differ in length with symmetry). `run` stays synchronous (Atomics.wait), as the host
 * operator interface requires. Each σ row is computed by one call of the same kernel, so the
 * result is bit-identical whatever the thread count or the scheduling.
 * @module
 */
import { shareDeep, workerThreads } from '../hamiltonian/worker-source';
import { loadSigmaInput, type ScatterMemory, type SigmaScratch, sigmaRows, sigmaScratch, wasmSigmaScratch } from './kernel';
import type { DirectContext } from './tables';

/** The wasm scatter for every thread: the module's bytes and its memory layout (./scatter.kernel.ts). */
export interface ScatterWasm {
  bytes: Uint8Array<ArrayBuffer>;
  mem: ScatterMemory;
}

/** Worker body: waits for a new generation, takes α blocks until none is left, counts itself done. */
function workerSource(): string {
  return `"use strict";
var __name = function (f) { return f; };
const { parentPort, workerData } = require('node:worker_threads');
const sigmaRows = (${sigmaRows.toString()});
const wasmSigmaScratch = (${wasmSigmaScratch.toString()});
const { ctx, ctrl: ctrlBuf, x: xBuf, y: yBuf, blocks, wasm } = workerData;
const ctrl = new Int32Array(ctrlBuf);
const x = new Float64Array(xBuf);
const y = new Float64Array(yBuf);
const scratch = wasm ? wasmSigmaScratch(ctx, wasm.bytes, wasm.mem) : { x: new Float64Array(Math.max(1, ctx.maxRow * ctx.mA)), k: new Float64Array(Math.max(1, ctx.norb * ctx.norb * ctx.mA)) };
const nblocks = blocks.length - 1;
let gen = 0;
for (;;) {
  Atomics.wait(ctrl, 0, gen);
  gen = Atomics.load(ctrl, 0);
  if (gen < 0) break;
  try {
    if (scratch.wasm) scratch.wasm.c.set(x);
    for (let b = Atomics.add(ctrl, 2, 1); b < nblocks; b = Atomics.add(ctrl, 2, 1)) {
      sigmaRows(ctx, x, y, blocks[b], blocks[b + 1], scratch);
      Atomics.add(ctrl, 4, 1);
    }
  } catch (e) {
    Atomics.store(ctrl, 3, 1);
    parentPort.postMessage(String(e && e.stack || e));
  }
  Atomics.add(ctrl, 1, 1);
  Atomics.notify(ctrl, 1);
}
parentPort.close();
`;
}

/** A running pool: `run(x, y)` computes y = H·x (direct layout) on every thread. */
export interface SigmaThreadPool {
  readonly threads: number;
  run(x: Float64Array, y: Float64Array): void;
  dispose(): void;
}

/** Cut the α strings into about 8 blocks per thread of equal determinant counts. */
function alphaBlocks(ctx: DirectContext, threads: number): Int32Array {
  const want = Math.min(ctx.nA, 8 * threads);
  const cuts: number[] = [0];
  let total = 0;
  for (let i = 0; i < ctx.nA; i++) total += ctx.rowCompute[i]!;
  let acc = 0;
  for (let i = 0; i < ctx.nA; i++) {
    acc += ctx.rowCompute[i]!;
    if (acc >= (cuts.length * total) / want && i + 1 < ctx.nA) cuts.push(i + 1);
  }
  cuts.push(ctx.nA);
  return Int32Array.from(cuts);
}

/** Options of {@link sigmaThreadPool}. */
export interface SigmaThreadPoolOptions {
  /**
   * A product with no block finished and no worker done for this long (ms; at least 50 times the
   * slowest block the calling thread computed) means a worker died — terminated, killed for
   * memory — and fails with an Error instead of waiting for ever. Default 30 000.
   */
  stallMs?: number;
}

/**
 * Start `threads − 1` workers (the calling thread is the last one), each with its own instance of
 * the wasm scatter when `wasm` is given, or resolve to undefined
 * where worker threads or shared memory are unavailable (a browser). Workers are unref'd: they
 * never keep the process alive; `dispose()` stops them. A worker that dies fails the product it
 * was in (or the next one) with an Error, and every later one: the pool never waits for ever.
 * @example const pool = await sigmaThreadPool(ctx, size, 2); pool?.run(x, y);
 */
export async function sigmaThreadPool(ctx: DirectContext, size: number, threads: number, wasm?: ScatterWasm, opts: SigmaThreadPoolOptions = {}): Promise<SigmaThreadPool | undefined> {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics?.wait !== 'function' || threads < 2) return undefined;
  const wt = await workerThreads();
  if (!wt) return undefined;
  const shared = shareDeep(ctx);
  // generation, workers done, next block, a worker's error, blocks done
  const ctrlBuf = new SharedArrayBuffer(20);
  const ctrl = new Int32Array(ctrlBuf);
  const xs = new Float64Array(new SharedArrayBuffer(8 * Math.max(1, size)));
  const ys = new Float64Array(new SharedArrayBuffer(8 * Math.max(1, size)));
  const blocks = alphaBlocks(ctx, threads);
  const nblocks = blocks.length - 1;
  const code = workerSource();
  const workers = Array.from({ length: threads - 1 }, () => {
    const w = new wt.Worker(code, { eval: true, workerData: { ctx: shared, ctrl: ctrlBuf, x: xs.buffer, y: ys.buffer, blocks, wasm } });
    w.unref();
    return w;
  });
  const state: { failed?: string; disposed?: boolean; slowest: number } = { slowest: 0 };
  for (const w of workers) {
    w.on('error', (e) => (state.failed = e instanceof Error ? e.message : String(e)));
    w.on('message', (m) => (state.failed = String(m)));
    w.on('exit', (code) => void (state.disposed || (state.failed ??= `a worker thread exited (code ${code})`)));
  }
  const check = (): void => {
    if (state.disposed) throw new Error(`direct σ (${threads} threads): apply after dispose(): expected a live operator, got a disposed one; build a new one`);
    if (state.failed || Atomics.load(ctrl, 3) !== 0) throw new Error(`direct σ: a worker thread failed: ${state.failed ?? 'see its message'}; rerun with GPUSPARSE_THREADS=1 (or threads: 1) or more memory`);
  };
  const stallMs = opts.stallMs ?? 30_000;
  const scratch: SigmaScratch = wasm ? wasmSigmaScratch(shared, wasm.bytes, wasm.mem) : sigmaScratch(shared);
  const pool: SigmaThreadPool = {
    threads,
    run(x, y) {
      check();
      xs.set(x);
      Atomics.store(ctrl, 1, 0);
      Atomics.store(ctrl, 2, 0);
      Atomics.store(ctrl, 4, 0);
      Atomics.add(ctrl, 0, 1); // a new generation: every worker takes blocks
      Atomics.notify(ctrl, 0);
      loadSigmaInput(scratch, xs);
      for (let b = Atomics.add(ctrl, 2, 1); b < nblocks; b = Atomics.add(ctrl, 2, 1)) {
        const t0 = performance.now();
        sigmaRows(shared, xs, ys, blocks[b]!, blocks[b + 1]!, scratch);
        state.slowest = Math.max(state.slowest, performance.now() - t0);
        Atomics.add(ctrl, 4, 1);
      }
      awaitWorkers();
      check();
      y.set(ys);
    },
    dispose() {
      state.disposed = true;
      Atomics.store(ctrl, 0, -1);
      Atomics.notify(ctrl, 0);
      for (const w of workers) void w.terminate();
    },
  };
  /** Wait until every worker is done with this generation; a stall (a dead worker) fails the pool. */
  function awaitWorkers(): void {
    const limit = Math.max(stallMs, 50 * state.slowest);
    let progress = -1;
    let since = performance.now();
    for (let done = Atomics.load(ctrl, 1); done < workers.length; done = Atomics.load(ctrl, 1)) {
      Atomics.wait(ctrl, 1, done, Math.min(1000, limit));
      check();
      const now = Atomics.load(ctrl, 1) + Atomics.load(ctrl, 4);
      if (now !== progress) [progress, since] = [now, performance.now()];
      else if (performance.now() - since > limit) {
        const msg = `${workers.length - Atomics.load(ctrl, 1)} of ${workers.length} worker threads made no progress for ${Math.round(limit)} ms (${Atomics.load(ctrl, 4)} of ${nblocks} blocks done): a worker died (terminated or killed for memory)`;
        pool.dispose();
        state.disposed = false;
        state.failed = msg;
        check();
      }
    }
  }
  return pool;
}
