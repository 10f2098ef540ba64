/**
 * SVG plots written as plain strings (no browser, no dependency): convergence histories,
 * grouped bar charts of GFLOP/s per format per matrix (the shape of seed 004 Fig. 6), and spy
 * plots with format structure drawn on top.
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const num = (v: number) => (Math.round(v * 100) / 100).toString();

/** One line of a line plot. */
export interface Series {
  name: string;
  x: readonly number[];
  y: readonly number[];
}

/** Tick values for a log axis between lo and hi (powers of ten). */
function logTicks(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e);
  return out;
}

/** "Nice" linear ticks. */
function linTicks(lo: number, hi: number, n = 6): number[] {
  const span = hi - lo || 1;
  const step0 = span / n;
  const mag = 10 ** Math.floor(Math.log10(step0));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => span / s <= n) ?? mag * 10;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-12; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/**
 * A line plot; `logY` for residual histories (non-positive values are dropped on a log axis).
 * @example
 * writeFileSync('conv.svg', linePlot([{ name: 'cg', x: [0, 1], y: [1, 0.1] }], { logY: true }));
 */
export function linePlot(
  series: readonly Series[],
  opts: { title?: string; xLabel?: string; yLabel?: string; logY?: boolean; width?: number; height?: number } = {},
): string {
  const W = opts.width ?? 720;
  const H = opts.height ?? 440;
  const m = { l: 70, r: 160, t: 40, b: 50 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const pts = series.map((s) =>
    s.x.map((x, i) => [x, s.y[i]!] as const).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!opts.logY || y > 0)),
  );
  const xs = pts.flat().map((p) => p[0]);
  const ys = pts.flat().map((p) => p[1]);
  const xlo = xs.length ? Math.min(...xs) : 0;
  const xhi = xs.length ? Math.max(...xs) : 1;
  let ylo = ys.length ? Math.min(...ys) : opts.logY ? 1e-1 : 0;
  let yhi = ys.length ? Math.max(...ys) : 1;
  if (opts.logY) {
    ylo = 10 ** Math.floor(Math.log10(ylo));
    yhi = 10 ** Math.ceil(Math.log10(yhi));
    if (ylo === yhi) yhi = ylo * 10;
  } else if (ylo === yhi) yhi = ylo + 1;
  const fy = (y: number) => (opts.logY ? (Math.log10(y) - Math.log10(ylo)) / (Math.log10(yhi) - Math.log10(ylo)) : (y - ylo) / (yhi - ylo));
  const X = (x: number) => m.l + (xhi === xlo ? 0.5 : (x - xlo) / (xhi - xlo)) * pw;
  const Y = (y: number) => m.t + (1 - fy(y)) * ph;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  parts.push(`<title>${esc(opts.title ?? 'plot')}</title>`);
  parts.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  if (opts.title) parts.push(`<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${esc(opts.title)}</text>`);
  for (const t of opts.logY ? logTicks(ylo, yhi) : linTicks(ylo, yhi)) {
    if (t < ylo || t > yhi) continue;
    parts.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${num(Y(t))}" y2="${num(Y(t))}" stroke="#ddd"/>`);
    parts.push(`<text x="${m.l - 6}" y="${num(Y(t) + 4)}" text-anchor="end">${opts.logY ? t.toExponential(0) : t}</text>`);
  }
  for (const t of linTicks(xlo, xhi)) {
    parts.push(`<line x1="${num(X(t))}" x2="${num(X(t))}" y1="${m.t + ph}" y2="${m.t + ph + 5}" stroke="black"/>`);
    parts.push(`<text x="${num(X(t))}" y="${m.t + ph + 18}" text-anchor="middle">${t}</text>`);
  }
  parts.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="black"/>`);
  if (opts.xLabel) parts.push(`<text x="${m.l + pw / 2}" y="${H - 10}" text-anchor="middle">${esc(opts.xLabel)}</text>`);
  if (opts.yLabel) parts.push(`<text transform="translate(16 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle">${esc(opts.yLabel)}</text>`);
  pts.forEach((p, k) => {
    const color = PALETTE[k % PALETTE.length]!;
    if (p.length > 0) {
      parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.8" points="${p.map(([x, y]) => `${num(X(x))},${num(Y(y))}`).join(' ')}"/>`);
    }
    const ly = m.t + 10 + k * 18;
    parts.push(`<line x1="${m.l + pw + 12}" x2="${m.l + pw + 32}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    parts.push(`<text x="${m.l + pw + 38}" y="${ly + 4}">${esc(series[k]!.name)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

/**
 * A grouped bar chart: one group per category (matrix), one bar per series (format/kernel).
 * `values[s][c]` is series s at category c; NaN or undefined draws no bar.
 */
export function groupedBarChart(
  categories: readonly string[],
  seriesNames: readonly string[],
  values: readonly (readonly (number | undefined)[])[],
  opts: { title?: string; yLabel?: string; width?: number; height?: number } = {},
): string {
  const W = opts.width ?? Math.max(720, 90 * categories.length + 240);
  const H = opts.height ?? 460;
  const m = { l: 70, r: 170, t: 40, b: 110 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const all = values.flat().filter((v): v is number => v !== undefined && Number.isFinite(v));
  const yhi = all.length ? Math.max(...all) * 1.05 : 1;
  const ticks = linTicks(0, yhi);
  const Y = (v: number) => m.t + (1 - v / Math.max(ticks[ticks.length - 1]!, yhi)) * ph;
  const gw = pw / Math.max(1, categories.length);
  const bw = (gw * 0.8) / Math.max(1, seriesNames.length);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  parts.push(`<title>${esc(opts.title ?? 'plot')}</title>`);
  parts.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  if (opts.title) parts.push(`<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${esc(opts.title)}</text>`);
  for (const t of ticks) {
    parts.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${num(Y(t))}" y2="${num(Y(t))}" stroke="#ddd"/>`);
    parts.push(`<text x="${m.l - 6}" y="${num(Y(t) + 4)}" text-anchor="end">${t}</text>`);
  }
  categories.forEach((c, ci) => {
    const gx = m.l + ci * gw + gw * 0.1;
    seriesNames.forEach((_, si) => {
      const v = values[si]?.[ci];
      if (v === undefined || !Number.isFinite(v)) return;
      parts.push(`<rect x="${num(gx + si * bw)}" y="${num(Y(v))}" width="${num(bw * 0.95)}" height="${num(m.t + ph - Y(v))}" fill="${PALETTE[si % PALETTE.length]}"><title>${esc(`${seriesNames[si]} on ${c}: ${v.toPrecision(4)}`)}</title></rect>`);
    });
    const cx = m.l + ci * gw + gw / 2;
    parts.push(`<text transform="translate(${num(cx)} ${m.t + ph + 12}) rotate(40)" text-anchor="start">${esc(c)}</text>`);
  });
  parts.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="black"/>`);
  if (opts.yLabel) parts.push(`<text transform="translate(16 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle">${esc(opts.yLabel)}</text>`);
  seriesNames.forEach((s, si) => {
    const ly = m.t + 10 + si * 18;
    parts.push(`<rect x="${m.l + pw + 12}" y="${ly - 8}" width="14" height="12" fill="${PALETTE[si % PALETTE.length]}"/>`);
    parts.push(`<text x="${m.l + pw + 32}" y="${ly + 2}">${esc(s)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

/** Structure to draw over a spy plot. */
export type SpyOverlay =
  | { kind: 'boundary'; boundary: number; rowBoundaryColumn: Int32Array }
  | { kind: 'chunks'; chunkHeight: number; chunkWidths: ArrayLike<number> };

/**
 * A spy plot (density-binned to at most `pixels`² cells), optionally with the hybrid format's
 * BOUNDARY (the column where each row's ELL part ends, drawn as a red step line) or SELL-C-σ's
 * chunks (rectangles of height C and each chunk's width, in the sorted row order).
 */
export function spyPlot(a: CsrMatrix, opts: { pixels?: number; title?: string; overlay?: SpyOverlay } = {}): string {
  const P = opts.pixels ?? 200;
  const gr = Math.min(P, Math.max(1, a.rows));
  const gc = Math.min(P, Math.max(1, a.cols));
  const counts = new Float64Array(gr * gc);
  for (let i = 0; i < a.rows; i++) {
    const bi = Math.floor((i * gr) / a.rows);
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) counts[bi * gc + Math.floor((a.colIdx[k]! * gc) / a.cols)]!++;
  }
  let max = 0;
  for (const c of counts) if (c > max) max = c;
  const cell = 400 / Math.max(gr, gc);
  const m = 40;
  const W = gc * cell + 2 * m;
  const H = gr * cell + 2 * m;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${num(W)}" height="${num(H)}" viewBox="0 0 ${num(W)} ${num(H)}" font-family="sans-serif" font-size="12">`);
  const title = esc(opts.title ?? `${a.rows}×${a.cols}, nnz ${a.rowPtr[a.rows]}`);
  parts.push(`<title>spy plot: ${title}</title>`);
  parts.push(`<rect width="${num(W)}" height="${num(H)}" fill="white"/>`);
  parts.push(`<text x="${num(W / 2)}" y="24" text-anchor="middle" font-size="14">${title}</text>`);
  // 8 grey levels (log scale); runs of equal level in a row become one rect (keeps files small)
  const level = (v: number) => (v === 0 ? -1 : Math.min(7, Math.floor((8 * Math.log1p(v)) / Math.log1p(max + 1e-9))));
  for (let r = 0; r < gr; r++) {
    let c = 0;
    while (c < gc) {
      const lv = level(counts[r * gc + c]!);
      let e = c + 1;
      while (e < gc && level(counts[r * gc + e]!) === lv) e++;
      if (lv >= 0) {
        const shade = Math.round(200 * (1 - (lv + 1) / 8));
        parts.push(`<rect x="${num(m + c * cell)}" y="${num(m + r * cell)}" width="${num((e - c) * cell)}" height="${num(cell)}" fill="rgb(${shade},${shade},${shade})"/>`);
      }
      c = e;
    }
  }
  parts.push(`<rect x="${m}" y="${m}" width="${num(gc * cell)}" height="${num(gr * cell)}" fill="none" stroke="black"/>`);
  const ov = opts.overlay;
  if (ov?.kind === 'boundary') {
    // one short vertical mark per (binned) row at the column where its ELL part ends
    const d: string[] = [];
    for (let r = 0; r < gr; r++) {
      const i = Math.min(a.rows - 1, Math.floor((r * a.rows) / gr));
      const col = ov.rowBoundaryColumn[i] ?? a.cols;
      if (col >= a.cols) continue; // the whole row fits in the ELL part
      const x = m + ((col * gc) / a.cols) * cell;
      d.push(`M${num(x)} ${num(m + r * cell)}V${num(m + (r + 1) * cell)}`);
    }
    parts.push(`<path d="${d.join('')}" stroke="red" stroke-width="1.5" fill="none"><title>BOUNDARY = ${ov.boundary}: each row's first ${ov.boundary} non-zeros (left of its red mark) in ELL, the rest in CSR</title></path>`);
  } else if (ov?.kind === 'chunks') {
    const sy = (gr * cell) / Math.max(1, a.rows);
    const sx = (gc * cell) / Math.max(1, a.cols);
    for (let c = 0; c < ov.chunkWidths.length; c++) {
      parts.push(`<rect x="${m}" y="${num(m + c * ov.chunkHeight * sy)}" width="${num(Math.max(0.5, ov.chunkWidths[c]! * sx))}" height="${num(ov.chunkHeight * sy)}" fill="none" stroke="blue" stroke-width="0.6"/>`);
    }
  }
  parts.push('</svg>');
  return parts.join('\n');
}
