/**
 * y = H·x in float64 over the kept row blocks of a chunked assembly, split over worker threads
 * (Node): the blocks are copied once into shared memory, each worker owns a contiguous run of
 * blocks (balanced by non-zeros), and `apply` stays synchronous — the calling thread publishes
 * x, wakes the workers through an Atomics counter and waits (Atomics.wait) until all are done.
 * Every row is summed by the same sequential loop as {@link rowBlockOperator}, so the result is
 * bit-identical whatever the thread count. Cost per product: O(nnz / threads) plus two copies
 * of n doubles; memory: the blocks once more in shared memory (12 B/nnz), the originals freed
 * by the caller.
 * @module
 */
import { HostOperator } from '@gpusparse/formats';
import type { HostRowBlock } from './chunked';
import { workerThreads } from './worker-source';

/** Worker body: waits for a new generation, multiplies its blocks, counts itself done. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { ctrl: ctrlBuf, x: xBuf, y: yBuf, blocks } = workerData;
const ctrl = new Int32Array(ctrlBuf);
const x = new Float64Array(xBuf);
const y = new Float64Array(yBuf);
const views = blocks.map((b) => ({ rowStart: b.rowStart, rows: b.rows, rowPtr: new Int32Array(b.rowPtr), colIdx: new Int32Array(b.colIdx), values: new Float64Array(b.values) }));
let gen = 0;
for (;;) {
  Atomics.wait(ctrl, 0, gen);
  gen = Atomics.load(ctrl, 0);
  if (gen < 0) break;
  for (const b of views) {
    const { rowPtr, colIdx, values } = b;
    for (let i = 0; i < b.rows; i++) {
      let s = 0;
      for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) s += values[k] * x[colIdx[k]];
      y[b.rowStart + i] = s;
    }
  }
  Atomics.add(ctrl, 1, 1);
  Atomics.notify(ctrl, 1);
}
parentPort.close();
`;

/** A row block whose arrays live in SharedArrayBuffers. */
interface SharedBlock {
  rowStart: number;
  rows: number;
  rowPtr: SharedArrayBuffer;
  colIdx: SharedArrayBuffer;
  values: SharedArrayBuffer;
}

function share(src: Int32Array | Float64Array): SharedArrayBuffer {
  const buf = new SharedArrayBuffer(src.byteLength);
  (src instanceof Int32Array ? new Int32Array(buf) : new Float64Array(buf)).set(src as never);
  return buf;
}

/** Cut `blocks` into `parts` contiguous runs of about equal non-zeros. */
function partition(blocks: readonly HostRowBlock[], parts: number): HostRowBlock[][] {
  const total = blocks.reduce((s, b) => s + b.colIdx.length, 0);
  const runs: HostRowBlock[][] = [[]];
  let acc = 0;
  for (const b of blocks) {
    if (acc >= ((runs.length * total) / parts) && runs.length < parts) runs.push([]);
    runs[runs.length - 1]!.push(b);
    acc += b.colIdx.length;
  }
  return runs.filter((r) => r.length > 0);
}

/**
 * A float64 host operator over `blocks` on `threads` worker threads, or undefined where worker
 * threads or shared memory are unavailable (a browser; then use rowBlockOperator). The blocks'
 * own arrays are emptied of their references by the caller once this returns (they were copied).
 * `dispose()` stops the workers (they are unref'd: they never keep the process alive).
 * @example const op = await parallelRowBlockOperator(h.blocks, n, 8); op?.apply(x, y);
 */
export async function parallelRowBlockOperator(blocks: readonly HostRowBlock[], n: number, threads: number): Promise<(HostOperator & { dispose(): void; threads: number }) | undefined> {
  if (typeof SharedArrayBuffer !== 'function' || typeof Atomics?.wait !== 'function' || threads < 2 || blocks.length < 2) return undefined;
  const wt = await workerThreads();
  if (!wt) return undefined;
  const ctrlBuf = new SharedArrayBuffer(8);
  const ctrl = new Int32Array(ctrlBuf);
  const xBuf = new SharedArrayBuffer(8 * n);
  const yBuf = new SharedArrayBuffer(8 * n);
  const xs = new Float64Array(xBuf);
  const ys = new Float64Array(yBuf);
  const runs = partition(blocks, threads);
  const workers = runs.map((run) => {
    const shared: SharedBlock[] = run.map((b) => ({ rowStart: b.rowStart, rows: b.rows, rowPtr: share(b.rowPtr), colIdx: share(b.colIdx), values: share(b.values) }));
    const w = new wt.Worker(WORKER, { eval: true, workerData: { ctrl: ctrlBuf, x: xBuf, y: yBuf, blocks: shared } });
    w.unref();
    return w;
  });
  const state: { failed?: Error } = {};
  const check = (): void => {
    if (state.failed) throw new Error(`parallel row-block product: a worker failed: ${state.failed.message}`);
  };
  for (const w of workers) w.on('error', (e) => (state.failed = e instanceof Error ? e : new Error(String(e))));
  const op = HostOperator.fromFunction(
    n,
    n,
    (x, y) => {
      check();
      xs.set(x);
      Atomics.store(ctrl, 1, 0);
      Atomics.add(ctrl, 0, 1); // new generation: every worker multiplies its blocks
      Atomics.notify(ctrl, 0);
      for (let done = Atomics.load(ctrl, 1); done < workers.length; done = Atomics.load(ctrl, 1)) {
        Atomics.wait(ctrl, 1, done, 60_000);
        check();
      }
      y.set(ys);
    },
    'host-csr-row-blocks (parallel)',
  ) as HostOperator & { dispose(): void; threads: number };
  op.threads = workers.length;
  op.dispose = () => {
    Atomics.store(ctrl, 0, -1);
    Atomics.notify(ctrl, 0);
    for (const w of workers) void w.terminate();
  };
  return op;
}
