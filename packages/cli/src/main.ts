/**
 * The `gpusparse` command. Every command prints a readable table by default and JSON with
 * `--json`, shows a progress bar on stderr for long work (only on a TTY), takes
 * `--backend webgpu|cpu|auto`, and prints errors without stack traces unless `--debug`.
 * Exit codes: see {@link ExitCode}.
 * @module
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { GpuSparseError, ResourceLimitError } from '@gpusparse/formats';
import { type Command, type CommonOptions, ExitCode, info, jsonOutput, jsonText, printJson, UsageError } from './util/context';
import { setQuietNativeNotices } from './util/backend';
import { asOutputError, checkOutputPaths, OUTPUT_FULL_CODES, OutputSpaceError } from './util/output';


// Commands load lazily (the GPU runtime is only imported by the commands that use it).
const commands: Record<string, { summary: string; load: () => Promise<Command> }> = {
  info: { summary: 'shape, nnz, row-length statistics, symmetry, memory table of every format', load: async () => (await import('./commands/info')).infoCommand },
  convert: { summary: 'convert a matrix to a storage format', load: async () => (await import('./commands/convert')).convertCommand },
  bench: { summary: 'time SpMV kernels on a matrix (GFLOP/s, GB/s)', load: async () => (await import('./commands/bench')).benchCommand },
  tune: { summary: 'pick the best format and parameters by measurement', load: async () => (await import('./commands/tune')).tuneCommand },
  solve: { summary: 'solve A x = b (cg, gmres, bicgstab, bicg)', load: async () => (await import('./commands/solve')).solveCommand },
  eigs: { summary: 'lowest/highest eigenpairs (lanczos, davidson, lobpcg)', load: async () => (await import('./commands/eigs')).eigsCommand },
  ci: { summary: 'configuration-interaction energies from an FCIDUMP', load: async () => (await import('./commands/ci')).ciCommand },
  spgemm: { summary: 'sparse matrix product C = A·B through diagonal storage (HM / CDM) on the GPU', load: async () => (await import('./commands/spgemm')).spgemmCommand },
  export: { summary: 'write a matrix in PETSc binary format (MatLoad), or a PETSc matrix as Matrix Market', load: async () => (await import('./commands/export')).exportCommand },
  start: { summary: 'the main job: CI energies of a shipped molecule and a Poisson solve', load: async () => (await import('./commands/start')).startCommand },
};

const commonOptions = {
  json: { type: 'boolean' },
  backend: { type: 'string' },
  debug: { type: 'boolean' },
  'no-progress': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function usage(): string {
  const lines = ['usage: gpusparse <command> [options]', '', 'commands:'];
  for (const [name, c] of Object.entries(commands)) lines.push(`  ${name.padEnd(9)} ${c.summary}`);
  lines.push('', 'common options: --json  --backend webgpu|cpu|auto  --no-progress  --debug  --help');
  lines.push('gpusparse --version prints the version of @gpusparse/cli (with --json: { "version": … }).');
  lines.push('exit codes: 0 ok, 1 a solver did not converge, 2 usage, 3 bad input, 4 no WebGPU adapter (or PETSc/SLEPc engine),');
  lines.push('            5 does not fit (memory, a binding, a 32-bit index, a full disk), 70 a bug (run again with --debug)');
  return lines.join('\n');
}

/** @gpusparse/cli's version, from its package.json (one folder above src/ and dist/ alike). */
export function cliVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** Help text; under --json as one JSON document `{ "usage": text }` (stdout holds only JSON then). */
function printUsage(text: string, options: readonly string[]): void {
  if (options.includes('--json')) printJson({ usage: text });
  else process.stdout.write(`${text}\n`);
}

/** Run the CLI with `argv` (without node and script); returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  let debug = argv.includes('--debug');
  const options = argv.indexOf('--') < 0 ? argv : argv.slice(0, argv.indexOf('--'));
  jsonOutput.printed = false;
  try {
    if (!name || name === '--help' || name === '-h' || name === 'help') {
      printUsage(usage(), options);
      return name ? ExitCode.ok : ExitCode.usage;
    }
    if (name === '--version') {
      if (options.includes('--json')) printJson({ version: cliVersion() });
      else process.stdout.write(`gpusparse ${cliVersion()}\n`);
      return ExitCode.ok;
    }
    const entry = Object.hasOwn(commands, name) ? commands[name] : undefined; // not 'toString', 'constructor'
    const known = Object.keys(commands).join(', ');
    if (!entry && name.startsWith('-')) throw new UsageError(`expected a command first (one of ${known}), got the option '${name}'`);
    if (!entry) throw new UsageError(`unknown command '${name}': expected one of ${known}`);
    const cmd = await entry.load();
    const allOptions = { ...commonOptions, ...cmd.options };
    const parsed = parseCommandArgs(name, rest, allOptions);
    const v = parsed.values as Record<string, unknown>;
    if (v.help) {
      printUsage(cmd.usage, options);
      return ExitCode.ok;
    }
    refuseStdoutPaths(v);
    checkOutputPaths(Object.fromEntries(OUTPUT_FILE_OPTIONS.map((k) => [k, v[k] as string | undefined])), [...parsed.positionals, ...(typeof v.rhs === 'string' ? [v.rhs] : [])]);
    debug = Boolean(v.debug);
    setQuietNativeNotices(!debug);
    const backend = (v.backend as string | undefined) ?? 'auto';
    if (!['webgpu', 'cpu', 'auto'].includes(backend)) throw new UsageError(`--backend: expected webgpu, cpu or auto, got '${backend}'`);
    const common: CommonOptions = {
      json: Boolean(v.json),
      backend: backend as CommonOptions['backend'],
      debug,
      progress: !v['no-progress'] && !v.json,
    };
    return await cmd.run(parsed.positionals, v, common);
  } catch (e) {
    const exit = reportError(e, debug);
    // --json promises one JSON document on stdout: an error is one too, unless the result was printed
    if (options.includes('--json') && !jsonOutput.printed) printJsonError(e, exit);
    return exit;
  }
}

/**
 * parseArgs (strict) with an unknown option named as the README promises: the command, the token,
 * the nearest accepted option when one is a typo away (`--rtoll` → `--rtol`) and the accepted list.
 */
function parseCommandArgs(name: string, rest: string[], options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>) {
  try {
    return parseArgs({ args: joinNegativeValues(rest, options), options, allowPositionals: true, strict: true });
  } catch (e) {
    const code = (e as { code?: string }).code;
    const missing = code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' ? /^Option '(?:-\w, )?(--[\w-]+) <value>' argument missing/.exec((e as Error).message)?.[1] : undefined;
    if (missing !== undefined) throw new UsageError(`${name}: ${missing}: expected a value after it, got none`);
    const token = code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /^Unknown option '([^']+)'/.exec((e as Error).message)?.[1] : undefined;
    if (token === undefined) throw e;
    const names = Object.keys(options).sort();
    const bare = token.replace(/^--?/, '').split('=')[0]!;
    const near = names.filter((n) => editDistance(n, bare) <= Math.min(2, Math.floor(n.length / 3)));
    const hint = near.length > 0 ? `: did you mean ${near.map((n) => `--${n}`).join(' or ')}?` : '';
    throw new UsageError(`${name}: unknown option '${token}'${hint} (expected one of ${names.map((n) => `--${n}`).join(', ')})`);
  }
}

/** Levenshtein distance of two short strings (option names). O(|a|·|b|). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}

/** A token that reads as a negative number (`-1`, `-.5`, `-1e-3`, `-inf`), not as an option. */
const NEGATIVE_NUMBER = /^-(?:\d|\.\d|inf|nan)/i;

/** Options that name a file the command writes. */
const OUTPUT_FILE_OPTIONS = ['output', 'plot', 'spy', 'export-petsc'] as const;

/**
 * `-o -` wrote a file named "-" in the working directory, while a user means standard output
 * (which carries the summary, or the one --json document). Refused as a usage error.
 */
function refuseStdoutPaths(v: Record<string, unknown>): void {
  for (const key of OUTPUT_FILE_OPTIONS) {
    if (v[key] === '-') {
      throw new UsageError(`--${key}: expected a file name, got '-' (standard output carries the command's summary or its --json document; write to a file)`);
    }
  }
}

/**
 * `--rtol -1` → `--rtol=-1` for options that take a value: parseArgs calls a value starting with
 * a dash "ambiguous" and refuses it with its own wording; joined, the option's own check names
 * what it expected and what came (a usage error, exit 2). Tokens after `--` are left alone.
 */
export function joinNegativeValues(args: readonly string[], options: Record<string, { type: string; short?: string }>): string[] {
  const outArgs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return [...outArgs, ...args.slice(i)];
    const next = args[i + 1];
    const name = longName(a, options);
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      outArgs.push(`--${name}=${next}`);
      i++;
    } else outArgs.push(a);
  }
  return outArgs;
}

/**
 * The option an argument names without a value: `--name`, or `-x` for a short alias or a
 * one-letter option (`-k`; s14-harden-e: `-k -1` got parseArgs' "argument is ambiguous").
 */
function longName(a: string, options: Record<string, { short?: string }>): string | undefined {
  if (a.startsWith('--')) return a.includes('=') ? undefined : a.slice(2);
  if (!/^-[A-Za-z]$/.test(a)) return undefined;
  return Object.keys(options).find((k) => options[k]!.short === a[1]) ?? a.slice(1);
}

/**
 * `{"error": {name, message, exitCode, …}}` on stdout (the plain message went to stderr as well),
 * with the error's own fields where it has them — file, line, expected, got, where, parameter,
 * code, bytes needed and available (s14-harden-e: they were only inside the message text).
 */
function printJsonError(e: unknown, exitCode: number): void {
  const err = e instanceof Error ? e : new Error(String(e));
  const name = exitCode === ExitCode.usage ? 'UsageError' : err.name;
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(err)) if (ERROR_FIELDS.has(k) && ['string', 'number', 'boolean'].includes(typeof v)) fields[k] = v;
  process.stdout.write(`${jsonText({ error: { name, message: err.message, exitCode, ...fields } }, 2)}\n`);
}

/** The fields of gpusparse's error classes that say where and what (formats' core/errors, mtx, FCIDUMP, PETSc). */
const ERROR_FIELDS = new Set(['file', 'line', 'column', 'otherLine', 'offset', 'where', 'what', 'parameter', 'expected', 'got', 'found', 'code', 'bytesNeeded', 'bytesAvailable']);

/** RangeErrors that V8 throws when an allocation is too large (input-sized, not a logic bug). */
const ALLOCATION_FAILURES = /^(Invalid typed array length|Array buffer allocation failed|Invalid array length|Invalid string length)/;

/** System error codes that mean "this path cannot be read or written as asked" (bad input, 3). */
const PATH_ERRORS = new Set(['ENOENT', 'EISDIR', 'EACCES', 'ENOTDIR', 'EPERM', 'EROFS', 'ELOOP', 'ENAMETOOLONG', 'EEXIST']);

/** The exit code of an error (see {@link ExitCode}: 70 is kept for what looks like a bug). */
export function exitCodeOf(err: Error): number {
  const code = (err as { code?: unknown }).code;
  if (err instanceof UsageError || code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' || code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    return ExitCode.usage;
  }
  if (err instanceof ResourceLimitError || err instanceof OutputSpaceError) return ExitCode.resource;
  // a disk-full code that escaped the output wrappers (a library writing a file)
  if (typeof code === 'string' && code in OUTPUT_FULL_CODES) return ExitCode.resource;
  if (err instanceof RangeError && ALLOCATION_FAILURES.test(err.message)) return ExitCode.resource;
  if (err.name === 'NoAdapterError' || err.name === 'DeviceLostError' || err.name === 'EngineUnavailableError') return ExitCode.noGpu;
  if (err instanceof GpuSparseError || (typeof code === 'string' && PATH_ERRORS.has(code))) return ExitCode.input;
  return ExitCode.internal;
}

/** Map an error to a message on stderr and an exit code. */
export function reportError(e: unknown, debug: boolean): number {
  const err = e instanceof Error ? e : new Error(String(e));
  const exit = exitCodeOf(err);
  const plain = err.name === 'Error' || exit === ExitCode.usage || err instanceof OutputSpaceError;
  const label = plain ? '' : `${err.name}: `;
  info(`gpusparse: ${label}${err.message}`);
  if (exit === ExitCode.usage) info("run 'gpusparse --help' or 'gpusparse <command> --help'");
  if (exit === ExitCode.resource && err instanceof RangeError) {
    info('(an allocation sized by the input failed: the input needs more memory than this process can have; no check caught it before the allocation — please report it)');
  }
  if (debug && err.stack) info(err.stack);
  else if (exit === ExitCode.internal) info('(this looks like a bug: run again with --debug for the stack trace)');
  return exit;
}

/**
 * Standard output that cannot be written (a full disk when redirected to a file, /dev/full) is
 * reported once with exit code 5 instead of an unhandled 'error' event; a closed pipe ends
 * quietly.
 */
function guardStdout(): { failed: number | undefined } {
  const state: { failed: number | undefined } = { failed: undefined };
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (state.failed !== undefined) return;
    if (e.code === 'EPIPE') {
      state.failed = process.exitCode === undefined ? 0 : Number(process.exitCode);
      return;
    }
    state.failed = reportError(asOutputError('standard output', e), false);
    process.exitCode = state.failed;
  });
  return state;
}

// Run when executed directly (tsx packages/cli/src/main.ts ...).
const isMain = process.argv[1] && /(?:^|[/\\])main\.ts$/.test(process.argv[1]);
if (isMain) {
  const stdout = guardStdout();
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = stdout.failed ?? code;
    },
    (e) => {
      process.exitCode = reportError(e, process.argv.includes('--debug'));
    },
  );
}
