/**
 * A recorded adapter calibration read back from a file, for the benches that replay another
 * machine's cost model (bench/tune-replay.ts's short-list, bench/tune.ts's `--calibration`).
 * @module
 */
import { readFileSync } from 'node:fs';
import { type Calibration, CALIBRATION_VERSION, checkCalibration } from '../packages/gpu/src/autotune/index';

/**
 * A calibration from a file: the object itself or a `bench/tune.ts` output's `calibration` field.
 * @throws Error naming the file and what is wrong with the calibration in it
 * @example const h100 = loadCalibration('prev/s12-dev/final-out/tune-bench.json');
 */
export function loadCalibration(path: string): Calibration {
  const j = JSON.parse(readFileSync(path, 'utf8')) as { calibration?: Calibration } & Calibration;
  const raw = j.calibration ?? j;
  // an older calibration version replays too: its fields mean the same (version 2 only shrank the gather probes)
  const c = { ...raw, version: CALIBRATION_VERSION };
  const why = checkCalibration(c, c.key);
  if (why) throw new Error(`--calibration ${path}: ${why}`);
  return c;
}
