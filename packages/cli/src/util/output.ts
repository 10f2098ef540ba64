/**
 * Writing output files: a full disk (ENOSPC), an exhausted quota (EDQUOT) or a file-size limit
 * (EFBIG) is a resource problem named with the path (exit code 5), not a bug.
 * @module
 */
import { writeFileSync } from 'node:fs';

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
