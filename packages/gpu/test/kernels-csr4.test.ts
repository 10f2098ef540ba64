/**
 * The quad-padded CSR kernel (csr-vec4) beyond the conformance loop: every lane count with 32-
 * and 16-bit columns and 16-bit value indices on long unaligned rows (CI-like, ~300 entries) and
 * with alpha/beta; the pad entries masked (an Inf in x at the pad column gives Inf, not NaN); rows
 * cut over bindings (quad-aligned pieces accumulate); 16-bit columns refused for a row spanning
 * 2^16 columns, value indices for more than 65 536 distinct values;
 * the reduction chosen from the device's subgroup size, never assumed.
 * Oracle: float64 CSR product of the float32-rounded matrix, per-row bound of the conformance tier.
 */
import { type CsrMatrix, generators as g, InvalidParameterError } from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import type { GpuCaps } from '../src/device/context';
import { quadPointers, valueTable } from '../src/kernels/csr4/quad-device';
import { csrVec4Kernel } from '../src/kernels/csr4/vec4.kernel';
import { groupSumMode } from '../src/kernels/wgsl/group';
import { type GpuContext, readF32, uploadF32 } from '../src/index';
import { checkKernel } from '../src/testing/conformance';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

/** Rows of 250–350 entries at unaligned offsets over 3000 columns (row r's columns sorted). */
const ciRows = (seed: number): CsrMatrix => g.uniformRandom(200, 3000, 300, seed);

describe('csr-vec4', () => {
  it.each([1, 2, 4, 8, 16, 32, 64, 128, 256])('lanes %i, every packing (32/16-bit columns, value indices), long unaligned rows, alpha/beta', async (lanes) => {
    for (const pack of [0, 1, 2]) {
      const p = { lanes, pack, workgroupSize: 256 };
      expect(await checkKernel(ctx, csrVec4Kernel, p, ciRows(3), 3, 1, 0)).toBe('');
      expect(await checkKernel(ctx, csrVec4Kernel, p, g.powerLaw(300, 300, { seed: 5, maxLen: 300 }), 5, 2, -0.5)).toBe('');
    }
  });

  it('masks the pad entries: x = Inf at the pad column gives Inf, not NaN', async () => {
    // one row of 5 entries: quad 2 holds entry 4 and three pads repeating its column 9
    const a: CsrMatrix = { format: 'csr', rows: 1, cols: 10, rowPtr: Int32Array.of(0, 5), colIdx: Int32Array.of(0, 2, 4, 6, 9), values: Float64Array.of(1, 1, 1, 1, 1) };
    const x = new Float64Array(10).fill(1);
    x[9] = Number.POSITIVE_INFINITY;
    for (const pack of [0, 1, 2]) {
      const h = csrVec4Kernel.upload(ctx, a, { lanes: 4, pack });
      const dx = uploadF32(ctx, x);
      const dy = ctx.buffers.acquire(4);
      csrVec4Kernel.encode(ctx, h, dx, dy);
      const y = await readF32(ctx, dy, 1);
      expect(y[0]).toBe(Number.POSITIVE_INFINITY);
      h.dispose();
      dx.dispose();
      dy.dispose();
    }
  });

  it('cuts rows longer than a binding into quad-aligned pieces that accumulate', async () => {
    const a = g.oneDenseRow(40, 5001, 3, 5001, 7, 2); // one row of 5001 entries, bindings of 1024 entries
    const opts = { maxBindingBytes: 4096 };
    const h = csrVec4Kernel.upload(ctx, { ...a, values: Float64Array.from(Float32Array.from(a.values)) }, { lanes: 32 }, opts);
    expect(h.blocks).toBeGreaterThanOrEqual(6);
    for (const b of h.quadBlocks) expect(b.k1 - b.k0).toBeLessThanOrEqual(256);
    h.dispose();
    for (const pack of [0, 1, 2]) {
      expect(await checkKernel(ctx, csrVec4Kernel, { lanes: 32, pack, workgroupSize: 256 }, a, 7, 1, 0, opts)).toBe('');
      expect(await checkKernel(ctx, csrVec4Kernel, { lanes: 8, pack, workgroupSize: 256 }, a, 7, 2, -0.5, opts)).toBe('');
    }
  });

  it('refuses 16-bit columns for a row spanning 2^16 columns, before and at upload', () => {
    const a: CsrMatrix = { format: 'csr', rows: 2, cols: 70_000, rowPtr: Int32Array.of(0, 1, 3), colIdx: Int32Array.of(5, 0, 65_536), values: Float64Array.of(1, 2, 3) };
    for (const pack of [1, 2]) {
      expect(csrVec4Kernel.precheck!(a, ctx.limits, { lanes: 32, pack, workgroupSize: 256 })).toMatch(/row 1 spans columns 0\.\.65536/);
      expect(() => csrVec4Kernel.upload(ctx, a, { pack })).toThrow(InvalidParameterError);
    }
    expect(csrVec4Kernel.precheck!(a, ctx.limits, { lanes: 32, pack: 0, workgroupSize: 256 })).toBe(true);
  });

  it('refuses 16-bit value indices for more than 65 536 distinct values; keeps −0 and repeated values exact', async () => {
    const n = 70_000;
    const many: CsrMatrix = { format: 'csr', rows: n, cols: 1, rowPtr: Int32Array.from({ length: n + 1 }, (_, i) => i), colIdx: new Int32Array(n), values: Float64Array.from({ length: n }, (_, i) => i) };
    expect(csrVec4Kernel.precheck!(many, ctx.limits, { lanes: 1, pack: 2, workgroupSize: 256 })).toMatch(/more than 65 536 distinct/);
    expect(() => csrVec4Kernel.upload(ctx, many, { pack: 2 })).toThrow(InvalidParameterError);
    expect(csrVec4Kernel.precheck!(many, ctx.limits, { lanes: 1, pack: 1, workgroupSize: 256 })).toBe(true);
    const vt = valueTable({ ...many, rows: 4, rowPtr: Int32Array.of(0, 1, 2, 3, 4), values: Float64Array.of(-0, 0, 0.1, 0.1) });
    if (typeof vt === 'string') throw new Error(vt);
    expect(vt.table.length).toBe(3);
    expect(Object.is(vt.table[vt.index[0]!], -0)).toBe(true);
    expect(vt.table[vt.index[3]!]).toBe(Math.fround(0.1));
  });

  it('16-bit columns and value indices store fewer bytes; padding is at most 3 entries per row', () => {
    const a = { ...ciRows(4), values: Float64Array.from({ length: 60_000 }, (_, k) => (k % 500) / 7) };
    const q = quadPointers(a);
    expect(4 * q[a.rows]! - a.rowPtr[a.rows]!).toBeLessThanOrEqual(3 * a.rows);
    const bytes = [0, 1, 2].map((pack) => {
      const h = csrVec4Kernel.upload(ctx, a, { pack });
      h.dispose();
      return h.deviceBytes;
    });
    expect(bytes[1]!).toBeLessThan(0.85 * bytes[0]!);
    expect(bytes[2]!).toBeLessThan(0.75 * bytes[1]!);
  });
});

describe('groupSum mode', () => {
  const caps = (subgroupSize: number): GpuCaps => ({ ...ctx.caps, subgroups: subgroupSize > 0, subgroupContiguous: true, subgroupSize, subgroupMinSize: subgroupSize, subgroupMaxSize: subgroupSize });
  it('follows the subgroup size of the device (8 on lavapipe, 32 on NVIDIA)', () => {
    expect(groupSumMode(32, caps(32))).toBe('subgroup-add');
    expect(groupSumMode(8, caps(32))).toBe('shuffle');
    expect(groupSumMode(64, caps(32))).toBe('subgroups+wgmem');
    expect(groupSumMode(32, caps(8))).toBe('subgroups+wgmem');
    expect(groupSumMode(8, caps(8))).toBe('subgroup-add');
    expect(groupSumMode(32, caps(0))).toBe('wgmem');
    expect(groupSumMode(1, caps(32))).toBe('none');
    expect(csrVec4Kernel.wgsl({ lanes: 32, pack: 0, workgroupSize: 256 }, caps(32))).toContain('subgroupAdd');
    expect(csrVec4Kernel.wgsl({ lanes: 32, pack: 0, workgroupSize: 256 }, caps(0))).not.toContain('subgroup');
  });
});
