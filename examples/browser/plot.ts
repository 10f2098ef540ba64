/**
 * The page's convergence plot: an inline SVG drawn at the width of its box (re-drawn when the
 * window is resized, so the text stays 12 px at any width), with one colour per curve *role*
 * so that a colour means the same thing with and without WebGPU (the GPU CG is always blue, the
 * CPU CG always orange, the rtol line always a dashed grey), and an HTML legend under it that
 * wraps on narrow screens. Plain string code, no DOM.
 * @module
 */

/** What a curve is; fixes its colour and dash. */
export type CurveRole = 'gpu' | 'host' | 'rtol';

/** One curve of the plot. */
export interface Curve {
  readonly role: CurveRole;
  readonly name: string;
  readonly x: readonly number[];
  readonly y: readonly number[];
}

/** Colour-blind-safe colours (Okabe–Ito blue and orange) and a neutral grey. */
export const STYLE: Record<CurveRole, { color: string; dash: string; width: number }> = {
  gpu: { color: '#0072b2', dash: '', width: 2 },
  host: { color: '#e69f00', dash: '', width: 2 },
  rtol: { color: '#555555', dash: '6 4', width: 1.5 },
};

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const r2 = (v: number) => (Math.round(v * 100) / 100).toString();

/** "Nice" linear ticks (1, 2, 5 × 10^k steps), at most about n of them. */
function linTicks(lo: number, hi: number, n: number): number[] {
  const span = hi - lo || 1;
  const mag = 10 ** Math.floor(Math.log10(span / n));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => span / s <= n) ?? mag * 10;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** Decades between lo and hi, thinned to at most `n` labels. */
function logTicks(lo: number, hi: number, n: number): number[] {
  const e0 = Math.round(Math.log10(lo));
  const e1 = Math.round(Math.log10(hi));
  const every = Math.max(1, Math.ceil((e1 - e0) / n));
  const out: number[] = [];
  for (let e = e0; e <= e1; e += every) out.push(10 ** e);
  return out;
}

/**
 * The residual histories on a log y axis, `width` px wide (the box's width). Non-positive
 * values are dropped (log axis). Cost: O(points).
 * @example convergencePlot([{ role: 'host', name: 'CPU', x: [0, 1], y: [1, 0.1] }], { width: 600, title: 'CG' })
 */
export function convergencePlot(curves: readonly Curve[], opts: { width: number; title: string; xLabel: string; yLabel: string }): string {
  const W = Math.max(240, Math.round(opts.width));
  const H = Math.round(Math.min(420, Math.max(240, W * 0.6)));
  const m = { l: 58, r: 14, t: 30, b: 42 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const pts = curves.map((c) => c.x.map((x, i) => [x, c.y[i]!] as const).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && y > 0));
  const all = pts.flat();
  const xlo = all.length ? Math.min(...all.map((p) => p[0])) : 0;
  const xhi = all.length ? Math.max(xlo + 1, ...all.map((p) => p[0])) : 1;
  const ylo = all.length ? 10 ** Math.floor(Math.log10(Math.min(...all.map((p) => p[1])))) : 1e-6;
  let yhi = all.length ? 10 ** Math.ceil(Math.log10(Math.max(...all.map((p) => p[1])))) : 1;
  if (yhi <= ylo) yhi = ylo * 10;
  const X = (x: number) => m.l + ((x - xlo) / (xhi - xlo)) * pw;
  const Y = (y: number) => m.t + (1 - (Math.log10(y) - Math.log10(ylo)) / (Math.log10(yhi) - Math.log10(ylo))) * ph;
  const p: string[] = [];
  p.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="12" role="img" aria-label="${esc(opts.title)}">`);
  p.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  p.push(`<text x="${m.l + pw / 2}" y="18" text-anchor="middle" font-size="14">${esc(opts.title)}</text>`);
  for (const t of logTicks(ylo, yhi, Math.max(3, Math.floor(ph / 28)))) {
    p.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${r2(Y(t))}" y2="${r2(Y(t))}" stroke="#e2e2e2"/>`);
    p.push(`<text x="${m.l - 5}" y="${r2(Y(t) + 4)}" text-anchor="end">${t.toExponential(0)}</text>`);
  }
  for (const t of linTicks(xlo, xhi, Math.max(3, Math.floor(pw / 70)))) {
    p.push(`<line x1="${r2(X(t))}" x2="${r2(X(t))}" y1="${m.t + ph}" y2="${m.t + ph + 5}" stroke="black"/>`);
    p.push(`<text x="${r2(X(t))}" y="${m.t + ph + 18}" text-anchor="middle">${t}</text>`);
  }
  p.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="black"/>`);
  p.push(`<text x="${m.l + pw / 2}" y="${H - 6}" text-anchor="middle">${esc(opts.xLabel)}</text>`);
  p.push(`<text transform="translate(13 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle">${esc(opts.yLabel)}</text>`);
  curves.forEach((c, k) => {
    const s = STYLE[c.role];
    const line = pts[k]!;
    if (line.length === 0) return;
    const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : '';
    p.push(`<polyline data-role="${c.role}" fill="none" stroke="${s.color}" stroke-width="${s.width}"${dash} points="${line.map(([x, y]) => `${r2(X(x))},${r2(Y(y))}`).join(' ')}"><title>${esc(c.name)}</title></polyline>`);
  });
  p.push('</svg>');
  return p.join('\n');
}

/** The legend as HTML list items (a line sample of each curve's style and its name). O(curves). */
export function legendHtml(curves: readonly Curve[]): string {
  const items = curves.map((c) => {
    const s = STYLE[c.role];
    const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : '';
    const sample = `<svg class="sample" width="30" height="10" aria-hidden="true"><line x1="0" x2="30" y1="5" y2="5" stroke="${s.color}" stroke-width="${s.width + 1}"${dash}/></svg>`;
    return `<li data-role="${c.role}">${sample}<span>${esc(c.name)}</span></li>`;
  });
  return `<ul class="legend">${items.join('')}</ul>`;
}
