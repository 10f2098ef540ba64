import { describe, expect, it } from 'vitest';
import { DimensionMismatchError, InvalidParameterError } from '../src/core/errors';
import { csrSpmv, csrTranspose } from '../src/csr/csr';
import * as g from '../src/generators/index';
import { balancedRowCuts, DOT_BLOCK, WasmVectorSpace } from '../src/host/index';
import { hostKernelFunctions, hostKernelModuleBytes } from '../src/host/kernels';
import { FN } from '../src/host/wasm/codegen';
import { HostVectorSpace } from '../src/operator/host';
import { bits, values, wasmSpaces } from './support/wasm-space';

const space = wasmSpaces();

describe('wasm host kernels', () => {
  it('the module validates (SIMD, shared imported memory)', () => {
    expect(WebAssembly.validate(hostKernelModuleBytes())).toBe(true);
  });

  it('the call index table names the functions in module order (the kernels live in several files)', () => {
    const names = hostKernelFunctions().map((f) => f.name);
    expect(names.length).toBe(Object.keys(FN).length);
    for (const [name, index] of Object.entries(FN)) expect(names[index]).toBe(name);
  });
});

describe('WasmVectorSpace against HostVectorSpace', () => {
  const host = new HostVectorSpace();
  const w = space(1);
  const lengths = [0, 1, 2, 3, 5, 31, 4096, 4097, 3 * DOT_BLOCK + 123];

  it('axpby (β = 0, 1, other), multiply and combine are bit-identical', () => {
    for (const n of lengths) {
      const [x, y] = [values(n, 1), values(n, 2)];
      for (const [a, b] of [[0.75, 0], [-1.25, 1], [3, -0.5]] as const) {
        const hy = y.slice();
        host.axpby(a, x, b, hy);
        const wy = w.fromArray(y);
        w.axpby(a, w.fromArray(x), b, wy);
        expect(bits(wy)).toEqual(bits(hy));
      }
      const hz = new Float64Array(n);
      host.multiply(x, y, hz);
      const wz = w.create(n);
      w.multiply(w.fromArray(x), w.fromArray(y), wz);
      expect(bits(wz)).toEqual(bits(hz));
      for (const k of [0, 1, 2, 5, 9]) {
        const xs = Array.from({ length: k }, (_, j) => values(n, 10 + j));
        const cs = Array.from({ length: k }, (_, j) => (j % 2 ? -1 : 1) * (0.3 + j));
        for (const beta of [0, 1, 0.6]) {
          const hy = y.slice();
          host.combine(cs, xs, beta, hy);
          const wy = w.fromArray(y);
          w.combine(cs, xs.map((v) => w.fromArray(v)), beta, wy);
          expect(bits(wy)).toEqual(bits(hy));
        }
      }
    }
  });

  it('combine with 4, 7, 8 and 20 vectors (groups of four in one pass over y, then singles) is bit-identical', () => {
    for (const n of [1, 2, 3, 7, 4097, 2 * 2048 + 5]) {
      const y = values(n, 4);
      for (const k of [4, 7, 8, 20]) {
        const xs = Array.from({ length: k }, (_, j) => values(n, 40 + j));
        const cs = Array.from({ length: k }, (_, j) => (j % 3 ? -1 : 1) * (0.7 + j / 3));
        for (const beta of [0, 1, -1.5]) {
          const hy = y.slice();
          host.combine(cs, xs, beta, hy);
          const wy = w.fromArray(y);
          w.combine(cs, xs.map((v) => w.fromArray(v)), beta, wy);
          expect(bits(wy)).toEqual(bits(hy));
        }
      }
    }
  });

  it('multiDot with 4, 7, 8 and 20 vectors (groups of four against one load of y, then singles): entry j is dot(xs[j], y) bit for bit', () => {
    for (const n of [1, 2, 3, 7, 4097, 3 * DOT_BLOCK + 123]) {
      const wy = w.fromArray(values(n, 5));
      for (const k of [4, 7, 8, 20]) {
        const wxs = Array.from({ length: k }, (_, j) => w.fromArray(values(n, 60 + j)));
        const md = w.multiDot(wxs, wy).map((s) => s.value);
        expect(md).toEqual(wxs.map((x) => w.dot(x, wy).value));
      }
    }
  });

  it('dot, norm2 and multiDot agree with HostVectorSpace to rounding; multiDot[j] is dot(xs[j], y) bit for bit', () => {
    for (const n of lengths) {
      const y = values(n, 3);
      const xs = Array.from({ length: 6 }, (_, j) => values(n, 20 + j));
      const wy = w.fromArray(y);
      const wxs = xs.map((v) => w.fromArray(v));
      const md = w.multiDot(wxs, wy).map((s) => s.value);
      for (let j = 0; j < 6; j++) {
        const d = w.dot(wxs[j]!, wy).value;
        expect(Object.is(md[j], d)).toBe(true);
        const ref = host.dot(xs[j]!, y).value;
        let scale = 0;
        for (let i = 0; i < n; i++) scale += Math.abs(xs[j]![i]! * y[i]!);
        expect(Math.abs(d - ref)).toBeLessThanOrEqual(1e-15 * n * scale + 0);
      }
      if (n > 0) expect(w.norm2(wy).value / host.norm2(y).value).toBeCloseTo(1, 13);
      else expect(w.norm2(wy).value).toBe(0);
    }
    const huge = w.fromArray([3e200, 4e200]);
    expect(w.norm2(huge).value).toBeCloseTo(5e200, -190); // the scaled pass, no overflow
    const tiny = w.fromArray([3e-200, 4e-200]);
    expect(w.norm2(tiny).value / 5e-200).toBeCloseTo(1, 14);
  });

  it('falls back to the JavaScript kernels for arrays outside the heap, and checks lengths', () => {
    const x = values(100, 5);
    const wy = w.fromArray(values(100, 6));
    const hy = values(100, 6);
    w.axpby(2, x, 1, wy); // x is a plain array
    host.axpby(2, x, 1, hy);
    expect(bits(wy)).toEqual(bits(hy));
    expect(() => w.dot(w.create(3), w.create(4))).toThrow(DimensionMismatchError);
    expect(() => WasmVectorSpace.create({ threads: 0 })).toThrow(InvalidParameterError);
  });

  it('release returns memory to the heap: the next vector of that size reuses it', () => {
    const a = w.create(10_000);
    const addr = a.byteOffset;
    w.release(a);
    w.release(a); // a second release is a no-op
    const b = w.create(10_000);
    expect(b.byteOffset).toBe(addr);
    expect(b.every((v) => v === 0)).toBe(true); // create zeroes reused memory
  });
});

describe('WasmCsrOperator', () => {
  const w = space(1);
  it('apply is bit-identical to csrSpmv, on heap vectors and on plain arrays; transpose and diagonal', () => {
    const a = g.powerLaw(3000, 2500, { alpha: 2.2, minLen: 1, maxLen: 300, seed: 7 });
    const x = values(a.cols, 8);
    const ref = csrSpmv(a, x, new Float64Array(a.rows));
    const op = w.csrOperator(a);
    const wy = w.create(a.rows);
    op.apply(w.fromArray(x), wy);
    expect(bits(wy)).toEqual(bits(ref));
    const py = new Float64Array(a.rows);
    op.apply(x, py); // copied through the heap
    expect(bits(py)).toEqual(bits(ref));
    const xt = values(a.rows, 9);
    const yt = w.create(a.cols);
    op.applyTranspose(w.fromArray(xt), yt);
    expect(bits(yt)).toEqual(bits(csrSpmv(csrTranspose(a), xt, new Float64Array(a.cols))));
    expect(() => op.apply(w.create(a.cols + 1), wy)).toThrow(DimensionMismatchError);
  });

  it('balancedRowCuts splits entries evenly and covers every row once', () => {
    const a = g.powerLaw(5000, 5000, { alpha: 2.2, minLen: 1, maxLen: 2000, seed: 2 });
    const cuts = balancedRowCuts(a.rowPtr, 3);
    expect(cuts[0]).toBe(0);
    expect(cuts[3]).toBe(a.rows);
    for (let t = 0; t < 3; t++) expect(cuts[t + 1]!).toBeGreaterThanOrEqual(cuts[t]!);
  });
});

describe('threads: the same bits for 1 and 2 threads', () => {
  const one = space(1);
  const two = space(2, true);
  it('dot, norm2, multiDot, axpby, combine and the product', () => {
    const n = 5 * DOT_BLOCK + 77;
    const a = g.banded(n, 3, 5, { seed: 4 });
    const y = values(n, 30);
    const xs = Array.from({ length: 5 }, (_, j) => values(n, 40 + j));
    const run = (s: WasmVectorSpace) => {
      const wy = s.fromArray(y);
      const wxs = xs.map((v) => s.fromArray(v));
      const dots = [s.dot(wxs[0]!, wy).value, s.norm2(wy).value, ...s.multiDot(wxs, wy).map((v) => v.value)];
      s.axpby(0.5, wxs[0]!, -2, wy);
      s.combine([1, -2, 3, 0.25, 7], wxs, 0.9, wy);
      const op = s.csrOperator(a);
      const ay = s.create(n);
      op.apply(wy, ay);
      return { dots, y: bits(wy), ay: bits(ay), threads: op.threads };
    };
    const r1 = run(one);
    const r2 = run(two);
    expect(r2.threads).toBe(2);
    expect(r1.threads).toBe(1);
    expect(r2.dots).toEqual(r1.dots);
    expect(r2.y).toEqual(r1.y);
    expect(r2.ay).toEqual(r1.ay);
  });
});

describe('ThreadPool: parts claimed in turn', () => {
  /** 8 parts of y += 1·x over disjoint ranges, `jobs` times; every element must be added once per job. */
  const stress = (s: WasmVectorSpace, jobs: number) => {
    const n = 8 * 1000;
    const x = s.create(n);
    s.fill(x, 1);
    const y = s.create(n);
    const parts = Array.from({ length: 8 }, (_, t) => [1, x.byteOffset + 8000 * t, y.byteOffset + 8000 * t, 1000]);
    for (let j = 0; j < jobs; j++) s.pool!.run('axpy1', parts);
    return y;
  };
  it('every part of a job runs exactly once, over many jobs, with more parts than threads', () => {
    const y = stress(space(2, true), 2000);
    expect(y.every((v) => v === 2000)).toBe(true);
  });

  it('a worker that never runs again costs nothing: the caller claims its parts', async () => {
    const s = space(2, true);
    const pool = s.pool as unknown as { workers: { terminate(): Promise<number> }[] };
    await pool.workers[0]!.terminate();
    const y = stress(s, 50);
    expect(y.every((v) => v === 50)).toBe(true);
    // the space's own threaded operations still give the one-thread bits
    const n = 3 * DOT_BLOCK + 5;
    const [u, v] = [values(n, 70), values(n, 71)];
    const one = space(1);
    expect(s.dot(s.fromArray(u), s.fromArray(v)).value).toBe(one.dot(one.fromArray(u), one.fromArray(v)).value);
  });

  it('more parts than the pool holds is refused', () => {
    const s = space(2, true);
    expect(() => s.pool!.run('scale', Array.from({ length: s.pool!.maxParts + 1 }, () => [1, 64, 0]))).toThrow(RangeError);
  });
});

describe('cgUpdate: x += α·p, r −= α·q and ⟨r, r⟩ in one pass', () => {
  const one = space(1);
  const two = space(2, true);
  /** The three calls the fused kernel replaces, on the same space. */
  const unfused = (s: WasmVectorSpace, a: number, p: Float64Array, q: Float64Array, x: Float64Array, r: Float64Array) => {
    s.axpby(a, p, 1, x);
    s.axpby(-a, q, 1, r);
    return s.dot(r, r).value;
  };
  it('bit-identical to axpby, axpby, dot at every length (blocks, tail pair, tail single) and for 1 and 2 threads', () => {
    for (const n of [0, 1, 2, 3, 5, 31, 4095, 4096, 4097, 3 * DOT_BLOCK + 123]) {
      const [p, q, x, r] = [50, 51, 52, 53].map((seed) => values(n, seed + n));
      const a = -0.3712894512;
      const ref = (() => {
        const v = [p, q, x, r].map((u) => one.fromArray(u!)) as [Float64Array, Float64Array, Float64Array, Float64Array];
        const rr = unfused(one, a, ...v);
        return { rr, x: bits(v[2]), r: bits(v[3]) };
      })();
      for (const s of [one, two]) {
        const v = [p, q, x, r].map((u) => s.fromArray(u!)) as [Float64Array, Float64Array, Float64Array, Float64Array];
        const rr = s.cgUpdate({ value: a }, ...v);
        expect(Object.is(rr.value, ref.rr)).toBe(true);
        expect(bits(v[2])).toEqual(ref.x);
        expect(bits(v[3])).toEqual(ref.r);
        for (const u of v) s.release(u);
      }
    }
  });

  it('arrays outside the heap or aliasing vectors take the three calls; lengths are checked', () => {
    const n = 1000;
    const [p, q, x, r] = [60, 61, 62, 63].map((seed) => values(n, seed));
    // plain arrays: the JavaScript kernels (whose dot may differ from the wasm one in the last bits)
    const ref = [p, q, x, r].map((u) => Float64Array.from(u!)) as [Float64Array, Float64Array, Float64Array, Float64Array];
    const rr = unfused(one, 2.5, ...ref);
    const plain = [p, q, x, r].map((u) => Float64Array.from(u!)) as [Float64Array, Float64Array, Float64Array, Float64Array];
    expect(one.cgUpdate(2.5, ...plain).value).toBe(rr);
    expect(bits(plain[3])).toEqual(bits(ref[3]));
    // p and q the same vector: still the sequence's result
    const w = one.fromArray(p!);
    const [x2, r2] = [one.fromArray(x!), one.fromArray(r!)];
    const [x3, r3, w3] = [one.fromArray(x!), one.fromArray(r!), one.fromArray(p!)];
    expect(one.cgUpdate(0.75, w, w, x2, r2).value).toBe(unfused(one, 0.75, w3, w3, x3, r3));
    expect(bits(r2)).toEqual(bits(r3));
    expect(() => one.cgUpdate(1, one.create(n), one.create(n), one.create(n), one.create(n + 1))).toThrow(DimensionMismatchError);
  });
});

describe('WasmVectorSpace fill, copy and create (wasm kernels, not TypedArray methods on shared memory)', () => {
  it('fill and copy match plain float64 JavaScript at every length and alignment; copy leaves the neighbours alone', () => {
    const s = space(1);
    for (const n of [0, 1, 2, 3, 4, 5, 7, 8, 9, 33, 4097]) {
      for (const value of [0, -1.5, 2 ** -1070, Number.POSITIVE_INFINITY]) {
        const guard = s.create(n + 2); // elements 1..n: odd addresses (8 mod 16) exercise the single-element tail
        const v = guard.subarray(1, n + 1);
        guard.set(values(n + 2, n + 5));
        const before = guard.slice();
        s.fill(v, value);
        const want = before.slice();
        want.fill(value, 1, n + 1);
        expect(bits(guard)).toEqual(bits(want));
        s.release(guard);
      }
      const src = s.fromArray(values(n, 11));
      const dst = s.create(n + 2);
      dst.set(values(n + 2, 12));
      const want = dst.slice();
      want.set(src, 1);
      s.copy(src, dst.subarray(1, n + 1));
      expect(bits(dst)).toEqual(bits(want));
      s.release(src);
      s.release(dst);
    }
  });

  it('create hands out zeros even where a released, written vector lay; fill NaN gives NaN', () => {
    const s = space(1);
    const a = s.create(1001);
    a.set(values(1001, 3));
    a[5] = Number.NaN;
    const addr = a.byteOffset;
    s.release(a);
    const b = s.create(1001);
    expect(b.byteOffset).toBe(addr); // the freed block is reused
    expect(b.every((x) => x === 0 && !Object.is(x, -0))).toBe(true);
    s.fill(b, Number.NaN);
    expect(b.every((x) => Number.isNaN(x))).toBe(true);
    s.release(b);
  });

  it('create over a block partly written before (the top of the heap given back, then a longer vector) is all zeros', () => {
    const s = space(1);
    const a = s.create(3000);
    a.fill(7); // a plain write: the heap does not see it
    const addr = a.byteOffset;
    s.release(a); // the last block: the heap's top moves back
    const b = s.create(9000); // [addr, addr + 24 000) written, the rest never handed out
    expect(b.byteOffset).toBe(addr);
    expect(b.every((x) => x === 0 && !Object.is(x, -0))).toBe(true);
    s.release(b);
    const c = s.create(2000);
    expect(c.every((x) => x === 0)).toBe(true);
  });

  it('createUninitialized skips the zero fill (a reused block keeps its old values) and a product overwrites it in full', () => {
    const s = space(1);
    const a = s.create(1000);
    a.fill(Number.NaN);
    const addr = a.byteOffset;
    s.release(a);
    const w = s.createUninitialized(1000);
    expect(w.byteOffset).toBe(addr);
    expect(w.length).toBe(1000);
    expect(Number.isNaN(w[0]!)).toBe(true); // no fill pass ran: create would have zeroed it
    const m = g.poisson2d(10, 10);
    const x = s.fromArray(values(100, 5));
    const op = s.csrOperator(m);
    const y = s.createUninitialized(100); // NaN-filled block reused
    op.apply(x, y);
    const want = csrSpmv(m, Float64Array.from(x), new Float64Array(100));
    expect(bits(y)).toEqual(bits(want));
    s.release(w);
    expect(s.create(1000).every((v) => v === 0)).toBe(true); // create still zeroes that block
  });

  it('copy of different lengths throws DimensionMismatchError; arrays outside the heap still work', () => {
    const s = space(1);
    expect(() => s.copy(s.create(3), s.create(4))).toThrow(DimensionMismatchError);
    const plain = new Float64Array(3);
    s.copy(s.fromArray([1, 2, 3]), plain);
    expect(Array.from(plain)).toEqual([1, 2, 3]);
    s.fill(plain, 7);
    expect(Array.from(plain)).toEqual([7, 7, 7]);
  });
});
