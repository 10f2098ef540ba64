/**
 * Loop shape of the kernels that reduce several columns side by side (the Lanczos / GMRES block's
 * dots and combine, ./lanczos-shaders; the fused multi-dot and combine-dots trees,
 * ./fused-shaders). `unrolled`: the per-column loops of a round run to a constant (12 columns, or
 * the fused group's 14), which a GPU's compiler unrolls; `bounded`: they run to the round's
 * column count (a uniform), which no compiler unrolls, and skip the columns past it. The columns
 * written get bit-identical values either way (the same products and the same tree, in the same
 * order).
 *
 * Why two: llvmpipe (lavapipe) compiles a compute shader with LLVM at its first dispatch, and the
 * unrolled trees with a barrier per level cost it tens of seconds — with a cold Mesa shader cache
 * (every fresh CI machine), CPU time of the first dispatch on the 2-core dev VM (bench/column-loops.ts):
 * a Lanczos block step 37.4 s unrolled, 8.9 s bounded; a 14-vector multiDot 19.0 s, 4.5 s; a
 * 12-vector combineDots 30.6 s, 14.4 s; no slower to run (session 14, bench/RESULTS.md). Pinned to
 * one busy core, the unrolled ones took the hostile device-lost Lanczos test past its 120 s limit
 * (session 13; 52 s bounded). On GPUs the text stays the unrolled one, unchanged (the keys too):
 * on the H100 the bounded shape ran a block step at m = 20 1.95× and a 14-vector multiDot 1.5×
 * slower (n = 4·10^6), with the same bits (bench/column-loops.ts, session 14).
 * @module
 */
import type { GpuContext } from '../device/context';
import { softwareAdapter } from '../device/probe';

/** See the module comment. */
export type ColumnLoops = 'unrolled' | 'bounded';

/** Forces a loop shape on every block and Blas1 made afterwards (a bench comparing the two); undefined: by adapter. */
export const columnLoopsTuning: { force: ColumnLoops | undefined } = { force: undefined };

/** The loop shape for `ctx`: bounded on software adapters (../device/probe softwareAdapter), else unrolled. */
export function columnLoops(ctx: GpuContext): ColumnLoops {
  return columnLoopsTuning.force ?? (softwareAdapter(ctx) ? 'bounded' : 'unrolled');
}

/** Suffix of a pipeline name for `loops`: none for the unrolled shape (its keys are the ones they always were). */
export const loopsSuffix = (loops: ColumnLoops): string => (loops === 'unrolled' ? '' : `-${loops}`);
