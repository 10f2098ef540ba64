/**
 * Where calibrations live: one per adapter and kernel-set version, in memory for the process and,
 * in Node with a file cache, in `calibration.json` beside the tuning cache (`tune.json`). A
 * loaded calibration is checked (version, key, grid shape, finite positive costs) and ignored
 * when it does not pass; the file is rewritten whole on each new calibration.
 * @module
 */
import type { GpuContext } from '../device/context';
import { kernels as registry } from '../kernels/registry';
import { type Calibration, CALIBRATION_VERSION, calibrate, PROBE_LANES, PROBE_ROW_LENGTHS, type ProbeTimer } from './calibrate';
import { adapterKey, candidateSpaceHash, TUNER_VERSION } from './fingerprint';
import { softwareAdapter } from './prewarm';

/** Calibrations of this process, by key. */
const memory = new Map<string, Calibration>();

/**
 * The key of `ctx`'s calibration: the adapter (vendor, architecture, device, driver description,
 * subgroup size), the calibration and tuner versions and the kernel set's hash. O(kernels).
 */
export function calibrationKey(ctx: GpuContext): string {
  return `${adapterKey(ctx)}|cal${CALIBRATION_VERSION}|t${TUNER_VERSION}|${candidateSpaceHash(registry)}`;
}

/** Why a loaded calibration is unusable for `key`, or undefined. O(grid). */
export function checkCalibration(c: unknown, key: string): string | undefined {
  if (typeof c !== 'object' || c === null) return 'expected an object';
  const r = c as Partial<Calibration>;
  if (r.version !== CALIBRATION_VERSION) return `version ${String(r.version)}, expected ${CALIBRATION_VERSION}`;
  if (r.key !== key) return 'another adapter or kernel set';
  const pos = (x: unknown) => typeof x === 'number' && Number.isFinite(x) && x > 0;
  if (!pos(r.launchMs)) return `launchMs ${String(r.launchMs)}: expected a finite time > 0`;
  const g = r.perEntryMs;
  if (!Array.isArray(g) || g.length !== PROBE_ROW_LENGTHS.length || g.some((row) => !Array.isArray(row) || row.length !== PROBE_LANES.length || row.some((x) => !pos(x)))) return 'perEntryMs: expected the row-length × lanes grid of finite costs > 0';
  if (!r.gather || !pos(r.gather.band) || !pos(r.gather.window) || !pos(r.gather.random)) return 'gather: expected finite factors > 0';
  return undefined;
}

/**
 * The calibration file beside the tuning cache file (Node): beside the given path, else beside
 * the default one — also with the tuning cache off (`false`: the choices are not remembered, but
 * the adapter's calibration is not a choice, and recalibrating in every process would cost each
 * `--no-cache` call the micro-benchmark again). None with a store object (a browser or a test
 * store: the process's memory only).
 */
async function fileFor(cache: unknown): Promise<string | undefined> {
  if (typeof cache === 'object' && cache !== null) return undefined;
  if (typeof process === 'undefined' || typeof process.versions?.node !== 'string') return undefined;
  const { defaultCachePath } = await import('./cache-fs');
  const { dirname, join } = await import('node:path');
  return join(dirname(typeof cache === 'string' && cache !== '' ? cache : defaultCachePath()), 'calibration.json');
}

/** Read `key`'s calibration from `file` (missing or unusable: undefined, with a warning for the unusable). */
async function readFile(file: string, key: string, warn: (m: string) => void): Promise<Calibration | undefined> {
  const { readFileSync } = await import('node:fs');
  let all: Record<string, unknown>;
  try {
    all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    if ((e as { code?: string }).code !== 'ENOENT') warn(`gpusparse autotune: cannot read the calibration ${file}: ${(e as Error).message}; calibrating again`);
    return undefined;
  }
  const c = all?.[key];
  if (c === undefined) return undefined;
  const why = checkCalibration(c, key);
  if (why) warn(`gpusparse autotune: the cached calibration in ${file} is unusable (${why}); calibrating again`);
  return why ? undefined : (c as Calibration);
}

/** Merge `cal` into `file` under its lock file (atomic rename; processes calibrating at once keep each other's); a failure warns and keeps it in memory. */
async function writeFile(file: string, cal: Calibration, warn: (m: string) => void): Promise<void> {
  const fs = await import('node:fs');
  const { dirname } = await import('node:path');
  const { withFileLock, writeFileAtomic } = await import('./file-lock');
  try {
    fs.mkdirSync(dirname(file), { recursive: true });
    withFileLock(file, () => {
      let all: Record<string, unknown> = {};
      try {
        all = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      } catch {
        all = {};
      }
      if (typeof all !== 'object' || all === null || Array.isArray(all)) all = {};
      writeFileAtomic(file, JSON.stringify({ ...all, [cal.key]: cal }));
    });
  } catch (e) {
    warn(`gpusparse autotune: cannot write the calibration ${file}: ${(e as Error).message}`);
  }
}

/** `GPUSPARSE_CALIBRATE=0` turns the default calibration off (the static model's short-list), e.g. to compare the two from the CLI. */
const envOff = (): boolean => typeof process !== 'undefined' && process.env?.GPUSPARSE_CALIBRATE === '0';

/** A calibration for `ctx` and where it came from. */
export interface CalibrationHit {
  readonly cal: Calibration;
  readonly source: 'run' | 'cache' | 'given';
  readonly ms: number;
}

/**
 * The calibration for `ctx`: `given` when passed; else from this process's memory, the file
 * beside the tuning cache, or a fresh micro-benchmark (kept in both). `want` false, or — when
 * `want` is undefined — a software adapter (its costs say nothing of a GPU, and the probes
 * compete with the tuner for the CPU) or `GPUSPARSE_CALIBRATE=0`, gives undefined. `timer`
 * replaces the device probes (tests). Cost: one file read, or the
 * micro-benchmark (~9 probe matrices of 2^21 entries, the two gather probes a quarter of it; 2^15 on a software adapter).
 */
export async function calibrationFor(ctx: GpuContext, want: boolean | Calibration | undefined, cache: unknown, warn: (m: string) => void, timer?: ProbeTimer): Promise<CalibrationHit | undefined> {
  const t0 = performance.now();
  if (typeof want === 'object') return { cal: want, source: 'given', ms: 0 };
  if (want === false || (want === undefined && (softwareAdapter(ctx) || envOff()))) return undefined;
  const key = calibrationKey(ctx);
  const file = await fileFor(cache);
  let cal = memory.get(key) ?? (file ? await readFile(file, key, warn) : undefined);
  if (cal) {
    memory.set(key, cal);
    return { cal, source: 'cache', ms: performance.now() - t0 };
  }
  try {
    cal = await calibrate(ctx, key, { nnz: softwareAdapter(ctx) ? 1 << 15 : 1 << 21, timer });
  } catch (e) {
    if (ctx.isLost) throw e;
    // a probe that failed to run or time: the static model's short-list, not a failed tuning
    warn(`gpusparse autotune: the calibration failed (${(e as Error).message}); using the static cost model`);
    return undefined;
  }
  memory.set(key, cal);
  if (file) await writeFile(file, cal, warn);
  return { cal, source: 'run', ms: performance.now() - t0 };
}

/** Forget this process's calibrations (tests). */
export function clearCalibrationMemory(): void {
  memory.clear();
}
