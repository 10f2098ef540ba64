/**
 * The second pass of bench/tune.ts (session 11, issue 16): the tuned runs again, in another order,
 * on a fresh GPU context — a new pipeline cache, as a new `gpusparse` process has — so that the
 * costs paid once per process (pipeline compiles, the device's first allocations and readbacks)
 * land on another matrix than in the first pass. Each matrix's overhead verdict is then taken on
 * the worse of its two runs: one call's first-matrix cost can no longer flip it either way.
 * Pure helpers here (order, merge, counts); the device work is in bench/tune.ts.
 * @module
 */
import { mulberry32 } from '@gpusparse/formats';

/** What the second pass keeps of one tuned run. */
export interface PassRun {
  /** Position in its pass's order (0: the first matrix of the process). */
  readonly position: number;
  readonly kernel: string;
  readonly params: Record<string, number>;
  readonly productMs?: number;
  readonly spentMs: number;
  readonly overheadMs: number;
  readonly csrUploadMs: number;
  readonly budgetMs: number;
  readonly budgetNote?: string;
  /** Per-process costs inside spentMs: waiting for compiles ahead (statistics + candidates) and blocking compiles. */
  readonly compileMs: number;
  readonly costs: Record<string, number>;
  /** True when this pass chose the first pass's kernel and parameters. */
  readonly sameChoice: boolean;
  /** Product time of this pass's choice over the first pass's exhaustive best: the first pass's ratio when the choice is the same, else head to head in this pass. */
  ratio?: number;
}

/**
 * The matrices' order for the second pass: a seeded shuffle (mulberry32) whose first matrix is not
 * the first pass's first (rotated by one if it is). O(n).
 * @example shuffledOrder(['a', 'b', 'c'], 11) // a permutation not starting with 'a'
 */
export function shuffledOrder<T>(items: readonly T[], seed: number): T[] {
  const r = mulberry32(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  if (out.length > 1 && out[0] === items[0]) out.push(out.shift()!);
  return out;
}

/**
 * The verdicts of one matrix over both passes: overhead (without / with the shared CSR upload)
 * and budget on the worse run, the product ratio on the worse one. `first` holds pass 1's
 * figures as bench/tune.ts writes them. O(1).
 */
export function worstOfTwo(first: { overheadMs: number; tuningMs: number; overheadTargetMs: number; ratio?: number; budgetMs: number; budgetNote?: string }, second: PassRun): Record<string, unknown> {
  const overheadMs = Math.max(first.overheadMs, second.overheadMs);
  const spentMs = Math.max(first.tuningMs, second.spentMs);
  const ratios = [first.ratio, second.ratio].filter((r): r is number => r !== undefined);
  const budget = (o: number, b: number, note?: string) => o <= 1.2 * b || note !== undefined;
  return {
    overheadMs,
    spentMs,
    overheadOk: overheadMs <= first.overheadTargetMs,
    totalWithUploadOk: spentMs <= first.overheadTargetMs,
    ratio: ratios.length ? Math.max(...ratios) : undefined,
    within10pct: ratios.length === 2 ? Math.max(...ratios) <= 1.1 : undefined,
    budgetHonoured: budget(first.overheadMs, first.budgetMs, first.budgetNote) && budget(second.overheadMs, second.budgetMs, second.budgetNote),
  };
}

/** The summary lines of the two passes (one per figure), from the rows bench/tune.ts wrote. */
export function passSummary(rows: readonly Record<string, unknown>[]): string[] {
  const both = rows.filter((r) => r.worstOfTwo !== undefined);
  if (both.length === 0) return [];
  const w = (r: Record<string, unknown>) => r.worstOfTwo as { overheadOk: boolean; totalWithUploadOk: boolean; within10pct?: boolean; budgetHonoured: boolean };
  const p2 = (r: Record<string, unknown>) => r.pass2 as PassRun;
  const count = (f: (r: Record<string, unknown>) => boolean | undefined) => `${both.filter((r) => f(r) === true).length}/${both.length}`;
  const firsts = both.filter((r) => p2(r).position === 0 || r.position === 0).map((r) => `${r.name} (pass ${p2(r).position === 0 ? 2 : 1})`);
  return [
    `two passes (the second in another order on a fresh context; first matrices: ${firsts.join(', ')}): worst of two — overhead within max(0.5 s, 10 % of the work) ${count((r) => w(r).overheadOk)}, with the shared CSR upload ${count((r) => w(r).totalWithUploadOk)}; product within 10 % in both passes ${count((r) => w(r).within10pct)}; budget honoured in both ${count((r) => w(r).budgetHonoured)}`,
    `second pass overhead (ms; * first of its process): ${both.map((r) => `${r.name} ${p2(r).overheadMs.toFixed(0)}${p2(r).position === 0 ? '*' : ''} (compiles ${p2(r).compileMs.toFixed(0)})`).join(', ')}`,
  ];
}
