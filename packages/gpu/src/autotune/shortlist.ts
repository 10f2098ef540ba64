/**
 * Stage 2 of a tuning run, the model's short-list: from every candidate (assessed and ordered by
 * the cost model in `candidates.ts`), the few worth timing, in this order:
 *
 * 1. the CSR floor ({@link floorKernel}: the CSR kernel the row-length statistics point to —
 *    no conversion, any size, the kernels split over bindings); it is always timed and sets the
 *    budget with its product time;
 * 2. one variant of each other CSR kernel (no conversion: only an upload each) — on the bench
 *    set the static model ranked the CSR kernels wrongly (csr-adaptive first on stencils where
 *    csr-scalar was 1.5–2× faster on an H100), so each is measured when the budget allows;
 * 3. the other formats the model cannot separate from its best (predicted within
 *    {@link SEPARATION}), at most two per kernel;
 *
 * at most `maxTimed` in all. The other CSR candidates are kept as the fallback floor: if nothing
 * on the short-list runs and verifies, they are tried in turn.
 * @module
 */
import type { RowLengthStats } from '@gpusparse/formats';
import type { Candidate } from './candidates';

/**
 * The model's prediction is trusted to separate candidates only past this factor: the static
 * cost model missed by up to 2.7× between variants of one kernel on an H100 (issue 16:
 * csr-vector lanes 2 vs 4), so anything within 2× of the predicted best is timed.
 */
export const SEPARATION = 2;
/** Variants of one kernel on the short-list at most (kernel diversity first). */
const PER_KERNEL = 2;

/** The short-list (indices into the candidate list, in timing order) and the fallback floor. */
export interface ShortList {
  readonly picks: number[];
  /** CSR candidates not on the short-list, best first: tried when nothing else works. */
  readonly floor: number[];
}

/**
 * The CSR kernel and lanes the row lengths point to, from the H100/H200 tables of
 * bench/RESULTS.md and issue 16: very irregular rows (RSD > 150 % of the mean, power law) →
 * csr-adaptive; short rows (mean ≤ 12: banded, 2-D/3-D 5- and 7-point stencils) → csr-scalar;
 * longer rows → csr-vector with lanes ≈ mean / 6 (4 on the 27-point stencil's rows of 27, 16 on
 * CI rows of ~1000), clamped to 4–16. O(1).
 * @example floorKernel({ mean: 26.5, rsdp: 10 } as RowLengthStats) // { kernel: 'csr-vector', lanes: 4 }
 */
export function floorKernel(s: Pick<RowLengthStats, 'mean' | 'rsdp'>): { kernel: string; lanes?: number } {
  if (s.rsdp > 150) return { kernel: 'csr-adaptive' };
  if (s.mean <= 12) return { kernel: 'csr-scalar' };
  return { kernel: 'csr-vector', lanes: Math.min(16, Math.max(4, 2 ** Math.floor(Math.log2(s.mean / 6)))) };
}

type Indexed = { c: Candidate; i: number };

/** Timeable: not pruned, or soft-pruned in an exhaustive sweep. CSR candidates are never hard-pruned for size (see candidates.ts). */
const timeable = (c: Candidate, exhaustive: boolean): boolean => !c.pruned || (exhaustive && !c.pruned.hard);

/** The floor first, then the best variant of each other CSR kernel (the rule's lanes for csr-vector). */
function csrScouts(csr: readonly Indexed[], s: Pick<RowLengthStats, 'mean' | 'rsdp'>): Indexed[] {
  const rule = floorKernel(s);
  const usable = csr.filter(({ c }) => !c.pruned);
  const pool = usable.length ? usable : csr;
  const fits = (x: Indexed, kernel: string, lanes?: number) => x.c.kernel.id === kernel && (lanes === undefined || x.c.params.lanes === lanes);
  const vectorLanes = floorKernel({ mean: s.mean, rsdp: 0 }).lanes ?? rule.lanes;
  const out: Indexed[] = [];
  const first = pool.find((x) => fits(x, rule.kernel, rule.lanes)) ?? pool.find((x) => fits(x, rule.kernel)) ?? pool[0];
  if (first) out.push(first);
  for (const x of pool) {
    if (out.some((o) => o.c.kernel.id === x.c.kernel.id)) continue;
    const preferred = x.c.kernel.id === 'csr-vector' ? pool.find((y) => fits(y, 'csr-vector', vectorLanes)) : undefined;
    out.push(preferred ?? x);
  }
  return out;
}

/**
 * Choose what to time. `list` is sorted as `enumerateCandidates` returns it (unpruned by
 * predicted cost, then soft, then hard prunes). Exhaustive: every timeable candidate, CSR floor
 * first. O(candidates).
 * @example const { picks, floor } = shortList(list, profile.stats, { maxTimed: 5, exhaustive: false });
 */
export function shortList(list: readonly Candidate[], stats: Pick<RowLengthStats, 'mean' | 'rsdp'>, opts: { maxTimed: number; exhaustive: boolean }): ShortList {
  const all = list.map((c, i) => ({ c, i }));
  const csr = all.filter(({ c }) => c.kernel.format === 'csr' && !c.pruned?.hard);
  const cap = Math.max(1, Math.floor(opts.maxTimed));
  const scouts = csrScouts(csr, stats);
  const picks = (opts.exhaustive ? scouts : scouts.slice(0, cap)).map(({ i }) => i);
  const rest = all.filter(({ c, i }) => timeable(c, opts.exhaustive) && !picks.includes(i) && (opts.exhaustive || c.kernel.format !== 'csr'));
  if (opts.exhaustive) picks.push(...rest.map(({ i }) => i));
  else {
    const best = rest.length ? Math.min(...rest.map(({ c }) => c.predicted)) : 0;
    const perKernel = new Map<string, number>();
    for (const { c, i } of rest) {
      if (picks.length >= cap) break;
      const n = perKernel.get(c.kernel.id) ?? 0;
      // the model's best other format is always offered (one comparison across formats at least)
      if (n >= PER_KERNEL || (perKernel.size > 0 && c.predicted > SEPARATION * best)) continue;
      perKernel.set(c.kernel.id, n + 1);
      picks.push(i);
    }
  }
  const chosen = new Set(picks);
  return { picks, floor: csr.filter(({ i }) => !chosen.has(i)).map(({ i }) => i) };
}
