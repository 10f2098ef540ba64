/**
 * `gpusparse convert A.mtx --to sell --C 32 --sigma 256 -o out`: convert to any format and
 * write its arrays (JSON with the typed arrays as lists, or Matrix Market of the round trip
 * when the output ends in .mtx — a check that the conversion is exact).
 * @module
 */
import { writeFileSync } from 'node:fs';
import { csrEquals, formats, getFormat, writeMatrixMarket } from '@gpusparse/formats';
import { type Command, type CommonOptions, ExitCode, info, out, printJson, UsageError } from '../util/context';
import { loadMatrix } from '../util/load';

/** Parse `--param k=v` pairs and the shorthand flags into a params object, typed by the defaults. */
export function parseParams(defaults: Record<string, unknown>, pairs: string[]): Record<string, unknown> {
  const p: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--param: expected key=value, got '${pair}'`);
    const k = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    if (!(k in defaults)) throw new UsageError(`--param ${k}: unknown parameter; this format takes ${Object.keys(defaults).join(', ') || 'none'}`);
    const d = defaults[k];
    if (typeof d === 'number' || (raw !== '' && !Number.isNaN(Number(raw)) && typeof d !== 'string')) {
      const n = Number(raw);
      if (!Number.isFinite(n)) throw new UsageError(`--param ${k}: expected a number, got '${raw}'`);
      p[k] = n;
    } else p[k] = raw;
  }
  return p;
}

export const convertCommand: Command = {
  summary: 'convert a matrix to a storage format and write its arrays',
  usage: [
    'usage: gpusparse convert <A.mtx | gen:...> --to <format> [--param k=v ...] [--C n --sigma n --boundary n] -o <out.json | out.mtx>',
    '',
    `formats: ${formats.map((f) => f.name).join(', ')}`,
    'Writes JSON (format, parameters, arrays, storage) or, for .mtx output, the CSR round trip.',
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
    const f = getFormat(v.to);
    const pairs = [...((v.param as string[] | undefined) ?? [])];
    for (const k of ['C', 'sigma', 'boundary']) if (typeof v[k] === 'string') pairs.push(`${k}=${v[k]}`);
    const params = parseParams(f.defaultParams as Record<string, unknown>, pairs);
    const m = await loadMatrix(pos[0]!);
    const t0 = performance.now();
    const conv = f.fromCsr(m.matrix, params);
    const ms = performance.now() - t0;
    const back = f.toCsr(conv);
    const exact = csrEquals(back, m.matrix);
    if (!exact) throw new Error(`convert: ${f.name} round trip is not exact for ${m.name} (a bug: please report)`);
    const storage = f.storageBytes(conv, { valueBytes: 8 });
    if (v.output.endsWith('.mtx') || v.output.endsWith('.mtx.gz')) await writeMatrixMarket(v.output, back, { comments: [`converted through ${f.name} ${JSON.stringify(params)} by gpusparse`] });
    else {
      const json = JSON.stringify(conv, (_k, val) => (ArrayBuffer.isView(val) ? Array.from(val as unknown as ArrayLike<number>) : val));
      writeFileSync(v.output, json);
    }
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
