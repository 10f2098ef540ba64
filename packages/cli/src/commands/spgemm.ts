/**
 * `gpusparse spgemm A.mtx B.mtx -o C.mtx [--format auto|hm|cdm|csr] [--check]`: C = A·B on the
 * device through diagonal storage (seed 002). CSR in; the product runs in CDM for narrow square
 * bands and HM otherwise (or as --format hm|cdm says); C is written as Matrix Market (CSR) when
 * the output ends in .mtx, else as JSON in the --format's storage (csr, hm or cdm arrays).
 * `--check` recomputes C in float64 on the host and reports the largest |c − c_ref| / Σ|a·b|.
 * With `--backend cpu` (or auto without an adapter) C is the float64 host product itself.
 * @module
 */
import { availableMemoryBytes, type CsrMatrix, csrSpgemmReference, diagonalFootprint, InvalidMatrixError, MatrixMarketError, ResourceLimitError, spgemmMaxRelError, writeMatrixMarket } from '@gpusparse/formats';
import { openGpuContext } from '../util/backend';
import { type Command, type CommonOptions, ExitCode, info, jsonText, out, printJson, UsageError } from '../util/context';
import { loadMatrix } from '../util/load';
import { asOutputError, writeOutputFile } from '../util/output';

const FORMATS = ['auto', 'hm', 'cdm', 'csr'] as const;
type Format = (typeof FORMATS)[number];

/** The product on the device, or undefined when the host must do it (backend cpu, or auto without an adapter). */
async function deviceProduct(a: CsrMatrix, b: CsrMatrix, format: Format, backend: CommonOptions['backend']) {
  if (backend === 'cpu') return { note: 'backend cpu: float64 host product' };
  let ctx: Awaited<ReturnType<typeof openGpuContext>>;
  try {
    ctx = await openGpuContext();
  } catch (e) {
    if (backend === 'webgpu') throw e;
    return { note: `no WebGPU adapter (${(e as Error).message.split('\n')[0]}): float64 host product` };
  }
  try {
    const { spgemmCsr, spgemmScaling } = await import('@gpusparse/gpu');
    // operands whose products float32 cannot hold even scaled: refused on webgpu, the host product on auto
    const refusal = spgemmScaling(a, b).refusal;
    if (refusal && backend === 'webgpu') throw refusal;
    if (refusal) return { note: `the device product runs in float32 and cannot hold these operands' products (${refusal.message.replace(/^.*got /, '').replace(/: the device.*$/, '')}): float64 host product` };
    const r = await spgemmCsr(ctx, a, b, { format: format === 'csr' ? 'auto' : format });
    return { result: r };
  } finally {
    ctx.dispose();
  }
}

/**
 * Refuse, before converting, operands whose diagonal storage cannot fit host memory: the host
 * holds each operand's float64 slots and its float32 staging copy (12 bytes a slot); C's slots
 * come on top, so this is a floor, not a promise.
 */
function checkOperandsFit(a: CsrMatrix, b: CsrMatrix, format: Format): void {
  let slots = 0;
  for (const m of [a, b]) {
    const f = diagonalFootprint(m);
    // a non-square operand forced to CDM is refused by the conversion (InvalidMatrixError)
    slots += format === 'cdm' && Number.isFinite(f.cdmSlots) ? f.cdmSlots : Math.min(f.hmSlots, f.cdmSlots);
  }
  const avail = availableMemoryBytes();
  if (12 * slots > avail) {
    throw new ResourceLimitError(`spgemm: A and B in ${format === 'cdm' ? 'CDM' : 'diagonal'} storage (${slots} slots)`, 12 * slots, avail, 'diagonal storage suits matrices with few diagonals: use fewer diagonals or a smaller matrix');
  }
}

/**
 * Refuse a C with an entry beyond float64 (operands near 1e308 overflow in the host product):
 * JSON would carry it as the string "Infinity" and exit 0. Rows and columns 1-based.
 */
function assertFiniteProduct(c: CsrMatrix): void {
  for (let i = 0; i < c.rows; i++) {
    for (let k = c.rowPtr[i]!; k < c.rowPtr[i + 1]!; k++) {
      const v = c.values[k]!;
      if (Number.isFinite(v)) continue;
      throw new InvalidMatrixError(
        'spgemm C = A·B',
        `expected entries within float64 (|c| ≤ 1.8e308), got ${v} at row ${i + 1}, column ${c.colIdx[k]! + 1}: the products of A's and B's values overflow; scale A or B down (by a power of two keeps every other entry exact)`,
      );
    }
  }
}

/** Write C: Matrix Market for .mtx, else JSON of the requested storage. */
async function writeC(path: string, c: CsrMatrix, diagonal: unknown, format: Format): Promise<void> {
  if (path.endsWith('.mtx') || path.endsWith('.mtx.gz')) {
    try {
      await writeMatrixMarket(path, c, { comments: ['C = A·B by gpusparse spgemm'] });
    } catch (e) {
      throw e instanceof MatrixMarketError && e.code ? asOutputError(path, e) : e;
    }
    return;
  }
  writeOutputFile(path, jsonText(format === 'csr' || diagonal === undefined ? c : diagonal));
}

export const spgemmCommand: Command = {
  summary: 'sparse matrix product C = A·B through diagonal storage (HM / CDM) on the GPU',
  usage: [
    'usage: gpusparse spgemm <A.mtx | gen:...> <B.mtx | gen:...> -o <C.mtx | C.json> [--format auto|hm|cdm|csr] [--check]',
    '',
    'Runs C = A·B on the GPU in diagonal storage (seed 002): CDM for narrow square bands, HM otherwise',
    '(auto), or the format given. .mtx output is C in CSR (Matrix Market); other output is JSON of C in',
    'the --format storage (csr arrays, or the hm / cdm diagonal arrays). Values are float32 on the device',
    '(A and B scaled by powers of two into its range, C scaled back; operands whose products span more',
    'than float32 even so are refused with --backend webgpu, and multiplied on the host with auto).',
    '--check   recompute C in float64 on the host and report max |c - c_ref| / sum|a*b| (the float32',
    '          bound is (2 * diagonals(A) + 2) * 2^-24; exceeding it exits 70).',
    '--backend cpu (or auto without a GPU) writes the float64 host product instead.',
  ].join('\n'),
  options: {
    output: { type: 'string', short: 'o' },
    format: { type: 'string' },
    check: { type: 'boolean' },
  },
  async run(pos: string[], v: Record<string, unknown>, common: CommonOptions): Promise<number> {
    if (pos.length !== 2) throw new UsageError(`spgemm: expected two matrix arguments (A and B), got ${pos.length}`);
    if (typeof v.output !== 'string') throw new UsageError('spgemm: -o <output> is required');
    const format = (v.format ?? 'auto') as Format;
    if (!FORMATS.includes(format)) throw new UsageError(`spgemm --format: expected one of ${FORMATS.join(', ')}, got '${String(v.format)}'`);
    const [ma, mb] = [await loadMatrix(pos[0]!), await loadMatrix(pos[1]!)];
    if (common.backend !== 'cpu') checkOperandsFit(ma.matrix, mb.matrix, format);
    const dev = await deviceProduct(ma.matrix, mb.matrix, format, common.backend);
    let t = performance.now();
    const ref = dev.result === undefined || v.check ? csrSpgemmReference(ma.matrix, mb.matrix) : undefined;
    const hostMs = performance.now() - t;
    const r = dev.result;
    const c = r ? r.c : ref!.c;
    assertFiniteProduct(c);
    const maxRelError = r && ref ? spgemmMaxRelError(c, ref) : ref ? 0 : null;
    // float32 rounding of a and b (2u), then one rounding per product and per addition (≤ 2·dgA·u)
    const bound = r ? (2 * Math.max(1, r.stats.diagonalsA) + 2) * 2 ** -24 : 0;
    t = performance.now();
    await writeC(v.output, c, r?.diagonal, format);
    const writeMs = performance.now() - t;
    const summary = {
      a: ma.name,
      b: mb.name,
      shape: [c.rows, c.cols],
      nnzC: c.values.length,
      engine: r ? `webgpu ${r.format}` : 'host float64',
      ...(dev.note ? { note: dev.note } : {}),
      stats: r ? r.stats : { hostMs },
      check: v.check ? { maxRelError, bound: r ? bound : 0, hostMs, pass: maxRelError !== null && maxRelError <= bound } : null,
      writeMs,
      output: v.output,
    };
    if (common.json) printJson(summary);
    else {
      out(`C = A·B: ${c.rows}x${c.cols}, ${c.values.length} non-zeros, by ${summary.engine}${dev.note ? ` (${dev.note})` : ''}`);
      if (r) {
        const s = r.stats;
        out(`diagonals A ${s.diagonalsA}, B ${s.diagonalsB}, C ${s.diagonalsC} (${s.pairs} pairs, ${s.buffersC} C buffer(s), ${s.dispatches} dispatch(es))`);
        out(`symbolic ${s.planMs.toFixed(2)} ms, numeric ${s.executeMs.toFixed(2)} ms (with the wait), convert ${s.convertMs.toFixed(1)} ms, upload ${s.uploadMs.toFixed(1)} ms, read back ${s.readMs.toFixed(1)} ms`);
      }
      if (summary.check) out(`check vs float64: max |c - c_ref| / sum|a*b| = ${maxRelError?.toExponential(2)} (bound ${bound.toExponential(2)}): ${summary.check.pass ? 'pass' : 'FAIL'}`);
      info(`written to ${v.output}`);
    }
    if (summary.check && !summary.check.pass) {
      info('gpusparse: spgemm --check failed: the device product is further from float64 than float32 rounding allows (a bug: please report)');
      return ExitCode.internal;
    }
    return ExitCode.ok;
  },
};
