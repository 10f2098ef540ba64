/**
 * Plain-text tables for the CLI: right-aligned numbers, left-aligned text, a header rule.
 * @module
 */

/** A table cell: text or a number (formatted with `digits` significant digits). */
export type Cell = string | number | boolean | null | undefined;

/**
 * Format rows as an aligned text table.
 * @example
 * formatTable(['format', 'bytes'], [['csr', 1234]]);
 */
export function formatTable(header: readonly string[], rows: readonly (readonly Cell[])[], digits = 4): string {
  const fmt = (c: Cell): string => {
    if (c === null || c === undefined) return '-';
    if (typeof c === 'number') {
      if (!Number.isFinite(c)) return String(c);
      if (Number.isInteger(c)) return c.toLocaleString('en-US');
      const a = Math.abs(c);
      if (a !== 0 && (a < 1e-3 || a >= 1e7)) return c.toExponential(digits - 1);
      return c.toPrecision(digits);
    }
    return String(c);
  };
  const text = rows.map((r) => r.map(fmt));
  const width = header.map((h, j) => Math.max(h.length, ...text.map((r) => (r[j] ?? '').length)));
  const numeric = header.map((_, j) => rows.length > 0 && rows.every((r) => typeof r[j] === 'number' || r[j] == null));
  const line = (cells: readonly string[]) =>
    cells.map((c, j) => (numeric[j] ? c.padStart(width[j]!) : c.padEnd(width[j]!))).join('  ').trimEnd();
  return [line(header), width.map((w) => '-'.repeat(w)).join('  '), ...text.map(line)].join('\n');
}

/** Human-readable byte count (KiB, MiB, GiB). */
export function formatBytes(n: number): string {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(2)} ${u[i]}`;
}
