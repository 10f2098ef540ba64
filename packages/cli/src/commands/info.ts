/**
 * `gpusparse info A.mtx`: shape, nnz, row-length statistics, symmetry, and the memory table of
 * every format; `--spy file.svg` draws a spy plot, with `--overlay hybrid|sell` structure.
 * @module
 */
import { availableMemoryBytes, type CsrMatrix, csrTranspose, defaultReportMaxBytes, formatReport, formatReportTable, getFormat, rowLengthStats } from '@gpusparse/formats';
import { type SpyOverlay, spyPlot } from '../plots/svg';
import { type Command, type CommonOptions, ExitCode, formatNameOption, info, out, printJson, UsageError } from '../util/context';
import { loadMatrix } from '../util/load';
import { writeOutputFile } from '../util/output';
import { formatTable } from '../util/table';

/** Numerical symmetry of a square matrix: 'symmetric', 'skew-symmetric' or 'general'. */
export function detectSymmetry(a: CsrMatrix): 'symmetric' | 'skew-symmetric' | 'general' | 'rectangular' {
  if (a.rows !== a.cols) return 'rectangular';
  const t = csrTranspose(a);
  if (t.colIdx.length !== a.colIdx.length) return 'general';
  for (let i = 0; i <= a.rows; i++) if (t.rowPtr[i] !== a.rowPtr[i]) return 'general';
  let sym = true;
  let skew = true;
  for (let k = 0; k < a.colIdx.length; k++) {
    if (t.colIdx[k] !== a.colIdx[k]) return 'general';
    if (t.values[k] !== a.values[k]) sym = false;
    if (t.values[k] !== -a.values[k]!) skew = false;
  }
  return sym ? 'symmetric' : skew ? 'skew-symmetric' : 'general';
}

function overlayFor(a: CsrMatrix, kind: string): SpyOverlay {
  if (kind === 'hybrid') {
    const m = getFormat('hybrid').fromCsr(a, {}) as { boundary: number };
    // the column where each row's ELL part ends: the BOUNDARY-th stored column of the row
    const col = new Int32Array(a.rows);
    for (let i = 0; i < a.rows; i++) {
      const s = a.rowPtr[i]!;
      const len = a.rowPtr[i + 1]! - s;
      col[i] = len > m.boundary ? a.colIdx[s + m.boundary]! : a.cols;
    }
    return { kind: 'boundary', boundary: m.boundary, rowBoundaryColumn: col };
  }
  if (kind === 'sell') {
    const m = getFormat('sell').fromCsr(a, {}) as { C: number; chunkWidth: Int32Array };
    return { kind: 'chunks', chunkHeight: m.C, chunkWidths: m.chunkWidth };
  }
  throw new UsageError(`--overlay: expected hybrid or sell, got '${kind}'`);
}

export const infoCommand: Command = {
  summary: 'shape, nnz, row-length statistics, symmetry and the memory table of every format',
  usage: [
    'usage: gpusparse info <A.mtx | gen:name:args> [--spy out.svg [--overlay hybrid|sell]] [--formats csr,ell,...] [--lenient] [--json]',
    '',
    'Prints the row-length statistics — RMIN, RAVE, RMAX: shortest, mean and longest row (non-zeros);',
    'RSD: their standard deviation; RSDP: RSD as a percentage of RAVE (how irregular the rows are);',
    'p33/p50/p90/p99: row-length percentiles — and, for every storage format, bytes (f32 and f64 values),',
    'occupancy beta = nnz/stored, padding and conversion time. --spy draws the pattern (rows × columns, with',
    'axes and a legend); --overlay hybrid marks where each row\'s ELL part ends, --overlay sell the SELL-C-σ chunks.',
    'A format whose storage, estimated from row lengths, exceeds max(64 MiB, 16 × CSR) is listed as not built.',
    '--lenient: a Matrix Market file with more entries than its size line declares is read with a warning',
    '(the extra entries kept) instead of refused; fewer entries than declared is always an error.',
  ].join('\n'),
  options: { spy: { type: 'string' }, overlay: { type: 'string' }, formats: { type: 'string' }, lenient: { type: 'boolean' } },
  async run(pos: string[], v: Record<string, unknown>, common: CommonOptions): Promise<number> {
    if (pos.length !== 1) throw new UsageError(`info: expected one matrix argument, got ${pos.length}`);
    const t0 = performance.now();
    const m = await loadMatrix(pos[0]!, { strictCount: !v.lenient, lenientOption: true });
    const readMs = performance.now() - t0;
    const a = m.matrix;
    const stats = rowLengthStats(a);
    const symmetry = detectSymmetry(a);
    const names = typeof v.formats === 'string' ? v.formats.split(',').map((n) => formatNameOption('formats', n, n)) : undefined;
    // formats padded past the limit (estimated from row lengths) are listed as not built
    const maxBytes = Math.min(defaultReportMaxBytes(a), availableMemoryBytes() / 2);
    const report = formatReport(a, { formats: names, maxBytes });
    if (typeof v.spy === 'string') {
      const svg = spyPlot(a, { title: `${m.name}: ${a.rows}×${a.cols}, nnz ${stats.nnz}`, overlay: typeof v.overlay === 'string' ? overlayFor(a, v.overlay) : undefined });
      writeOutputFile(v.spy, svg);
      info(`spy plot written to ${v.spy}`);
    }
    if (common.json) {
      printJson({ matrix: m.name, fileSymmetry: m.symmetry, symmetry, readMs, stats, formats: report.entries });
      return ExitCode.ok;
    }
    out(`${m.name}: ${a.rows} x ${a.cols}, nnz ${stats.nnz}, ${symmetry} (file: ${m.symmetry}), read in ${readMs.toFixed(1)} ms`);
    out();
    out(
      formatTable(
        ['RMIN', 'RAVE', 'RMAX', 'RSD', 'RSDP %', 'p33', 'p50', 'p90', 'p99', 'empty rows', 'diagonals', 'bandwidth'],
        [[stats.min, stats.mean, stats.max, stats.rsd, stats.rsdp, stats.p33, stats.p50, stats.p90, stats.p99, stats.emptyRows, stats.occupiedDiagonals, stats.bandwidth]],
      ),
    );
    out();
    out(formatReportTable(report));
    return ExitCode.ok;
  },
};
