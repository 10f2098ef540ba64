/**
 * The SM clock during each timing of bench/spmv.ts (issue 20, session 11). Gather-bound kernels
 * (uniform random, power law) run 3–4× slower when the H100's SM clock sits at 540–900 MHz instead
 * of ~1 980 (session 10's call), while stream-bound ones barely change: a figure timed at a low
 * clock is not a kernel measurement. The GPU command samples the clock in the background
 * (`nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem --format=csv -lms 100 > FILE`); the
 * bench records the wall-clock window of each timing and, with `--clock-log FILE`, reads the
 * samples that fall in it and flags a case timed below {@link LOW_CLOCK_MHZ}.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';

/** Below this SM clock (MHz) a timing is flagged `CLOCK-LOW` (the H100's boost clock is 1 980). */
export const LOW_CLOCK_MHZ = 1500;

/** One nvidia-smi sample: epoch ms (local time, as nvidia-smi prints it), SM and memory clock in MHz. */
export interface ClockSample {
  readonly t: number;
  readonly sm: number;
  readonly mem: number;
}

/**
 * Parse nvidia-smi's CSV (`timestamp, clocks.current.sm [MHz], clocks.current.memory [MHz], …`);
 * the header and lines that do not parse (a line cut by the sampler's kill) are skipped. The
 * timestamp `2026/11/26 01:34:12.345` is read as local time, like `Date.now()` in the same process.
 * @example parseClockCsv('timestamp, clocks.current.sm [MHz], clocks.current.memory [MHz]\n2026/11/26 01:34:12.345, 1980 MHz, 2619 MHz')
 */
export function parseClockCsv(text: string): ClockSample[] {
  const out: ClockSample[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?,\s*(\d+) MHz,\s*(\d+) MHz/.exec(line.trim());
    if (!m) continue;
    const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
    const ms = m[7] ? Number(`0.${m[7]}`) * 1000 : 0;
    out.push({ t: new Date(y, mo - 1, d, h, mi, s, ms).getTime(), sm: Number(m[8]), mem: Number(m[9]) });
  }
  return out;
}

/** SM clock range of the samples inside the windows (each widened by `padMs`: a 100 ms sampler and 10–100 ms timings). */
export interface ClockRange {
  readonly minSm: number;
  readonly maxSm: number;
  readonly samples: number;
  readonly low: boolean;
}

/**
 * The SM clock samples within any of `windows` ([start, end] epoch ms), widened by `padMs`;
 * undefined when no sample falls in them (no sampler, or a window shorter than its period).
 * @example clockIn(samples, [[t0, t1]]) // { minSm: 1980, maxSm: 1980, samples: 2, low: false }
 */
export function clockIn(samples: readonly ClockSample[], windows: readonly (readonly [number, number])[], padMs = 150): ClockRange | undefined {
  const got = samples.filter((s) => windows.some(([a, b]) => s.t >= a - padMs && s.t <= b + padMs)).map((s) => s.sm);
  if (got.length === 0) return undefined;
  const minSm = Math.min(...got);
  return { minSm, maxSm: Math.max(...got), samples: got.length, low: minSm < LOW_CLOCK_MHZ };
}

/** The samples of the file `path` (empty when there is none: no sampler on this machine). */
export function readClockLog(path: string | undefined): ClockSample[] {
  return path && existsSync(path) ? parseClockCsv(readFileSync(path, 'utf8')) : [];
}

/**
 * Whether the newest sample of the clock log at `path` is below {@link LOW_CLOCK_MHZ} (false when
 * there is no log or no sample: nothing to wait for). The bench keeps heating while this holds.
 * @example while (clockIsLow(log) && performance.now() - t0 < 3000) encodeMore();
 */
export function clockIsLow(path: string | undefined): boolean {
  const s = readClockLog(path);
  return s.length > 0 && s[s.length - 1]!.sm < LOW_CLOCK_MHZ;
}

/** ` | SM 1755–1980 MHz (3)` plus ` CLOCK-LOW` below {@link LOW_CLOCK_MHZ}, or ` | SM ? (no sample)` when a log was given but had none in the windows. */
export function clockText(r: ClockRange | undefined): string {
  if (!r) return ' | SM ? (no sample)';
  return ` | SM ${r.minSm}–${r.maxSm} MHz (${r.samples})${r.low ? ' CLOCK-LOW' : ''}`;
}
