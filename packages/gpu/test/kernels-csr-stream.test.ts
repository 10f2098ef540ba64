/**
 * The streaming CSR kernel (csr-stream, issue 20): it is an experimental registry entry (bench
 * and opt-in tuning, not the default short-list); every conformance case (empty rows, one huge
 * row, n not a multiple of the workgroup, rows cut over bindings) at several lane counts with
 * prefetch on and off; long CI-like rows where the unrolled prefetching loop, its last step and
 * the single-entry tail all run, with alpha/beta; the shader really holds `unroll` entries per
 * step and prefetches only when asked; with pack 1 (csr-long's quad arrays read as 16-bit column
 * pairs) the same cases, pads masked (x = Inf at a pad column) and rows spanning 2^16 columns refused. Oracle: the float64 CSR product of the float32-rounded
 * matrix with the conformance tier's per-row bound.
 */
import { type CsrMatrix, generators as g } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { termsOf } from '../src/autotune/cost-terms';
import { csrStreamKernel } from '../src/kernels/csr-stream/stream.kernel';
import { experimentalKernels, getKernel, type GpuContext, kernels, readF32, uploadF32 } from '../src/index';
import { CASES, checkKernel, SEEDS } from '../src/testing/conformance';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

const p = (lanes: number, unroll: number, prefetch: number, pack = 0, index = 0, workgroupSize = 256) => ({ lanes, unroll, prefetch, pack, index, workgroupSize });

/**
 * Every conformance case at `params`; the cases that ran (a precheck refusal, null, is allowed only
 * when `refusals` is true) — each one must match the float64 reference within the bound.
 */
async function conformanceRuns(params: ReturnType<typeof p>, refusals = false): Promise<number> {
  let ran = 0;
  for (const [name, gen, opts] of CASES) {
    const a = gen(SEEDS[0]!);
    const r = await checkKernel(ctx, csrStreamKernel, params, a, SEEDS[0]!, 2, -0.5, opts);
    expect(r, `${name}: ${r}`).toBeOneOf(refusals ? ['', null] : ['']);
    if (r === '') ran++;
  }
  return ran;
}

describe('csr-stream', () => {
  it('is an experimental registry entry (bench and opt-in tuning)', () => {
    expect(getKernel('csr-stream')).toBe(csrStreamKernel);
    expect(experimentalKernels).toContain(csrStreamKernel);
    expect(kernels).not.toContain(csrStreamKernel);
    // the tuner's cost model reads its lanes from the kernel itself (csr-vector's lanes-per-row rate)
    expect(termsOf(csrStreamKernel)).toEqual({ lanes: { kind: 'lanes', param: 'lanes' }, passes: 1, spread: 1.6 });
    // session 11: no prefetch by default (it cost 4–12 % on the H100; lanes 32, unroll 4 without it: 1.14× cuSPARSE on CI rows)
    expect(csrStreamKernel.defaults).toMatchObject({ lanes: 32, unroll: 4, prefetch: 0, pack: 0, index: 0 });
  });

  // lanes 1 (a row per invocation), 4 (two rows per lavapipe subgroup of 8), 32 (four subgroups
  // on lavapipe: the workgroup-memory reduction), 256 (the whole workgroup on one row)
  const CONF = [p(32, 4, 1), p(4, 2, 1), p(1, 8, 0), p(256, 4, 1)] as const;
  it.each(CONF)('conformance cases: %o', async (params) => {
    expect(await conformanceRuns(params)).toBe(CASES.length);
  });

  // session 11 code-generation variants: i32 indices (same loads, same order) and workgroups of 64 / 128
  const FORMS = [p(32, 4, 1, 0, 1, 128), p(4, 2, 0, 0, 1, 64), p(8, 8, 1, 0, 0, 64)] as const;
  it.each(FORMS)('conformance cases, i32 indices and small workgroups: %o', async (params) => {
    expect(await conformanceRuns(params)).toBe(CASES.length);
  });

  it('index 1 indexes with i32 and only changes the index type', () => {
    const u = csrStreamKernel.wgsl(p(32, 4, 1), ctx.caps);
    const i = csrStreamKernel.wgsl(p(32, 4, 1, 0, 1), ctx.caps);
    expect(i).toContain('var k = i32(row_ptr[row] + lane);');
    expect(i).toContain('let x3 = x[i32(c3)];');
    expect(i).toContain('cn3 = col_idx[kn + 96i]');
    expect(u).not.toContain('i32(');
    // the same statements otherwise: dropping the i32 casts and literal suffixes gives the u32 text
    const strip = (w: string) => w.replace(/i32\(([^()]*(?:\([^()]*\))?[^()]*)\)/g, '$1').replace(/(\d+)[iu]\b/g, '$1');
    expect(strip(i)).toBe(strip(u));
  });

  // pack 1: the quad arrays read as 16-bit column pairs; rows spanning ≥ 2^16 columns are refused by the precheck (null)
  const PACKED = [p(32, 4, 1, 1), p(4, 2, 1, 1), p(1, 8, 0, 1), p(256, 2, 1, 1)] as const;
  it.each(PACKED)('conformance cases, 16-bit column pairs: %o', async (params) => {
    expect(await conformanceRuns(params, true)).toBe(CASES.length - 1); // all but 'long row 1e5' (a row spanning 100 000 columns)
  });

  it('16-bit pairs: a pad never enters a product — x = Inf at the pad column gives Inf, not NaN, for odd and even row lengths', async () => {
    // rows of 5…12 entries: 1–3 pads in the last quad, an odd last entry or none, on every lane
    const lens = Array.from({ length: 8 }, (_, i) => i + 5);
    const rowPtr = Int32Array.from([0, ...lens.map((_, i) => lens.slice(0, i + 1).reduce((t, l) => t + l, 0))]);
    const colIdx = Int32Array.from(lens.flatMap((l) => Array.from({ length: l }, (_, k) => (k === l - 1 ? 99 : 2 * k))));
    const a: CsrMatrix = { format: 'csr', rows: lens.length, cols: 100, rowPtr, colIdx, values: new Float64Array(colIdx.length).fill(1) };
    const x = new Float64Array(100).fill(1);
    x[99] = Number.POSITIVE_INFINITY;
    for (const params of [p(1, 2, 1, 1), p(2, 1, 0, 1), p(4, 4, 1, 1)]) {
      const h = csrStreamKernel.upload(ctx, a, params);
      const dx = uploadF32(ctx, x);
      const dy = ctx.buffers.acquire(4 * a.rows);
      csrStreamKernel.encode(ctx, h, dx, dy);
      const y = await readF32(ctx, dy, a.rows);
      expect([...y], JSON.stringify(params)).toEqual(lens.map(() => Number.POSITIVE_INFINITY));
      h.dispose();
      dx.dispose();
      dy.dispose();
    }
  });

  it('16-bit pairs: refuses a row spanning 2^16 columns, before and at upload', () => {
    const a: CsrMatrix = { format: 'csr', rows: 2, cols: 70_000, rowPtr: Int32Array.of(0, 1, 3), colIdx: Int32Array.of(5, 0, 65_536), values: Float64Array.of(1, 2, 3) };
    expect(csrStreamKernel.precheck!(a, ctx.limits, p(32, 4, 1, 1))).toMatch(/row 1 spans columns 0\.\.65536/);
    expect(csrStreamKernel.precheck!(a, ctx.limits, p(32, 4, 1, 0))).toBe(true);
    expect(() => csrStreamKernel.upload(ctx, a, p(32, 4, 1, 1))).toThrow(/rows spanning fewer than 65 536 columns/);
  });

  it('long CI-like rows (unrolled prefetching steps, the last step, the tail) and short rows, alpha/beta', async () => {
    // rows of 150–450 entries: at lanes 8, unroll 8 a step covers 64 entries, so rows end at every offset
    const ci = g.ciLike(300, { refFraction: 0.1, refDensity: 0.8, expDensity: 0.05, seed: 3 });
    for (const params of [p(8, 8, 1), p(2, 4, 1), p(8, 8, 1, 1), p(16, 2, 0, 1), p(8, 8, 1, 0, 1, 64), p(32, 2, 0, 0, 1, 128)]) {
      expect(await checkKernel(ctx, csrStreamKernel, params, ci, 3, 1, 0), JSON.stringify(params)).toBe('');
      expect(await checkKernel(ctx, csrStreamKernel, params, g.powerLaw(300, 300, { seed: 5, maxLen: 300, minLen: 0 }), 5, 2, -0.5), JSON.stringify(params)).toBe('');
    }
  });

  it('the shader loads `unroll` entries per step and prefetches the next step only when asked', () => {
    const caps = ctx.caps;
    const on = csrStreamKernel.wgsl(p(32, 4, 1), caps);
    const off = csrStreamKernel.wgsl(p(32, 4, 0), caps);
    for (const w of [on, off]) {
      expect(w).toContain('let x3 = x[c3];');
      expect(w).not.toContain('x4');
      expect(w).toContain('k + 96u');
    }
    expect(on).toContain('cn3 = col_idx[kn + 96u]');
    expect(off).not.toContain('cn0');
    // unroll 1 has nothing to prefetch: the same shader either way
    expect(csrStreamKernel.wgsl(p(8, 1, 1), caps)).toBe(csrStreamKernel.wgsl(p(8, 1, 0), caps));
  });

  it('refuses parameters outside its grid, naming the parameter and the value', () => {
    expect(() => csrStreamKernel.wgsl(p(3, 4, 1), ctx.caps)).toThrow(/lanes expected one of .* got 3/);
    expect(() => csrStreamKernel.wgsl(p(32, 3, 1), ctx.caps)).toThrow(/unroll expected one of 1, 2, 4, 8, got 3/);
    expect(() => csrStreamKernel.wgsl(p(32, 4, 2), ctx.caps)).toThrow(/prefetch expected 0 or 1, got 2/);
    expect(() => csrStreamKernel.wgsl(p(32, 4, 1, 2), ctx.caps)).toThrow(/pack expected 0 or 1, got 2/);
    expect(() => csrStreamKernel.wgsl(p(32, 4, 1, 1, 1), ctx.caps)).toThrow(/index expected 0, or 1 with pack 0, got index 1 with pack 1/);
    expect(() => csrStreamKernel.wgsl(p(32, 4, 1, 0, 2), ctx.caps)).toThrow(/index expected 0, or 1 with pack 0, got index 2/);
    expect(() => csrStreamKernel.wgsl(p(32, 4, 1, 0, 0, 512), ctx.caps)).toThrow(/workgroupSize expected 64, 128 or 256, got 512/);
  });
});
