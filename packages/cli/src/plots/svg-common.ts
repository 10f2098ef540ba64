/**
 * Shared pieces of the hand-written SVG plots: escaping, number formatting, tick choice, a
 * 12-colour qualitative palette, and series styles that stay distinct past the palette (colour ×
 * dash × marker shape), so no two series of one plot are drawn alike.
 * @module
 */

/** 12 qualitative colours, each distinct from its neighbours and readable on white. */
export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22', '#393b79', '#637939'] as const;

/** Dash patterns, cycled after the palette: series 0–11 solid, 12–23 dashed, 24–35 dotted. */
const DASHES = ['', '6 3', '2 3'] as const;

/** Marker shapes, cycled with period 5 (coprime to the palette's 12: 60 distinct colour × marker pairs). */
const MARKERS = ['circle', 'square', 'triangle', 'diamond', 'cross'] as const;

/** How series `i` of a plot is drawn. */
export interface SeriesStyle {
  color: string;
  dash: string;
  marker: (typeof MARKERS)[number];
}

/** The style of series i: colour i mod 12, dash ⌊i/12⌋ mod 3, marker i mod 5 (no repeat below 60 series). */
export function seriesStyle(i: number): SeriesStyle {
  return { color: PALETTE[i % PALETTE.length]!, dash: DASHES[Math.floor(i / PALETTE.length) % DASHES.length]!, marker: MARKERS[i % 5]! };
}

/** An SVG marker of `shape` centred at (x, y), half-size r. */
export function marker(shape: SeriesStyle['marker'], x: number, y: number, r: number, color: string): string {
  const p = (v: number) => num(v);
  switch (shape) {
    case 'circle':
      return `<circle cx="${p(x)}" cy="${p(y)}" r="${p(r)}" fill="${color}"/>`;
    case 'square':
      return `<rect x="${p(x - r)}" y="${p(y - r)}" width="${p(2 * r)}" height="${p(2 * r)}" fill="${color}"/>`;
    case 'triangle':
      return `<path d="M${p(x)} ${p(y - r * 1.2)}L${p(x + r * 1.1)} ${p(y + r)}L${p(x - r * 1.1)} ${p(y + r)}Z" fill="${color}"/>`;
    case 'diamond':
      return `<path d="M${p(x)} ${p(y - r * 1.3)}L${p(x + r)} ${p(y)}L${p(x)} ${p(y + r * 1.3)}L${p(x - r)} ${p(y)}Z" fill="${color}"/>`;
    default:
      return `<path d="M${p(x - r)} ${p(y - r)}L${p(x + r)} ${p(y + r)}M${p(x + r)} ${p(y - r)}L${p(x - r)} ${p(y + r)}" stroke="${color}" stroke-width="2"/>`;
  }
}

/** XML text escaping. */
export const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A coordinate with two decimals (keeps files small). */
export const num = (v: number): string => (Math.round(v * 100) / 100).toString();

/** Width in px of `text` at font-size 12 sans-serif (a conservative average glyph width). */
export const textWidth = (text: string, fontSize = 12): number => Math.ceil(text.length * fontSize * 0.6);

/** Tick values for a log axis between lo and hi (powers of ten). */
export function logTicks(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e);
  return out;
}

/** "Nice" linear ticks (1, 2, 5 × 10^k steps), at most about n of them. */
export function linTicks(lo: number, hi: number, n = 6): number[] {
  const span = hi - lo || 1;
  const mag = 10 ** Math.floor(Math.log10(span / n));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => span / s <= n) ?? mag * 10;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-12; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** Tick label: integers as they are, large or small values in exponent form. */
export function tickLabel(t: number): string {
  if (t !== 0 && (Math.abs(t) >= 1e6 || Math.abs(t) < 1e-3)) return t.toExponential(0);
  return String(t);
}

/** The opening of an SVG document of W × H with a white background and a title. */
export function svgOpen(W: number, H: number, title: string): string[] {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${num(W)}" height="${num(H)}" viewBox="0 0 ${num(W)} ${num(H)}" font-family="sans-serif" font-size="12">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${num(W)}" height="${num(H)}" fill="white"/>`,
  ];
}
