/**
 * Host ↔ device transfers (issue 15, session 9; bench/transfer.ts): uploads convert typed arrays
 * with the typed-array constructor (toFloat32), readF32 converts straight from the mapped
 * staging memory; the values are those of float32 rounding, every special value included.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GpuContext, GpuVectorSpace, readF32, readRanges, toFloat32, uploadF32 } from '../src/index';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});
afterAll(() => ctx.dispose());

const SPECIAL = [0, -0, 1, -1, 0.1, 1e-40, -1e-45, 3.4028235e38, 3.5e38, -3.5e38, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2 ** -126, 1 / 3];

describe('toFloat32', () => {
  it('returns a Float32Array itself and rounds every other input as Math.fround does', () => {
    const f = new Float32Array([1, 2]);
    expect(toFloat32(f)).toBe(f);
    const want = SPECIAL.map(Math.fround);
    for (const input of [new Float64Array(SPECIAL), SPECIAL, new Float64Array(SPECIAL).subarray(0)]) {
      const got = toFloat32(input);
      expect(got).toBeInstanceOf(Float32Array);
      expect(Array.from(got)).toEqual(want); // toEqual tells −0 from 0 and matches NaN
    }
    expect(Array.from(toFloat32(new Int32Array([-7, 2 ** 30 + 1])))).toEqual([-7, Math.fround(2 ** 30 + 1)]);
    // a view into a larger buffer converts its own elements only
    const big = new Float64Array([9, 9, 0.1, 0.2, 9]);
    expect(Array.from(toFloat32(big.subarray(2, 4)))).toEqual([Math.fround(0.1), Math.fround(0.2)]);
  });
});

describe('readF32 and readRanges', () => {
  it('read back float32 values as float64 (specials, an offset, several ranges, none)', async () => {
    const n = 70_001;
    const host = new Float64Array(n);
    for (let i = 0; i < n; i++) host[i] = i < SPECIAL.length ? SPECIAL[i]! : Math.sin(i) * 10 ** ((i % 60) - 30);
    const buf = uploadF32(ctx, host, 'transfer-test');
    const all = await readF32(ctx, buf, n);
    expect(all).toBeInstanceOf(Float64Array);
    const want = Array.from(host, Math.fround);
    // a copy keeps every bit (subnormals, −0, NaN) on the way and back
    expect(Array.from(all)).toEqual(want);
    const part = await readF32(ctx, buf, 5, 1000);
    expect(Array.from(part)).toEqual(want.slice(1000, 1005));
    expect((await readF32(ctx, buf, 0)).length).toBe(0);
    const [a, b] = await readRanges(ctx, [
      { buf, offset: 8, bytes: 12 },
      { buf, offset: 4 * 60_000, bytes: 8 },
    ]);
    expect(Array.from(new Float32Array(a!))).toEqual(want.slice(2, 5));
    expect(Array.from(new Float32Array(b!))).toEqual(want.slice(60_000, 60_002));
    buf.dispose();
  });

  it('the vector space writes typed and plain arrays alike', async () => {
    const gs = new GpuVectorSpace(ctx);
    const vals = [0.1, -2.5, 1e-3, 7];
    const v = gs.fromArray(new Float64Array(vals));
    const w = gs.fromArray(vals);
    expect(Array.from(await gs.toArray(v))).toEqual(vals.map(Math.fround));
    gs.write(w, new Float64Array([1, 2, 3, 0.3]));
    expect(Array.from(await gs.toArray(w))).toEqual([1, 2, 3, Math.fround(0.3)]);
    gs.release(v);
    gs.release(w);
  });
});

describe('writeData methods (uploadTuning)', () => {
  it('write, chunks and staging put the same bytes at the same place, odd sizes and offsets included', async () => {
    const { uploadTuning, writeData } = await import('../src/index');
    const saved = { ...uploadTuning };
    try {
      const n = 10_007;
      const data = Float32Array.from({ length: n }, (_, i) => Math.fround(Math.cos(i) * (i + 1)));
      for (const method of ['write', 'chunks', 'staging', 'ring'] as const) {
        uploadTuning.method = method;
        uploadTuning.chunkBytes = 4 * 1003; // ten pieces and a short one
        uploadTuning.ringBytes = 4 * 1003; // ring: four pieces through staging, the rest by writeBuffer (no event loop between)
        uploadTuning.minRingBytes = 4;
        const buf = uploadF32(ctx, new Float32Array(n + 5).fill(-1), `write-${method}`);
        writeData(ctx, buf, data, 3);
        const got = await readF32(ctx, buf, n + 5);
        expect([got[0], got[1], got[2], got[n + 3], got[n + 4]]).toEqual([-1, -1, -1, -1, -1]);
        expect(Array.from(got.subarray(3, n + 3))).toEqual(Array.from(data));
        buf.dispose();
      }
    } finally {
      Object.assign(uploadTuning, saved);
    }
  });
});

describe('the upload ring', () => {
  it('reuses its mapped staging buffers once the event loop has run (no new buffer for the next upload)', async () => {
    const { uploadTuning } = await import('../src/index');
    const saved = { ...uploadTuning };
    const d = ctx.device as unknown as Record<string, (...a: unknown[]) => unknown>;
    const create = d.createBuffer!;
    let mapped = 0;
    d.createBuffer = function (this: unknown, ...a: unknown[]) {
      if ((a[0] as GPUBufferDescriptor).mappedAtCreation) mapped++;
      return create.apply(this, a);
    };
    try {
      Object.assign(uploadTuning, { method: 'ring', ringBytes: 4096, minRingBytes: 4 });
      const n = 3000; // three ring pieces
      const bufs: Awaited<ReturnType<typeof uploadF32>>[] = [];
      let afterFirst = -1;
      for (let round = 0; round < 3; round++) {
        if (round === 1) afterFirst = mapped;
        const data = Float32Array.from({ length: n }, (_, i) => i * (round + 1));
        bufs.push(uploadF32(ctx, data, `ring-${round}`));
        await ctx.finish();
        await new Promise((res) => setTimeout(res, 20)); // the ring's mapAsync settles
        const got = await readF32(ctx, bufs[round]!, n);
        expect(got[n - 1]).toBe((n - 1) * (round + 1));
        expect(got[1234]).toBe(1234 * (round + 1));
      }
      expect(mapped).toBeLessThanOrEqual(4); // at most the ring's size, ever (the file's earlier uploads may have made them)
      expect(mapped).toBe(afterFirst); // the second and third uploads reuse them
      for (const b of bufs) b.dispose();
    } finally {
      d.createBuffer = create;
      Object.assign(uploadTuning, saved);
    }
  });

  it("'auto' takes the ring on NVIDIA / AMD adapters and one writeBuffer elsewhere (lavapipe: host memory is device memory)", async () => {
    const { uploadTuning } = await import('../src/index');
    const saved = { ...uploadTuning };
    const q = ctx.device.queue as unknown as Record<string, (...a: unknown[]) => unknown>;
    const write = q.writeBuffer!;
    let writes = 0;
    q.writeBuffer = function (this: unknown, ...a: unknown[]) {
      writes++;
      return write.apply(this, a);
    };
    try {
      Object.assign(uploadTuning, { method: 'auto', ringBytes: 4096, minRingBytes: 4 });
      const b = uploadF32(ctx, new Float32Array(3000).fill(2), 'auto');
      const v = ctx.adapterInfo.vendor.toLowerCase();
      const discrete = v.includes('nvidia') || v === 'amd' || v === 'ati';
      expect(writes).toBe(discrete ? 0 : 1);
      expect((await readF32(ctx, b, 3000))[2999]).toBe(2);
      b.dispose();
    } finally {
      q.writeBuffer = write;
      Object.assign(uploadTuning, saved);
    }
  });
});

describe('writeValues (float64 straight into the ring, issue 15)', () => {
  it('rounds a Float64Array, a plain array and a subarray as Math.fround, on every method, through ring pieces and writeBuffer pieces', async () => {
    const { uploadTuning, writeValues } = await import('../src/index');
    const saved = { ...uploadTuning };
    try {
      const n = 10_007; // ring: four pieces of 1003 through the ring, the rest converted into the scratch and written
      const big = new Float64Array(n + 4);
      for (let i = 0; i < big.length; i++) big[i] = i < SPECIAL.length ? SPECIAL[i]! : Math.sin(i) * 10 ** ((i % 80) - 40);
      const host = big.subarray(2, n + 2); // a view with an offset into its buffer
      const want = Array.from(host, Math.fround);
      for (const method of ['ring', 'write', 'chunks', 'staging'] as const) {
        Object.assign(uploadTuning, { method, chunkBytes: 4 * 1003, ringBytes: 4 * 1003, minRingBytes: 4 });
        for (const input of [host, Array.from(host)]) {
          const buf = uploadF32(ctx, new Float32Array(n + 5).fill(-1), `values-${method}`);
          writeValues(ctx, buf, input, 3);
          const got = await readF32(ctx, buf, n + 5);
          expect([got[0], got[1], got[2], got[n + 3], got[n + 4]]).toEqual([-1, -1, -1, -1, -1]);
          expect(Array.from(got.subarray(3, n + 3))).toEqual(want); // toEqual tells −0 from 0 and matches NaN
          buf.dispose();
        }
        const up = uploadF32(ctx, host, `upload-${method}`);
        expect(Array.from(await readF32(ctx, up, n))).toEqual(want);
        up.dispose();
      }
    } finally {
      Object.assign(uploadTuning, saved);
    }
  });

  it("'auto' converts float64 input through the ring on every adapter (no writeBuffer while the ring has buffers), a Float32Array as before", async () => {
    const { uploadTuning } = await import('../src/index');
    const saved = { ...uploadTuning };
    const q = ctx.device.queue as unknown as Record<string, (...a: unknown[]) => unknown>;
    const write = q.writeBuffer!;
    let writes = 0;
    q.writeBuffer = function (this: unknown, ...a: unknown[]) {
      writes++;
      return write.apply(this, a);
    };
    try {
      Object.assign(uploadTuning, { method: 'auto', ringBytes: 4096, minRingBytes: 4 });
      await ctx.finish();
      await new Promise((res) => setTimeout(res, 20)); // earlier ring uploads' buffers are mapped again
      const b = uploadF32(ctx, new Float64Array(2000).fill(0.1), 'auto-f64'); // two ring pieces
      expect(writes).toBe(0);
      expect((await readF32(ctx, b, 2000))[1999]).toBe(Math.fround(0.1));
      b.dispose();
    } finally {
      q.writeBuffer = write;
      Object.assign(uploadTuning, saved);
    }
  });

  it('refuses a disposed buffer on the ring path before touching the ring', async () => {
    const { uploadTuning, writeValues, UseAfterDisposeError } = await import('../src/index');
    const saved = { ...uploadTuning };
    try {
      Object.assign(uploadTuning, { method: 'ring', minRingBytes: 4 });
      const buf = uploadF32(ctx, new Float64Array(100), 'disposed');
      buf.dispose();
      expect(() => writeValues(ctx, buf, new Float64Array(100))).toThrow(UseAfterDisposeError);
    } finally {
      Object.assign(uploadTuning, saved);
    }
  });
});

describe('readF32 in pipelined pieces (readTuning, issue 15)', () => {
  it('gives the same values as one read: odd sizes, an offset, specials, two reads at once, readRanges of one range', async () => {
    const { readTuning } = await import('../src/index');
    const saved = { ...readTuning };
    try {
      const n = 10_007;
      const host = new Float64Array(n);
      for (let i = 0; i < n; i++) host[i] = i < SPECIAL.length ? SPECIAL[i]! : Math.cos(i) * 10 ** ((i % 70) - 35);
      const want = Array.from(host, Math.fround);
      const buf = uploadF32(ctx, host, 'pieces');
      Object.assign(readTuning, { method: 'pieces', pieceBytes: 4 * 1003 }); // ten pieces and a short one
      expect(Array.from(await readF32(ctx, buf, n))).toEqual(want);
      expect(Array.from(await readF32(ctx, buf, 3000, 5000))).toEqual(want.slice(5000, 8000));
      expect(Array.from(await readF32(ctx, buf, 1003 * 2))).toEqual(want.slice(0, 2006)); // whole pieces only
      const [a, b] = await Promise.all([readF32(ctx, buf, n), readF32(ctx, buf, 4000, 17)]); // each takes its own staging buffers
      expect(Array.from(a)).toEqual(want);
      expect(Array.from(b)).toEqual(want.slice(17, 4017));
      const [r] = await readRanges(ctx, [{ buf, offset: 4 * 7, bytes: 4 * 9000 }]); // one range: in pieces too
      expect(r!.byteLength).toBe(4 * 9000);
      expect(Array.from(new Float32Array(r!))).toEqual(want.slice(7, 9007));
      const [p, q] = await readRanges(ctx, [{ buf, offset: 0, bytes: 8 }, { buf, offset: 4 * 5000, bytes: 4 * 5000 }]); // several: one staging buffer
      expect(Array.from(new Float32Array(p!))).toEqual(want.slice(0, 2));
      expect(Array.from(new Float32Array(q!))).toEqual(want.slice(5000, 10_000));
      Object.assign(readTuning, { method: 'auto', minPiecesBytes: 4 * 5000 }); // auto: pieces from 5000 values on
      expect(Array.from(await readF32(ctx, buf, n))).toEqual(want);
      expect(Array.from(await readF32(ctx, buf, 4999, 1))).toEqual(want.slice(1, 5000));
      Object.assign(readTuning, { method: 'single' });
      expect(Array.from(await readF32(ctx, buf, n))).toEqual(want);
      buf.dispose();
    } finally {
      Object.assign(readTuning, saved);
    }
  });

  it('a failed map of a piece rejects with DeviceLostError (no unhandled rejection) and the next read works', async () => {
    const { readTuning, DeviceLostError } = await import('../src/index');
    const saved = { ...readTuning };
    const buf = uploadF32(ctx, Float64Array.from({ length: 1000 }, (_, i) => i), 'pieces-fail');
    await ctx.finish();
    const proto = Object.getPrototypeOf(buf.buffer) as { mapAsync: (...a: unknown[]) => Promise<void> };
    const map = proto.mapAsync;
    let calls = 0;
    proto.mapAsync = function (this: GPUBuffer, ...a: unknown[]) {
      if (this.label === 'readback-piece' && ++calls === 3) return Promise.reject(new Error('simulated map failure'));
      return map.apply(this, a);
    };
    try {
      Object.assign(readTuning, { method: 'pieces', pieceBytes: 4 * 100 });
      await expect(readF32(ctx, buf, 1000)).rejects.toThrow(DeviceLostError);
      proto.mapAsync = map;
      expect(Array.from(await readF32(ctx, buf, 1000))).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    } finally {
      proto.mapAsync = map;
      buf.dispose();
      Object.assign(readTuning, saved);
    }
  });

  it('refuses a disposed buffer, and leaves its staging buffers reusable', async () => {
    const { readTuning, UseAfterDisposeError } = await import('../src/index');
    const saved = { ...readTuning };
    try {
      Object.assign(readTuning, { method: 'pieces', pieceBytes: 4 * 100 });
      const buf = uploadF32(ctx, new Float64Array(1000).fill(3), 'pieces-disposed');
      buf.dispose();
      await expect(readF32(ctx, buf, 1000)).rejects.toThrow(UseAfterDisposeError);
      const ok = uploadF32(ctx, new Float64Array(1000).fill(4), 'pieces-ok');
      expect(Array.from(await readF32(ctx, ok, 1000))).toEqual(new Array(1000).fill(4));
      ok.dispose();
    } finally {
      Object.assign(readTuning, saved);
    }
  });
});
