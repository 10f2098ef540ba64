/**
 * The reads of GMRES(m) ({@link gmres} in ./gmres): the checks on ‖b‖ (read up front, or with
 * the first cycle's rows) and the one readback of a batch of Hessenberg columns. Split from
 * gmres.ts (no logic change).
 * @module
 */
import type { SolveContext } from '../common/context';
import type { SolveResult } from '../common/result';
import type { ArnoldiBlock } from './gmres-block';

/** ‖b‖ read with the first cycle's rows: with a basis block, no x0, at least one iteration. */
export function lazyNorm<V>(block: ArnoldiBlock<V> | undefined, opts: { x0: V | undefined; maxIterations: number }): boolean {
  return block !== undefined && opts.x0 === undefined && opts.maxIterations > 0;
}

/** Fix ‖b‖; the result for a non-finite or zero b (x = 0 for b = 0), else undefined. */
export function checkB<V, S>(ctx: SolveContext<V, S>, x: V, bNorm: number): SolveResult<V> | undefined {
  ctx.setBNorm(bNorm);
  if (!Number.isFinite(bNorm)) return ctx.finish(x, 'non-finite', 0, Number.NaN, `${ctx.method}: b contains non-finite values (‖b‖ = ${bNorm})`);
  if (bNorm === 0) {
    ctx.space.fill(x, 0);
    return ctx.finish(x, 'converged', 0, 0, 'b = 0, so x = 0');
  }
  return undefined;
}

/** A Hessenberg column waiting for its batch read: device scalars (or a block row) and how to assemble it. */
export type PendingColumn<S> = { s: S[]; col: (vals: number[]) => number[]; row?: number };

/**
 * One readback of a batch: the deferred β (a device scalar, or the block's start row) and the
 * Hessenberg columns of the pending steps (device scalars, or the block's history rows).
 */
export async function readBatch<V, S>(
  ctx: SolveContext<V, S>,
  block: ArnoldiBlock<V> | undefined,
  pending: readonly PendingColumn<S>[],
  betaDev: S | undefined,
  betaInBlock: boolean,
): Promise<{ beta?: number; cols: number[][] }> {
  if (block && pending.every((p) => p.row !== undefined)) {
    ctx.stats.readbacks++;
    const got = await block.read(pending.map((p) => p.row!), betaInBlock);
    const cols = pending.map((p, i) => p.col(got.steps[i]!));
    return got.start === undefined ? { cols } : { beta: got.start, cols };
  }
  const head = betaDev === undefined ? [] : [betaDev];
  const flat = await ctx.takeMany([...head, ...pending.flatMap((p) => p.s)]);
  let off = head.length;
  const cols = pending.map((p) => {
    const vals = p.col(flat.slice(off, off + p.s.length));
    off += p.s.length;
    return vals;
  });
  return head.length ? { beta: flat[0]!, cols } : { cols };
}
