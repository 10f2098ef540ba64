import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidMatrixError, NotSupportedError, DimensionMismatchError } from '../src/core/errors';
import type { CsrMatrix } from '../src/core/types';
import { csr, csrSpmv, csrTranspose } from '../src/csr/csr';
import { buildModule, CodeBuilder, encodeName, encodeSection, Op, sleb128, uleb128, ValType } from '../src/csr/wasm/module-bytes';
import { csrSpmvModule, csrSpmvModuleBytes, type KernelVariant } from '../src/csr/wasm/spmv-kernel';
import {
  csrSpmvFast,
  WASM_MIN_NNZ,
  WASM_PAGE_BYTES,
  WASM32_MAX_BYTES,
  WasmCsr,
  wasmAvailable,
  wasmCsrFor,
  wasmCsrLayout,
  WasmMemoryLimitError,
} from '../src/csr/wasm/wasm-csr';
import * as g from '../src/generators/index';
import { readMatrixMarket } from '../src/mtx/index';
import { HostOperator } from '../src/operator/host';
import { dataDir } from '../../../testdata/index';

const VARIANTS: KernelVariant[] = [
  { simd: false, unroll: 4 },
  { simd: false, unroll: 8 },
  { simd: true, unroll: 4 },
  { simd: true, unroll: 8 },
];

/** Decode an unsigned / signed LEB128 (the spec's definition, written independently). */
function decode(bytes: readonly number[], signed: boolean): number {
  let result = 0;
  let scale = 1;
  let byte = 0;
  for (const b of bytes) {
    byte = b;
    result += (b & 0x7f) * scale;
    scale *= 128;
  }
  expect(byte & 0x80).toBe(0); // last byte ends the number
  for (const b of bytes.slice(0, -1)) expect(b & 0x80).toBe(0x80);
  return signed && (byte & 0x40) !== 0 ? result - scale : result;
}

function xFor(n: number, seed: number): Float64Array {
  const r = g.rng(seed);
  return Float64Array.from({ length: n }, () => r() * 2 - 1);
}

/** Bit-for-bit comparison (Object.is: NaN equals NaN, +0 differs from −0). */
function expectSameBits(got: Float64Array, want: Float64Array, label: string): void {
  expect(got.length, label).toBe(want.length);
  let bad = -1;
  for (let i = 0; i < want.length && bad < 0; i++) if (!Object.is(got[i], want[i])) bad = i;
  expect(bad, `${label}: first differing row ${bad}: ${got[bad]} vs ${want[bad]}`).toBe(-1);
}

describe('module bytes: LEB128 and sections', () => {
  it('encodes unsigned LEB128 (spec examples and edges)', () => {
    expect(uleb128(0)).toEqual([0]);
    expect(uleb128(127)).toEqual([0x7f]);
    expect(uleb128(128)).toEqual([0x80, 0x01]);
    expect(uleb128(624485)).toEqual([0xe5, 0x8e, 0x26]);
    expect(uleb128(2 ** 32 - 1)).toEqual([0xff, 0xff, 0xff, 0xff, 0x0f]);
    expect(() => uleb128(-1)).toThrow(/non-negative/);
    expect(() => uleb128(1.5)).toThrow(/non-negative safe integer/);
  });
  it('encodes signed LEB128 (spec examples and edges)', () => {
    expect(sleb128(0)).toEqual([0]);
    expect(sleb128(-1)).toEqual([0x7f]);
    expect(sleb128(63)).toEqual([0x3f]);
    expect(sleb128(64)).toEqual([0xc0, 0x00]);
    expect(sleb128(-64)).toEqual([0x40]);
    expect(sleb128(-65)).toEqual([0xbf, 0x7f]);
    expect(sleb128(-123456)).toEqual([0xc0, 0xbb, 0x78]);
    expect(sleb128(2 ** 31 - 1)).toEqual([0xff, 0xff, 0xff, 0xff, 0x07]);
    expect(sleb128(-(2 ** 31))).toEqual([0x80, 0x80, 0x80, 0x80, 0x78]);
  });
  it('round-trips random values through an independent decoder', () => {
    const r = g.rng(7);
    for (let t = 0; t < 500; t++) {
      const u = Math.floor(r() * 2 ** (1 + Math.floor(r() * 40)));
      expect(decode(uleb128(u), false)).toBe(u);
      const s = r() < 0.5 && u !== 0 ? -u : u;
      expect(decode(sleb128(s), true)).toBe(s);
    }
  });
  it('encodes names and sections with their byte length', () => {
    expect(encodeName('memory')).toEqual([6, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79]);
    expect(encodeSection(7, [1, 2, 3])).toEqual([7, 3, 1, 2, 3]);
    const big = new Array<number>(200).fill(9);
    expect(encodeSection(10, big).slice(0, 3)).toEqual([10, 0xc8, 0x01]);
    expect(encodeSection(10, big).length).toBe(203);
  });
  it('assembles a whole module byte for byte, and the engine runs it', () => {
    const body = new CodeBuilder().localGet(0).localGet(1).op(Op.i32Add);
    const bytes = buildModule([{ name: 'add', params: [ValType.i32, ValType.i32], results: [ValType.i32], locals: [], body }], { minPages: 1, maxPages: 2 });
    const want = [
      0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
      0x01, 0x07, 0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, // type: (i32, i32) -> i32
      0x03, 0x02, 0x01, 0x00, // function 0 has type 0
      0x05, 0x04, 0x01, 0x01, 0x01, 0x02, // memory min 1 max 2
      0x07, 0x10, 0x02, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x00, 0x03, 0x61, 0x64, 0x64, 0x00, 0x00,
      0x0a, 0x09, 0x01, 0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b, // code: no locals, body, end
    ];
    expect(Array.from(bytes)).toEqual(want);
    expect(WebAssembly.validate(bytes)).toBe(true);
    const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes));
    expect((inst.exports.add as (a: number, b: number) => number)(40, 2)).toBe(42);
    const mem = inst.exports.memory as WebAssembly.Memory;
    expect(mem.buffer.byteLength).toBe(WASM_PAGE_BYTES);
    expect(() => mem.grow(2)).toThrow(RangeError); // declared maximum of 2 pages
  });
  it('run-length encodes locals, and emits constants, loads and stores that the engine accepts', () => {
    // f(p) = mem[p] (f64) + 0.5 + i32→f64-free path: store then load back through offsets
    const body = new CodeBuilder()
      .localGet(0).f64Const(0.25).f64Store(8) // mem[p + 8] = 0.25
      .localGet(0).f64Load(8).localSet(1)
      .localGet(1).localGet(1).op(Op.f64Add).localSet(2)
      .localGet(2).i32Const(-123456).i32Const(-123456).op(Op.i32Sub).op(Op.i32Eqz).localSet(3).localSet(2)
      .localGet(2);
    const bytes = buildModule([{ name: 'f', params: [ValType.i32], results: [ValType.f64], locals: [ValType.f64, ValType.f64, ValType.i32], body }], { minPages: 1 });
    expect(WebAssembly.validate(bytes)).toBe(true);
    const f = new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.f as (p: number) => number;
    expect(f(16)).toBe(0.5);
  });
});

describe('wasm CSR SpMV kernel equals csrSpmv bit for bit', () => {
  const cases: Array<[string, CsrMatrix]> = [
    ['n = 0', csr(0, 0, [0], [], [])],
    ['1x1', csr(1, 1, [0, 1], [0], [3.5])],
    ['1x1 empty', csr(1, 1, [0, 0], [], [])],
    ['0 x 5', csr(0, 5, [0], [], [])],
    ['5 x 0 (empty rows, no columns)', csr(5, 0, [0, 0, 0, 0, 0, 0], [], [])],
    ['row lengths 0..17 (every tail)', g.powerLaw(60, 40, { alpha: 1.2, minLen: 0, maxLen: 17, seed: 3 })],
    ['empty rows', g.withEmptyRows(300, 200, 7, 0.4, 5)],
    ['one dense row', g.oneDenseRow(200, 3000, 3, 2999, 17, 2)],
    ['rectangular wide', g.uniformRandom(40, 900, 13, 9)],
    ['rectangular tall', g.uniformRandom(900, 40, 5, 9)],
    ['banded', g.banded(500, 4, 4, { seed: 3 })],
    ['power law', g.powerLaw(800, 800, { alpha: 2.2, minLen: 1, maxLen: 400, seed: 11 })],
    ['poisson2d', g.poisson2d(30)],
  ];
  // every row length 0..20 in one matrix, so each unroll tail (8, 4, pair, single) is hit
  const lens = Array.from({ length: 21 }, (_, i) => i);
  const rp = [0];
  const ci: number[] = [];
  for (const l of lens) {
    for (let j = 0; j < l; j++) ci.push(j);
    rp.push(ci.length);
  }
  cases.push(['each length 0..20', csr(lens.length, 21, rp, ci, ci.map((c) => 1 / (c + 3)))]);

  for (const v of VARIANTS) {
    const name = `${v.simd ? 'simd' : 'scalar'}${v.unroll}`;
    it(`${name}: validates`, () => {
      expect(WebAssembly.validate(csrSpmvModuleBytes(v))).toBe(true);
      expect(csrSpmvModule(v)).not.toBeNull();
    });
    it(`${name}: generators (empty rows, dense row, rectangular, n = 0, 1)`, () => {
      for (const [label, a] of cases) {
        const w = WasmCsr.create(a, { variant: v });
        for (const seed of [1, 2]) {
          const x = xFor(a.cols, seed);
          expectSameBits(w.multiply(x), csrSpmv(a, x), `${name} ${label} seed ${seed}`);
        }
      }
    });
    it(`${name}: non-finite and signed-zero values propagate exactly as in JS`, () => {
      const a = csr(3, 6, [0, 5, 6, 6], [0, 1, 2, 3, 5, 4], [1, -2, 3, 0, 1e308, -0]);
      for (const x of [
        Float64Array.from([Number.NaN, 1, 1, 1, 1, 1]),
        Float64Array.from([1, Number.POSITIVE_INFINITY, 1, Number.NEGATIVE_INFINITY, 1e308, 1]),
        Float64Array.from([-0, -0, -0, -0, -0, -0]),
      ]) {
        expectSameBits(WasmCsr.create(a, { variant: v }).multiply(x), csrSpmv(a, x), name);
      }
    });
  }

  it('real matrices (every file of shared/data/matrices below 200 k non-zeros), all variants', async () => {
    const dir = `${dataDir('matrices')}/`;
    const files = ['bcsstk01.mtx', 'west0067.mtx', 'can_1072.mtx', 'Pd.mtx', 'bcsstm25.mtx', 'LFAT5.mtx', 'bcsstk13.mtx'];
    const present = new Set(readdirSync(dir));
    for (const f of files) {
      expect(present.has(f), f).toBe(true);
      const a = (await readMatrixMarket(dir + f)).matrix;
      const x = xFor(a.cols, 3);
      const want = csrSpmv(a, x);
      for (const v of VARIANTS) expectSameBits(WasmCsr.create(a, { variant: v }).multiply(x), want, `${f} ${v.simd ? 'simd' : 'scalar'}${v.unroll}`);
    }
  });
});

describe('WasmCsr memory and views', () => {
  it('grows the memory for a larger matrix, rebuilds the views, and stays exact', () => {
    const small = g.uniformRandom(10, 10, 3, 1);
    const w = WasmCsr.create(small);
    expect(w.memoryBytes).toBe(WASM_PAGE_BYTES);
    const big = g.uniformRandom(20_000, 20_000, 8, 2); // ≈ 2.3 MB
    const xb = xFor(big.cols, 4);
    w.load(big);
    const need = wasmCsrLayout(big.rows, big.cols, 160_000).bytes;
    expect(w.memoryBytes).toBeGreaterThanOrEqual(need);
    expect(w.memoryBytes % WASM_PAGE_BYTES).toBe(0);
    expect(w.memoryBytes).toBeLessThan(need + WASM_PAGE_BYTES);
    expect([w.rows, w.cols, w.nnz]).toEqual([20_000, 20_000, 160_000]);
    expectSameBits(w.multiply(xb), csrSpmv(big, xb), 'after growth');
    // vectors kept in wasm memory: no copies
    w.x.set(xb);
    w.multiplyInPlace();
    expectSameBits(w.y.slice(), csrSpmv(big, xb), 'in place');
    // back to a smaller matrix: memory keeps its size, views shrink
    w.load(small);
    expect(w.memoryBytes).toBeGreaterThanOrEqual(need);
    expect(w.x.length).toBe(10);
    const xs = xFor(10, 5);
    expectSameBits(w.multiply(xs), csrSpmv(small, xs), 'after reload');
  });
  it('a snapshot: in-place edits are seen only after load()', () => {
    const a = g.uniformRandom(50, 50, 4, 3);
    const w = WasmCsr.create(a);
    const x = xFor(50, 1);
    const before = csrSpmv(a, x);
    a.values[0] = a.values[0]! + 1;
    expectSameBits(w.multiply(x), before, 'stale copy');
    w.load(a);
    expectSameBits(w.multiply(x), csrSpmv(a, x), 'reloaded');
  });
  it('refuses a layout above 4 GiB with WasmMemoryLimitError, and csrSpmvFast keeps JS for it', () => {
    const cols = 2 ** 29; // x alone would take 8·2^29 = 4 GiB
    expect(wasmCsrLayout(1, cols, 0).bytes).toBeGreaterThan(WASM32_MAX_BYTES);
    const wide = csr(1, cols, [0, 1], [cols - 1], [2], { validate: false });
    const w = WasmCsr.create(g.uniformRandom(4, 4, 2, 1));
    expect(() => w.load(wide)).toThrow(WasmMemoryLimitError);
    expect(() => w.load(wide)).toThrow(/needs 4294967324 bytes.*limit is 4294967296 bytes \(4 GiB\)/);
    // ≥ WASM_MIN_NNZ non-zeros but too wide: the fast path declines, csrSpmv is used
    const rows = WASM_MIN_NNZ;
    const rowPtr = Int32Array.from({ length: rows + 1 }, (_, i) => i);
    const manyWide = csr(rows, cols, rowPtr, new Int32Array(rows).fill(7), new Float64Array(rows).fill(1), { validate: false });
    expect(wasmCsrFor(manyWide)).toBeUndefined();
  });
  it('turns an engine refusal to grow into WasmMemoryLimitError', () => {
    const spy = vi.spyOn(WebAssembly.Memory.prototype, 'grow').mockImplementation(() => {
      throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
    });
    try {
      expect(() => WasmCsr.create(g.uniformRandom(20_000, 20_000, 8, 2))).toThrow(/engine refused to grow the memory by \d+ pages/);
    } finally {
      spy.mockRestore();
    }
  });
  it('rejects malformed input instead of reading foreign memory', () => {
    const bad = csr(2, 3, [0, 1, 2], [0, 3], [1, 1], { validate: false }); // column 3 of 3
    expect(() => WasmCsr.create(bad)).toThrow(InvalidMatrixError);
    expect(() => WasmCsr.create(bad)).toThrow(/CSR colIdx\[1\] = 3 in row 1: expected a column in \[0, 3\)/);
    const w = WasmCsr.create(g.uniformRandom(5, 7, 2, 1));
    expect(() => w.multiply(new Float64Array(6))).toThrow(DimensionMismatchError);
    expect(() => w.multiply(new Float64Array(7), new Float64Array(4))).toThrow(DimensionMismatchError);
  });
});

describe('csrSpmvFast and HostOperator.fromCsr', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });
  it(`uses wasm from ${WASM_MIN_NNZ} non-zeros, JS below; both exact`, () => {
    const small = g.uniformRandom(100, 100, 5, 1);
    const large = g.uniformRandom(2000, 2000, 6, 2);
    expect(wasmAvailable()).toBe(true);
    expect(wasmCsrFor(small)).toBeUndefined();
    const w = wasmCsrFor(large);
    expect(w).toBeInstanceOf(WasmCsr);
    expect(wasmCsrFor(large)).toBe(w); // cached per matrix object
    for (const a of [small, large]) {
      const x = xFor(a.cols, 8);
      const want = csrSpmv(a, x);
      expectSameBits(csrSpmvFast(a, x), want, 'csrSpmvFast');
      const y = new Float64Array(a.rows);
      HostOperator.fromCsr(a).apply(x, y);
      expectSameBits(y, want, 'HostOperator.apply');
    }
    expect(() => csrSpmvFast(large, new Float64Array(3))).toThrow(DimensionMismatchError);
  });
  it('the transpose of a large matrix goes through the same path, exactly', () => {
    const a = g.uniformRandom(3000, 1500, 5, 4);
    const op = HostOperator.fromCsr(a);
    const x = xFor(3000, 2);
    const y = new Float64Array(1500);
    op.applyTranspose!(x, y);
    expect(wasmCsrFor(a)).toBeInstanceOf(WasmCsr);
    expectSameBits(y, csrSpmv(csrTranspose(a), x), 'applyTranspose');
  });
  it('falls back to csrSpmv when WebAssembly is missing', () => {
    vi.stubGlobal('WebAssembly', undefined);
    expect(wasmAvailable()).toBe(false);
    const a = g.uniformRandom(3000, 3000, 5, 6); // 15 000 non-zeros: would use wasm
    expect(() => WasmCsr.create(a)).toThrow(NotSupportedError);
    expect(wasmCsrFor(a)).toBeUndefined();
    const x = xFor(3000, 1);
    const y = new Float64Array(3000);
    HostOperator.fromCsr(a).apply(x, y);
    vi.unstubAllGlobals();
    expectSameBits(y, csrSpmv(a, x), 'fallback');
    expect(wasmAvailable()).toBe(true);
  });
});
