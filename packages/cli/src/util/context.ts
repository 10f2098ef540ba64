/**
 * What every command receives: parsed options, output helpers and the exit codes.
 * @module
 */

/** Exit codes of the gpusparse command. */
export const ExitCode = {
  ok: 0,
  /** The computation ran but did not reach its goal (a solver did not converge). */
  notConverged: 1,
  /** Wrong usage: unknown command or option, missing argument. */
  usage: 2,
  /** Bad input: unreadable or malformed file, invalid parameter. */
  input: 3,
  /** A WebGPU backend was required but none could be had. */
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

/** Print `value` as pretty JSON on stdout (typed arrays become plain arrays). */
export function printJson(value: unknown): void {
  out(
    JSON.stringify(
      value,
      (_k, v) => {
        if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<number>);
        if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
        if (typeof v === 'bigint') return v.toString();
        return v;
      },
      2,
    ),
  );
}

/** Parse a number option or raise a UsageError naming it. */
export function numberOption(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new UsageError(`--${name}: expected a number, got '${v}'`);
  return n;
}

/** One command: its help text, its options for parseArgs, and its body. */
export interface Command {
  summary: string;
  usage: string;
  options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;
  run(positionals: string[], values: Record<string, unknown>, common: CommonOptions): Promise<number>;
}
