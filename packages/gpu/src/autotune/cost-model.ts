/**
 * The cost model of the short-list: for one (kernel, parameters) pair and the matrix profile,
 * the storage it would take, the product work it predicts (traffic bytes × a kernel factor:
 * padding, idle lanes, uncoalesced threads, imbalance), the host preparation it needs, and —
 * when cheap statistics rule it out — why it is pruned. Factors are calibrated on the H100
 * sweeps of the bench set (bench/RESULTS.md, issues 16 and 20), never on the validation set.
 * The prediction orders and short-lists candidates; only the timed rounds decide.
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { AnySpmvKernel } from '../kernels/types';
import type { Candidate, PruneReason, PruneRules } from './candidates';
import { rowLengthBins } from './cost-terms';
import { bcsrBlocks, ellPartEntries, type MatrixProfile, paddedSlots } from './profile';

/** Lanes-per-row parameter names of each kernel family. */
const LANE_PARAM: Record<string, string> = { 'csr-vector': 'lanes', hybrid: 'lanes', sell: 'lanes', axc: 'thw', cmrs: 'lanes' };

/**
 * CSR kernels that re-lay the matrix out on the host at upload instead of reading the shared CSR
 * arrays (csr-vec4 pads every row to quads in JavaScript): their upload is a conversion.
 */
export const CSR_RELAYOUT: ReadonlySet<string> = new Set(['csr-vec4', 'csr-long']);

/**
 * Padded quad entries past which the device build is not assumed (one binding of 2 GiB, the
 * H100's and H200's limit, holds 2^29 four-byte words): larger layouts split over bindings and
 * are packed on the host.
 */
const DEVICE_QUADS_MAX = 2 ** 29;

/** CSR kernels that add a row-block table (one O(rows) host pass) to the shared CSR arrays. */
const CSR_ROW_BLOCKS: ReadonlySet<string> = new Set(['csr-adaptive', 'csr-balanced', 'csr-merge']);

/**
 * Traffic units (bytes × factor) one host-prepared byte costs, so that a preparation spread
 * over the expected products enters the predicted cost in product units. From the H100
 * (issue 16, bench/out/h100: never the validation set): products ran ≈ 4·10^-10 ms per unit
 * (csr-adaptive on stencil3d-160³, 0.166 ms), csr-vec4's padding and transfer ≈ 5·10^-6 ms per
 * host byte (the full-size 27-point stencil's upload grew by ≈ 1.5 s for ≈ 3.9·10^8 padded
 * bytes; power law 0.65 s) — about 200 MB/s, like the other JavaScript conversions.
 */
export const PREP_UNITS_PER_BYTE = 12500;

/**
 * csr-merge's time over csr-adaptive's on power-law rows (RSD > 150 %) and on other rows: H100,
 * session 12, bench power law 0.2100 / 0.2552 ms, uniform 2·10^6 × 16 0.3068 / 0.2810 ms
 * (bench/RESULTS.md).
 */
const MERGE_POWER_LAW_FACTOR = 0.82;
const MERGE_OTHER_FACTOR = 1.09;

/** Padded entries of csr-vec4 (Σ 4·⌈len/4⌉), cached per matrix: one O(rows) pass. */
const quadEntries = new WeakMap<CsrMatrix, number>();
function paddedQuadEntries(a: CsrMatrix): number {
  let n = quadEntries.get(a);
  if (n === undefined) {
    n = 0;
    for (let r = 0; r < a.rows; r++) n += 4 * Math.ceil((a.rowPtr[r + 1]! - a.rowPtr[r]!) / 4);
    quadEntries.set(a, n);
  }
  return n;
}

/**
 * Host bytes kernel `k` prepares before its upload: csr-vec4 its padded quads (8, 6 or 4 bytes
 * per padded entry by `pack`, quad pointers, per-row bases) plus, for the 16-bit modes, the
 * O(nnz) span check (and the value table); the row-block kernels one table pass over the rows;
 * the other CSR kernels nothing. Other formats: the converted layout (`estimatedBytes`).
 */
export function hostPrepBytes(a: CsrMatrix, k: AnySpmvKernel, params: Record<string, number>, estimatedBytes: number): number {
  const n = a.rows;
  const z = a.rowPtr[n]!;
  if (k.format !== 'csr') return estimatedBytes;
  if (CSR_ROW_BLOCKS.has(k.id)) return 4 * (n + 1);
  if (!CSR_RELAYOUT.has(k.id)) return 0;
  const pack = params.pack ?? 0;
  // pack 0 without interleaving is built on the device from the tuner's shared CSR upload
  // (kernels/csr4/quad-build.ts): the host computes only the quad pointers
  if (pack === 0 && !params.interleave && paddedQuadEntries(a) <= DEVICE_QUADS_MAX) return 4 * (n + 1);
  const perEntry = pack === 2 ? 4 : pack === 1 ? 6 : 8;
  const checks = pack === 0 ? 0 : pack === 1 ? 4 * z : 12 * z;
  return perEntry * paddedQuadEntries(a) + 4 * (n + 1) + (pack >= 1 ? 4 * n : 0) + checks;
}

/** What a layout stores and costs: slots (value + index each), a kernel factor, a prune reason. */
interface Terms {
  slots: number;
  factor: number;
  prune?: PruneReason;
}

/** A soft prune (the first reason wins). */
const soften = (t: Terms, reason: string): void => {
  t.prune ??= { reason, hard: false };
};

/** Prune an ELL-family layout by its padding ratio: soft past maxPadding, hard past maxPaddingHard. */
function padding(t: Terms, rules: PruneRules, what: string, ratio: number): void {
  if (ratio > rules.maxPaddingHard) t.prune ??= { reason: `${what} padding ${ratio.toFixed(1)} > ${rules.maxPaddingHard}: explodes`, hard: true };
  else if (ratio > rules.maxPadding) soften(t, `${what} padding ${ratio.toFixed(1)} > ${rules.maxPadding}`);
}

/** Idle lanes of the lanes-per-row kernels, and their prunes. */
function laneTerms(p: MatrixProfile, k: AnySpmvKernel, params: Record<string, number>, t: Terms): void {
  const s = p.stats;
  const laneName = LANE_PARAM[k.id];
  if (laneName === undefined) return;
  const L = params[laneName]!;
  const busy = Math.max(1, s.mean);
  t.factor *= (Math.ceil(busy / L) * L) / busy; // idle lanes in the last step of a row
  if (L > 2 * Math.max(2, s.p90)) soften(t, `${laneName} = ${L} > 2·max(2, p90 row length ${s.p90}): most lanes idle`);
  // row-contiguous layouts only: SELL and the hybrid's ELL part are coalesced across rows at any L
  if (L <= 2 && s.p50 >= 256 && (k.id === 'csr-vector' || k.id === 'cmrs')) soften(t, `${laneName} = ${L} with median row length ${s.p50} ≥ 256: long serial row walks`);
}

/**
 * Cost factor of `dia-tiled` per DIA slot (padding included), against csr-scalar's 1 per
 * non-zero on short rows. From the full-size H100 sweep of session 6 (issue 20; bench set,
 * never the validation set), its time per DIA slot over csr-scalar's time per non-zero:
 * 5-point 2000² (20.0 M slots, 20.0 M nnz) 0.109 / 0.197 ms → 0.55; 7-point 160³ (28.7 M
 * slots, 28.5 M nnz) 0.132 / 0.246–0.256 ms → 0.51–0.54; banded 2·10^6 b9 (no full-size
 * csr-scalar) through `dia` (factor 1.08): 0.091 / 0.184 ms × 1.08 → 0.53; 27-point 120³
 * through `dia`: 0.171 / 0.407 × 1.08 → 0.45. The largest, 0.55, is taken: at the bench set's
 * 0.1 scale (0.01–0.04 ms per product) launch latency narrows every gap, so the model should
 * not promise more than the full-size matrices showed.
 */
export const DIA_TILED_FACTOR = 0.55;

/** DIA, dia-tiled and HM (occupied diagonals and their fill) and BCSR (block fill). */
function structureTerms(a: CsrMatrix, p: MatrixProfile, k: AnySpmvKernel, params: Record<string, number>, rules: PruneRules, t: Terms): void {
  const s = p.stats;
  const n = Math.max(1, s.rows);
  const z = Math.max(1, s.nnz);
  if (k.id === 'bcsr') {
    const r = params.blockSize!;
    t.slots = bcsrBlocks(a, p, r) * r * r;
    const fill = z / Math.max(1, t.slots);
    // one column index per block, but on the H100 BCSR 2×2 ran 1.9× csr-adaptive on CI-like rows
    // and never won on the bench set (calibrated there, not on the validation set)
    t.factor *= 1.3;
    if (fill < rules.minBlockFill) soften(t, `BCSR ${r}×${r} block fill ${fill.toFixed(2)} < ${rules.minBlockFill}`);
    return;
  }
  const d = p.diagonals;
  const limit = params.maxDiagonals ?? 1024;
  if (!d || d.count > limit) {
    t.prune = { reason: `${s.occupiedDiagonals} occupied diagonals > the kernel's ${limit}`, hard: true };
    t.slots = n * s.occupiedDiagonals;
    return;
  }
  // the DIA layout (dia, dia-tiled) pads every diagonal to the full row count; HM stores only
  // the in-matrix part of each diagonal
  const padded = k.format === 'dia';
  t.slots = padded ? d.diaSlots : d.inMatrixSlots;
  const fill = padded ? d.fillRatio : d.diagonalFill;
  // dia, hm: no column indices, but per H100 slot 8–24 % slower than ELL on the bench set's
  // banded and stencil matrices; dia-tiled: see DIA_TILED_FACTOR
  t.factor *= k.id === 'dia-tiled' ? DIA_TILED_FACTOR : k.id === 'dia' ? 1.08 : 1.09;
  if (d.count > rules.maxDiagonals) soften(t, `${d.count} occupied diagonals > ${rules.maxDiagonals}`);
  else if (fill < rules.minDiagonalFill) soften(t, `diagonal fill ${fill.toFixed(2)} < ${rules.minDiagonalFill}`);
}

/** Slots and factor of one kernel family (the CSR family, COO, ELL family, SELL, hybrid, DIA/HM, BCSR, AXC/AXT). */
function familyTerms(a: CsrMatrix, p: MatrixProfile, k: AnySpmvKernel, params: Record<string, number>, rules: PruneRules, t: Terms): void {
  const s = p.stats;
  const n = Math.max(1, s.rows);
  const z = Math.max(1, s.nnz);
  const imbalance = 1 + s.rsdp / 400;
  switch (k.id) {
    case 'csr-scalar':
      // a thread per row: rows up to 8 entries cost no more than ELL's (H100 stencils: csr-scalar
      // within 5 % of ELL at rows of 5 and 7); longer rows walk uncoalesced
      t.factor *= imbalance * (1 + Math.max(0, Math.min(s.mean, 40) - 8) / 8);
      if (s.p50 >= 64) soften(t, `thread per row with median row length ${s.p50} ≥ 64: uncoalesced`);
      // power-law rows: a warp waits on its longest row (H100 bench class powerlaw-2000000: 9.3 ms, csr-adaptive 0.26 ms)
      if (s.rsdp > 150) soften(t, `thread per row with row-length RSD ${s.rsdp.toFixed(0)} % > 150 %: warps wait on the longest row`);
      break;
    case 'csr-vector':
      // lanes of one row read L consecutive 4-byte entries: below 8 lanes a 32-byte sector is
      // only partly used per load (issue 16, H100: lanes 2 was 2.7× slower than lanes 4 on rows of 27)
      t.factor *= imbalance * (1 + 0.5 * Math.max(0, 8 / params.lanes! - 1));
      break;
    case 'csr-adaptive':
      t.factor *= 1.1;
      break;
    case 'csr-vec4':
    case 'csr-long': // costed like csr-vec4 (same padded layout) until its own factor is measured
      vec4Terms(a, p, params, t);
      break;
    case 'csr-balanced':
      // equal entry slices: no row imbalance, but on the H100 it never won (bench classes:
      // 2.7–7× csr-adaptive on banded, stencil, uniform and power-law rows)
      t.factor *= 2.5;
      break;
    case 'csr-merge':
      // merge-path tiles: no row imbalance; relative to csr-adaptive's factor (1.1) by its H100 ratios
      t.factor *= 1.1 * (s.rsdp > 150 ? MERGE_POWER_LAW_FACTOR : MERGE_OTHER_FACTOR);
      break;
    case 'coo':
      t.slots = 1.5 * z; // row index per entry
      t.factor *= 1.2;
      break;
    case 'cmrs':
      t.factor *= 1.1 * imbalance;
      break;
    case 'ell':
    case 'ell-r':
    case 'sliced-ell':
    case 'sliced-ell-r':
    case 'sell':
      paddedTerms(p, k, params, rules, t);
      break;
    case 'hybrid': {
      const B = params.boundary! < 0 ? s.p33 : params.boundary!;
      const inEll = ellPartEntries(p, B);
      t.slots = n * B + (z - inEll);
      t.factor *= 1 + (z - inEll) / z; // the CSR part walks its rows with the same lane group
      if (inEll > 0) padding(t, rules, 'hybrid ELL part rows·B/entries', (n * B) / inEll);
      break;
    }
    case 'dia':
    case 'dia-tiled':
    case 'hm':
    case 'bcsr':
      structureTerms(a, p, k, params, rules, t);
      break;
    default:
      if (k.id.startsWith('ax')) axTerms(p, k, params, t);
  }
}

/**
 * csr-vec4: padded quads (8, 6 or 4 bytes per entry by `pack`, plus the gather), lanes over
 * quads. Factors from the H100 bench classes and the cilike / H10 CI runs (bench/out/h100,
 * issue 16; never the validation set): on long rows (≥ 64) 0.61–0.79× the best csr-vector;
 * on short rows about 1.2× csr-adaptive per padded slot (stencils 1.4–1.8× csr-adaptive, the
 * banded b9 0.83×), far worse on irregular rows (power law 2.2×).
 */
function vec4Terms(a: CsrMatrix, p: MatrixProfile, params: Record<string, number>, t: Terms): void {
  const s = p.stats;
  const padded = paddedQuadEntries(a);
  const pack = params.pack ?? 0;
  t.slots = (padded * (pack === 2 ? 8 : pack === 1 ? 10 : 12)) / 12; // traffic per slot is 12 bytes below
  t.factor *= s.mean >= 64 ? 0.7 : 1.2;
  if (s.rsdp > 100) t.factor *= 1 + s.rsdp / 100;
  // lanes walk quads: idle lanes in a row's last step above, serial walks below the lanes the
  // H100 preferred (≈ quads / 2, at most 32: 1 on rows of 5–9, 2 on rows of 16, 8–32 on rows of ~10^3)
  const L = params.lanes ?? 8;
  const quads = Math.max(1, s.mean / 4);
  t.factor *= (Math.ceil(quads / L) * L) / quads;
  const want = vec4LanesFor(s.mean);
  if (L < want) t.factor *= 1 + 0.25 * Math.log2(want / L);
  // the rows that hold the work: the p90 row, or on a long tail the rows holding the last 10 % of the entries
  const q = Math.ceil(Math.max(s.p90, entryQuantileLength(p, ENTRY_SHARE)) / 4);
  if (L > 2 * Math.max(2, q)) soften(t, `lanes = ${L} > 2·max(2, ${q} quads per row (p90 row, or the rows past ${100 * ENTRY_SHARE} % of the entries)): most lanes idle`);
}

/** Share of the stored entries below the row length that csr-vec4's lanes rule looks at ({@link entryQuantileLength}). */
const ENTRY_SHARE = 0.9;

/**
 * A lower bound of the row length below which `share` of the stored entries sit: the lower end
 * of the log2 row-length bin where the entries' running sum crosses `share` (0 when the empty
 * rows' bin does). On rows of one length it is at most that length; on a power law's long tail
 * it is far past the p90 row: on powerlaw-a2.6 (rows of 3–500, p90 12) 90 % of the entries sit
 * in rows below ~78, and csr-vec4 with 8 lanes — soft-pruned there by the p90 row's 3 quads — was
 * the H100's fastest kernel (0.089 ms against csr-adaptive's 0.098, session 9). O(bins).
 * @example entryQuantileLength(profileMatrix(a, 1024), 0.9)
 */
export function entryQuantileLength(p: MatrixProfile, share: number): number {
  const { entries } = rowLengthBins(p);
  let total = 0;
  for (let b = 0; b < entries.length; b++) total += entries[b] ?? 0;
  let sum = 0;
  for (let b = 0; b < entries.length; b++) {
    sum += entries[b] ?? 0;
    if (sum >= share * total) return b === 0 ? 0 : 2 ** (b - 1);
  }
  return 0;
}

/**
 * The csr-vec4 lanes the H100 preferred for rows of `mean` entries: ≈ quads / 2 as a power of
 * two, 1 to 32 (bench classes and CI runs, issue 16). O(1).
 * @example vec4LanesFor(16) // 2
 */
export function vec4LanesFor(mean: number): number {
  return Math.min(32, Math.max(1, 2 ** Math.floor(Math.log2(Math.max(1, mean / 8)))));
}

/**
 * The ELL family and SELL: slots with padding (sliced and SELL slots from the device sums or the
 * sampled estimate). Factors calibrated on the H100 sweeps of the bench set (bench/RESULTS.md,
 * issue 16; never on the validation set): chunks of 32–64 rows ran 2–12 % slower than plain ELL
 * per slot, chunks of 8 rows 26–40 % slower.
 */
function paddedTerms(p: MatrixProfile, k: AnySpmvKernel, params: Record<string, number>, rules: PruneRules, t: Terms): void {
  const s = p.stats;
  const z = Math.max(1, s.nnz);
  const C = params.sliceHeight ?? params.C;
  if (k.id === 'ell' || k.id === 'ell-r') t.slots = Math.max(1, s.rows) * s.max;
  else if (k.id === 'sell') t.slots = paddedSlots(p, C!, params.sigmaChunks === 0 ? 1 : C! * params.sigmaChunks!);
  else t.slots = paddedSlots(p, C!, 1);
  if (k.id.endsWith('-r')) t.factor *= (z + 0.1 * t.slots) / t.slots; // reads stop at each row's length
  if (C !== undefined) t.factor *= C >= 32 ? 1.08 : 1.3;
  // a thread per row (lanes < 4) waits for the longest row of its warp and walks long rows
  // serially (CI-like rows of ~800 on the H100: ELL-R and SELL lanes 1 > 3.5× AXC)
  if ((params.lanes ?? 1) < 4) t.factor *= (1 + s.rsdp / 400) * (1 + Math.min(s.mean, 512) / 128);
  const what = k.id === 'sell' ? `SELL-${C}-${params.sigmaChunks === 0 ? 1 : C! * params.sigmaChunks!}` : k.id.startsWith('sliced') ? 'sliced-ELL' : 'ELL rows·max/nnz';
  padding(t, rules, what, t.slots / z);
}

/**
 * AXC/AXT (seed 004): padded bricks/tiles plus a partials pass. Variant factors calibrated on the
 * H100 sweeps of the bench set (bench/RESULTS.md, issue 16; never on the validation set): on rows
 * of ~10 with a power-law tail AXT-CH1 with 1024-entry bricks and gathers won (AXC 2.2×, AXT-UH1
 * 2.8× slower, 256-entry bricks 1.9×); on CI-like rows of ~800 AXC without gathers won (with
 * gathers 1.9×, AXT-UH1 2.4×, AXT-CH1 3.3× slower).
 */
function axTerms(p: MatrixProfile, k: AnySpmvKernel, params: Record<string, number>, t: Terms): void {
  const long = p.stats.mean >= 64;
  t.slots = 1.3 * Math.max(1, p.stats.nnz);
  t.factor *= 1.15;
  if (k.id === 'axc') {
    if (params.gather !== undefined) t.factor *= long === (params.gather === 0) ? 1 : 1.8;
    return;
  }
  t.factor *= long ? 2.5 : k.id === 'axtch1' ? 1 : 2;
  if (params.th !== undefined && params.th !== 4 && params.th !== 8) t.factor *= 1.1;
  if (params.bs !== undefined) t.factor *= params.bs >= 1024 ? 1 : params.bs >= 512 ? 1.3 : 1.8;
  if (params.gather === 0) t.factor *= 1.2;
}
/**
 * Estimate, predict and prune one candidate. The predicted cost is traffic bytes (values,
 * indices and x gathers per stored slot, y per row) times a kernel factor (imbalance, idle
 * lanes, uncoalesced threads), plus conversion bytes spread over the expected products.
 */
export function assessCandidate(a: CsrMatrix, p: MatrixProfile, k: AnySpmvKernel, params: Record<string, number>, rules: PruneRules, products: number): Omit<Candidate, 'kernel' | 'params' | 'conversionKey' | 'prediction'> {
  const n = Math.max(1, p.stats.rows);
  const z = Math.max(1, p.stats.nnz);
  const t: Terms = { slots: z, factor: 1 };
  laneTerms(p, k, params, t);
  familyTerms(a, p, k, params, rules, t);
  const estimatedBytes = k.format === 'csr' ? 8 * z + 4 * (n + 1) : 8 * t.slots + 4 * (n + 1);
  // the CSR kernels split over bindings and the matrix is already CSR: never pruned for size here
  // (their `supports` and the upload decide), so that the floor of the search always exists
  if (estimatedBytes > rules.memoryBytes && k.format !== 'csr') t.prune = { reason: `estimated ${(estimatedBytes / 2 ** 20).toFixed(0)} MiB > memory limit ${(rules.memoryBytes / 2 ** 20).toFixed(0)} MiB`, hard: true };
  const traffic = 12 * t.slots + 8 * n;
  const prepBytes = hostPrepBytes(a, k, params, estimatedBytes);
  // other formats keep the earlier light weight (4 units per converted byte: the timing order
  // only); the CSR kernels' own preparation weighs what it costs on the H100 against the products
  const conversion = ((k.format === 'csr' ? PREP_UNITS_PER_BYTE : 4) * prepBytes) / Math.max(1, products);
  return { estimatedBytes, predicted: traffic * t.factor + conversion, work: traffic * t.factor, prepBytes, slots: t.slots, factor: t.factor, pruned: t.prune };
}
