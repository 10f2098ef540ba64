/**
 * The long-row CSR kernel (csr-long) beyond the conformance loop: every lane count × unroll ×
 * packing on long unaligned rows (CI-like, 250–350 entries, so the unrolled step, the single
 * steps and the masked last quad all run) and on power-law rows (short rows: no unrolled step,
 * empty rows), with alpha/beta; the pad entries masked (Inf in x at the pad column gives Inf, not
 * NaN); rows cut over bindings accumulate; the shader really keeps `unroll` quads per step.
 * Oracle: float64 CSR product of the float32-rounded matrix, per-row bound of the conformance tier.
 */
import { type CsrMatrix, generators as g, InvalidParameterError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { interleavedSource } from '../src/kernels/csr4/quad-device';
import { csrLongKernel } from '../src/kernels/csr-long/long.kernel';
import { getKernel, type GpuContext, readF32, uploadF32 } from '../src/index';
import { checkKernel } from '../src/testing/conformance';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

const ciRows = (seed: number): CsrMatrix => g.uniformRandom(120, 3000, 300, seed);

describe('csr-long', () => {
  it('is in the registry', () => {
    expect(getKernel('csr-long')).toBe(csrLongKernel);
  });

  // one variant per (lanes class, unroll, packing) rather than their product: each is a pipeline
  // compile of seconds on lavapipe; later tests reuse these pipelines (cached by shader text)
  // (interleave 1: the rows' full blocks of 4·lanes entries laid out lane-major, same shaders)
  const VARIANTS = [
    [4, 3, 0, 1],
    [8, 2, 1, 0],
    [32, 4, 2, 1],
    [256, 4, 0, 0],
    [16, 8, 1, 1],
    [4, 1, 2, 0],
    [8, 2, 1, 1],
  ] as const;
  it.each(VARIANTS)('lanes %i, unroll %i, pack %i, interleave %i: long and short rows, alpha/beta', async (lanes, unroll, pack, interleave) => {
    const p = { lanes, unroll, pack, interleave, stage: 0, workgroupSize: 256 };
    expect(await checkKernel(ctx, csrLongKernel, p, ciRows(3), 3, 1, 0)).toBe('');
    expect(await checkKernel(ctx, csrLongKernel, p, g.powerLaw(200, 200, { seed: 5, maxLen: 200, minLen: 0 }), 5, 2, -0.5)).toBe('');
  });

  it('masks the pad entries wherever the last quad falls: x = Inf at the pad column gives Inf, not NaN', async () => {
    // rows of 5, 9, 13, …, 33 entries: the last quad (pads repeating column 99) lands on every lane and step
    const lens = Array.from({ length: 8 }, (_, i) => 4 * i + 5);
    const rowPtr = Int32Array.from([0, ...lens.map((_, i) => lens.slice(0, i + 1).reduce((s, l) => s + l, 0))]);
    const colIdx = Int32Array.from(lens.flatMap((l) => Array.from({ length: l }, (_, k) => (k === l - 1 ? 99 : 2 * k))));
    const a: CsrMatrix = { format: 'csr', rows: lens.length, cols: 100, rowPtr, colIdx, values: new Float64Array(colIdx.length).fill(1) };
    const x = new Float64Array(100).fill(1);
    x[99] = Number.POSITIVE_INFINITY;
    for (const [lanes, unroll, pack, interleave] of [VARIANTS[0], VARIANTS[1], VARIANTS[5], VARIANTS[6]]) {
      const h = csrLongKernel.upload(ctx, a, { lanes, unroll, pack, interleave });
      const dx = uploadF32(ctx, x);
      const dy = ctx.buffers.acquire(4 * a.rows);
      csrLongKernel.encode(ctx, h, dx, dy);
      const y = await readF32(ctx, dy, a.rows);
      expect([...y], `lanes ${lanes} unroll ${unroll} pack ${pack}`).toEqual(lens.map(() => Number.POSITIVE_INFINITY));
      h.dispose();
      dx.dispose();
      dy.dispose();
    }
  });

  it('cuts rows longer than a binding into quad-aligned pieces that accumulate', async () => {
    const a = g.oneDenseRow(40, 5001, 3, 5001, 7, 2); // one row of 5001 entries, bindings of 1024 entries
    const opts = { maxBindingBytes: 4096 };
    for (const [lanes, unroll, pack, interleave] of [VARIANTS[3], VARIANTS[1], VARIANTS[2], VARIANTS[6]]) {
      const p = { lanes, unroll, pack, interleave, stage: 0, workgroupSize: 256 };
      expect(await checkKernel(ctx, csrLongKernel, p, a, 7, 1, 0, opts)).toBe('');
      expect(await checkKernel(ctx, csrLongKernel, p, a, 7, 2, -0.5, opts)).toBe('');
    }
  });

  it('refuses 16-bit columns for a row spanning 2^16 columns, before and at upload', () => {
    const a: CsrMatrix = { format: 'csr', rows: 2, cols: 70_000, rowPtr: Int32Array.of(0, 1, 3), colIdx: Int32Array.of(5, 0, 65_536), values: Float64Array.of(1, 2, 3) };
    for (const pack of [1, 2]) {
      expect(csrLongKernel.precheck!(a, ctx.limits, { lanes: 16, unroll: 4, pack, interleave: 0, stage: 0, workgroupSize: 256 })).toMatch(/row 1 spans columns 0\.\.65536/);
      expect(() => csrLongKernel.upload(ctx, a, { pack })).toThrow(InvalidParameterError);
    }
    expect(csrLongKernel.precheck!(a, ctx.limits, { lanes: 16, unroll: 4, pack: 0, interleave: 0, stage: 0, workgroupSize: 256 })).toBe(true);
  });

  it('issues every load of an unrolled step before its gathers, into separate accumulators; rejects bad parameters', () => {
    const text = csrLongKernel.wgsl({ lanes: 16, unroll: 4, pack: 1, interleave: 0, stage: 0, workgroupSize: 256 }, ctx.caps);
    for (const i of [0, 1, 2, 3]) expect(text).toContain(`a${i} = fma(v${i}, x${i}, a${i});`);
    expect(text).toContain('let c3 = cols[q + 48u];');
    expect(text.indexOf('let c3 = cols[q + 48u];')).toBeLessThan(text.indexOf('let x0 = vec4<f32>('));
    expect(() => csrLongKernel.wgsl({ lanes: 2, unroll: 4, pack: 0, interleave: 0, stage: 0, workgroupSize: 256 }, ctx.caps)).toThrow(/lanes expected/);
    expect(() => csrLongKernel.wgsl({ lanes: 16, unroll: 5, pack: 0, interleave: 0, stage: 0, workgroupSize: 256 }, ctx.caps)).toThrow(/unroll expected/);
    expect(() => csrLongKernel.wgsl({ lanes: 16, unroll: 4, pack: 3, interleave: 0, stage: 0, workgroupSize: 256 }, ctx.caps)).toThrow(/pack expected/);
    expect(() => csrLongKernel.wgsl({ lanes: 16, unroll: 4, pack: 0, interleave: 2, stage: 0, workgroupSize: 256 }, ctx.caps)).toThrow(/interleave expected/);
    expect(() => csrLongKernel.wgsl({ lanes: 16, unroll: 4, pack: 0, interleave: 0, stage: 1000, workgroupSize: 256 }, ctx.caps)).toThrow(/stage expected/);
  });

  it('interleave lays each full block of 4·lanes entries out lane-major: a permutation of the row, partial last block in CSR order', () => {
    expect([0, 1, 2, 3, 4, 5].map((j) => interleavedSource(j, 64, 8))).toEqual([0, 8, 16, 24, 1, 9]);
    expect(interleavedSource(70, 70, 8)).toBe(70); // a pad stays a pad
    expect(interleavedSource(65, 70, 8)).toBe(65); // entries 64…69: the partial block, CSR order
    for (const [len, lanes] of [[0, 8], [31, 8], [32, 8], [200, 16], [1000, 32], [7, 1]] as const) {
      const seen = Array.from({ length: len }, (_, j) => interleavedSource(j, len, lanes)).sort((x, y) => x - y);
      expect(seen).toEqual(Array.from({ length: len }, (_, j) => j));
    }
  });

  it('stage: x[0 … stage) gathered from workgroup memory, the columns above from x; refused where workgroup memory is too small', async () => {
    const a = g.uniformRandom(100, 10_000, 300, 8); // columns on both sides of the staged prefix
    for (const [lanes, unroll, pack, interleave, stage] of [
      [8, 2, 1, 1, 2048],
      [32, 4, 0, 0, 4096],
      [256, 3, 1, 0, 2048],
    ] as const) {
      const p = { lanes, unroll, pack, interleave, stage, workgroupSize: 256 };
      expect(csrLongKernel.wgsl(p, ctx.caps)).toContain(`var<workgroup> xs: array<f32, ${stage}>;`);
      expect(await checkKernel(ctx, csrLongKernel, p, a, 8, 2, -0.5), JSON.stringify(p)).toBe('');
      expect(await checkKernel(ctx, csrLongKernel, p, g.powerLaw(200, 200, { seed: 5, maxLen: 200, minLen: 0 }), 5, 1, 0), JSON.stringify(p)).toBe(''); // x shorter than the stage
    }
    const big = { lanes: 16, unroll: 4, pack: 0, interleave: 0, stage: 10_240, workgroupSize: 256 };
    const small = { ...ctx.limits, maxComputeWorkgroupStorageSize: 32_768 };
    expect(csrLongKernel.precheck!(a, small, big)).toMatch(/stage 10240 needs 41984 bytes of workgroup memory, the device has 32768/);
    expect(csrLongKernel.supports(a, small, big)).toMatch(/stage 10240/);
    expect(csrLongKernel.precheck!(a, { ...small, maxComputeWorkgroupStorageSize: 49_152 }, big)).toBe(true);
  });
});
