/**
 * csr-vec4 / csr-long quads built on the device from the tuner's shared CSR upload (issue 16,
 * kernels/csr4/quad-build.ts): word for word the host pack of pack 0 without interleaving, the
 * products equal, the host pack kept where the device build does not apply, and the tuner
 * reporting the build as the candidate's conversion.
 */
import { type CsrMatrix, csrSpmv, generators as g } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { autotune, getKernel, GpuVector, tunedOperator, uploadCsrArrays } from '../src/index';
import type { QuadDeviceMatrix } from '../src/kernels/csr4/quad-device';
import { readRanges } from '../src/memory/readback';
import { uploadF32 } from '../src/memory/upload';
import { testContext } from './helpers';

afterAll(async () => (await testContext()).dispose());

/** The words of a quad handle's one block: row quads, values (as u32 bits), columns. */
async function words(h: QuadDeviceMatrix): Promise<Uint32Array[]> {
  const ctx = await testContext();
  const b = h.quadBlocks[0]!;
  const bufs = [b.rowQuad, b.values, b.cols];
  const got = await readRanges(ctx, bufs.map((buf) => ({ buf, offset: 0, bytes: buf.bytes })));
  return got.map((x) => new Uint32Array(x));
}

/** Rows of 0…9 entries (every pad count, empty rows included), unsorted-free, deterministic. */
function mixedRows(rows: number, cols: number): CsrMatrix {
  const rowPtr = new Int32Array(rows + 1);
  const colIdx: number[] = [];
  const values: number[] = [];
  for (let r = 0; r < rows; r++) {
    const len = (r * 7) % 10;
    for (let j = 0; j < len; j++) {
      colIdx.push((r * 13 + j * 101) % cols);
      values.push(((r + 3 * j) % 17) - 8.25);
    }
    rowPtr[r + 1] = colIdx.length;
  }
  // columns ascending within rows (a canonical CSR)
  for (let r = 0; r < rows; r++) {
    const s = rowPtr[r]!;
    const e = rowPtr[r + 1]!;
    const idx = Array.from({ length: e - s }, (_, k) => s + k).sort((x, y) => colIdx[x]! - colIdx[y]!);
    const c = idx.map((k) => colIdx[k]!);
    const v = idx.map((k) => values[k]!);
    for (let k = s; k < e; k++) {
      colIdx[k] = c[k - s]!;
      values[k] = v[k - s]!;
    }
  }
  return { format: 'csr', rows, cols, rowPtr, colIdx: Int32Array.from(colIdx), values: Float64Array.from(values) };
}

describe('quads built on the device (csr-vec4, csr-long)', () => {
  const cases: [string, CsrMatrix][] = [
    ['rows of 0–9 entries', mixedRows(3001, 2000)],
    ['banded, rows of 7', g.banded(4000, 3, 3, { seed: 4 })],
    ['power law', g.powerLaw(3000, 3000, { alpha: 1.8, minLen: 1, maxLen: 600, seed: 3 })],
  ];

  for (const [name, a] of cases) {
    it(`${name}: word for word the host pack, and the same product`, async () => {
      const ctx = await testContext();
      const shared = uploadCsrArrays(ctx, a, 'test');
      const x = Float64Array.from({ length: a.cols }, (_, i) => Math.fround(Math.sin(i) * 2));
      const dx = uploadF32(ctx, x, 'x');
      try {
        for (const id of ['csr-vec4', 'csr-long']) {
          const k = getKernel(id);
          const dev = k.upload(ctx, a, { pack: 0, lanes: 4 }, { sharedCsr: shared }) as QuadDeviceMatrix;
          const host = k.upload(ctx, a, { pack: 0, lanes: 4 }) as QuadDeviceMatrix;
          expect(dev.builtOnDevice, id).toBe(true);
          expect(host.builtOnDevice, id).toBeUndefined();
          expect(dev.quadBlocks.map(({ rows, k0, k1, groups }) => [rows, k0, k1, groups])).toEqual(host.quadBlocks.map(({ rows, k0, k1, groups }) => [rows, k0, k1, groups]));
          const [dw, hw] = [await words(dev), await words(host)];
          for (let i = 0; i < 3; i++) expect(dw[i], `${id} array ${i}`).toEqual(hw[i]);
          const dy = ctx.buffers.acquire(4 * a.rows, undefined, 'y');
          k.encode(ctx, dev, dx, dy);
          const [yb] = await readRanges(ctx, [{ buf: dy, offset: 0, bytes: 4 * a.rows }]);
          const y = new Float32Array(yb!);
          const want = csrSpmv(a, x);
          for (let r = 0; r < a.rows; r++) expect(Math.abs(y[r]! - want[r]!), `${id} row ${r}`).toBeLessThanOrEqual(1e-4 * (1 + Math.abs(want[r]!)));
          dy.dispose();
          dev.dispose();
          host.dispose();
        }
      } finally {
        shared.release();
        dx.dispose();
      }
      await ctx.finish();
      await new Promise((r) => setTimeout(r, 0)); // the build's hold on the shared arrays ends with the queue
      expect(shared.holders).toBe(0);
    }, 60_000);
  }

  it('keeps the host pack for pack 1 / 2, interleaved rows, another matrix\'s arrays and a layout past one binding', async () => {
    const ctx = await testContext();
    const a = g.banded(3000, 5, 5, { seed: 6 });
    const other = g.banded(3000, 5, 5, { seed: 7 });
    const shared = uploadCsrArrays(ctx, a, 'test');
    try {
      const vec4 = getKernel('csr-vec4');
      const long = getKernel('csr-long');
      const built = (h: unknown) => (h as QuadDeviceMatrix).builtOnDevice === true;
      const tries: [string, QuadDeviceMatrix][] = [
        ['pack 1', vec4.upload(ctx, a, { pack: 1 }, { sharedCsr: shared }) as QuadDeviceMatrix],
        ['pack 2', vec4.upload(ctx, a, { pack: 2 }, { sharedCsr: shared }) as QuadDeviceMatrix],
        ['interleave 1', long.upload(ctx, a, { pack: 0, interleave: 1, lanes: 4 }, { sharedCsr: shared }) as QuadDeviceMatrix],
        ['split over bindings', vec4.upload(ctx, a, { pack: 0 }, { sharedCsr: shared, maxBindingBytes: 4096 }) as QuadDeviceMatrix],
      ];
      for (const [what, h] of tries) {
        expect(built(h), what).toBe(false);
        h.dispose();
      }
      expect(() => vec4.upload(ctx, other, { pack: 0 }, { sharedCsr: shared })).not.toThrow(); // another matrix: its own host pack
    } finally {
      shared.release();
    }
  }, 60_000);

  it('csr-vec4 and csr-long of one shared upload read one quad layout: built once, both products right, freed with the last holder', async () => {
    const ctx = await testContext();
    const a = g.powerLaw(3000, 3000, { alpha: 1.8, minLen: 1, maxLen: 300, seed: 9 });
    const shared = uploadCsrArrays(ctx, a, 'test');
    const x = Float64Array.from({ length: a.cols }, (_, i) => ((i % 11) - 5) / 8);
    const dx = uploadF32(ctx, x, 'x');
    const dy = ctx.buffers.acquire(a.rows * 4, undefined, 'y');
    const ref = csrSpmv(a, x);
    const check = async (k: ReturnType<typeof getKernel>, h: QuadDeviceMatrix, what: string) => {
      k.encode(ctx, h, dx, dy);
      const y = new Float32Array((await readRanges(ctx, [{ buf: dy, offset: 0, bytes: 4 * a.rows }]))[0]!);
      let worst = 0;
      for (let r = 0; r < a.rows; r++) worst = Math.max(worst, Math.abs(y[r]! - ref[r]!) / (1 + Math.abs(ref[r]!)));
      expect(worst, what).toBeLessThan(1e-4);
    };
    try {
      const vec4 = getKernel('csr-vec4');
      const long = getKernel('csr-long');
      const h1 = vec4.upload(ctx, a, { lanes: 2, pack: 0 }, { sharedCsr: shared }) as QuadDeviceMatrix;
      const h2 = long.upload(ctx, a, { lanes: 8, pack: 0, interleave: 0 }, { sharedCsr: shared }) as QuadDeviceMatrix;
      const h3 = vec4.upload(ctx, a, { lanes: 8, pack: 0 }, { sharedCsr: shared }) as QuadDeviceMatrix;
      expect([h1.sharedQuads, h2.sharedQuads, h3.sharedQuads]).toEqual([false, true, true]);
      // the same device buffers: one build, not three
      expect(h2.quadBlocks[0]!.values).toBe(h1.quadBlocks[0]!.values);
      expect(h3.quadBlocks[0]!.cols).toBe(h1.quadBlocks[0]!.cols);
      await check(vec4, h1, 'csr-vec4 lanes 2');
      await check(long, h2, 'csr-long lanes 8');
      h1.dispose(); // the others still hold the layout
      await check(long, h2, 'csr-long after csr-vec4 was disposed');
      await check(vec4, h3, 'csr-vec4 lanes 8 after the first was disposed');
      h2.dispose();
      h3.dispose();
      h3.dispose(); // a second dispose releases nothing more
      // all released: the next upload builds its own again
      const h4 = vec4.upload(ctx, a, { lanes: 4, pack: 0 }, { sharedCsr: shared }) as QuadDeviceMatrix;
      expect(h4.sharedQuads).toBe(false);
      await check(vec4, h4, 'csr-vec4 rebuilt');
      h4.dispose();
    } finally {
      dx.dispose();
      dy.dispose();
      shared.release();
    }
  }, 60_000);

  it('tunedOperator over csr-vec4 and csr-long: the losers disposed, the winner\'s shared quads still hold the layout and its product is right', async () => {
    const ctx = await testContext();
    const a = g.banded(3000, 6, 6, { seed: 10 });
    const op = await tunedOperator(ctx, a, { cache: false, exhaustive: true, reps: 2, candidates: [{ kernel: 'csr-vec4', params: { lanes: 4, pack: 0 } }, { kernel: 'csr-long', params: { lanes: 8, pack: 0, interleave: 0, unroll: 4, stage: 0 } }], warn: () => {} });
    try {
      const timed = op.tuning.trials.filter((t) => t.status === 'timed');
      expect(new Set(timed.map((t) => t.kernel))).toEqual(new Set(['csr-vec4', 'csr-long']));
      const x = Float64Array.from({ length: a.cols }, (_, i) => ((i % 9) - 4) / 4);
      const dx = new GpuVector(uploadF32(ctx, x, 'x'), a.cols);
      const dy = new GpuVector(ctx.buffers.acquire(a.rows * 4, undefined, 'y'), a.rows);
      op.apply(dx, dy);
      const y = new Float32Array((await readRanges(ctx, [{ buf: dy.buf, offset: 0, bytes: 4 * a.rows }]))[0]!);
      const ref = csrSpmv(a, x);
      let worst = 0;
      for (let r = 0; r < a.rows; r++) worst = Math.max(worst, Math.abs(y[r]! - ref[r]!) / (1 + Math.abs(ref[r]!)));
      expect(worst).toBeLessThan(1e-4);
      dx.buf.dispose();
      dy.buf.dispose();
    } finally {
      op.dispose();
    }
  }, 120_000);

  it('in a tuning run the device build is the candidate\'s conversion (no upload of its own) and its quads pass the float64 check', async () => {
    const ctx = await testContext();
    const a = g.banded(2000, 5, 5, { seed: 8 });
    const r = await autotune(ctx, a, { cache: false, exhaustive: true, candidates: [{ kernel: 'csr-vec4', params: { lanes: 2, pack: 0 } }, { kernel: 'csr-adaptive', params: { nnzPerGroup: 1024 } }], reps: 2, warn: () => {} });
    const t = r.report.trials.find((x) => x.kernel === 'csr-vec4')!;
    expect(t.status).toBe('timed');
    expect(t.verified).toBe(true); // the device-built quads pass the float64 check
    expect(t.conversionMs!).toBeGreaterThan(0);
    expect(t.uploadMs).toBe(0);
  }, 120_000);
});
