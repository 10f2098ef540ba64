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
    for (let b = Atomics.add(ctrl, 2, 1); b < nblocks; b = Atomics.add(ctrl, 2, 1)) sigmaRows(ctx, x, y, blocks[b], blocks[b + 1], scratch);
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

/**
 * Start `threads − 1` workers (the calling thread is the last one), each with its own instance of
 * the wasm scatter when `wasm` is given, or resolve to undefined
 * where worker threads or shared memory are unavailable (a browser). Workers are unref'd: they
 * never keep the process alive; `dispose()` stops them.
 * @example const pool = await sigmaThreadPool(ctx, size, 2); pool?.run(x, y);
 */
export async function sigmaThreadPool(ctx: DirectContext, size: number, threads: number, wasm?: ScatterWasm): Promise<SigmaThreadPool | undefined> {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics?.wait !== 'function' || threads < 2) return undefined;
  const wt = await workerThreads();
  if (!wt) return undefined;
  const shared = shareDeep(ctx);
  const ctrlBuf = new SharedArrayBuffer(16);
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
  const state: { failed?: string } = {};
  for (const w of workers) {
    w.on('error', (e) => (state.failed = e instanceof Error ? e.message : String(e)));
    w.on('message', (m) => (state.failed = String(m)));
  }
  const check = (): void => {
    if (state.failed || Atomics.load(ctrl, 3) !== 0) throw new Error(`direct σ: a worker thread failed: ${state.failed ?? 'see its message'}`);
  };
  const scratch: SigmaScratch = wasm ? wasmSigmaScratch(shared, wasm.bytes, wasm.mem) : sigmaScratch(shared);
  return {
    threads,
    run(x, y) {
      check();
      xs.set(x);
      Atomics.store(ctrl, 1, 0);
      Atomics.store(ctrl, 2, 0);
      Atomics.add(ctrl, 0, 1); // a new generation: every worker takes blocks
      Atomics.notify(ctrl, 0);
      loadSigmaInput(scratch, xs);
      for (let b = Atomics.add(ctrl, 2, 1); b < nblocks; b = Atomics.add(ctrl, 2, 1)) sigmaRows(shared, xs, ys, blocks[b]!, blocks[b + 1]!, scratch);
      for (let done = Atomics.load(ctrl, 1); done < workers.length; done = Atomics.load(ctrl, 1)) {
        Atomics.wait(ctrl, 1, done, 60_000);
        check();
      }
      check();
      y.set(ys);
    },
    dispose() {
      Atomics.store(ctrl, 0, -1);
      Atomics.notify(ctrl, 0);
      for (const w of workers) void w.terminate();
    },
  };
}
