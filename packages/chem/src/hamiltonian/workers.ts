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
import { runWorkerPool, shareDeep, workerScript } from './worker-source';

/** The worker's script: both row kernels plus the message loop. */
function workerSource(): string {
  return workerScript(
    { assembleRowsKernel, assembleRowsProduct },
    "let ctx = null;\nlet kernel = null;\nconst scratch = { cols: new Int32Array(0), vals: new Float64Array(0) };",
    "ctx = msg.ctx; kernel = msg.kernel === 'product' ? assembleRowsProduct : assembleRowsKernel;",
    'kernel(ctx, msg.start, msg.end, scratch)',
    '[out.lengths.buffer, out.cols.buffer, out.vals.buffer, out.diag.buffer]',
  );
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
  const outs = await runWorkerPool<KernelOutput>({
    code: workerSource(),
    init: { ctx: shareDeep(ctx), kernel },
    chunks,
    nworkers,
    ...(mainKernel ? { main: mainKernel } : {}),
    ...(onChunk ? { onChunk } : {}),
    what: 'assembly worker failed on rows',
  });
  return outs?.map((out, i) => ({ start: chunks[i]![0], end: chunks[i]![1], out }));
}

/**
 * {@link runOnWorkers} streaming: each chunk's output goes to `onResult` in chunk order as soon
 * as it is ready and is not kept; at most 2·(workers + 1) chunks are in flight or waiting, so
 * memory stays bounded whatever the matrix size. Resolves to false when worker threads cannot
 * be created (the caller then runs the chunks on the main thread).
 */
export async function streamOnWorkers(
  ctx: KernelContext | ProductContext,
  chunks: readonly [number, number][],
  nworkers: number,
  onResult: (chunk: RowChunk) => void | Promise<void>,
  onChunk?: (done: number, total: number) => void,
  kernel: 'hash' | 'product' = 'hash',
  mainKernel?: (start: number, end: number) => KernelOutput,
): Promise<boolean> {
  const outs = await runWorkerPool<KernelOutput>({
    code: workerSource(),
    init: { ctx: shareDeep(ctx), kernel },
    chunks,
    nworkers,
    ...(mainKernel ? { main: mainKernel } : {}),
    ...(onChunk ? { onChunk } : {}),
    onResult: (i, out) => onResult({ start: chunks[i]![0], end: chunks[i]![1], out }),
    what: 'assembly worker failed on rows',
  });
  return outs !== undefined;
}
