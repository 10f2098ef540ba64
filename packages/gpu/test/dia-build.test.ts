/**
 * DIA built on the device (kernels/dia/dia-build.ts) against the host conversion: the same
 * offsets, the same pieces and the same buffers word for word (tables and float32 values), the
 * same SpMV bits, and the host conversion's refusals before anything is allocated.
 */
import { type CsrMatrix, csr, diaFormat, diaFromCsr, diagonalStats, generators, InvalidParameterError, ResourceLimitError } from '@gpusparse/formats';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConversionCache, createGpuContext, csrVectorKernel, type GpuContext, kernels, prewarmTuner, GpuVector, gpuOperatorFromCsr, MemoryTuneStore, tunedOperator, uploadCsrArrays } from '../src/index';
import { type DeviceDiaMatrix, deviceDiaForUpload, deviceDiaFromCsr, diagonalOffsetsOnDevice } from '../src/kernels/dia/dia-build';
import { diaTiledKernel } from '../src/kernels/dia/dia-tiled.kernel';
import { diaKernel } from '../src/kernels/dia/dia.kernel';
import type { EllDeviceMatrix } from '../src/kernels/ell/ell-device';
import type { UploadOptions } from '../src/kernels/types';
import { readRanges } from '../src/memory/readback';
import { uploadF32 } from '../src/memory/upload';
import { randomVector, testContext } from './helpers';

/** A square matrix from explicit (row, col) → value entries (canonical: sorted, unique). */
function fromEntries(rows: number, cols: number, entries: [number, number, number][]): CsrMatrix {
  const sorted = [...entries].sort((p, q) => p[0] - q[0] || p[1] - q[1]);
  const rowPtr = new Int32Array(rows + 1);
  for (const [i] of sorted) rowPtr[i + 1]++;
  for (let i = 0; i < rows; i++) rowPtr[i + 1] += rowPtr[i]!;
  return csr(rows, cols, rowPtr, Int32Array.from(sorted, (e) => e[1]), Float64Array.from(sorted, (e) => e[2]));
}

/** The 27-point stencil on an nx·ny·nz grid (values not exact in float32: the rounding is tested too). */
function stencil27(nx: number, ny = nx, nz = nx): CsrMatrix {
  const entries: [number, number, number][] = [];
  const at = (x: number, y: number, z: number) => x + nx * (y + ny * z);
  for (let z = 0; z < nz; z++)
    for (let y = 0; y < ny; y++)
      for (let x = 0; x < nx; x++)
        for (let d = 0; d < 27; d++) {
          const [X, Y, Z] = [x + (d % 3) - 1, y + (Math.floor(d / 3) % 3) - 1, z + Math.floor(d / 9) - 1];
          if (X >= 0 && Y >= 0 && Z >= 0 && X < nx && Y < ny && Z < nz) entries.push([at(x, y, z), at(X, Y, Z), d === 13 ? 26.1 : -1 / (1 + d)]);
        }
  return fromEntries(nx * ny * nz, nx * ny * nz, entries);
}

/** A random matrix whose entries lie on a few diagonals, some rows empty, an explicit zero. */
function fewDiagonals(n: number, offsets: number[], seed: number): CsrMatrix {
  let s = seed;
  const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const entries: [number, number, number][] = [];
  for (let i = 0; i < n; i++) {
    if (i % 7 === 3) continue; // empty rows
    for (const k of offsets) if (i + k >= 0 && i + k < n && rnd() < 0.6) entries.push([i, i + k, rnd() < 0.05 ? 0 : rnd() * 2 - 1]);
  }
  return fromEntries(n, n, entries);
}

/** Every 4-byte word of a handle's pieces, in order (tables and values), and the piece metadata. */
async function words(ctx: GpuContext, h: EllDeviceMatrix): Promise<{ meta: unknown[]; data: Uint32Array[] }> {
  const ranges = h.parts.flatMap((p) => p.arrays.map((b) => ({ buf: b, offset: 0, bytes: b.bytes })));
  const out = await readRanges(ctx, ranges);
  return { meta: h.parts.map((p) => [p.rows, p.rowBase, p.count, p.accumulate, p.groups, p.arrays.map((b) => b.bytes)]), data: out.map((b) => new Uint32Array(b)) };
}

/** The first index where two word arrays differ (their common length when one is a prefix), −1 when equal: fast on 10^6 words. */
function firstDiff(x: Uint32Array, y: Uint32Array): number {
  if (Buffer.compare(Buffer.from(x.buffer, x.byteOffset, x.byteLength), Buffer.from(y.buffer, y.byteOffset, y.byteLength)) === 0) return -1;
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return i;
}

/** y = A·x bits of a handle. */
async function product(ctx: GpuContext, k: typeof diaKernel | typeof diaTiledKernel, h: EllDeviceMatrix, x: Float64Array, rows: number): Promise<Uint32Array> {
  const dx = uploadF32(ctx, x);
  const dy = ctx.buffers.acquire(Math.max(1, rows) * 4);
  try {
    (k.encode as (c: GpuContext, h: EllDeviceMatrix, x: typeof dx, y: typeof dy) => void)(ctx, h, dx, dy);
    const [y] = await readRanges(ctx, [{ buf: dy, offset: 0, bytes: Math.max(1, rows) * 4 }]);
    return new Uint32Array(y!).subarray(0, rows);
  } finally {
    dx.dispose();
    dy.dispose();
  }
}

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(() => ctx?.recorder.flush());

const cases: [string, () => CsrMatrix, UploadOptions?][] = [
  ['5-point stencil 23×17 (n not a multiple of the tile)', () => generators.poisson2d(23, 17)],
  ['7-point stencil 9³', () => generators.poisson3d(9)],
  ['27-point stencil 7×6×5', () => stencil27(7, 6, 5)],
  ['banded 1000, b9', () => generators.banded(1000, 4, 4, { seed: 3 })],
  ['random on 5 diagonals, empty rows, explicit zero', () => fewDiagonals(777, [-300, -2, 0, 5, 611], 7)],
  ['rectangular 40×90', () => fromEntries(40, 90, Array.from({ length: 40 }, (_, i) => [i, 2 * i + 3, i + 0.1] as [number, number, number]))],
  ['empty 13×13', () => fromEntries(13, 13, [])],
  ['27-point split over bindings of 4 KiB', () => stencil27(6, 5, 4), { maxBindingBytes: 4096 }],
  ['260 diagonals (dia-tiled splits at 256)', () => generators.banded(300, 130, 129, { seed: 5 })],
  ['arrow 700 (1399 diagonals: the offsets come back in two round trips)', () => fromEntries(700, 700, [...Array.from({ length: 700 }, (_, j) => [0, j, j + 1] as [number, number, number]), ...Array.from({ length: 699 }, (_, i) => [i + 1, 0, -i] as [number, number, number])])],
  ['260 diagonals split over bindings of 8 KiB', () => generators.banded(300, 130, 129, { seed: 5 }), { maxBindingBytes: 8192 }],
];

describe('DIA built on the device', () => {
  it.each(cases)('%s: offsets found on the device equal diagonalStats', async (_name, make) => {
    const a = make();
    const shared = uploadCsrArrays(ctx, a);
    try {
      const { offsets, window } = await diagonalOffsetsOnDevice(ctx, shared, 2 ** 28);
      window.dispose();
      expect([...offsets]).toEqual([...diagonalStats(a).offsets]);
    } finally {
      shared.release();
    }
  });

  it.each(cases)('%s: dia and dia-tiled buffers equal the host upload word for word, and so do the products', async (_name, make, opts) => {
    const a = make();
    const host = diaFromCsr(a, { valueType: 'f32', maxDiagonals: 2 ** 28 });
    const shared = uploadCsrArrays(ctx, a, 'test', opts);
    let m: DeviceDiaMatrix | undefined;
    try {
      m = await deviceDiaFromCsr(ctx, shared);
      expect([...m.offsets]).toEqual([...host.offsets]);
      const x = randomVector(a.cols, 11);
      for (const k of [diaKernel, diaTiledKernel] as const) {
        for (const params of [{}, { workgroupSize: 64, rowsPerThread: 2 }]) {
          const hh = k.upload(ctx, host, params, opts) as EllDeviceMatrix;
          const hd = k.upload(ctx, m, params, opts) as EllDeviceMatrix;
          try {
            const [wh, wd] = [await words(ctx, hh), await words(ctx, hd)];
            expect(wd.meta).toEqual(wh.meta);
            expect(wd.data.length).toBe(wh.data.length);
            for (const [i, d] of wd.data.entries()) expect(firstDiff(d, wh.data[i]!), `array ${i}: first differing word`).toBe(-1);
            if (k === diaTiledKernel) expect((hd as unknown as { interior: unknown }).interior).toEqual((hh as unknown as { interior: unknown }).interior);
            expect(firstDiff(await product(ctx, k, hd, x, a.rows), await product(ctx, k, hh, x, a.rows)), 'first differing row of y').toBe(-1);
          } finally {
            hh.dispose();
            hd.dispose();
          }
        }
      }
    } finally {
      m?.release();
      shared.release();
    }
  });

  it('fill slots are +0 even when the pool hands back a buffer full of garbage', async () => {
    const a = fewDiagonals(500, [-7, 0, 3], 9);
    const host = diaFromCsr(a, { valueType: 'f32' });
    const dirty = ctx.buffers.acquire(host.data.length * 4);
    ctx.device.queue.writeBuffer(dirty.buffer, 0, new Uint32Array(host.data.length).fill(0x7fc00001));
    dirty.dispose(); // back to the pool: the next buffer of its size class is this one
    const shared = uploadCsrArrays(ctx, a);
    const m = await deviceDiaFromCsr(ctx, shared);
    const hd = diaKernel.upload(ctx, m);
    const hh = diaKernel.upload(ctx, host);
    try {
      expect(hd.parts[0]!.arrays[1]!.buffer).toBe(dirty.buffer);
      const [wh, wd] = [await words(ctx, hh), await words(ctx, hd)];
      expect(firstDiff(wd.data[1]!, wh.data[1]!)).toBe(-1);
    } finally {
      hd.dispose();
      hh.dispose();
      m.release();
      shared.release();
    }
  });

  it('the handles outlive the device matrix and the CSR arrays; dispose twice is harmless', async () => {
    const a = generators.poisson2d(30);
    const shared = uploadCsrArrays(ctx, a);
    const m = await deviceDiaFromCsr(ctx, shared);
    const h1 = diaKernel.upload(ctx, m);
    const h2 = diaTiledKernel.upload(ctx, m);
    m.release();
    m.release();
    shared.release();
    expect(shared.holders).toBe(0);
    const x = randomVector(a.cols, 3);
    const ref = diaKernel.upload(ctx, diaFromCsr(a, { valueType: 'f32' }));
    expect(await product(ctx, diaKernel, h1, x, a.rows)).toEqual(await product(ctx, diaKernel, ref, x, a.rows));
    h1.dispose();
    h1.dispose();
    expect(await product(ctx, diaTiledKernel, h2, x, a.rows)).toEqual(await product(ctx, diaKernel, ref, x, a.rows));
    h2.dispose();
    ref.dispose();
    expect(() => m.layout(1 << 20, 256)).toThrow(/released/);
  });

  it('refuses too many diagonals with the host conversion error, before allocating the layout', async () => {
    const a = generators.uniformRandom(500, 500, 6, 4);
    const shared = uploadCsrArrays(ctx, a);
    try {
      const host = (() => {
        try {
          diaFromCsr(a, { maxDiagonals: 64 });
        } catch (e) {
          return e as Error;
        }
      })();
      expect(host).toBeInstanceOf(InvalidParameterError);
      await expect(deviceDiaFromCsr(ctx, shared, { maxDiagonals: 64 })).rejects.toThrow(host!.message);
    } finally {
      shared.release();
    }
  });

  it('refuses more than 2^28 padded slots with a ResourceLimitError, as the host conversion does', async () => {
    // one dense first row: 32 768 rows × 8 193 diagonals = 2^28 + 32 768 slots, from 8 193 entries
    const n = 32768;
    const a = fromEntries(n, n, Array.from({ length: 8193 }, (_, j) => [0, j, 1] as [number, number, number]));
    expect(() => diaFromCsr(a, { maxDiagonals: 2 ** 28 })).toThrow(ResourceLimitError);
    const shared = uploadCsrArrays(ctx, a);
    try {
      await expect(deviceDiaFromCsr(ctx, shared)).rejects.toThrow(ResourceLimitError);
      expect(() => deviceDiaForUpload(ctx, a, 2 ** 28)).toThrow(ResourceLimitError);
    } finally {
      shared.release();
    }
  });

  it('deviceDiaForUpload (the synchronous path of gpuOperatorFromCsr) builds the same layout', async () => {
    const a = stencil27(5, 4, 3);
    const m = deviceDiaForUpload(ctx, a, 1024);
    if (typeof m === 'string') throw new Error(m);
    const hd = diaTiledKernel.upload(ctx, m);
    m.release();
    const hh = diaTiledKernel.upload(ctx, diaFromCsr(a, { valueType: 'f32' }));
    try {
      const [wh, wd] = [await words(ctx, hh), await words(ctx, hd)];
      expect(wd).toEqual(wh);
    } finally {
      hd.dispose();
      hh.dispose();
    }
  });
});

/** y = op·x bits through the operator interface. */
async function applyBits(ctx: GpuContext, op: { apply(x: GpuVector, y: GpuVector): void; rows: number }, x: Float64Array): Promise<Uint32Array> {
  const dx = new GpuVector(uploadF32(ctx, x), x.length);
  const dy = new GpuVector(ctx.buffers.acquire(op.rows * 4), op.rows);
  try {
    op.apply(dx, dy);
    const [y] = await readRanges(ctx, [{ buf: dy.buf, offset: 0, bytes: op.rows * 4 }]);
    return new Uint32Array(y!);
  } finally {
    dx.buf.dispose();
    dy.buf.dispose();
  }
}

describe('DIA built on the device inside the operator and the tuner', () => {
  const a = stencil27(9, 8, 7);
  const x = randomVector(a.cols, 5);

  it('gpuOperatorFromCsr with dia-tiled converts on the device (no host conversion) and multiplies as the host upload does', async () => {
    const spy = vi.spyOn(diaFormat, 'fromCsr');
    try {
      const op = gpuOperatorFromCsr(ctx, a, { kernel: 'dia-tiled' });
      expect(spy).not.toHaveBeenCalled();
      const ref = diaTiledKernel.upload(ctx, diaFromCsr(a, { valueType: 'f32' }));
      expect(await applyBits(ctx, op, x)).toEqual(await product(ctx, diaTiledKernel, ref, x, a.rows));
      ref.dispose();
      op.dispose();
    } finally {
      spy.mockRestore();
    }
  });

  it('the tuner converts dia and dia-tiled once, on the device, reports that time, and a cache hit does too', async () => {
    const spy = vi.spyOn(diaFormat, 'fromCsr');
    // the count of the run's device statistics replaces the kernels' host pass over the columns
    const pre = [vi.spyOn(diaKernel, 'precheck'), vi.spyOn(diaTiledKernel, 'precheck')];
    const store = new MemoryTuneStore();
    try {
      const opts = { candidates: ['dia', 'dia-tiled', 'csr-vector'], exhaustive: true, cache: store, expectedProducts: 10 ** 6, warn: () => {} };
      const op = await tunedOperator(ctx, a, opts);
      expect(spy).not.toHaveBeenCalled();
      for (const p of pre) expect(p).not.toHaveBeenCalled();
      const dia = op.tuning.trials.filter((t) => t.kernel.startsWith('dia') && t.status === 'timed');
      expect(dia.length).toBeGreaterThanOrEqual(2);
      expect(dia.every((t) => (t.conversionMs ?? 0) > 0)).toBe(true);
      expect(op.tuning.costs.conversionMs).toBeCloseTo(dia[0]!.conversionMs!, 6); // one build shared by both kernels
      const ref = diaTiledKernel.upload(ctx, diaFromCsr(a, { valueType: 'f32' }));
      const want = await product(ctx, diaTiledKernel, ref, x, a.rows);
      if (op.tuning.winner?.kernel === 'dia-tiled') expect(await applyBits(ctx, op, x)).toEqual(want);
      op.dispose();
      // the cached choice, forced to dia-tiled: verified and run on a device build as well
      store.set(op.tuning.key, { kernel: 'dia-tiled', params: { ...diaTiledKernel.defaults }, productMs: 1, conversionMs: 1, uploadMs: 1, method: 'wall', date: new Date().toISOString() });
      const hit = await tunedOperator(ctx, a, opts);
      expect(hit.tuning.source).toBe('cache');
      expect(spy).not.toHaveBeenCalled();
      expect(await applyBits(ctx, hit, x)).toEqual(want);
      hit.dispose();
      ref.dispose();
    } finally {
      spy.mockRestore();
      for (const p of pre) p.mockRestore();
    }
  }, 300_000); // lavapipe compiles the tuner's DIA variants at their first dispatch: 52.7 s with a cold Mesa cache (a fresh CI machine) on its own core, 72 s pinned beside busy loops (session 14); the 120 s default left under 2× for a loaded CI run

  it('prewarmTuner compiles the build and the default dia-tiled pipelines ahead: the conversion and the upload compile nothing', async () => {
    const fresh = await createGpuContext();
    try {
      await prewarmTuner(fresh, a, kernels, 0).done;
      const compiled = fresh.pipelines.compiled;
      const shared = uploadCsrArrays(fresh, a);
      const m = await deviceDiaFromCsr(fresh, shared);
      const h = diaTiledKernel.upload(fresh, m);
      await fresh.finish();
      expect(fresh.pipelines.compiled).toBe(compiled);
      h.dispose();
      m.release();
      shared.release();
    } finally {
      fresh.dispose();
    }
  });

  it('estimates a device build from the first product, not at the host conversion rate', async () => {
    const shared = uploadCsrArrays(ctx, a);
    try {
      const cand = (k: typeof diaKernel | typeof diaTiledKernel | typeof csrVectorKernel) => ({ kernel: k, params: { ...k.defaults }, conversionKey: k.id, estimatedBytes: 4e8, predicted: 0, work: 0, prepBytes: 0 }) as never;
      const dev = new ConversionCache(a, 0, { ctx, shared });
      // 4·10^8 bytes: the host rate (200 MB/s) says 2 s; three products of 0.2 ms per 4·10^8 bytes and 20 ms say 20.6 ms
      expect(dev.estimateMs(cand(diaTiledKernel), 1 / 2e5, 0.2, 4e8)).toBeCloseTo(20.6, 6);
      expect(new ConversionCache(a, 0).estimateMs(cand(diaTiledKernel), 1 / 2e5, 0.2, 4e8)).toBeCloseTo(2000, 6);
      expect(dev.onDevice(cand(csrVectorKernel))).toBe(false);
      expect(dev.onDevice(cand(diaKernel))).toBe(true);
    } finally {
      shared.release();
    }
  });

  it('the tuner refuses a DIA candidate from the statistics count (no host pass), with the kernels reason', async () => {
    const shared = uploadCsrArrays(ctx, a);
    try {
      const offsets = Int32Array.from({ length: 1100 }, (_, i) => i - 550);
      const conv = new ConversionCache(a, 0, { ctx, shared, offsets });
      const c = { kernel: diaTiledKernel, params: { ...diaTiledKernel.defaults }, conversionKey: 'k', estimatedBytes: 0, predicted: 0, work: 0, prepBytes: 0 };
      expect(conv.precheck(c as never, ctx.limits)).toMatch(/1100 occupied diagonals, more than maxDiagonals = 1024/);
      expect(new ConversionCache(a, 0, { ctx, shared, offsets: diagonalStats(a).offsets }).precheck(c as never, ctx.limits)).toBe(true);
    } finally {
      shared.release();
    }
  });
});
