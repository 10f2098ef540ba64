/**
 * The split-row sliced ELL-R kernel (sliced-ell-split, issue 20) beyond the conformance loop:
 * parts × unroll on CI-like rows (the unrolled steps and the remainder both run), on rows of
 * uneven lengths with empty rows and a short last slice, slices split over bindings into slot
 * ranges that accumulate (bench/spmv.ts checks it on the real H10 Hamiltonian the same way).
 * Oracle: the float64 CSR product of the float32-rounded matrix with the conformance tier's
 * per-row bound.
 */
import { type CsrMatrix, generators as g, slicedEllRFromCsr } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { slicedSplitKernel, slicedSplitWgsl } from '../src/kernels/ell/sliced-split.kernel';
import { groupedSlicedPieces, interleavedSlicedPieces, packedSlicedPieces, packFits, packFitsCsr } from '../src/kernels/ell/sliced-split-device';
import { defaultPruneRules, enumerateCandidates } from '../src/autotune/candidates';
import { termsOf } from '../src/autotune/cost-terms';
import { profileMatrix } from '../src/autotune/profile';
import { experimentalKernels, getKernel, type GpuContext, kernels } from '../src/index';
import { CASES, SEEDS } from '../src/testing/conformance';
import { checkKernel } from '../src/testing/conformance';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

describe('sliced-ell-split', () => {
  it('is an opt-in tuner candidate (experimental list) with its own cost terms and a grid of the H100 winners', () => {
    expect(getKernel('sliced-ell-split')).toBe(slicedSplitKernel);
    expect(kernels).not.toContain(slicedSplitKernel);
    expect(experimentalKernels).toContain(slicedSplitKernel);
    expect(termsOf(slicedSplitKernel)).toEqual({ lanes: { kind: 'stream' }, passes: 1, spread: 2 });
    const a = g.ciLike(300, { refFraction: 0.1, refDensity: 0.5, expDensity: 0.1, seed: 4 });
    const cands = enumerateCandidates(a, profileMatrix(a, 64), [slicedSplitKernel], defaultPruneRules, 1000);
    const grid = cands.map((c) => `${c.params.sliceHeight}/${c.params.parts}/${c.params.unroll}/${c.params.pack}/${c.params.interleave}`).sort();
    expect(grid).toEqual(['16/16/2/1/1', '16/8/2/1/1', '32/16/2/1/1', '32/8/2/1/1']);
    // one conversion per slice height, reported as the candidates' preparation
    expect(new Set(cands.map((c) => c.conversionKey)).size).toBe(2);
    expect(cands.every((c) => c.prepBytes > 8 * 0.9 * c.slots)).toBe(true);
  });

  it('precheck: pack 1 decided on the CSR source, agreeing with packFits on the converted layout', () => {
    const limits = ctx.limits;
    const wide: CsrMatrix = { format: 'csr', rows: 40, cols: 70_064, rowPtr: new Int32Array(41), colIdx: new Int32Array(0), values: new Float64Array(0) };
    const cols: number[] = [];
    for (let r = 0; r < 40; r++) {
      for (let k = 0; k < 64; k++) cols.push(r === 33 ? 70_000 + k : k); // row 33 (slice 1 at height 32, slice 2 at 16) far off
      wide.rowPtr[r + 1] = cols.length;
    }
    const a: CsrMatrix = { ...wide, colIdx: Int32Array.from(cols), values: new Float64Array(cols.length).fill(1) };
    expect(slicedSplitKernel.precheck!(a, limits, { ...slicedSplitKernel.defaults })).toBe('sliced-ell-split pack 1: slot 0 of slice 1 spans columns 0…70000, more than 65535 apart: use pack 0');
    expect(slicedSplitKernel.precheck!(a, limits, { ...slicedSplitKernel.defaults, sliceHeight: 16 })).toMatch(/slot 0 of slice 2 spans columns 0…70000/);
    expect(slicedSplitKernel.precheck!(a, limits, { ...slicedSplitKernel.defaults, pack: 0 })).toBe(true);
    for (const H of [16, 32]) expect(packFits(slicedEllRFromCsr(a, { sliceHeight: H }))).toBe(packFitsCsr(a, H));
    // the conformance-style matrices: the CSR answer is the layout's
    for (const m of [g.ciLike(500, { refFraction: 0.1, refDensity: 0.5, expDensity: 0.1, seed: 6 }), g.withEmptyRows(301, 3000, 120, 0.3, 5), g.uniformRandom(200, 90_000, 40, 3)]) {
      for (const H of [16, 32]) expect(packFitsCsr(m, H), `${m.rows}×${m.cols} H ${H}`).toBe(packFits(slicedEllRFromCsr(m, { sliceHeight: H })));
    }
  });

  // the conformance tier's cases (the registry loop covers only `kernels`), default parameters, pack 1 and interleave 1
  for (const [pack, interleave] of [[0, 0], [1, 0], [0, 1], [1, 1]] as const) {
    it(`conformance cases, default parameters, pack ${pack}, interleave ${interleave}`, async () => {
      const p = { ...slicedSplitKernel.defaults, pack, interleave };
      let ran = 0;
      for (const [name, gen, opts] of CASES) {
        const a = gen(SEEDS[0]!);
        const r = await checkKernel(ctx, slicedSplitKernel, p, a, SEEDS[0]!, 2, -0.5, opts);
        expect(r, `${name}: ${r}`).toBeOneOf(['', null]);
        if (r === '') ran++;
      }
      expect(ran).toBeGreaterThan(10);
    });
  }

  const VARIANTS = [
    [32, 8, 4, 0, 0, 256],
    [64, 4, 2, 1, 0, 256],
    [32, 16, 8, 0, 0, 256],
    [32, 1, 1, 1, 0, 256],
    [64, 2, 8, 0, 0, 256],
    [32, 8, 4, 1, 0, 256],
    [16, 16, 8, 0, 1, 256],
    [16, 4, 2, 0, 1, 256],
    [32, 8, 1, 0, 1, 256],
    [32, 16, 4, 1, 1, 256],
    [32, 8, 2, 1, 1, 256],
    [64, 1, 1, 1, 1, 256],
    [16, 4, 4, 1, 1, 256],
    // the session-8 second-wave H10 probes (bench/spmv-h10.sh): fewer invocations per row (one
    // wave of the H100 at parts 4), 64-row slices in one workgroup, workgroups of 128
    [32, 4, 4, 1, 1, 256],
    [32, 2, 4, 1, 1, 256],
    [64, 4, 2, 1, 1, 256],
    [32, 8, 2, 1, 1, 128],
    [32, 4, 2, 1, 1, 128],
  ] as const;
  it.each(VARIANTS)('slice %i, parts %i, unroll %i, pack %i, interleave %i, workgroup %i: CI-like and uneven rows, alpha/beta', async (sliceHeight, parts, unroll, pack, interleave, workgroupSize) => {
    const p = { sliceHeight, parts, unroll, pack, interleave, workgroupSize };
    const ci = g.ciLike(700, { refFraction: 0.1, refDensity: 0.5, expDensity: 0.1, seed: 2 });
    expect(await checkKernel(ctx, slicedSplitKernel, p, ci, 3, 1, 0)).toBe('');
    // rows of 120 entries and empty rows (30 %), 301 rows: a short last slice
    expect(await checkKernel(ctx, slicedSplitKernel, p, g.withEmptyRows(301, 3000, 120, 0.3, 5), 5, 2, -0.5)).toBe('');
  });

  it('slices wider than a binding are cut into slot ranges that accumulate', async () => {
    const a = g.oneDenseRow(40, 3001, 3, 3001, 7, 2); // one row of 3001 entries, bindings of 1024 entries
    for (const [sliceHeight, parts, unroll] of [VARIANTS[0], VARIANTS[1]]) {
      for (const interleave of [0, 1]) {
        const p = { sliceHeight, parts, unroll, pack: 0, interleave, workgroupSize: 256 };
        expect(await checkKernel(ctx, slicedSplitKernel, p, a, 7, 1, 0, { maxBindingBytes: 4096 })).toBe('');
        expect(await checkKernel(ctx, slicedSplitKernel, p, a, 7, 2, -0.5, { maxBindingBytes: 4096 })).toBe('');
      }
    }
    // interleave 1 halves the entries per binding (two words each): more slot ranges, all accumulating after the first
    const m = slicedEllRFromCsr(a, { sliceHeight: 32 });
    const pairs = [...interleavedSlicedPieces(m, 1024)];
    expect(pairs.length).toBeGreaterThan([...packedSlicedPieces(m, 1024)].length);
    expect(pairs.every((q) => (q.data[0] as Uint32Array).length <= 1024)).toBe(true);
    expect(pairs.filter((q) => q.accumulate).length).toBeGreaterThan([...packedSlicedPieces(m, 1024)].filter((q) => q.accumulate).length);
  });

  it('pack 1: whole slices per binding (several pieces), a slice wider than a binding in accumulating slot ranges', async () => {
    const p = { sliceHeight: 32, parts: 8, unroll: 4, pack: 1, interleave: 0, workgroupSize: 256 };
    const a = g.withEmptyRows(600, 900, 100, 0.2, 8);
    const m = slicedEllRFromCsr(a, { sliceHeight: 32 });
    expect([...packedSlicedPieces(m, 2048)].length).toBeGreaterThan(3);
    expect(await checkKernel(ctx, slicedSplitKernel, p, a, 9, 1.5, -1, { maxBindingBytes: 8192 })).toBe('');
    const wide = g.oneDenseRow(40, 3001, 3, 3001, 7, 2); // one row of 3001 entries, bindings of 1024 entries
    const parts = [...packedSlicedPieces(slicedEllRFromCsr(wide, { sliceHeight: 32 }), 1024)];
    expect(parts.filter((q) => q.accumulate).length).toBeGreaterThan(2);
    expect(await checkKernel(ctx, slicedSplitKernel, p, wide, 7, 1, 0, { maxBindingBytes: 4096 })).toBe('');
    expect(await checkKernel(ctx, slicedSplitKernel, p, wide, 7, 2, -0.5, { maxBindingBytes: 4096 })).toBe('');
  });

  it('pack 1, interleave 1: whole slices per binding (several pieces), a slice wider than a binding in accumulating ranges of 4k slots', async () => {
    const p = { sliceHeight: 32, parts: 8, unroll: 2, pack: 1, interleave: 1, workgroupSize: 256 };
    const a = g.withEmptyRows(600, 900, 101, 0.2, 8);
    expect([...groupedSlicedPieces(slicedEllRFromCsr(a, { sliceHeight: 32 }), 8192)].length).toBeGreaterThan(3);
    expect(await checkKernel(ctx, slicedSplitKernel, p, a, 9, 1.5, -1, { maxBindingBytes: 32768 })).toBe('');
    const wide = g.oneDenseRow(40, 3001, 3, 3001, 7, 2); // one row of 3001 entries: ranges of 84 slots (21 groups of 6·32 words) in bindings of 4096 u32
    const parts = [...groupedSlicedPieces(slicedEllRFromCsr(wide, { sliceHeight: 32 }), 4096)];
    expect(parts.filter((q) => q.accumulate).length).toBe(35);
    expect(parts.every((q) => (q.data[0] as Uint32Array).length <= 4096 && (q.data[3] as Uint32Array).length <= 4096)).toBe(true);
    expect(await checkKernel(ctx, slicedSplitKernel, p, wide, 7, 1, 0, { maxBindingBytes: 16384 })).toBe('');
    expect(await checkKernel(ctx, slicedSplitKernel, { ...p, parts: 1, unroll: 1 }, wide, 7, 2, -0.5, { maxBindingBytes: 16384 })).toBe('');
    expect(() => [...groupedSlicedPieces(slicedEllRFromCsr(wide, { sliceHeight: 32 }), 512)]).toThrow(/slice height 32 expected at most 21 rows/);
  });

  it('pack 1 refuses a slot whose columns span more than 2^16 − 1, naming it, in supports and at upload', () => {
    // rows 0 and 1 of one slice, 64 entries each: columns 0…63 and 70 000…70 063, so slot 0 holds columns 0 and 70 000
    const cols = [...Array.from({ length: 64 }, (_, k) => k), ...Array.from({ length: 64 }, (_, k) => 70_000 + k)];
    const a: CsrMatrix = { format: 'csr', rows: 2, cols: 70_064, rowPtr: Int32Array.of(0, 64, 128), colIdx: Int32Array.from(cols), values: new Float64Array(128).fill(1) };
    const m = slicedEllRFromCsr(a, { sliceHeight: 32 });
    expect(slicedSplitKernel.supports(m, ctx.limits, { ...slicedSplitKernel.defaults, pack: 1 })).toMatch(/slot 0 of slice 0 spans columns 0…70000, more than 65535 apart: use pack 0/);
    expect(packFits(m)).not.toBe(true);
    expect(slicedSplitKernel.supports(m, ctx.limits, { ...slicedSplitKernel.defaults, pack: 0 })).toBe(true);
    expect(() => [...packedSlicedPieces(m, 1 << 20)]).toThrow(/slot 0 of slice 0 spans more than 65535 columns \(row 1, column 70000, base 0\): use pack 0/);
    expect(() => [...groupedSlicedPieces(m, 1 << 20)]).toThrow(/slot 0 of slice 0 spans more than 65535 columns \(row 1, column 70000, base 0\): use pack 0/);
  });

  it('rejects parts not dividing the workgroup and an unroll outside 1, 2, 4, 8, with the values', () => {
    expect(() => slicedSplitWgsl(3, 4, 256)).toThrow(/parts expected one of 1, 2, 4, 8, 16, 32 dividing 256, got 3/);
    expect(() => slicedSplitWgsl(8, 5, 256)).toThrow(/unroll expected one of 1, 2, 4, 8, got 5/);
    expect(() => slicedSplitWgsl(8, 4, 256, 1, 2)).toThrow(/interleave expected 0 or 1, got 2/);
  });
});
