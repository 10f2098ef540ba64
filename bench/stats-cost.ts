/**
 * The device statistics' cost per matrix (the tuner's first stage, `profile/device-stats.ts`):
 * the median wall time of `deviceMatrixStats` over `--reps` runs (pipelines compiled before the
 * first), and the longest chain of entries one invocation of the `scan` pass walks — the
 * machine-independent figure behind the H100's 75–83 ms of statistics on densrow-100000-8
 * (one invocation walking its 50 000-entry row; session 13 lets the workgroup share rows past
 * SCAN_LONG_ROW entries).
 * Run: `pnpm tsx bench/stats-cost.ts [--scale 0.1] [--only densrow,powerlaw] [--reps 7]` (validation set).
 */
import { createGpuContext, deviceMatrixStats, uploadCsrArrays } from '@gpusparse/gpu';
import { SCAN_LONG_ROW, STATS_WG } from '../packages/gpu/src/profile/matrix-stats.kernel';
import { validationMatrixSet } from './validation-set';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const scale = Number(opt('--scale') ?? 0.1);
const only = opt('--only')?.split(',');
const reps = Number(opt('--reps') ?? 7);

/** Entries the busiest scan invocation walks: a row up to SCAN_LONG_ROW alone, then its workgroup's long rows strided by STATS_WG. */
function scanChain(rowPtr: Int32Array, rows: number): { before: number; after: number } {
  let before = 0;
  let after = 0;
  for (let w = 0; w < rows; w += STATS_WG) {
    let own = 0;
    let shared = 0;
    for (let r = w; r < Math.min(rows, w + STATS_WG); r++) {
      const len = rowPtr[r + 1]! - rowPtr[r]!;
      before = Math.max(before, len);
      if (len > SCAN_LONG_ROW) shared += Math.ceil(len / STATS_WG);
      else own = Math.max(own, len);
    }
    after = Math.max(after, own + shared);
  }
  return { before, after };
}

const ctx = await createGpuContext();
console.log(ctx.describeText().split('\n')[0]);
for (const [name, make] of validationMatrixSet(scale)) {
  if (only && !only.some((o) => name.startsWith(o))) continue;
  const a = make();
  const shared = uploadCsrArrays(ctx, a, 'stats-cost');
  await ctx.finish();
  await deviceMatrixStats(ctx, shared, [8, 32]); // compiles
  const ms: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    const d = await deviceMatrixStats(ctx, shared, [8, 32]);
    ms.push(performance.now() - t0);
    if (typeof d === 'string') throw new Error(`${name}: ${d}`);
  }
  shared.release();
  ms.sort((x, y) => x - y);
  const c = scanChain(a.rowPtr, a.rows);
  console.log(`${name}: ${a.rows} rows, ${a.rowPtr[a.rows]} nnz; statistics median ${ms[ms.length >> 1]!.toFixed(1)} ms (min ${ms[0]!.toFixed(1)}, max ${ms[ms.length - 1]!.toFixed(1)}, ${reps} runs); longest scan chain per invocation: ${c.before} entries one by one before, ${c.after} now`);
}
ctx.dispose();
