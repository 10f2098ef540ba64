/**
 * `formatReport(A)`: every registered format's bytes, storage occupancy β, padding and
 * conversion time for one matrix — the shape of seed 001 Table 5 and seed 004 Table 2.
 * @module
 */
import type { CsrMatrix, StorageInfo } from '../core/types';
import { formatBytes } from '../core/errors';
import { type RowLengthStats, rowLengthStats } from '../core/row-stats';
import { csrNnz } from '../csr/csr';
import { type AnyFormat, formats as allFormats } from '../registry';
import { defaultReportMaxBytes, estimateFormatStorage } from './estimate';

/** One row of the memory table. */
export interface FormatReportRow {
  format: string;
  title: string;
  params: Record<string, unknown>;
  /** Bytes with float32 values (what the GPU stores). */
  bytesF32: number;
  /** Bytes with float64 values (the host). */
  bytesF64: number;
  /** bytesF64 / CSR's bytesF64. */
  relativeToCsr: number;
  storedElements: number;
  padding: number;
  beta: number;
  conversionMs: number;
  /** Set when the format refused the matrix (e.g. DIA with too many diagonals). */
  error?: string;
  /**
   * Set when the format was not built because its storage, estimated from row statistics,
   * exceeds the report's `maxBytes` ("needs 3.2 GB (...), over the limit of 268 MB").
   */
  skipped?: string;
  /** The estimate behind `skipped` (bytes with float64 values). */
  estimatedBytesF64?: number;
}

/** The whole report. */
export interface FormatReport {
  rows: number;
  cols: number;
  nnz: number;
  entries: FormatReportRow[];
}

/**
 * Convert `a` to every format (or those named) with default parameters (or `params[name]`),
 * timing each conversion, and collect storage accounting. Cost: one conversion per format.
 * A format whose storage, estimated from row statistics first ({@link estimateFormatStorage}),
 * exceeds `maxBytes` (default {@link defaultReportMaxBytes}) is not built: its row says
 * `skipped` with the bytes it would need.
 * @example
 * const r = formatReport(a);
 * console.log(formatReportTable(r));
 */
export function formatReport(
  a: CsrMatrix,
  opts: { formats?: readonly string[]; params?: Record<string, Record<string, unknown>>; list?: readonly AnyFormat[]; maxBytes?: number } = {},
): FormatReport {
  const list = (opts.list ?? allFormats).filter((f) => !opts.formats || opts.formats.includes(f.name));
  const entries: FormatReportRow[] = [];
  const maxBytes = opts.maxBytes ?? defaultReportMaxBytes(a);
  let stats: RowLengthStats | undefined;
  let csrBytes = Number.NaN;
  for (const f of list) {
    const params = { ...f.defaultParams, ...(opts.params?.[f.name] ?? {}) };
    stats ??= rowLengthStats(a);
    const est = estimateFormatStorage(a, f.name, params, stats);
    if (est && est.bytesF64 > maxBytes) {
      entries.push({
        ...emptyRow(f, params),
        skipped: `needs ${formatBytes(est.bytesF64)} (${est.basis}), over the report limit of ${formatBytes(maxBytes)}`,
        estimatedBytesF64: est.bytesF64,
      });
      continue;
    }
    try {
      const t0 = performance.now();
      const m = f.fromCsr(a, params);
      const conversionMs = performance.now() - t0;
      const s32: StorageInfo = f.storageBytes(m, { valueBytes: 4, indexBytes: 4 });
      const s64: StorageInfo = f.storageBytes(m, { valueBytes: 8, indexBytes: 4 });
      if (f.name === 'csr') csrBytes = s64.bytes;
      entries.push({
        format: f.name,
        title: f.title,
        params,
        bytesF32: s32.bytes,
        bytesF64: s64.bytes,
        relativeToCsr: Number.NaN,
        storedElements: s64.storedElements,
        padding: s64.padding,
        beta: s64.beta,
        conversionMs,
      });
    } catch (e) {
      entries.push({ ...emptyRow(f, params), error: e instanceof Error ? e.message : String(e) });
    }
  }
  for (const e of entries) e.relativeToCsr = e.bytesF64 / csrBytes;
  return { rows: a.rows, cols: a.cols, nnz: csrNnz(a), entries };
}

/** A row without figures (a refused or skipped format). */
function emptyRow(f: AnyFormat, params: Record<string, unknown>): FormatReportRow {
  const nan = Number.NaN;
  return { format: f.name, title: f.title, params, bytesF32: nan, bytesF64: nan, relativeToCsr: nan, storedElements: nan, padding: nan, beta: nan, conversionMs: nan };
}

/** The report as an aligned text table. */
export function formatReportTable(r: FormatReport): string {
  const header = ['format', 'params', 'bytes f32', 'bytes f64', 'x CSR', 'stored', 'padding', 'beta', 'conv ms'];
  const fmtParams = (p: Record<string, unknown>) =>
    Object.entries(p)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
  const rows = r.entries.map((e) =>
    e.error || e.skipped
      ? [e.format, fmtParams(e.params), '-', '-', '-', '-', '-', '-', '-']
      : [e.format, fmtParams(e.params), e.bytesF32, e.bytesF64, e.relativeToCsr.toFixed(2), e.storedElements, e.padding, e.beta.toFixed(3), e.conversionMs.toFixed(2)],
  );
  const widths = header.map((h, j) => Math.max(h.length, ...rows.map((row) => String(row[j]).length)));
  const line = (cells: readonly unknown[]) => cells.map((c, j) => (j < 2 ? String(c).padEnd(widths[j]!) : String(c).padStart(widths[j]!))).join('  ').trimEnd();
  const refused = [
    ...r.entries.filter((e) => e.error).map((e) => `${e.format} refused this matrix: ${e.error}`),
    ...r.entries.filter((e) => e.skipped).map((e) => `${e.format} not built: ${e.skipped}`),
  ];
  return [`${r.rows} x ${r.cols}, nnz ${r.nnz}`, line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line), ...refused].join('\n');
}
