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
 * 3. the other formats by **family** (kernels that share a layout idea: the ELL family, SELL,
 *    the hybrid, DIA/HM, the AXC/AXT family, BCSR, CMRS, COO — {@link familyOf}): first the
 *    model's best variant of each family, families in predicted order (those predicted past
 *    {@link SEPARATION} × the best dropped, the best family always offered), then further
 *    variants within {@link SEPARATION}, at most {@link PER_KERNEL} per kernel — preceded, on
 *    banded and stencil matrices (dia-tiled not pruned), by dia-tiled, in an extra slot when the
 *    caller states no `maxTimed` ({@link DIA_TILED});
 *
 * with the CSR parameter neighbours (csr-vector at half and twice its scout's lanes, csr-adaptive
 * at half and twice its entries per block: {@link NEIGHBOUR_PARAMS}) after the first
 * {@link FAMILY_SLOTS} families (timing only, no conversion); at most `maxTimed` in all. The other CSR candidates are kept as the fallback floor: if nothing
 * on the short-list runs and verifies, they are tried in turn.
 *
 * Why families first: on the H100 bench set (bench/RESULTS.md, issue 16) the winners outside CSR
 * were ELL (banded, stencils, uniform rows), AXT-CH1 (power law) and AXC (CI-like rows) — three
 * families — while the old rule spent both non-CSR slots on two DIA variants or two SELL
 * variants that the static model ranked first and never timed the family that won.
 * @module
 */
import type { RowLengthStats } from '@gpusparse/formats';
import type { Candidate } from './candidates';
import { CSR_RELAYOUT, vec4LanesFor } from './cost-model';

/**
 * The model's prediction is trusted to separate candidates only past this factor: the static
 * cost model missed by up to 2.7× between variants of one kernel on an H100 (issue 16:
 * csr-vector lanes 2 vs 4), so anything within 2× of the predicted best is timed.
 */
export const SEPARATION = 2;
/** Candidates timed at most when `maxTimed` is not stated (autotune's default; bench/tune-replay.ts replays with it). */
export const DEFAULT_MAX_TIMED = 8;
/** Variants of one kernel on the short-list at most (family diversity first). */
const PER_KERNEL = 2;

/**
 * Kernel id → family (kernels of one family are alternatives the static model ranks poorly
 * against each other). DIA and HM share one slot, the better predicted of the two: split into
 * two families they pushed ELL (the bench set's stencil winner) off a 27-point stencil's
 * short-list of 8. dia-tiled belongs to the family too but is short-listed on its own rule
 * ({@link DIA_TILED}).
 */
const FAMILIES: Readonly<Record<string, string>> = { ell: 'ell', 'ell-r': 'ell', 'sliced-ell': 'ell', 'sliced-ell-r': 'ell', dia: 'diagonal', 'dia-tiled': 'diagonal', hm: 'diagonal' };

/**
 * The tiled DIA kernel (issue 20). On the H100 it beat every other kernel and cuSPARSE on the
 * full-size banded and stencil matrices (27-point 120³ 0.171 ms against ELL 0.352, DIA 0.407;
 * banded b9 0.091 against ELL 0.159), but the recorded sweeps of the smaller bench and
 * validation matrices, where DIA/HM or ELL won, never timed it. So it does not take the
 * diagonal family's slot (the better of DIA and HM keeps it) nor take part in the family
 * order (its low prediction would move the {@link SEPARATION} cut and drop ELL): whenever it
 * is not pruned — at most 64 occupied diagonals, fill ≥ 0.5, the rules that make a matrix
 * banded or stencil-like — its default variant is the first of the other formats (admitted
 * before ELL and DIA/HM when the budget allows only some conversions: at full size it was the
 * fastest of them all), in one extra slot when the caller left the short-list's size to the
 * tuner.
 */
const DIA_TILED = 'dia-tiled';

/**
 * The family of a kernel id: 'csr' for the CSR kernels, 'ell' for ELL, ELL-R and sliced ELL(-R),
 * 'diagonal' for DIA and HM, 'ax' for AXC and the AXT kernels, else the id itself. O(1).
 * @example familyOf('axtch1') // 'ax'
 */
export function familyOf(id: string): string {
  if (id.startsWith('csr-')) return 'csr';
  if (id.startsWith('ax')) return 'ax';
  return FAMILIES[id] ?? id;
}

/** The short-list (indices into the candidate list, in timing order) and the fallback floor. */
export interface ShortList {
  readonly picks: number[];
  /** CSR candidates not on the short-list, best first: tried when nothing else works. */
  readonly floor: number[];
  /** With the calibrated model: candidates it could not separate from the predicted best (the CSR floor included). */
  readonly interval?: number;
  /** True when more than `maxTimed` were inseparable and the worse-predicted were left off. */
  readonly truncated?: boolean;
  /** With the calibrated model: the static rule's picks added after the interval's (the safety net; not refused by the model after the floor is timed). */
  readonly net?: number[];
  /** The csr-vec4 scout of power-law rows, last, in a slot past `maxTimed` (static rule). */
  readonly tail?: number;
}

/**
 * Kernels (variants included) of one non-CSR family on the calibrated short-list, at most. On the
 * session-10 H100 run a dense-row matrix short-listed five AX kernels on alike predictions; each
 * cost 30–63 ms of host conversion and upload before any was timed, and the run's overhead
 * reached 569 ms of a 500 ms bound (AXT-CH1, the family's first, was the winner).
 */
export const FAMILY_CAP = 2;

/**
 * Static-rule picks added after the calibrated interval's, at most. Replayed on the session-7
 * H100 sweeps with a roofline calibration (bench/tune-replay.ts; not an H100 calibration), the
 * interval alone short-listed a candidate within 10 % of the best on 11/15 validation matrices,
 * the static rule on 13/15, both together on 13/15 (bench set 6/6, 5/6, 6/6).
 */
export const NET_SLOTS = 4;

/** The calibrated rule's inputs: the expected products and each candidate's predicted host preparation and upload (ms). */
export interface IntervalRule {
  readonly products: number;
  readonly prepMs: (c: Candidate) => number;
}

/**
 * The candidates (indices, best predicted objective first) that the calibrated model cannot
 * separate from the predicted best: objective = products × product ms + preparation ms; a
 * candidate stays when its optimistic objective (its interval's low end) is at most the best
 * pessimistic objective (the smallest high end). Candidates without a prediction are left out.
 * O(n log n).
 * @example inseparable(list.map((c, i) => ({ c, i })), { products: 1000, prepMs: () => 0 })
 */
export function inseparable(pool: readonly { c: Candidate; i: number }[], rule: IntervalRule): number[] {
  const scored = pool.filter(({ c }) => c.prediction).map(({ c, i }) => {
    const prep = rule.prepMs(c);
    return { i, mid: rule.products * c.prediction!.ms + prep, low: rule.products * c.prediction!.low + prep, high: rule.products * c.prediction!.high + prep };
  });
  if (scored.length === 0) return [];
  const bar = Math.min(...scored.map((x) => x.high));
  return scored.filter((x) => x.low <= bar).sort((x, y) => x.mid - y.mid).map((x) => x.i);
}

/**
 * The calibrated short-list: the CSR floor first, then the model's best variant of each other
 * CSR kernel among the inseparable candidates ({@link inseparable}; {@link csrFirst}), then the
 * rest of them — the best predicted of each family, then of each further kernel, then the other
 * variants — at most `cap` in all, plus one slot per CSR kernel that reads the shared CSR upload
 * (its trial costs a few products, no conversion, no upload; csr-vec4 and csr-long re-lay the
 * matrix out on the host and take slots of `cap`, their preparation weighed by the admission).
 * Why the CSR kernels first: replayed on the session-8 H100 sweeps (bench/tune-replay.ts,
 * calibration of the same run), the exhaustive best was short-listed on 5/15 validation and 4/6
 * bench matrices with the families first — csr-vec4 and csr-long, the exhaustive best on 10 of
 * the 21, lost their slots to other families — and on 11/15 and 5/6 with the CSR kernels first.
 * O(n log n).
 */
function intervalPicks(all: readonly Indexed[], first: Indexed | undefined, rule: IntervalRule, cap: number, s: Pick<RowLengthStats, 'rsdp'>): { picks: number[]; interval: number; truncated: boolean } {
  const near = inseparable(all.filter(({ c }) => timeable(c, false)), rule);
  const ordered = first ? [first.i] : [];
  // the other CSR kernels first, the model's best variant of each: on the session-8 H100 sweeps
  // csr-vec4 / csr-long were the exhaustive best on 10 of 21 matrices and lost their slots to the families
  const csrKernels = csrFirst(all, near, ordered, s);
  ordered.push(...csrKernels);
  const csrExtra = csrKernels.filter((i) => !CSR_RELAYOUT.has(all[i]!.c.kernel.id)).length;
  // at most FAMILY_CAP kernels of one other family: their predictions are alike, and each costs a conversion before any is timed
  const full = (i: number) => {
    const f = familyOf(all[i]!.c.kernel.id);
    return f !== 'csr' && ordered.filter((j) => familyOf(all[j]!.c.kernel.id) === f).length >= FAMILY_CAP;
  };
  const pass = (key: (id: string) => string) => {
    const seen = new Set(ordered.map((i) => key(all[i]!.c.kernel.id)));
    for (const i of near) {
      const k = key(all[i]!.c.kernel.id);
      if (ordered.includes(i) || seen.has(k) || full(i)) continue;
      seen.add(k);
      ordered.push(i);
    }
  };
  pass(familyOf);
  pass((id) => id);
  for (const i of near) if (!ordered.includes(i) && !full(i)) ordered.push(i); // the other variants, in predicted order
  const interval = new Set([...near, ...(first ? [first.i] : [])]).size;
  // the shared-upload CSR kernels cost only their trials: they take slots past `cap`
  const room = cap + csrExtra;
  return { picks: ordered.slice(0, room), interval, truncated: ordered.length > room };
}

/**
 * The model's best-predicted variant of each CSR kernel (other than the floor's, `taken`) that
 * it cannot separate from the best (`near`, in predicted order); csr-merge only on power-law-like
 * rows ({@link POWER_LAW_RSD}), csr-balanced never ({@link scoutedOn}). O(near).
 */
function csrFirst(all: readonly Indexed[], near: readonly number[], taken: readonly number[], s: Pick<RowLengthStats, 'rsdp'>): number[] {
  const seen = new Set(taken.map((i) => all[i]!.c.kernel.id));
  const out: number[] = [];
  for (const i of near) {
    const k = all[i]!.c.kernel;
    if (k.format !== 'csr' || seen.has(k.id) || !scoutedOn(k.id, s)) continue;
    seen.add(k.id);
    out.push(i);
  }
  return out;
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

/** Families timed before the CSR parameter neighbours (the rest of the room goes to more families after them). */
const FAMILY_SLOTS = 3;

/**
 * The CSR parameters whose neighbours are timed (half and twice the scout's value, other
 * parameters equal): csr-vector's lanes (the static model misjudged lanes by up to 2.7×, issue
 * 16: lanes 2 vs 4 on the H100; the best lanes differ by adapter, subgroups of 8 on lavapipe, 32
 * on NVIDIA) and csr-adaptive's entries per row block (on the bench set's H100 power law 512,
 * 1024 and 2048 ran 0.189, 0.194 and 0.438 ms: 2.3× apart, with no statistic that ranks them).
 * The floor's kernel comes first. A CSR variant costs no conversion and no upload, only its timing.
 */
const NEIGHBOUR_PARAMS: Readonly<Record<string, string>> = { 'csr-vector': 'lanes', 'csr-adaptive': 'nnzPerGroup' };

/** Half and twice the scout's value of its kernel's {@link NEIGHBOUR_PARAMS} entry, when declared and not pruned; the floor's kernel first. O(csr · scouts). */
function neighbours(csr: readonly Indexed[], scouts: readonly Indexed[]): number[] {
  const out: number[] = [];
  for (const scout of scouts) {
    const name = NEIGHBOUR_PARAMS[scout.c.kernel.id];
    const v = name ? scout.c.params[name] : undefined;
    if (!name || v === undefined) continue;
    for (const want of [v / 2, v * 2]) {
      const x = csr.find(({ c }) => c.kernel.id === scout.c.kernel.id && !c.pruned && c.params[name] === want && Object.entries(scout.c.params).every(([k, w]) => k === name || c.params[k] === w));
      if (x) out.push(x.i);
    }
  }
  return out;
}

/** Timeable: not pruned, or soft-pruned in an exhaustive sweep. CSR candidates are never hard-pruned for size (see candidates.ts). */
const timeable = (c: Candidate, exhaustive: boolean): boolean => !c.pruned || (exhaustive && !c.pruned.hard);

/**
 * Rows irregular enough for csr-merge (RSD > 150 % of the mean, the power-law rule of
 * {@link floorKernel}): its equal items per invocation pay only where row lengths are unequal.
 */
const POWER_LAW_RSD = 150;

/**
 * Whether CSR kernel `id` is a scout on rows with RSD `s.rsdp`: csr-merge only on power-law-like
 * rows (H100, session 12: 0.82× csr-adaptive's time on the bench power law, 1.09× on uniform rows);
 * csr-balanced never — the same equal-slice idea, and csr-merge ran faster on both (0.75× / 0.92× its
 * time), so it took csr-balanced's power-law slot. O(1).
 */
const scoutedOn = (id: string, s: Pick<RowLengthStats, 'rsdp'>): boolean => id !== 'csr-balanced' && (id !== 'csr-merge' || s.rsdp > POWER_LAW_RSD);

/**
 * Whether a scout is worth timing next to the floor: csr-merge only on power-law-like rows,
 * csr-balanced never ({@link scoutedOn});
 * a kernel that re-lays the matrix out on the host (csr-vec4) only when its predicted cost with
 * the preparation spread over the expected products (`predicted`) beats the floor's — its
 * predicted gain pays for the conversion. O(1).
 */
function scoutPays(x: Indexed, first: Indexed, s: Pick<RowLengthStats, 'rsdp'>): boolean {
  if (!scoutedOn(x.c.kernel.id, s)) return false;
  // on power-law rows the model cannot rank csr-vec4: on the session-9 H100 its best lanes ran
  // 0.89×, 2.4× and 21× csr-adaptive on three power laws; its trial costs a device quad build of a
  // few ms, and the probe round drops it after one product when it is over 4× the fastest
  if (x.c.kernel.id === 'csr-vec4' && s.rsdp > POWER_LAW_RSD) return true;
  if (CSR_RELAYOUT.has(x.c.kernel.id)) return x.c.predicted < first.c.predicted;
  return true;
}

/**
 * The floor first, then the best variant of each other CSR kernel (the rule's lanes for
 * csr-vector and csr-vec4) that {@link scoutPays}; all of them in an exhaustive sweep.
 */
function csrScouts(csr: readonly Indexed[], s: ScoutStats, exhaustive = false): Indexed[] {
  const rule = floorKernel(s);
  const usable = csr.filter(({ c }) => !c.pruned);
  const pool = usable.length ? usable : csr;
  const fits = (x: Indexed, kernel: string, lanes?: number) => x.c.kernel.id === kernel && (lanes === undefined || x.c.params.lanes === lanes);
  const vectorLanes = floorKernel({ mean: s.mean, rsdp: 0 }).lanes ?? rule.lanes;
  const out: Indexed[] = [];
  const first = pool.find((x) => fits(x, rule.kernel, rule.lanes)) ?? pool.find((x) => fits(x, rule.kernel)) ?? pool[0];
  if (first) out.push(first);
  const v4Lanes = vec4LanesFor(s.mean);
  for (const x of pool) {
    if (out.some((o) => o.c.kernel.id === x.c.kernel.id)) continue;
    const preferred = x.c.kernel.id === 'csr-vector' ? pool.find((y) => fits(y, 'csr-vector', vectorLanes)) : x.c.kernel.id === 'csr-vec4' && s.rsdp > POWER_LAW_RSD ? tailVec4(pool, vec4LanesFor(Math.max(s.mean, s.entryTail ?? 0))) : x.c.kernel.id === 'csr-vec4' || x.c.kernel.id === 'csr-long' ? pool.find((y) => fits(y, x.c.kernel.id, v4Lanes) && !y.c.params.pack) : undefined;
    const pick = preferred ?? x;
    if (exhaustive || !first || scoutPays(pick, first, s)) out.push(pick);
    else out.push({ ...pick, i: -1 }); // marks the kernel as seen; dropped below
  }
  return out.filter(({ i }) => i >= 0);
}

/** The csr-vec4 scout when the rows are power-law-like ({@link POWER_LAW_RSD}), else undefined. O(scouts). */
function tailScout(scouts: readonly Indexed[], s: ScoutStats): Indexed | undefined {
  return s.rsdp > POWER_LAW_RSD ? scouts.find(({ c }) => c.kernel.id === 'csr-vec4') : undefined;
}

/**
 * The row statistics the scouts read: mean and RSD of the row lengths, and `entryTail`, the row
 * length below which 90 % of the entries sit (`entryQuantileLength` in cost-model.ts; autotune
 * passes it; without it the mean stands in).
 */
export type ScoutStats = Pick<RowLengthStats, 'mean' | 'rsdp'> & { readonly entryTail?: number };

/**
 * On power-law rows, the csr-vec4 (pack 0) variant that the lanes rule leaves with the most lanes
 * up to `want` (the lanes the H100 preferred for the tail's rows, {@link vec4LanesFor}), else the
 * fewest, or undefined. O(pool).
 */
function tailVec4(pool: readonly Indexed[], want: number): Indexed | undefined {
  const v4 = pool.filter((y) => y.c.kernel.id === 'csr-vec4' && !y.c.params.pack).sort((a, b) => (a.c.params.lanes ?? 0) - (b.c.params.lanes ?? 0));
  return v4.filter((y) => (y.c.params.lanes ?? 0) <= want).pop() ?? v4[0];
}

/**
 * Choose what to time. `list` is sorted as `enumerateCandidates` returns it (unpruned by
 * predicted cost, then soft, then hard prunes). Exhaustive: every timeable candidate, CSR floor
 * first. `diagonalSlot`: dia-tiled, when short-listed, takes a slot past `maxTimed` (autotune
 * sets it when the caller states no `maxTimed`). O(candidates).
 * @example const { picks, floor } = shortList(list, profile.stats, { maxTimed: 5, exhaustive: false });
 */
export function shortList(list: readonly Candidate[], stats: ScoutStats, opts: { maxTimed: number; exhaustive: boolean; diagonalSlot?: boolean; interval?: IntervalRule }): ShortList {
  const all = list.map((c, i) => ({ c, i }));
  const csr = all.filter(({ c }) => c.kernel.format === 'csr' && !c.pruned?.hard);
  const cap = Math.max(1, Math.floor(opts.maxTimed));
  const scouts = csrScouts(csr, stats, opts.exhaustive);
  if (opts.interval && !opts.exhaustive && list.some((c) => c.prediction)) {
    const r = intervalPicks(all, scouts[0], opts.interval, cap, stats);
    // the safety net: the static rule's picks the interval left out, after it (a model the
    // probes misled can only add to what the static rule would time, never take from it)
    const stat = shortList(list, stats, { ...opts, interval: undefined });
    const net = stat.picks.filter((i) => !r.picks.includes(i) && i !== stat.tail).slice(0, NET_SLOTS);
    if (stat.tail !== undefined && !r.picks.includes(stat.tail)) net.push(stat.tail); // its own slot, as in the static rule
    const picks = [...r.picks, ...net];
    const chosen = new Set(picks);
    return { picks, floor: csr.filter(({ i }) => !chosen.has(i)).map(({ i }) => i), interval: r.interval, truncated: r.truncated, net };
  }
  // the power-law csr-vec4 scout (a device quad build and a few products) comes last, in a slot past the cap
  const tail = opts.exhaustive ? undefined : tailScout(scouts, stats);
  const picks = (opts.exhaustive ? scouts : scouts.filter((x) => x !== tail).slice(0, cap)).map(({ i }) => i);
  const rest = all.filter(({ c, i }) => timeable(c, opts.exhaustive) && !picks.includes(i) && (opts.exhaustive || c.kernel.format !== 'csr'));
  if (opts.exhaustive) picks.push(...rest.map(({ i }) => i));
  else {
    // families first (a conversion each), then the CSR parameter neighbours (timing only), then more families and variants
    const others = byFamily(rest.filter(({ c }) => c.kernel.id !== DIA_TILED), Number.POSITIVE_INFINITY);
    const order = [...others.slice(0, FAMILY_SLOTS), ...neighbours(csr, scouts), ...others.slice(FAMILY_SLOTS)];
    const room = Math.max(0, cap - picks.length) + tiledInto(order, rest, opts.diagonalSlot === true);
    picks.push(...order.slice(0, room));
    if (tail) picks.push(tail.i);
  }
  const chosen = new Set(picks);
  return { picks, floor: csr.filter(({ i }) => !chosen.has(i)).map(({ i }) => i), tail: tail?.i };
}

/**
 * Put {@link DIA_TILED}'s first unpruned candidate (its default variant: all its variants have
 * one prediction) first into `order` (the other formats; the CSR scouts are already picked);
 * 1 (the extra slot) when it was put in and `extra` allows, else 0. O(rest).
 */
function tiledInto(order: number[], rest: readonly Indexed[], extra: boolean): number {
  const tiled = rest.find(({ c }) => c.kernel.id === DIA_TILED && !c.pruned);
  if (!tiled) return 0;
  order.unshift(tiled.i);
  return extra ? 1 : 0;
}

/**
 * Up to `room` of the other formats (`rest` in predicted order): the best variant of each family
 * first, then further variants, all within {@link SEPARATION} × the best prediction (the best
 * family always). O(rest).
 */
function byFamily(rest: readonly Indexed[], room: number): number[] {
  if (room <= 0 || rest.length === 0) return [];
  const best = Math.min(...rest.map(({ c }) => c.predicted));
  const near = rest.filter(({ c }, k) => k === 0 || c.predicted <= SEPARATION * best);
  const out: number[] = [];
  const families = new Set<string>();
  for (const { c, i } of near) {
    if (out.length >= room) return out;
    if (families.has(familyOf(c.kernel.id))) continue;
    families.add(familyOf(c.kernel.id));
    out.push(i);
  }
  const perKernel = new Map<string, number>();
  for (const i of out) perKernel.set(rest.find((x) => x.i === i)!.c.kernel.id, 1);
  for (const { c, i } of near) {
    if (out.length >= room) break;
    const n = perKernel.get(c.kernel.id) ?? 0;
    if (out.includes(i) || n >= PER_KERNEL) continue;
    perKernel.set(c.kernel.id, n + 1);
    out.push(i);
  }
  return out;
}
