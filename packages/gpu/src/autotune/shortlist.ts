/**
 * Stage 2 of a tuning run, the model's short-list: from every candidate (assessed and ordered by
 * the cost model in `candidates.ts`), the few worth timing — the CSR floor first (no
 * conversion, any size: the kernels split over bindings), then the candidates the model cannot
 * separate from its best (predicted within {@link SEPARATION}), at most two per kernel, at most
 * `maxTimed` in all. The rest of the CSR family is kept as the fallback floor: if nothing on the
 * short-list runs and verifies, those are tried in turn.
 * @module
 */
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
  /** CSR candidates not on the short-list, best predicted first: tried when nothing else works. */
  readonly floor: number[];
}

/** Timeable: not pruned, or soft-pruned in an exhaustive sweep. CSR candidates are never hard-pruned (see candidates.ts). */
const timeable = (c: Candidate, exhaustive: boolean): boolean => !c.pruned || (exhaustive && !c.pruned.hard);

/**
 * Choose what to time. `list` is sorted as `enumerateCandidates` returns it (unpruned by
 * predicted cost, then soft, then hard prunes). Exhaustive: every timeable candidate, CSR floor
 * first. O(candidates).
 * @example const { picks, floor } = shortList(list, { maxTimed: 4, exhaustive: false });
 */
export function shortList(list: readonly Candidate[], opts: { maxTimed: number; exhaustive: boolean }): ShortList {
  const csr = list.map((c, i) => ({ c, i })).filter(({ c }) => c.kernel.format === 'csr' && !c.pruned?.hard);
  const floorFirst = csr.find(({ c }) => !c.pruned) ?? csr[0];
  const picks: number[] = floorFirst ? [floorFirst.i] : [];
  const ok = list.map((c, i) => ({ c, i })).filter(({ c, i }) => timeable(c, opts.exhaustive) && i !== floorFirst?.i);
  if (opts.exhaustive) picks.push(...ok.map(({ i }) => i));
  else {
    const best = ok.length ? Math.min(...ok.map(({ c }) => c.predicted)) : 0;
    const perKernel = new Map<string, number>();
    if (floorFirst) perKernel.set(floorFirst.c.kernel.id, 1);
    const cap = Math.max(1, Math.floor(opts.maxTimed));
    for (const { c, i } of ok) {
      if (picks.length >= cap) break;
      const n = perKernel.get(c.kernel.id) ?? 0;
      // the first alternative is always timed, whatever the model says: one comparison at least
      if (n >= PER_KERNEL || (picks.length > 1 && c.predicted > SEPARATION * best)) continue;
      perKernel.set(c.kernel.id, n + 1);
      picks.push(i);
    }
  }
  const chosen = new Set(picks);
  return { picks, floor: csr.filter(({ i }) => !chosen.has(i)).map(({ i }) => i) };
}
