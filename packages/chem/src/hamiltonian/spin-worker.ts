/**
 * The S² expectation kernels of ./spin-kernel.ts on node:worker_threads, from their source
 * text (as ./workers.ts does for the Hamiltonian): the context and the vectors are copied
 * once into SharedArrayBuffers, chunks are handed out dynamically, and the main thread takes
 * chunks too. Resolves to undefined when worker threads are unavailable (e.g. in a browser).
 * @module
 */
import { type SpinContext, spinPairsKernel, spinRowsKernel } from './spin-kernel';
import { runWorkerPool, shareDeep, toShared, workerScript } from './worker-source';

/** The worker's script: both kernels plus the message loop. */
function workerSource(): string {
  return workerScript(
    { spinRowsKernel, spinPairsKernel },
    'let ctx = null;\nlet vecs = null;',
    'ctx = msg.ctx; vecs = msg.vecs;',
    "msg.kernel === 'pairs' ? spinPairsKernel(ctx, vecs, msg.start, msg.end) : spinRowsKernel(ctx, vecs, msg.start, msg.end)",
    '[out.buffer]',
  );
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
  const shared = shareDeep(usedParts(ctx, kernel));
  const sharedVecs = vecs.map((v) => toShared(v));
  const run = kernel === 'pairs' ? spinPairsKernel : spinRowsKernel;
  const results = await runWorkerPool<Float64Array>({
    code: workerSource(),
    init: { ctx: shared, vecs: sharedVecs },
    chunks,
    nworkers,
    extra: { kernel },
    main: (start, end) => run(shared, sharedVecs, start, end),
    what: `S² worker failed on ${kernel === 'pairs' ? 'alpha strings' : 'determinants'}`,
  });
  if (!results) return undefined;
  const sum = new Float64Array(2 * vecs.length);
  for (const part of results) for (let i = 0; i < sum.length; i++) sum[i]! += part[i]!;
  return sum;
}
