/**
 * SVG plots written as plain strings (no browser, no dependency): convergence histories,
 * bar charts of GFLOP/s (one bar per kernel variant, labelled where it is drawn; or grouped per
 * matrix), and spy plots with axes and format structure drawn on top. Every series is told
 * apart by colour, dash and marker (svg-common.ts) and named in a legend that grows to fit:
 * nothing needs hovering to be read.
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import { esc, linTicks, logTicks, marker, num, PALETTE, seriesStyle, svgOpen, textWidth, tickLabel } from './svg-common';

/** One line of a line plot. */
export interface Series {
  name: string;
  x: readonly number[];
  y: readonly number[];
}

/** Legend entries laid out in columns under a plot `width` wide: positions and the height used. */
function legendGrid(names: readonly string[], width: number, swatch: number): { at: (i: number) => [number, number]; height: number } {
  const colW = Math.min(width, Math.max(...names.map((n) => textWidth(n)), 20) + swatch + 24);
  const cols = Math.max(1, Math.floor(width / colW));
  const rows = Math.ceil(names.length / cols);
  return { at: (i) => [(i % cols) * colW, Math.floor(i / cols) * 18], height: rows * 18 };
}

/** Finite points of each series (positive y only on a log axis). */
function finitePoints(series: readonly Series[], logY: boolean): (readonly [number, number])[][] {
  return series.map((s) => s.x.map((x, i) => [x, s.y[i]!] as const).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!logY || y > 0)));
}

/** The y range: decades on a log axis, else min..max (at least 1 wide). */
function yRange(ys: number[], logY: boolean): [number, number] {
  let lo = ys.length ? Math.min(...ys) : logY ? 1e-1 : 0;
  let hi = ys.length ? Math.max(...ys) : 1;
  if (logY) {
    lo = 10 ** Math.floor(Math.log10(lo));
    hi = 10 ** Math.ceil(Math.log10(hi));
    if (lo === hi) hi = lo * 10;
  } else if (lo === hi) hi = lo + 1;
  return [lo, hi];
}

/**
 * A line plot; `logY` for residual histories (non-positive values are dropped on a log axis).
 * Each series has its own colour, dash and marker; the legend sits under the plot, in as many
 * rows as its names need (never cut).
 * @example
 * writeFileSync('conv.svg', linePlot([{ name: 'cg', x: [0, 1], y: [1, 0.1] }], { logY: true }));
 */
export function linePlot(
  series: readonly Series[],
  opts: { title?: string; xLabel?: string; yLabel?: string; logY?: boolean; width?: number; height?: number } = {},
): string {
  const logY = Boolean(opts.logY);
  const W = opts.width ?? 720;
  const m = { l: 74, r: 24, t: 40, b: 56 };
  const pw = W - m.l - m.r;
  const ph = (opts.height ?? 440) - m.t - m.b;
  const legend = legendGrid(series.map((s) => s.name), pw, 30);
  const H = m.t + ph + m.b + legend.height + 10;
  const pts = finitePoints(series, logY);
  const xs = pts.flat().map((p) => p[0]);
  const xlo = xs.length ? Math.min(...xs) : 0;
  const xhi = xs.length ? Math.max(...xs) : 1;
  const [ylo, yhi] = yRange(pts.flat().map((p) => p[1]), logY);
  const fy = (y: number) => (logY ? (Math.log10(y) - Math.log10(ylo)) / (Math.log10(yhi) - Math.log10(ylo)) : (y - ylo) / (yhi - ylo));
  const X = (x: number) => m.l + (xhi === xlo ? 0.5 : (x - xlo) / (xhi - xlo)) * pw;
  const Y = (y: number) => m.t + (1 - fy(y)) * ph;
  const parts = svgOpen(W, H, opts.title ?? 'plot');
  if (opts.title) parts.push(`<text x="${W / 2}" y="24" text-anchor="middle" font-size="15">${esc(opts.title)}</text>`);
  for (const t of logY ? logTicks(ylo, yhi) : linTicks(ylo, yhi)) {
    if (t < ylo || t > yhi) continue;
    parts.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${num(Y(t))}" y2="${num(Y(t))}" stroke="#ddd"/>`);
    parts.push(`<text x="${m.l - 6}" y="${num(Y(t) + 4)}" text-anchor="end">${logY ? t.toExponential(0) : tickLabel(t)}</text>`);
  }
  for (const t of linTicks(xlo, xhi)) {
    parts.push(`<line x1="${num(X(t))}" x2="${num(X(t))}" y1="${m.t + ph}" y2="${m.t + ph + 5}" stroke="black"/>`);
    parts.push(`<text x="${num(X(t))}" y="${m.t + ph + 18}" text-anchor="middle">${tickLabel(t)}</text>`);
  }
  parts.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="black"/>`);
  if (opts.xLabel) parts.push(`<text x="${m.l + pw / 2}" y="${m.t + ph + 40}" text-anchor="middle">${esc(opts.xLabel)}</text>`);
  if (opts.yLabel) parts.push(`<text transform="translate(16 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle">${esc(opts.yLabel)}</text>`);
  pts.forEach((p, k) => {
    const st = seriesStyle(k);
    const dash = st.dash ? ` stroke-dasharray="${st.dash}"` : '';
    if (p.length > 0) parts.push(`<polyline fill="none" stroke="${st.color}" stroke-width="1.8"${dash} points="${p.map(([x, y]) => `${num(X(x))},${num(Y(y))}`).join(' ')}"/>`);
    // markers at ≤ 12 evenly spaced points, offset per series so that overlapping lines still show each
    const every = Math.max(1, Math.ceil(p.length / 12));
    for (let i = (k * 3) % every; i < p.length; i += every) parts.push(marker(st.marker, X(p[i]![0]), Y(p[i]![1]), 3.5, st.color));
    const [lx, ly] = legend.at(k);
    const y0 = m.t + ph + m.b + ly + 6;
    parts.push(`<line x1="${m.l + lx}" x2="${m.l + lx + 26}" y1="${y0}" y2="${y0}" stroke="${st.color}" stroke-width="2"${dash}/>`);
    parts.push(marker(st.marker, m.l + lx + 13, y0, 3.5, st.color));
    parts.push(`<text x="${m.l + lx + 32}" y="${y0 + 4}">${esc(series[k]!.name)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

/** One bar of {@link variantChart}: a kernel (the group) and its variant's label and value. */
export interface VariantBar {
  group: string;
  label: string;
  value: number;
}

/**
 * Horizontal bars, one per kernel variant, grouped by kernel: each group's name heads its bars,
 * each bar is labelled on its left with the variant (the parameters that differ from the
 * kernel's defaults) and on its right with its value. Groups run from the fastest best variant
 * down; colours only separate neighbouring groups, the labels carry the identity.
 * @example
 * variantChart([{ group: 'csr-vector', label: 'defaults', value: 12.5 }], { title: 'SpMV', xLabel: 'GFLOP/s' });
 */
export function variantChart(bars: readonly VariantBar[], opts: { title?: string; xLabel?: string; width?: number } = {}): string {
  const groups = new Map<string, VariantBar[]>();
  for (const b of bars) groups.set(b.group, [...(groups.get(b.group) ?? []), b]);
  const ordered = [...groups.entries()].map(([g, bs]) => [g, [...bs].sort((p, q) => q.value - p.value)] as const).sort((p, q) => q[1][0]!.value - p[1][0]!.value);
  const rowH = 16;
  const labelW = Math.max(120, ...bars.map((b) => textWidth(b.label) + 24), ...ordered.map(([g]) => textWidth(g, 13) + 8));
  const W = opts.width ?? Math.max(720, labelW + 480);
  const m = { l: labelW + 10, r: 70, t: 56, b: 44 };
  const pw = W - m.l - m.r;
  const ph = ordered.reduce((s, [, bs]) => s + (bs.length + 1) * rowH, 0) + 4;
  const H = m.t + ph + m.b;
  const vmax = Math.max(1e-12, ...bars.map((b) => b.value).filter(Number.isFinite));
  const ticks = linTicks(0, vmax * 1.02);
  const xmax = Math.max(ticks[ticks.length - 1]!, vmax);
  const X = (v: number) => m.l + (v / xmax) * pw;
  const parts = svgOpen(W, H, opts.title ?? 'bar chart');
  if (opts.title) parts.push(`<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${esc(opts.title)}</text>`);
  for (const t of ticks) {
    parts.push(`<line x1="${num(X(t))}" x2="${num(X(t))}" y1="${m.t}" y2="${m.t + ph}" stroke="#e4e4e4"/>`);
    for (const y of [m.t - 6, m.t + ph + 16]) parts.push(`<text x="${num(X(t))}" y="${y}" text-anchor="middle">${tickLabel(t)}</text>`);
  }
  let y = m.t + 2;
  ordered.forEach(([g, bs], gi) => {
    const color = PALETTE[gi % 2 === 0 ? 0 : 3]!;
    parts.push(`<rect x="0" y="${y}" width="${W}" height="${(bs.length + 1) * rowH}" fill="${gi % 2 === 0 ? '#f6f8fb' : '#fdf8f3'}"/>`);
    parts.push(`<text x="8" y="${y + rowH - 4}" font-weight="bold" font-size="13">${esc(g)}</text>`);
    y += rowH;
    for (const b of bs) {
      parts.push(`<text x="${m.l - 6}" y="${y + rowH - 4}" text-anchor="end">${esc(b.label)}</text>`);
      parts.push(`<rect x="${m.l}" y="${y + 2}" width="${num(Math.max(0.5, X(b.value) - m.l))}" height="${rowH - 4}" fill="${color}"/>`);
      parts.push(`<text x="${num(X(b.value) + 4)}" y="${y + rowH - 4}">${b.value.toPrecision(3)}</text>`);
      y += rowH;
    }
  });
  parts.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="black"/>`);
  if (opts.xLabel) parts.push(`<text x="${m.l + pw / 2}" y="${H - 8}" text-anchor="middle">${esc(opts.xLabel)}</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}

/** A bar's fill: the series colour, hatched for series 12–23 (and so on) so 24 series stay distinct. */
function barFill(si: number): { fill: string; defs?: string } {
  const color = PALETTE[si % PALETTE.length]!;
  if (si < PALETTE.length) return { fill: color };
  const id = `hatch${si}`;
  const angle = Math.floor(si / PALETTE.length) % 2 === 1 ? 45 : -45;
  return {
    fill: `url(#${id})`,
    defs: `<pattern id="${id}" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(${angle})"><rect width="5" height="5" fill="white"/><rect width="2.6" height="5" fill="${color}"/></pattern>`,
  };
}

/**
 * A grouped bar chart: one group per category (matrix), one bar per series (format/kernel).
 * `values[s][c]` is series s at category c; NaN or undefined draws no bar. Series 12 and up are
 * hatched in the palette's colours; the legend under the plot lists every series.
 */
export function groupedBarChart(
  categories: readonly string[],
  seriesNames: readonly string[],
  values: readonly (readonly (number | undefined)[])[],
  opts: { title?: string; yLabel?: string; width?: number; height?: number } = {},
): string {
  const W = opts.width ?? Math.max(720, (8 + 10 * seriesNames.length) * categories.length + 120);
  const m = { l: 70, r: 24, t: 40, b: 10 + Math.min(160, Math.max(...categories.map((c) => textWidth(c)), 40) * 0.7) };
  const pw = W - m.l - m.r;
  const ph = (opts.height ?? 460) - 150;
  const legend = legendGrid(seriesNames, pw, 16);
  const H = m.t + ph + m.b + legend.height + 16;
  const all = values.flat().filter((v): v is number => v !== undefined && Number.isFinite(v));
  const ticks = linTicks(0, all.length ? Math.max(...all) * 1.05 : 1);
  const Y = (v: number) => m.t + (1 - v / Math.max(ticks[ticks.length - 1]!, ...all)) * ph;
  const gw = pw / Math.max(1, categories.length);
  const bw = (gw * 0.85) / Math.max(1, seriesNames.length);
  const fills = seriesNames.map((_, si) => barFill(si));
  const parts = svgOpen(W, H, opts.title ?? 'plot');
  const defs = fills.map((f) => f.defs).filter(Boolean);
  if (defs.length) parts.push(`<defs>${defs.join('')}</defs>`);
  if (opts.title) parts.push(`<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${esc(opts.title)}</text>`);
  for (const t of ticks) {
    parts.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${num(Y(t))}" y2="${num(Y(t))}" stroke="#ddd"/>`);
    parts.push(`<text x="${m.l - 6}" y="${num(Y(t) + 4)}" text-anchor="end">${tickLabel(t)}</text>`);
  }
  categories.forEach((c, ci) => {
    const gx = m.l + ci * gw + gw * 0.075;
    seriesNames.forEach((name, si) => {
      const v = values[si]?.[ci];
      if (v === undefined || !Number.isFinite(v)) return;
      parts.push(`<rect x="${num(gx + si * bw)}" y="${num(Y(v))}" width="${num(bw * 0.9)}" height="${num(m.t + ph - Y(v))}" fill="${fills[si]!.fill}" stroke="${PALETTE[si % PALETTE.length]}" stroke-width="0.5"><title>${esc(`${name} on ${c}: ${v.toPrecision(4)}`)}</title></rect>`);
    });
    parts.push(`<text transform="translate(${num(m.l + ci * gw + gw / 2)} ${m.t + ph + 12}) rotate(40)" text-anchor="start">${esc(c)}</text>`);
  });
  parts.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="black"/>`);
  if (opts.yLabel) parts.push(`<text transform="translate(16 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle">${esc(opts.yLabel)}</text>`);
  seriesNames.forEach((s, si) => {
    const [lx, ly] = legend.at(si);
    const y0 = m.t + ph + m.b + ly;
    parts.push(`<rect x="${m.l + lx}" y="${y0}" width="14" height="12" fill="${fills[si]!.fill}" stroke="${PALETTE[si % PALETTE.length]}"/>`);
    parts.push(`<text x="${m.l + lx + 20}" y="${y0 + 10}">${esc(s)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

/** Structure to draw over a spy plot. */
export type SpyOverlay =
  | { kind: 'boundary'; boundary: number; rowBoundaryColumn: Int32Array }
  | { kind: 'chunks'; chunkHeight: number; chunkWidths: ArrayLike<number> };

/** Words of `text` in lines of at most `width` px. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let cur = '';
  for (const w of text.split(' ')) {
    if (cur && textWidth(`${cur} ${w}`) > width) {
      lines.push(cur);
      cur = w;
    } else cur = cur ? `${cur} ${w}` : w;
  }
  if (cur) lines.push(cur);
  return lines;
}

/** Non-zeros per cell binned on a gr × gc grid. */
function spyCounts(a: CsrMatrix, gr: number, gc: number): { counts: Float64Array; max: number } {
  const counts = new Float64Array(gr * gc);
  for (let i = 0; i < a.rows; i++) {
    const bi = Math.floor((i * gr) / a.rows);
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) counts[bi * gc + Math.floor((a.colIdx[k]! * gc) / a.cols)]!++;
  }
  let max = 0;
  for (const c of counts) if (c > max) max = c;
  return { counts, max };
}

/** Grey of level 0..7 (darker = more non-zeros). */
const shadeOf = (lv: number) => Math.round(200 * (1 - (lv + 1) / 8));

/** Row index ticks on the left, column index ticks on top (0-based, as the CSR arrays). */
function spyAxes(a: CsrMatrix, x0: number, y0: number, w: number, h: number): string[] {
  const parts: string[] = [];
  for (const t of linTicks(0, a.rows, 6)) {
    if (t > a.rows) continue;
    const y = y0 + (t / Math.max(1, a.rows)) * h;
    parts.push(`<line x1="${x0 - 5}" x2="${x0}" y1="${num(y)}" y2="${num(y)}" stroke="black"/><text x="${x0 - 8}" y="${num(y + 4)}" text-anchor="end">${tickLabel(t)}</text>`);
  }
  for (const t of linTicks(0, a.cols, 5)) {
    if (t > a.cols) continue;
    const x = x0 + (t / Math.max(1, a.cols)) * w;
    parts.push(`<line x1="${num(x)}" x2="${num(x)}" y1="${y0 - 5}" y2="${y0}" stroke="black"/><text x="${num(x)}" y="${y0 - 9}" text-anchor="middle">${tickLabel(t)}</text>`);
  }
  parts.push(`<text x="${num(x0 + w / 2)}" y="${y0 - 26}" text-anchor="middle">column</text>`);
  parts.push(`<text transform="translate(14 ${num(y0 + h / 2)}) rotate(-90)" text-anchor="middle">row</text>`);
  return parts;
}

/** The overlay's marks and its legend line. */
function spyOverlay(a: CsrMatrix, ov: SpyOverlay, x0: number, y0: number, gr: number, gc: number, cell: number): { marks: string; legend: { swatch: string; text: string } } {
  if (ov.kind === 'boundary') {
    // one short vertical mark per (binned) row at the column where its ELL part ends
    const d: string[] = [];
    for (let r = 0; r < gr; r++) {
      const i = Math.min(a.rows - 1, Math.floor((r * a.rows) / gr));
      const col = ov.rowBoundaryColumn[i] ?? a.cols;
      if (col >= a.cols) continue; // the whole row fits in the ELL part
      const x = x0 + ((col * gc) / a.cols) * cell;
      d.push(`M${num(x)} ${num(y0 + r * cell)}V${num(y0 + (r + 1) * cell)}`);
    }
    return {
      marks: `<path d="${d.join('')}" stroke="#e00000" stroke-width="2.5" fill="none"/>`,
      legend: { swatch: 'red-line', text: `hybrid BOUNDARY = ${ov.boundary}: a row's first ${ov.boundary} non-zeros (left of its red mark) are stored in ELL, the rest in CSR; rows without a mark fit in ELL` },
    };
  }
  const sy = (gr * cell) / Math.max(1, a.rows);
  const sx = (gc * cell) / Math.max(1, a.cols);
  const rects: string[] = [];
  for (let c = 0; c < ov.chunkWidths.length; c++) {
    const rowsIn = Math.min(ov.chunkHeight, a.rows - c * ov.chunkHeight); // the last chunk's padding rows are not drawn
    rects.push(`<rect x="${x0}" y="${num(y0 + c * ov.chunkHeight * sy)}" width="${num(Math.max(0.5, ov.chunkWidths[c]! * sx))}" height="${num(Math.max(0, rowsIn) * sy)}" fill="none" stroke="blue" stroke-width="0.8"/>`);
  }
  return {
    marks: rects.join(''),
    legend: { swatch: 'blue-rect', text: `SELL-C-σ chunks (${ov.chunkWidths.length}): each blue box is one chunk of C = ${ov.chunkHeight} rows in sorted order, as wide as its longest row (the slots it stores)` },
  };
}

/**
 * A spy plot (density-binned to at most `pixels`² cells, 8 grey levels on a log scale) with row
 * and column axes, optionally with the hybrid format's BOUNDARY (where each row's ELL part ends,
 * red marks) or SELL-C-σ's chunks (boxes of height C and each chunk's width, in sorted row order);
 * a legend under the plot explains the greys, the cell size and the overlay.
 */
export function spyPlot(a: CsrMatrix, opts: { pixels?: number; title?: string; overlay?: SpyOverlay } = {}): string {
  const P = opts.pixels ?? 200;
  const gr = Math.min(P, Math.max(1, a.rows));
  const gc = Math.min(P, Math.max(1, a.cols));
  const { counts, max } = spyCounts(a, gr, gc);
  const cell = 400 / Math.max(gr, gc);
  const m = { l: 70, t: 80, r: 30 };
  const pw = gc * cell;
  const W = Math.max(560, m.l + pw + m.r);
  const textW = W - 40;
  const ov = opts.overlay ? spyOverlay(a, opts.overlay, m.l, m.t, gr, gc, cell) : undefined;
  const cellRows = Math.ceil(a.rows / gr);
  const cellCols = Math.ceil(a.cols / gc);
  const note = wrap(`one cell: ${cellRows} row${cellRows > 1 ? 's' : ''} × ${cellCols} column${cellCols > 1 ? 's' : ''}; grey: non-zeros in the cell, log scale, white = none`, textW);
  const ovLines = ov ? wrap(ov.legend.text, textW - 30) : [];
  const legendTop = m.t + gr * cell + 24;
  const H = legendTop + 34 + 16 * note.length + (ov ? 8 + 16 * ovLines.length : 0) + 10;
  const title = opts.title ?? `${a.rows}×${a.cols}, nnz ${a.rowPtr[a.rows]}`;
  const parts = svgOpen(W, H, `spy plot: ${title}`);
  parts.push(`<text x="${num(W / 2)}" y="22" text-anchor="middle" font-size="14">${esc(title)}</text>`);
  const level = (v: number) => (v === 0 ? -1 : Math.min(7, Math.floor((8 * Math.log1p(v)) / Math.log1p(max + 1e-9))));
  // runs of equal level in a row become one rect (keeps files small)
  for (let r = 0; r < gr; r++) {
    for (let c = 0; c < gc; ) {
      const lv = level(counts[r * gc + c]!);
      let e = c + 1;
      while (e < gc && level(counts[r * gc + e]!) === lv) e++;
      if (lv >= 0) parts.push(`<rect x="${num(m.l + c * cell)}" y="${num(m.t + r * cell)}" width="${num((e - c) * cell)}" height="${num(cell)}" fill="rgb(${shadeOf(lv)},${shadeOf(lv)},${shadeOf(lv)})"/>`);
      c = e;
    }
  }
  parts.push(`<rect x="${m.l}" y="${m.t}" width="${num(pw)}" height="${num(gr * cell)}" fill="none" stroke="black"/>`);
  parts.push(...spyAxes(a, m.l, m.t, pw, gr * cell));
  if (ov) parts.push(ov.marks);
  // legend: the grey ramp from 1 to the densest cell, the cell size, the overlay
  parts.push(`<text x="20" y="${legendTop + 12}">non-zeros per cell:</text><text x="150" y="${legendTop + 12}" text-anchor="end">1</text>`);
  for (let lv = 0; lv < 8; lv++) parts.push(`<rect x="${156 + lv * 18}" y="${legendTop}" width="18" height="16" fill="rgb(${shadeOf(lv)},${shadeOf(lv)},${shadeOf(lv)})" stroke="#999" stroke-width="0.5"/>`);
  parts.push(`<text x="${156 + 8 * 18 + 6}" y="${legendTop + 12}">${max}</text>`);
  parts.push(...note.map((l, i) => `<text x="20" y="${legendTop + 34 + 16 * i}">${esc(l)}</text>`));
  if (ov) {
    const y = legendTop + 34 + 16 * note.length + 8;
    parts.push(ov.legend.swatch === 'red-line' ? `<path d="M27 ${y - 10}V${y + 4}" stroke="red" stroke-width="2"/>` : `<rect x="20" y="${y - 10}" width="16" height="13" fill="none" stroke="blue" stroke-width="1.2"/>`);
    parts.push(...ovLines.map((l, i) => `<text x="44" y="${y + 16 * i}">${esc(l)}</text>`));
  }
  parts.push('</svg>');
  return parts.join('\n');
}
