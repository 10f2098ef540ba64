/**
 * Writing output files: a full disk (ENOSPC), an exhausted quota (EDQUOT) or a file-size limit
 * (EFBIG) is a resource problem named with the path (exit code 5), not a bug.
 * @module
 */
import { accessSync, constants, type Stats, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from './context';

/** System error codes that mean "the output does not fit where it goes". */
export const OUTPUT_FULL_CODES: Readonly<Record<string, string>> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large for the file system or the process limit',
};

/** The output could not be written for lack of space; the CLI maps it to exit code 5. */
export class OutputSpaceError extends Error {
  constructor(
    readonly path: string,
    readonly code: string,
    readonly bytes?: number,
  ) {
    super(
      `writing ${path} failed: ${code} (${OUTPUT_FULL_CODES[code] ?? 'no space'})${bytes === undefined ? '' : ` with ${bytes} bytes to write`} — free space there or choose another output path`,
    );
    this.name = 'OutputSpaceError';
  }
}

/** `e` as an OutputSpaceError when its code says the output did not fit, else `e` unchanged. */
export function asOutputError(path: string, e: unknown, bytes?: number): unknown {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code in OUTPUT_FULL_CODES ? new OutputSpaceError(path, code, bytes) : e;
}

/** writeFileSync with a full device reported as {@link OutputSpaceError}. */
export function writeOutputFile(path: string, data: string | Uint8Array): void {
  try {
    writeFileSync(path, data);
  } catch (e) {
    throw asOutputError(path, e, typeof data === 'string' ? Buffer.byteLength(data) : data.length);
  }
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Check the files a command will write before it works: the folder exists and can be written,
 * the path is not a folder, no output is one of the input files (`solve A.mtx -o A.mtx` replaced
 * the matrix by x without a word) or another output. Before, a missing folder was found after the
 * solve (minutes of work lost). Throws a UsageError naming the option and the path. O(outputs · inputs) stats.
 * @example checkOutputPaths({ output: 'x.mtx' }, ['A.mtx'])
 */
export function checkOutputPaths(outputs: Readonly<Record<string, string | undefined>>, inputs: readonly string[]): void {
  const ins = inputs.map((p) => ({ p, s: statOrUndefined(p) })).filter((x): x is { p: string; s: Stats } => x.s?.isFile() === true);
  const seen = new Map<string, string>();
  for (const [key, path] of Object.entries(outputs)) {
    if (typeof path !== 'string') continue;
    const where = `--${key} ${path}`;
    const folder = dirname(resolve(path));
    const fs = statOrUndefined(folder);
    if (!fs) throw new UsageError(`${where}: the folder ${folder} does not exist (create it first)`);
    if (!fs.isDirectory()) throw new UsageError(`${where}: ${folder} is not a folder`);
    const s = statOrUndefined(path);
    if (s?.isDirectory()) throw new UsageError(`${where}: expected a file path, got a folder`);
    const same = s && ins.find((x) => x.s.dev === s.dev && x.s.ino === s.ino);
    if (same) throw new UsageError(`${where}: that is the input file ${same.p}; writing it would replace the input (choose another output path)`);
    if (s ? s.isFile() && !writable(path) : !writable(folder)) throw new UsageError(`${where}: ${s ? 'the file' : `the folder ${folder}`} is not writable`);
    const other = seen.get(resolve(path));
    if (other) throw new UsageError(`${where}: the same file as --${other}`);
    seen.set(resolve(path), key);
  }
}
