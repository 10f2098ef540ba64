/**
 * Issue 14, bindings: with the planning cap of a context (maxBindingBytes = 64 kB) every
 * registered kernel × matrices larger than the cap either passes the float64 per-row check or
 * is declared unsupported (before conversion, by its format, or by supports()) — never fails
 * at dispatch. The same runner makes the medium and large tiers of bench/gpu-conformance.ts.
 */
import { generators as g, NotSupportedError } from '@gpusparse/formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpuMs } from '../../../scripts/test/cpu-time';
import { createGpuContext, getKernel, type GpuContext, gpuOperatorFromCsr, kernels, supportsCsr } from '../src/index';
import { runScaleTier, type ScaleCase, scaleTable, stripedRandom } from '../src/testing/scale-tier';

const CAP = 65_536;
let ctx: GpuContext;
beforeAll(async () => {
  ctx = await createGpuContext({ maxBindingBytes: CAP });
});
afterAll(() => ctx.dispose());

const CASES: ScaleCase[] = [
  { name: 'uniform-8192x16', why: 'CSR arrays 8× the cap', make: () => stripedRandom(8192, 8192, 16, 1) },
  { name: 'powerlaw-4000', why: 'rows of 2 to 500', make: () => g.powerLaw(4000, 8192, { alpha: 2.2, minLen: 2, maxLen: 500, seed: 3 }) },
  { name: 'x-past-the-cap', why: 'x of 20 000 entries cannot be bound: every kernel must refuse', make: () => g.uniformRandom(100, 20_000, 4, 2) },
];

describe('every kernel past the binding cap: passes or is declared unsupported', () => {
  it('runs the tier with no failure', async () => {
    const results = await runScaleTier(ctx, CASES);
    const table = scaleTable(results);
    expect(results.length).toBe(CASES.length * kernels.length);
    expect(results.filter((r) => r.status === 'FAIL').map((r) => `${r.matrix} ${r.kernel}: ${r.detail}`)).toEqual([]);
    // splitting really ran: the CSR kernels passed in several blocks
    const csr = results.find((r) => r.matrix === 'uniform-8192x16' && r.kernel === 'csr-vector');
    expect(csr?.status, table).toBe('pass');
    expect(csr!.blocks!).toBeGreaterThan(1);
    const diagonal = kernels.filter((k) => k.format === 'dia' || k.format === 'hm').length; // they refuse random columns
    expect(results.filter((r) => r.matrix === 'uniform-8192x16' && r.status === 'pass').length, table).toBeGreaterThanOrEqual(kernels.length - diagonal);
    for (const r of results.filter((q) => q.matrix === 'x-past-the-cap')) {
      expect(r.status, r.kernel).toBe('unsupported');
      expect(r.detail).toMatch(/binding/);
    }
  }, 120_000);

  it('stripedRandom: sorted distinct columns, exact row lengths', () => {
    const a = stripedRandom(50, 1000, 7, 3);
    for (let i = 0; i < 50; i++) {
      expect(a.rowPtr[i + 1]! - a.rowPtr[i]!).toBe(7);
      for (let k = a.rowPtr[i]! + 1; k < a.rowPtr[i + 1]!; k++) expect(a.colIdx[k]!).toBeGreaterThan(a.colIdx[k - 1]!);
    }
    expect(Math.max(...a.colIdx)).toBeLessThan(1000);
  });
});

describe('refusals before any conversion (precheck)', () => {
  it('ELL and ELL-R refuse rows × longest row past 2^31 slots from the CSR alone; the operator throws NotSupportedError', async () => {
    const own = await createGpuContext();
    const a = g.oneDenseRow(300_000, 10_000, 1, 8000, 5, 2); // 2.4·10^9 padded slots for 308 000 entries
    for (const id of ['ell', 'ell-r']) expect(supportsCsr(getKernel(id), a, own.limits)).toMatch(/ELL would pad 300000 rows to the longest row \(8000\)/);
    expect(supportsCsr(getKernel('sliced-ell'), a, own.limits)).toBe(true);
    const t0 = cpuMs();
    expect(() => gpuOperatorFromCsr(own, a, { kernel: 'ell' })).toThrow(NotSupportedError);
    expect(cpuMs() - t0).toBeLessThan(2000); // nothing was built (CPU time: a loaded machine's wait is not work)
    own.dispose();
  });

  it('DIA and HM refuse more than maxDiagonals from the CSR, stopping early; a banded matrix passes', () => {
    const limits = ctx.deviceLimits;
    const random = g.uniformRandom(20_000, 20_000, 8, 4);
    for (const id of ['dia', 'hm']) {
      expect(supportsCsr(getKernel(id), random, limits)).toMatch(/more than 1024 occupied diagonals \(found while reading row \d+\)/);
      expect(supportsCsr(getKernel(id), g.banded(5000, 3, 4), limits)).toBe(true);
    }
  });
});
