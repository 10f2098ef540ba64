/**
 * What every command receives: parsed options, output helpers and the exit codes.
 * @module
 */
import { checkStrictNumber, formats, type StrictNumberRange } from '@gpusparse/formats';

/** Exit codes of the gpusparse command. */
export const ExitCode = {
  ok: 0,
  /** The computation ran but did not reach its goal (a solver did not converge). */
  notConverged: 1,
  /** Wrong usage: unknown command or option, missing argument. */
  usage: 2,
  /** Bad input: unreadable or malformed file, invalid parameter. */
  input: 3,
  /** A WebGPU backend was required but none could be had (or the PETSc/SLEPc engine asked for is not installed). */
  noGpu: 4,
  /**
   * The work does not fit: host or device memory, a GPU binding or a 32-bit index
   * (`ResourceLimitError`; the message names bytes needed and available and what to change).
   */
  resource: 5,
  /** Anything unexpected (a bug: run with --debug and report it). */
  internal: 70,
} as const;

/** Options common to every command. */
export interface CommonOptions {
  json: boolean;
  backend: 'webgpu' | 'cpu' | 'auto';
  debug: boolean;
  progress: boolean;
}

/** A usage error: printed with the command's help, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Write a line to stdout. */
export function out(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** Write a line to stderr (diagnostics, never results). */
export function info(line = ''): void {
  process.stderr.write(`${line}\n`);
}

/** A string no JSON text of ours contains: stands for −0 until the text is finished. */
const NEG_ZERO = '\u0000gpusparse:-0\u0000';
const NEG_ZERO_JSON = JSON.stringify(NEG_ZERO);

/**
 * JSON text of `value`: typed arrays become lists, non-finite numbers strings, bigints decimal
 * strings, and −0 stays `-0` (valid JSON, read back as −0 by JSON.parse; JSON.stringify alone
 * writes 0, which made a "round trip exact" claim false for matrices holding −0).
 * @example
 * jsonText({ v: Float64Array.of(-0, 1) }); // '{"v":[-0,1]}'
 */
export function jsonText(value: unknown, indent?: number): string {
  let sawNegZero = false;
  const text = JSON.stringify(
    value,
    (_k, v) => {
      if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<number>);
      if (typeof v === 'number') {
        if (!Number.isFinite(v)) return String(v);
        if (Object.is(v, -0)) {
          sawNegZero = true;
          return NEG_ZERO;
        }
      }
      if (typeof v === 'bigint') return v.toString();
      return v;
    },
    indent,
  );
  return sawNegZero ? text.split(NEG_ZERO_JSON).join('-0') : text;
}

/** Whether a command printed its JSON document in this run (then an error adds no second document). */
export const jsonOutput = { printed: false };

/** One number as {@link jsonText} writes it (−0 as -0, non-finite as a string). */
function numberJson(v: number): string {
  if (!Number.isFinite(v)) return `"${String(v)}"`;
  return Object.is(v, -0) ? '-0' : String(v);
}

/** Entries of a streamed array per stdout write (a few MB of text). */
const ARRAY_CHUNK = 1 << 16;

/**
 * {@link printJson} of `{ ...value, [key]: arr }` with `arr` written in pieces: the document
 * was one string, and x of ≳ 19 M rows (≈ 28 characters an entry) passed V8's longest string
 * (2^29 − 24) after the solve ("Invalid string length"). Same text as printJson. O(arr.length).
 * @example printJsonWithArray({ converged: true }, 'x', Float64Array.of(1, -0)) // {"converged": true, "x": [1, -0]} (pretty)
 */
export function printJsonWithArray(value: Record<string, unknown>, key: string, arr: ArrayLike<number>): void {
  jsonOutput.printed = true;
  const head = jsonText({ ...value, [key]: [] }, 2);
  const tail = '[]\n}';
  if (arr.length === 0 || !head.endsWith(tail)) {
    out(jsonText({ ...value, [key]: Array.from(arr) }, 2));
    return;
  }
  process.stdout.write(`${head.slice(0, -tail.length)}[`);
  for (let i = 0; i < arr.length; i += ARRAY_CHUNK) {
    const part: string[] = [];
    for (let j = i; j < Math.min(arr.length, i + ARRAY_CHUNK); j++) part.push(`\n    ${numberJson(arr[j]!)}`);
    process.stdout.write(`${i > 0 ? ',' : ''}${part.join(',')}`);
  }
  process.stdout.write('\n  ]\n}\n');
}

/** Print `value` as pretty JSON on stdout (see {@link jsonText}). */
export function printJson(value: unknown): void {
  jsonOutput.printed = true;
  out(jsonText(value, 2));
}

/**
 * Parse a number option strictly (decimal and exponent forms only: `0x1`, `''`, `1e`, `nan`,
 * `inf` are refused) or raise a UsageError naming it. `range` adds integer and bounds checks.
 * @example
 * numberOption('rtol', '1e-8', 1e-6); // 1e-8
 * numberOption('maxit', '2.5', 100, { integer: true, min: 0 }); // UsageError "--maxit: expected an integer ≥ 0 ..."
 */
export function numberOption(name: string, v: string | undefined, fallback: number, range: StrictNumberRange = {}): number {
  if (v === undefined) return fallback;
  const r = checkStrictNumber(v, range);
  if (!r.ok) throw new UsageError(`--${name}: expected ${r.expected}, got '${v}'`);
  return r.value;
}

/** {@link numberOption} for counts: a safe integer in [min, max] (default [0, 2^53 − 1]). */
export function integerOption(name: string, v: string | undefined, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  return numberOption(name, v, fallback, { integer: true, min, max });
}

/**
 * A storage-format name option: one of the registry's names or of `extra` (e.g. 'auto'), else a
 * UsageError listing them. Returns `fallback` when the option is absent.
 * @example
 * formatNameOption('format', 'nope', 'csr', ['auto']); // UsageError "--format: unknown format 'nope': expected one of auto, csr, coo, ..."
 */
export function formatNameOption(option: string, v: unknown, fallback: string, extra: readonly string[] = []): string {
  if (v === undefined) return fallback;
  const names = [...extra, ...formats.map((f) => f.name)];
  if (typeof v !== 'string' || !names.includes(v)) throw new UsageError(`--${option}: unknown format '${String(v)}': expected one of ${names.join(', ')}`);
  return v;
}

/** One command: its help text, its options for parseArgs, and its body. */
export interface Command {
  summary: string;
  usage: string;
  options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;
  run(positionals: string[], values: Record<string, unknown>, common: CommonOptions): Promise<number>;
}
