/**
 * `gpusparse convert A.mtx --to sell --C 32 --sigma 256 -o out`: convert to any format and
 * write its arrays (JSON with the typed arrays as lists, or Matrix Market of the round trip
 * when the output ends in .mtx — a check that the conversion is exact).
 * @module
 */
import {
  availableMemoryBytes,
  checkStrictNumber,
  type CsrMatrix,
  csrEquals,
  estimateFormatStorage,
  formats,
  getFormat,
  MatrixMarketError,
  ResourceLimitError,
  writeMatrixMarket,
} from '@gpusparse/formats';
import { type Command, type CommonOptions, ExitCode, formatNameOption, info, jsonText, out, printJson, UsageError } from '../util/context';
import { loadMatrix } from '../util/load';
import { asOutputError, writeOutputFile } from '../util/output';

/** The longest string V8 builds (2^29 − 24 characters on 64-bit): the JSON output is one string. */
const MAX_STRING_LENGTH = 2 ** 29 - 24;

/**
 * Refuse, before building it, a conversion whose arrays cannot fit the memory available or whose
 * JSON text cannot be one string (at least 2 characters per element of the value and index
 * arrays). Estimates come from row statistics ({@link estimateFormatStorage}).
 */
function checkConversionFits(a: CsrMatrix, name: string, params: Record<string, unknown>, json: boolean): void {
  const est = estimateFormatStorage(a, name, params);
  if (!est) return;
  const avail = availableMemoryBytes();
  if (est.bytesF64 > avail) {
    throw new ResourceLimitError(`convert --to ${name}: the ${name} arrays (${est.basis})`, est.bytesF64, avail, 'choose a format with less padding (csr, coo, sell, hybrid)');
  }
  const chars = 4 * est.storedElements;
  if (json && chars > MAX_STRING_LENGTH) {
    throw new ResourceLimitError(
      `convert --to ${name}: the JSON text of ${est.storedElements} stored slots (${est.basis}; ≥ 2 characters per value and per index)`,
      chars,
      MAX_STRING_LENGTH,
      'the longest string V8 can build is the limit; write .mtx output or choose a format with less padding',
    );
  }
}

/** Parse `--param k=v` pairs and the shorthand flags into a params object, typed by the defaults. */
export function parseParams(defaults: Record<string, unknown>, pairs: string[]): Record<string, unknown> {
  const p: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--param: expected key=value, got '${pair}'`);
    const k = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    if (!Object.hasOwn(defaults, k)) throw new UsageError(`--param ${k}: unknown parameter; this format takes ${Object.keys(defaults).join(', ') || 'none'}`);
    const d = defaults[k];
    const num = checkStrictNumber(raw);
    if (typeof d === 'number' || (num.ok && typeof d !== 'string')) {
      if (!num.ok) throw new UsageError(`--param ${k}: expected ${num.expected}, got '${raw}'`);
      p[k] = num.value;
    } else p[k] = raw;
  }
  return p;
}

/** writeMatrixMarket with a full device reported as an output error (exit 5) naming the path. */
async function writeMtx(path: string, a: CsrMatrix, comment: string): Promise<void> {
  try {
    await writeMatrixMarket(path, a, { comments: [comment] });
  } catch (e) {
    throw e instanceof MatrixMarketError && e.code ? asOutputError(path, e) : e;
  }
}

export const convertCommand: Command = {
  summary: 'convert a matrix to a storage format and write its arrays',
  usage: [
    'usage: gpusparse convert <A.mtx | gen:...> --to <format> [--param k=v ...] [--C n --sigma n --boundary n] -o <out.json | out.mtx>',
    '',
    `formats: ${formats.map((f) => f.name).join(', ')}`,
    'Writes JSON (format, parameters, arrays, storage; −0 written as -0) or, for .mtx output, the CSR round trip.',
    'A format whose arrays (estimated from row lengths first) cannot fit memory, or whose JSON text cannot',
    'be one string, is refused before it is built (exit 5, bytes needed and available).',
  ].join('\n'),
  options: {
    to: { type: 'string' },
    param: { type: 'string', multiple: true },
    C: { type: 'string' },
    sigma: { type: 'string' },
    boundary: { type: 'string' },
    output: { type: 'string', short: 'o' },
  },
  async run(pos: string[], v: Record<string, unknown>, common: CommonOptions): Promise<number> {
    if (pos.length !== 1) throw new UsageError(`convert: expected one matrix argument, got ${pos.length}`);
    if (typeof v.to !== 'string') throw new UsageError('convert: --to <format> is required');
    if (typeof v.output !== 'string') throw new UsageError('convert: -o <output> is required');
    const f = getFormat(formatNameOption('to', v.to, 'csr'));
    const pairs = [...((v.param as string[] | undefined) ?? [])];
    for (const k of ['C', 'sigma', 'boundary']) if (typeof v[k] === 'string') pairs.push(`${k}=${v[k]}`);
    const params = parseParams(f.defaultParams as Record<string, unknown>, pairs);
    const m = await loadMatrix(pos[0]!);
    const mtxOut = v.output.endsWith('.mtx') || v.output.endsWith('.mtx.gz');
    checkConversionFits(m.matrix, f.name, params, !mtxOut);
    const t0 = performance.now();
    const conv = f.fromCsr(m.matrix, params);
    const ms = performance.now() - t0;
    const back = f.toCsr(conv);
    const exact = csrEquals(back, m.matrix);
    if (!exact) throw new Error(`convert: ${f.name} round trip is not exact for ${m.name} (a bug: please report)`);
    const storage = f.storageBytes(conv, { valueBytes: 8 });
    if (mtxOut) await writeMtx(v.output, back, `converted through ${f.name} ${JSON.stringify(params)} by gpusparse`);
    else writeOutputFile(v.output, jsonText(conv));
    const summary = { matrix: m.name, format: f.name, params: { ...f.defaultParams, ...params }, conversionMs: ms, roundTripExact: exact, storage, output: v.output };
    if (common.json) printJson(summary);
    else {
      out(`${m.name} -> ${f.title} ${JSON.stringify(summary.params)} in ${ms.toFixed(1)} ms; round trip exact`);
      out(`stored ${storage.storedElements} slots for ${storage.nnz} non-zeros (beta ${storage.beta.toFixed(3)}), ${storage.bytes} bytes (f64 values)`);
      info(`written to ${v.output}`);
    }
    return ExitCode.ok;
  },
};
