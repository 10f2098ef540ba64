import { generators } from '@gpusparse/formats';
import * as gpu from '@gpusparse/gpu';
import { describe, expect, it } from 'vitest';
import { benchJobs, variantLabel } from '../src/commands/bench';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';
import { groupedBarChart, linePlot, spyPlot, variantChart } from '../src/plots/svg';
import { seriesStyle } from '../src/plots/svg-common';

captureOutput();
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';
const texts = (svg: string) => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
const size = (svg: string) => svg.match(/<svg[^>]* width="([\d.]+)" height="([\d.]+)"/)!.slice(1).map(Number) as [number, number];

describe('plots: every series named where it is drawn, nothing only in a hover title', () => {
  it('series styles (colour, dash, marker) do not repeat below 60 series', () => {
    const keys = new Set(Array.from({ length: 60 }, (_, i) => JSON.stringify(seriesStyle(i))));
    expect(keys.size).toBe(60);
  });

  it('linePlot: a legend entry per series under the plot, the image growing to hold long names', () => {
    const names = Array.from({ length: 14 }, (_, i) => `refined(cg, f32) + f64 refinement, series ${i} (webgpu)`);
    const svg = linePlot(names.map((name, i) => ({ name, x: [0, 1, 2], y: [1, 10 ** -(i + 1), 10 ** -(i + 2)] })), { logY: true, title: 't' });
    for (const n of names) expect(texts(svg)).toContain(n);
    const [w, h] = size(svg);
    expect(h).toBeGreaterThan(440 + 14 * 16); // 14 rows of legend below the 440-px plot
    // the legend's text starts inside the image and its estimated width fits
    for (const m of svg.matchAll(/<text x="([\d.]+)" y="([\d.]+)">(refined[^<]*)<\/text>/g)) {
      expect(Number(m[1]) + m[3]!.length * 7.2).toBeLessThanOrEqual(w);
      expect(Number(m[2])).toBeLessThanOrEqual(h);
    }
  });

  it('variantChart: each bar labelled with its variant, each kernel heading its group', () => {
    const bars = [
      { group: 'sell', label: 'C=8', value: 2 },
      { group: 'sell', label: 'defaults (C=32)', value: 3 },
      { group: 'csr-vector', label: 'lanes=4', value: 1 },
    ];
    const t = texts(variantChart(bars, { xLabel: 'GFLOP/s' }));
    for (const s of ['sell', 'csr-vector', 'C=8', 'defaults (C=32)', 'lanes=4', 'GFLOP/s']) expect(t).toContain(s);
    // groups ordered by their best value: sell (3) before csr-vector (1)
    expect(t.indexOf('sell')).toBeLessThan(t.indexOf('csr-vector'));
  });

  it('groupedBarChart: 19 series all in the legend, series 12+ hatched', () => {
    const names = Array.from({ length: 19 }, (_, i) => `kernel-${i}`);
    const svg = groupedBarChart(['m1', 'm2'], names, names.map((_, i) => [i + 1, i + 2]));
    for (const n of names) expect(texts(svg)).toContain(n);
    expect((svg.match(/<pattern /g) ?? []).length).toBe(7);
  });

  it('spyPlot: row and column axes with ticks, a grey-scale legend, and the overlay explained in text', () => {
    const a = generators.poisson2d(20);
    const rowBoundaryColumn = new Int32Array(a.rows).fill(a.cols);
    rowBoundaryColumn[5] = 10;
    const svg = spyPlot(a, { overlay: { kind: 'boundary', boundary: 3, rowBoundaryColumn } });
    const t = texts(svg);
    for (const s of ['row', 'column', '0', '400', 'non-zeros per cell:']) expect(t).toContain(s);
    expect(t.join(' ')).toMatch(/hybrid BOUNDARY = 3: a row's first 3 non-zeros/);
    const chunks = texts(spyPlot(a, { overlay: { kind: 'chunks', chunkHeight: 32, chunkWidths: Array.from({ length: 13 }, () => 5) } })).join(' ');
    expect(chunks).toMatch(/SELL-C-σ chunks \(13\): each blue box is one chunk of C = 32 rows/);
  });
});

describe('bench sweep order and labels', () => {
  it('every kernel default first, then the other variants kernel by kernel', () => {
    const ks = [gpu.getKernel('csr-vector'), gpu.getKernel('sell')];
    const jobs = benchJobs(gpu, ks, true);
    expect(jobs.length).toBe(gpu.kernelVariants(ks[0]!).length + gpu.kernelVariants(ks[1]!).length);
    expect(jobs.slice(0, 2).map(([k, p]) => [k.id, p])).toEqual([
      ['csr-vector', { ...ks[0]!.defaults }],
      ['sell', { ...ks[1]!.defaults }],
    ]);
    expect(benchJobs(gpu, ks, false).length).toBe(2);
  });
  it('a variant is labelled by what differs from the defaults', () => {
    expect(variantLabel({ C: 8, sigma: 4 }, { C: 32, sigma: 4 })).toBe('C=8');
    expect(variantLabel({ C: 32, sigma: 4 }, { C: 32, sigma: 4 })).toBe('defaults (C=32 sigma=4)');
  });
});

describe.skipIf(gpuTierSkipped)('bench --budget-s (WebGPU)', () => {
  it('variants past the budget are listed as not run, not dropped; the defaults run first', async () => {
    expect(await main(['bench', 'gen:poisson2d:16', '--kernels', 'csr-scalar,sell', '--variants', '--budget-s', '0', '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.results.length).toBe(gpu.kernelVariants(gpu.getKernel('csr-scalar')).length + gpu.kernelVariants(gpu.getKernel('sell')).length);
    expect(j.notRun).toBe(j.results.length);
    expect(j.results.every((r: { skipped?: string }) => /^not run: --budget-s 0 spent/.test(r.skipped ?? ''))).toBe(true);
    expect(captured.stderr).toMatch(/variants not run within --budget-s 0/);
    expect(await main(['bench', 'gen:poisson2d:16', '--kernels', 'csr-scalar', '--variants', '--reps', '3', '--json'])).toBe(0);
    const k = JSON.parse(captured.stdout.slice(captured.stdout.lastIndexOf('{\n  "matrix"')));
    expect(k.notRun).toBe(0);
    for (const r of k.results) expect(r.reps).toBeGreaterThanOrEqual(1);
    for (const r of k.results) expect(r.maxRelError).toBeLessThan(1e-5);
  });
});
