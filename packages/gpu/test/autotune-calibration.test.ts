/**
 * The calibrated cost model (issue 16): the micro-benchmark's fit recovers known costs from an
 * injected timer, the prediction of the kernels it measures follows the fit, the calibrated
 * short-list keeps every candidate the model cannot separate from the predicted best (and only
 * those), loaded calibrations are checked, and the device probes run end to end on this
 * machine's adapter (lavapipe: the mechanics only — its costs say nothing of a GPU).
 */
import { type CsrMatrix, csrSpmv, generators as g } from '@gpusparse/formats';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { anchorPrediction, autotune, type Calibration, type Candidate, calibrate, calibrationFor, calibrationKey, clearCalibrationMemory, calibrationProbes, checkCalibration, defaultPruneRules, deviceProbeTimer, entryMs, enumerateCandidates, familyOf, fitCalibration, floorKernel, getKernel, inseparable, kernels, NET_SLOTS, PROBE_LANES, PROBE_ROW_LENGTHS, type Probe, predictMs, WINDOW_COLS, probeMatrix, probeRounds, reportTable, profileMatrix, shortList } from '../src/index';
import { modelRulesOut, prepEstimateMs, UNSEEN_FORMAT_FACTOR } from '../src/autotune/admission';
import { ANCHOR_STATE_MAX } from '../src/autotune/cost-terms';
import { FAMILY_CAP } from '../src/autotune/shortlist';
import { prewarmProbes, sameEntries } from '../src/autotune/calibrate';
import { uploadCsrArrays } from '../src/kernels/csr/csr-device';
import { readF32 } from '../src/memory/readback';
import { uploadF32, validateCsrIndices } from '../src/memory/upload';
import { testContext } from './helpers';

afterAll(async () => (await testContext()).dispose());

/** A made-up device: 2 µs per dispatch; per entry 1 ns × (lanes idle in a row's last step) × 1.5 for a thread per row on rows past 8; gathers 1.5× (window) and 3× (random). */
const LAUNCH = 0.002;
function trueEntryMs(r: number, l: number): number {
  const idle = (Math.ceil(r / l) * l) / r;
  return 1e-6 * idle * (l === 1 && r > 8 ? 1.5 : 1);
}
const fakeTimer = async (probes: readonly Probe[]) =>
  probes.map((p, i) => (i === 0 ? LAUNCH : LAUNCH + p.rows * p.rowLength * trueEntryMs(p.rowLength, p.lanes) * (p.locality === 'window' ? 1.5 : p.locality === 'random' ? 3 : 1)));

describe('calibration fit (injected timer, no device)', () => {
  it('recovers the launch cost, the per-entry grid and the gather factors it was fed', async () => {
    const cal = await calibrate(undefined, 'fake', { nnz: 1 << 16, timer: fakeTimer });
    expect(cal.launchMs).toBe(LAUNCH);
    PROBE_ROW_LENGTHS.forEach((r, i) => {
      PROBE_LANES.forEach((l, j) => {
        expect(cal.perEntryMs[i]![j]).toBeCloseTo(trueEntryMs(r, l), 12);
      });
    });
    expect(cal.gather.window).toBeCloseTo(1.5, 6);
    expect(cal.gather.random).toBeCloseTo(3, 6);
    expect(checkCalibration(cal, 'fake')).toBeUndefined();
    // between probed row lengths: log-linear, between the neighbours' costs
    const mid = entryMs(cal, 8, 4);
    expect(mid).toBeGreaterThanOrEqual(Math.min(trueEntryMs(4, 4), trueEntryMs(16, 4)));
    expect(mid).toBeLessThanOrEqual(Math.max(trueEntryMs(4, 4), trueEntryMs(16, 4)));
  });

  it('the probe rounds give each probe its own time although every other round runs in reverse order', async () => {
    const asked: number[][] = [];
    const time = async (order: readonly number[]) => {
      asked.push([...order]);
      return order.map((i) => 1 + i); // probe i always takes 1 + i ms
    };
    const ms = await probeRounds(time, 5, 3, 2);
    expect(ms).toEqual([1, 2, 3, 4, 5]);
    expect(asked[1]).toEqual([4, 3, 2, 1, 0]);
  });

  it('the gather probes hold a quarter of the grid probes\' entries (the fit is a ratio; their random columns are the dearest host work)', () => {
    const probes = calibrationProbes(1 << 16);
    const grid = probes.filter((q) => q.locality === 'band' && q.rows > 1);
    expect(grid.every((q) => q.rows * q.rowLength === 1 << 16)).toBe(true);
    const far = probes.filter((q) => q.locality !== 'band');
    expect(far.map((q) => q.locality)).toEqual(['window', 'random']);
    expect(far.every((q) => q.rows * q.rowLength === 1 << 14 && q.cols >= 2 * WINDOW_COLS)).toBe(true);
  });

  it('a grid probe that did not time takes its row length\'s most expensive cost; a failed launch probe or row length is refused, naming it', async () => {
    const probes = calibrationProbes(1 << 12);
    const ms = await fakeTimer(probes);
    const gap = [...ms];
    gap[3] = Number.NaN; // rows of 1, 4 lanes
    const cal = fitCalibration(probes, gap, 'k', 0);
    expect(cal.perEntryMs[0]![2]).toBeCloseTo(Math.max(...PROBE_LANES.filter((l) => l !== 4).map((l) => trueEntryMs(1, l))), 12);
    const noLaunch = [...ms];
    noLaunch[0] = 0;
    expect(() => fitCalibration(probes, noLaunch, 'k', 0)).toThrow(/probe 0 \(rows of 1, a thread per row, band, the launch cost\) timed 0 ms/);
    const noRow = ms.map((t, i) => (probes[i]!.rowLength === 64 && probes[i]!.locality === 'band' ? Number.NaN : t));
    expect(() => fitCalibration(probes, noRow, 'k', 0)).toThrow(/no probe of rows of 64 timed/);
    expect(() => fitCalibration(probes, ms.slice(1), 'k', 0)).toThrow(/expected 39 probe times, got 38/);
  });

  it('a loaded calibration of another key, version or shape is refused', async () => {
    const cal = await calibrate(undefined, 'a', { nnz: 1 << 12, timer: fakeTimer });
    expect(checkCalibration(cal, 'b')).toMatch(/another adapter/);
    expect(checkCalibration({ ...cal, version: 0 }, 'a')).toMatch(/version 0/);
    expect(checkCalibration({ ...cal, perEntryMs: [[1]] }, 'a')).toMatch(/grid/);
    expect(checkCalibration({ ...cal, launchMs: -1 }, 'a')).toMatch(/launchMs -1/);
  });

  it('the probe matrices hold their row lengths and localities', () => {
    const band = probeMatrix({ rowLength: 16, lanes: 4, locality: 'band', rows: 1000, cols: 1000 });
    expect(band.rowPtr[1000]).toBe(16000);
    for (let k = 0; k < 16000; k++) expect(Math.abs(band.colIdx[k]! - Math.floor(k / 16))).toBeLessThanOrEqual(8);
    // every band probe of one entry count reads the same columns: generated once, shared
    const probes = calibrationProbes(1 << 12).filter((q) => q.locality === 'band' && q.rows > 1);
    const first = probeMatrix(probes[0]!);
    for (const q of probes) {
      const m = probeMatrix(q, undefined, { colIdx: first.colIdx, values: first.values });
      expect(m.colIdx).toBe(first.colIdx);
      expect(m.rowPtr[m.rows]).toBe(1 << 12);
      expect(m.rowPtr[1]).toBe(q.rowLength);
      expect(Math.max(...m.colIdx)).toBeLessThan(m.cols);
    }
    const far = probeMatrix({ rowLength: 16, lanes: 4, locality: 'random', rows: 1000, cols: 100000 });
    expect(Math.max(...far.colIdx)).toBeGreaterThan(50000);
  });
});

describe('calibrated prediction and short-list (no device)', () => {
  const a: CsrMatrix = g.banded(20000, 8, 7, { seed: 3 }); // rows of 16 (fewer at the edges), bandwidth 8
  const p = profileMatrix(a, 1024);

  it('csr-vector and csr-scalar are predicted from the measured grid (static factor not applied)', async () => {
    const cal = await calibrate(undefined, 'fake', { nnz: 1 << 16, timer: fakeTimer });
    const vec = getKernel('csr-vector');
    const pr = predictMs(cal, p, vec, { ...vec.defaults, lanes: 4 }, p.stats.nnz, 7);
    // edge rows are shorter than 16: the prediction lies between the rows-of-16 cost and a little above
    const flat = LAUNCH + p.stats.nnz * trueEntryMs(16, 4);
    expect(pr.ms / flat).toBeGreaterThan(0.97);
    expect(pr.ms / flat).toBeLessThan(1.1);
    expect(pr.low).toBeCloseTo(pr.ms / 1.3, 12);
    expect(pr.high).toBeCloseTo(pr.ms * 1.3, 12);
  });

  it('keeps exactly the candidates whose optimistic objective reaches the best pessimistic one', () => {
    const c = (ms: number, spread: number, prepBytes = 0) => ({ c: { prediction: { ms, low: ms / spread, high: ms * spread }, prepBytes } as unknown as Candidate });
    const pool = [c(1, 1.3), c(1.6, 1.3), c(1.8, 1.6), c(3, 1.6), c(1.2, 1.6, 1e6)].map((x, i) => ({ ...x, i }));
    // best high 1.3: 1.6/1.3 = 1.23 in, 1.8/1.6 = 1.125 in, 3/1.6 = 1.875 out; the prepared one in at 10^4 products
    expect(inseparable(pool, { products: 1e4, prepMs: (x) => x.prepBytes * 1e-6 })).toEqual([0, 4, 1, 2]);
    // at 10 products its 1 ms preparation outweighs: best high 13 ms, its low 7.5 + 1 → still in; at 1 product out
    expect(inseparable(pool, { products: 1, prepMs: (x) => x.prepBytes * 1e-6 })).not.toContain(4);
  });

  it('the calibrated short-list: the CSR floor first, then the inseparable candidates, a clearly slower kernel off it', async () => {
    const cal = await calibrate(undefined, 'fake', { nnz: 1 << 16, timer: fakeTimer });
    const list = enumerateCandidates(a, p, kernels, { ...defaultPruneRules, maxPerKernel: 3 }, 1e5).map((x) => (x.pruned?.hard ? x : { ...x, prediction: predictMs(cal, p, x.kernel, x.params, x.slots, x.factor) }));
    const rule = { products: 1e5, prepMs: () => 0 };
    const r = shortList(list, p.stats, { maxTimed: 64, exhaustive: false, interval: rule });
    expect(list[r.picks[0]!]!.kernel.id).toBe(floorKernel(p.stats).kernel); // the CSR floor (rows of 16: csr-vector)
    const near = new Set(inseparable(list.map((x, i) => ({ c: x, i })).filter(({ c }) => !c.pruned), rule));
    const own = r.picks.slice(0, r.picks.length - r.net!.length);
    for (const i of own.slice(1)) expect(near.has(i)).toBe(true);
    // every inseparable candidate is on it, but for a non-CSR family past FAMILY_CAP kernels (each costs a conversion before any is timed)
    const famCount = (f: string) => own.filter((j) => familyOf(list[j]!.kernel.id) === f).length;
    for (const i of near) if (!own.includes(i)) expect(famCount(familyOf(list[i]!.kernel.id))).toBeGreaterThanOrEqual(FAMILY_CAP);
    for (const f of new Set(own.map((j) => familyOf(list[j]!.kernel.id)))) if (f !== 'csr') expect(famCount(f)).toBeLessThanOrEqual(FAMILY_CAP);
    // the safety net: the static rule's picks the interval left out, after it, at most NET_SLOTS
    const statics = shortList(list, p.stats, { maxTimed: 64, exhaustive: false }).picks;
    expect(r.net!.length).toBeLessThanOrEqual(NET_SLOTS);
    for (const i of r.net!) {
      expect(statics).toContain(i);
      expect(own).not.toContain(i);
    }
    expect(r.net!.length).toBe(Math.min(NET_SLOTS, statics.filter((i) => !own.includes(i)).length));
    expect(r.interval).toBeGreaterThan(1);
    // the CSR kernels first (one variant each: they need no conversion), then kernel diversity:
    // the other families in the picks' order appear before any repeat of a family
    const csrHead = own.findIndex((i) => list[i]!.kernel.format !== 'csr');
    const head = own.slice(0, csrHead < 0 ? own.length : csrHead).map((i) => list[i]!.kernel.id);
    expect(new Set(head).size).toBe(head.length);
    const fams = own.slice(head.length).map((i) => familyOf(list[i]!.kernel.id)).filter((f) => f !== 'csr'); // further CSR variants come last
    const firstRepeat = fams.findIndex((f, k) => fams.indexOf(f) < k);
    if (firstRepeat > 0) expect(new Set(fams.slice(0, firstRepeat))).toEqual(new Set(fams));
    const capped = shortList(list, p.stats, { maxTimed: 3, exhaustive: false, interval: rule });
    expect(capped.picks.slice(0, 3)).toEqual(own.slice(0, 3));
    expect(capped.truncated).toBe(r.interval! > capped.picks.length - capped.net!.length);
    const lanes32 = list.findIndex((x) => x.kernel.id === 'csr-vector' && x.params.lanes === 32);
    if (lanes32 >= 0 && !list[lanes32]!.pruned) expect(near.has(lanes32)).toBe(false); // half its lanes idle on rows of 16: 2× the cost
  });
});

describe('calibrated short-list: the CSR kernels on the shared upload (no device)', () => {
  // rows of 16: with the made-up device, csr-adaptive and csr-vec4 are within the model's reach of the csr-vector floor
  const a: CsrMatrix = g.banded(20000, 8, 7, { seed: 3 });
  const p = profileMatrix(a, 1024);

  it('puts the best variant of each inseparable CSR kernel right after the floor, the shared-upload ones past maxTimed', async () => {
    const cal = await calibrate(undefined, 'fake', { nnz: 1 << 16, timer: fakeTimer });
    const list = enumerateCandidates(a, p, kernels, { ...defaultPruneRules, maxPerKernel: 3 }, 1e5).map((x) => (x.pruned?.hard ? x : { ...x, prediction: predictMs(cal, p, x.kernel, x.params, x.slots, x.factor) }));
    const rule = { products: 1e5, prepMs: () => 0 };
    const near = inseparable(list.map((x, i) => ({ c: x, i })).filter(({ c }) => !c.pruned), rule);
    const floor = floorKernel(p.stats).kernel;
    // the model's best variant of each other CSR kernel it cannot separate (csr-merge only on power-law rows, csr-balanced never)
    const want: number[] = [];
    const scouted = (id: string) => id !== 'csr-balanced' && (id !== 'csr-merge' || p.stats.rsdp > 150);
    for (const i of near) {
      const id = list[i]!.kernel.id;
      if (list[i]!.kernel.format === 'csr' && id !== floor && scouted(id) && !want.some((j) => list[j]!.kernel.id === id)) want.push(i);
    }
    expect(want.length).toBeGreaterThanOrEqual(2); // the case this test is about: several CSR kernels in reach
    const r = shortList(list, p.stats, { maxTimed: 2, exhaustive: false, interval: rule });
    expect(list[r.picks[0]!]!.kernel.id).toBe(floor);
    expect(r.picks.slice(1, 1 + want.length)).toEqual(want);
    // csr-vec4 / csr-long re-lay the matrix out (a conversion): they count against maxTimed; the others do not
    const shared = want.filter((i) => !['csr-vec4', 'csr-long'].includes(list[i]!.kernel.id)).length;
    expect(shared).toBeGreaterThanOrEqual(1);
    expect(r.picks.length - r.net!.length).toBe(Math.min(r.interval!, 2 + shared));
    expect(r.picks.map((i) => list[i]!.kernel.id)).not.toContain('csr-balanced');
  });
});

describe('admission with the calibrated model (no device)', () => {
  const pred = (ms: number, spread: number) => ({ ms, low: ms / spread, high: ms * spread });
  const cand = (id: string, ms: number, spread: number) => ({ kernel: getKernel(id), prediction: pred(ms, spread) }) as unknown as Candidate;

  it('anchors predictions on the first candidate as a fixed cost per dispatch and refuses only what cannot beat it even optimistically', () => {
    const live = [{ c: cand('csr-scalar', 0.1, 1.3), samples: [0.2] }] as never; // measured 0.1 ms over its prediction: +0.1 ms a dispatch
    const near = cand('ell', 0.12, 1.6); // anchored 0.22, optimistic 0.1375 ms < 0.2
    const far = cand('ell', 0.4, 1.6); // anchored 0.5, optimistic 0.3125 ms > 0.2
    expect(modelRulesOut({ live, products: 1000 }, near, 0)).toBeUndefined();
    expect(modelRulesOut({ live, products: 1000 }, far, 0)).toMatch(/at best 0\.3125 ms a product .*measured 0\.2000 against predicted 0\.1000 ms.*> the first's measured 0\.2000 ms/);
    // predicted at the floor's own 0.2 ms: as a factor (× 2, optimistic 0.25 ms) it was refused; as a fixed cost (0.3, optimistic 0.1875 ms) it is timed
    expect(modelRulesOut({ live, products: 1000 }, cand('ell', 0.2, 1.6), 0)).toBeUndefined();
    // two dispatches pay the fixed cost twice: COO at 0.15 → 0.35, optimistic 0.219 ms > 0.2
    expect(modelRulesOut({ live, products: 1000 }, cand('coo', 0.15, 1.6), 0)).toMatch(/at best 0\.218\d ms/);
    // preparation counts: (0.2 − 0.1375) ms × 1000 products of gain does not pay 70 ms of conversion
    expect(modelRulesOut({ live, products: 1000 }, near, 70)).toMatch(/~70\.0 ms preparation/);
    expect(modelRulesOut({ live, products: 1000 }, {} as Candidate, 0)).toBeUndefined(); // no prediction: never refused here
  });

  it('anchorPrediction shifts by the anchor\'s excess per dispatch, keeps the spread, and never goes below a quarter of the prediction', () => {
    const anchor = { prediction: pred(0.1, 1.3), passes: 1, ms: 0.13 };
    const one = anchorPrediction(pred(0.05, 1.6), 1, anchor);
    expect(one.ms).toBeCloseTo(0.08, 12);
    expect(one.high / one.ms).toBeCloseTo(1.6, 12);
    expect(one.ms / one.low).toBeCloseTo(1.6, 12);
    expect(anchorPrediction(pred(0.05, 1.6), 2, anchor).ms).toBeCloseTo(0.11, 12);
    expect(anchorPrediction(pred(0.05, 1.6), 2, { ...anchor, passes: 2 }).ms).toBeCloseTo(0.08, 12);
    // the anchor ran faster than predicted: lowered, but at most to a quarter
    expect(anchorPrediction(pred(0.2, 1.6), 1, { ...anchor, ms: 0.06 }).ms).toBeCloseTo(0.16, 12);
    expect(anchorPrediction(pred(0.02, 1.6), 1, { ...anchor, ms: 0.01 }).ms).toBeCloseTo(0.005, 12);
    // an anchor far past any GPU state (16× its prediction): only ANCHOR_STATE_MAX × its prediction is carried over
    expect(anchorPrediction(pred(0.05, 1.6), 1, { ...anchor, ms: 1.6 }).ms).toBeCloseTo(0.05 + (ANCHOR_STATE_MAX - 1) * 0.1, 12);
  });

  it('a dense row that serialises the floor (csr-adaptive 16× its prediction, session-9 H100) does not rule AXT-CH1 out', () => {
    // prev/s9-dev/final3/tune-val.json, densrow-100000-8: csr-adaptive predicted 0.0182 ms, probed 0.2903 ms;
    // axtch1 predicted 0.0305 ms (spread 1.6), measured 0.0361 ms in the sweep
    const live = [{ c: cand('csr-adaptive', 0.0182, 1.6), samples: [0.2903] }] as never;
    expect(modelRulesOut({ live, products: 1000 }, cand('axtch1', 0.0305, 1.6), 0)).toBeUndefined();
    // within the state's range the anchor still rules out what cannot win: 7× its prediction
    const warm = [{ c: cand('csr-adaptive', 0.0182, 1.6), samples: [0.1274] }] as never;
    expect(modelRulesOut({ live: warm, products: 1000 }, cand('coo', 0.6, 1.6), 0)).toMatch(/calibrated model rules it out/);
  });
});

describe('the calibration store', () => {
  it('calibrates once, keeps it in the process and beside the tuning cache, reloads it, and replaces an unusable file with a warning', async () => {
    const ctx = await testContext();
    const dir = mkdtempSync(join(tmpdir(), 'gpusparse-cal-'));
    const cache = join(dir, 'tune.json');
    const warnings: string[] = [];
    const warn = (m: string) => warnings.push(m);
    let runs = 0;
    const timer = async (ps: readonly Probe[]) => {
      runs++;
      return fakeTimer(ps);
    };
    clearCalibrationMemory();
    const first = await calibrationFor(ctx, true, cache, warn, timer);
    expect(first?.source).toBe('run');
    expect(first?.cal.key).toBe(calibrationKey(ctx));
    expect(existsSync(join(dir, 'calibration.json'))).toBe(true);
    expect((await calibrationFor(ctx, true, cache, warn, timer))?.source).toBe('cache'); // memory
    clearCalibrationMemory();
    const loaded = await calibrationFor(ctx, true, cache, warn, timer);
    expect(loaded?.source).toBe('cache'); // the file
    expect(loaded?.cal.perEntryMs).toEqual(first?.cal.perEntryMs);
    expect(runs).toBe(1);
    clearCalibrationMemory();
    writeFileSync(join(dir, 'calibration.json'), JSON.stringify({ [calibrationKey(ctx)]: { ...first!.cal, launchMs: 'x' } }));
    expect((await calibrationFor(ctx, true, cache, warn, timer))?.source).toBe('run');
    expect(warnings.join('\n')).toMatch(/cached calibration .* is unusable \(launchMs x: expected a finite time > 0\); calibrating again/);
    // off: false, or a software adapter by default (this machine's lavapipe)
    expect(await calibrationFor(ctx, false, cache, warn, timer)).toBeUndefined();
    expect(await calibrationFor(ctx, undefined, cache, warn, timer)).toBeUndefined();
    // a probe set that cannot be fitted: a warning and the static model, not a failed tuning
    clearCalibrationMemory();
    const broken = await calibrationFor(ctx, true, false, warn, async (ps) => ps.map(() => Number.NaN));
    expect(broken).toBeUndefined();
    expect(warnings.at(-1)).toMatch(/the calibration failed \(calibration: probe 0 .* timed NaN ms.*\); using the static cost model/);
    // the tuning cache off (--no-cache) still keeps the adapter's calibration beside the default cache path
    clearCalibrationMemory();
    const envDir = mkdtempSync(join(tmpdir(), 'gpusparse-cal-env-'));
    const before = process.env.GPUSPARSE_CACHE_DIR;
    process.env.GPUSPARSE_CACHE_DIR = envDir;
    try {
      expect((await calibrationFor(ctx, true, false, warn, timer))?.source).toBe('run');
      expect(existsSync(join(envDir, 'calibration.json'))).toBe(true);
    } finally {
      if (before === undefined) delete process.env.GPUSPARSE_CACHE_DIR;
      else process.env.GPUSPARSE_CACHE_DIR = before;
      rmSync(envDir, { recursive: true, force: true });
    }
    clearCalibrationMemory();
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('calibration on the device (mechanics)', () => {
  it('asks for the probes\' six pipelines ahead on a hardware adapter (none on a software one), so that the probes compile nothing on their path', async () => {
    const ctx = await testContext();
    const probes = calibrationProbes(1 << 12);
    expect(prewarmProbes(ctx, probes).asked).toBe(0); // this machine's lavapipe: the compiles would share its cores
    // the same device presented as a hardware adapter
    const hw = Object.create(ctx, { adapterInfo: { value: { vendor: 'test-gpu', architecture: '', device: 'hardware', description: '' } } }) as typeof ctx;
    const { asked, done } = prewarmProbes(hw, probes);
    expect(asked).toBe(PROBE_LANES.length); // csr-scalar and csr-vector at 2, 4, 8, 16, 32 lanes
    await done;
    const compiled = ctx.pipelines.compiled;
    for (const lanes of PROBE_LANES) {
      const k = getKernel(lanes === 1 ? 'csr-scalar' : 'csr-vector');
      ctx.pipelines.get(k.pipelineSpec!({ ...k.defaults, ...(lanes === 1 ? {} : { lanes }) }, ctx.caps));
    }
    expect(ctx.pipelines.compiled).toBe(compiled);
  }, 60_000);


  it('a band probe of another row length shares the first one\'s column and value buffers (only its row pointers sent) and multiplies as a full upload', async () => {
    const ctx = await testContext();
    const nnz = 1 << 12;
    const [p16, p4, p1] = [16, 4, 1].map((r) => calibrationProbes(nnz).find((q) => q.locality === 'band' && q.rows > 1 && q.rowLength === r && q.lanes === 1)!); // not the launch probe (one row of 1)
    const a16 = probeMatrix(p16!);
    const base = uploadCsrArrays(ctx, a16, 'test');
    const x = Float64Array.from({ length: a16.cols }, (_, i) => Math.fround(((i * 7) % 13) - 6));
    const dx = uploadF32(ctx, x, 'x');
    for (const p of [p4!, p1!]) {
      const a = probeMatrix(p, undefined, { colIdx: a16.colIdx, values: a16.values });
      const s = sameEntries(ctx, base, a);
      expect(s.blocks[0]!.colIdx).toBe(base.blocks[0]!.colIdx);
      expect(s.blocks[0]!.values).toBe(base.blocks[0]!.values);
      expect(s.deviceBytes).toBeLessThanOrEqual(4 * (a.rows + 1) + 256); // the row pointers only (16·nnz bytes before)
      expect(s.unsorted).toEqual(validateCsrIndices(a, 'test')); // rows of 1: none; rows of 4: entry 1 repeats column 0
      const k = getKernel('csr-vector');
      const h = k.upload(ctx, a, { lanes: 4 }, { sharedCsr: s });
      const dy = ctx.buffers.acquire(4 * a.rows, undefined, 'y');
      k.encode(ctx, h, dx, dy);
      const y = await readF32(ctx, dy, a.rows);
      const want = csrSpmv(a, x);
      for (let i = 0; i < a.rows; i++) expect(y[i]).toBeCloseTo(want[i]!, 3);
      h.dispose();
      dy.dispose();
      s.release();
      expect(s.holders).toBe(0);
    }
    expect(base.holders).toBe(1); // each variant held the base and let it go
    base.release();
    dx.dispose();
  }, 60_000);

  it('the probes run and fit to finite positive costs; autotune with a given calibration reports predictions', async () => {
    const ctx = await testContext();
    const cal: Calibration = await calibrate(ctx, 'device', { nnz: 1 << 12, timer: deviceProbeTimer(ctx, 2, 2) });
    expect(checkCalibration(cal, 'device')).toBeUndefined();
    const a = g.banded(3000, 4, 4, { seed: 9 });
    const r = await autotune(ctx, a, { cache: false, calibrate: cal, expectedProducts: 1000, warn: () => {} });
    expect(r.report.calibration?.source).toBe('given');
    expect(r.report.calibration?.interval).toBeGreaterThanOrEqual(1);
    const timed = r.report.trials.filter((t) => t.status === 'timed');
    expect(timed.length).toBeGreaterThan(0);
    for (const t of timed) expect(t.predictedMs).toBeGreaterThan(0);
    expect(reportTable(r.report)).toMatch(/cost model: calibration given; \d+ candidates inseparable from the predicted best/);
    const off = await autotune(ctx, a, { cache: false, calibrate: false, expectedProducts: 1000, warn: () => {} });
    expect(off.report.calibration?.source).toBe('off');
    expect(reportTable(off.report)).toMatch(/cost model: static/);
  }, 120_000);
});

describe('the admission\'s estimate of a host conversion (no device)', () => {
  const session = (rate: number, seen: string[]) =>
    ({ live: [], convMsPerByte: rate, conv: { onDevice: () => false, hostFormatSeen: (f: string) => seen.includes(f), estimateMs: (c: Candidate, r: number) => c.estimatedBytes * r } }) as never;
  const cand = (id: string) => ({ kernel: getKernel(id), estimatedBytes: 1e6, conversionKey: id, prepBytes: 0 }) as unknown as Candidate;

  it(`a format not yet converted in the run is estimated at ${UNSEEN_FORMAT_FACTOR}× the dearest measured rate; a converted one at the rate; none measured: the prior`, () => {
    // session 9, cilike-6000-1000: BCSR at CMRS's 0.94 ms/MB (~63 ms) took 153 ms and ran the tuner over its budget
    expect(prepEstimateMs(session(0.94e-6, ['cmrs']), cand('bcsr'), new Set())).toBeCloseTo(UNSEEN_FORMAT_FACTOR * 0.94, 9);
    expect(prepEstimateMs(session(0.94e-6, ['cmrs', 'bcsr']), cand('bcsr'), new Set())).toBeCloseTo(0.94, 9);
    expect(prepEstimateMs(session(0, []), cand('bcsr'), new Set())).toBeCloseTo(5, 9); // CONVERSION_MS_PER_BYTE: 200 MB/s
    expect(prepEstimateMs(session(0.94e-6, []), cand('bcsr'), new Set(['bcsr']))).toBe(0); // shared with an earlier candidate
  });
});
