/**
 * The WebAssembly CSR SpMV kernel `spmv(rows, rowPtr, colIdx, values, x, y)` (all pointers are
 * byte addresses in the module's own memory), emitted with {@link buildModule}.
 *
 * Summation order is exactly that of the JavaScript reference `csrSpmv`: four accumulators
 * s0..s3 take entries k ≡ 0..3 (mod 4) of a row in order, a tail pair goes to s0, s1, a last
 * single entry to s2, and y_i = (s0 + s1) + (s2 + s3). WebAssembly has no fused multiply-add
 * (f64.mul then f64.add, each correctly rounded), so the product is bit-identical to csrSpmv.
 * The SIMD variant keeps (s0, s1) and (s2, s3) in two f64x2 lanes: lane-wise mul/add are the
 * same IEEE operations, so it is bit-identical too; the x "gather" is one `v128.load64_splat`
 * plus one `v128.load64_lane` per pair (wasm SIMD has no gather instruction).
 *
 * Memory traffic per product: 12·nnz + 4·(rows + 1) bytes of matrix, ≤ 8·nnz of x, 8·rows of y.
 * @module
 */
import { buildModule, CodeBuilder, type FunctionSpec, Op, SimdOp, ValType } from './module-bytes';

/** Kernel variants: scalar or f64x2 SIMD, and 4 or 8 entries per loop iteration. */
export interface KernelVariant {
  simd: boolean;
  /** Entries per main-loop iteration: 4 or 8 (8 = two groups of four, then one optional group). */
  unroll: 4 | 8;
}

// parameters (locals 0..5)
const ROWS = 0;
const RP = 1; // running pointer to rowPtr[i]
const CI = 2; // colIdx base (fixed)
const VA = 3; // running pointer to values[k]
const XP = 4; // x base (fixed)
const YP = 5; // running pointer to y[i]
// i32 locals
const RP_END = 6;
const ENDC = 7; // byte address of colIdx[rowPtr[i + 1]]
const PC = 8; // running pointer to colIdx[k]
// scalar accumulators s0..s3 (f64)
const S0 = 9;
// SIMD accumulators (v128): lanes (s0, s1) and (s2, s3)
const ACC01 = 13;
const ACC23 = 14;

/** Push the address of x[colIdx[k + off/4]]: xp + (colIdx << 3). */
function xAddr(c: CodeBuilder, colOffset: number): void {
  c.localGet(XP).localGet(PC).i32Load(colOffset).i32Const(3).op(Op.i32Shl, Op.i32Add);
}

/** s_j ← s_j + values[k + j'] · x[colIdx[k + j']] (j' = entry offset within the group). */
function scalarTerm(c: CodeBuilder, s: number, entry: number): void {
  c.localGet(s).localGet(VA).f64Load(8 * entry);
  xAddr(c, 4 * entry);
  c.f64Load(0).op(Op.f64Mul, Op.f64Add).localSet(s);
}

/** acc ← acc + values[k + e..k + e + 1] ⊙ (x[colIdx[k + e]], x[colIdx[k + e + 1]]). */
function simdPair(c: CodeBuilder, acc: number, entry: number): void {
  c.localGet(acc).localGet(VA).v128Load(8 * entry);
  xAddr(c, 4 * (entry + 1)); // address of lane 1 (consumed by load64_lane)
  xAddr(c, 4 * entry);
  c.v128Load64Splat(0).v128Load64Lane(1, 0);
  c.simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add).localSet(acc);
}

/** One group of four entries at pc/va + group offset, into s0..s3 (or the two f64x2 lanes). */
function group4(c: CodeBuilder, simd: boolean, first: number): void {
  if (simd) {
    simdPair(c, ACC01, first);
    simdPair(c, ACC23, first + 2);
  } else for (let j = 0; j < 4; j++) scalarTerm(c, S0 + j, first + j);
}

/** pc += 4·n; va += 8·n. */
function advance(c: CodeBuilder, n: number): void {
  c.localGet(PC).i32Const(4 * n).op(Op.i32Add).localSet(PC);
  c.localGet(VA).i32Const(8 * n).op(Op.i32Add).localSet(VA);
}

/** Push the number of column bytes left in the row: endc − pc (a multiple of 4, ≥ 0). */
function left(c: CodeBuilder): void {
  c.localGet(ENDC).localGet(PC).op(Op.i32Sub);
}

/** The function body of one variant. */
function kernelBody(v: KernelVariant): CodeBuilder {
  const c = new CodeBuilder();
  // rpEnd = rp + 4·rows; pc = ci + 4·rowPtr[i0], va += 8·rowPtr[i0]: rp may point into the middle
  // of rowPtr (a row range of a threaded product; rowPtr[0] = 0 for a whole matrix)
  c.localGet(RP).localGet(ROWS).i32Const(2).op(Op.i32Shl, Op.i32Add).localSet(RP_END);
  c.localGet(CI).localGet(RP).i32Load(0).i32Const(2).op(Op.i32Shl, Op.i32Add).localSet(PC);
  c.localGet(VA).localGet(RP).i32Load(0).i32Const(3).op(Op.i32Shl, Op.i32Add).localSet(VA);
  c.block().loop(); // rows
  c.localGet(RP).localGet(RP_END).op(Op.i32GeU).brIf(1);
  // endc = ci + 4·rowPtr[i + 1]
  c.localGet(CI).localGet(RP).i32Load(4).i32Const(2).op(Op.i32Shl, Op.i32Add).localSet(ENDC);
  if (v.simd) {
    for (const acc of [ACC01, ACC23]) c.simd(SimdOp.v128Const, ...new Array<number>(16).fill(0)).localSet(acc);
  } else for (let j = 0; j < 4; j++) c.f64Const(0).localSet(S0 + j);
  // main loop: while (endc − pc ≥ 4·unroll)
  c.block().loop();
  left(c);
  c.i32Const(4 * v.unroll).op(Op.i32LtU).brIf(1);
  for (let g = 0; g < v.unroll; g += 4) group4(c, v.simd, g);
  advance(c, v.unroll);
  c.br(0).end().end();
  if (v.unroll === 8) {
    // one more group of four: if (endc − pc ≥ 16)
    left(c);
    c.i32Const(16).op(Op.i32GeU).if();
    group4(c, v.simd, 0);
    advance(c, 4);
    c.end();
  }
  // tail pair into s0, s1: if (endc − pc ≥ 8)
  left(c);
  c.i32Const(8).op(Op.i32GeU).if();
  if (v.simd) simdPair(c, ACC01, 0);
  else for (let j = 0; j < 2; j++) scalarTerm(c, S0 + j, j);
  advance(c, 2);
  c.end();
  if (v.simd) {
    // unpack the lanes into s0..s3 for the single tail and the final sum
    for (let j = 0; j < 4; j++) c.localGet(j < 2 ? ACC01 : ACC23).f64x2ExtractLane(j % 2).localSet(S0 + j);
  }
  // tail single into s2: if (endc − pc ≠ 0)
  left(c);
  c.if();
  scalarTerm(c, S0 + 2, 0);
  advance(c, 1);
  c.end();
  // y_i = (s0 + s1) + (s2 + s3)
  c.localGet(YP).localGet(S0).localGet(S0 + 1).op(Op.f64Add).localGet(S0 + 2).localGet(S0 + 3);
  c.op(Op.f64Add, Op.f64Add).f64Store(0);
  c.localGet(YP).i32Const(8).op(Op.i32Add).localSet(YP);
  c.localGet(RP).i32Const(4).op(Op.i32Add).localSet(RP);
  c.br(0).end().end();
  return c;
}

/**
 * Module bytes of one kernel variant: exports `memory` (initial 1 page, no declared maximum;
 * the engine's wasm32 limit of 65 536 pages = 4 GiB applies) and
 * `spmv(rows, rowPtr, colIdx, values, x, y)`. About 400–700 bytes.
 * @example
 * const bytes = csrSpmvModuleBytes({ simd: false, unroll: 4 });
 * WebAssembly.validate(bytes); // true
 */
export function csrSpmvModuleBytes(v: KernelVariant): Uint8Array<ArrayBuffer> {
  return buildModule([csrSpmvFunction(v)], { minPages: 1 });
}

/**
 * The kernel as one function of a larger module (the host kernels of ../../host put it beside
 * the vector operations, in one shared memory). `rowPtr` may point at rowPtr[i0] with `y` at
 * y[i0] and `rows` = i1 − i0: the product of rows [i0, i1) (colIdx and values stay the bases).
 */
export function csrSpmvFunction(v: KernelVariant, name = 'spmv'): FunctionSpec {
  const i32 = ValType.i32;
  const f64 = ValType.f64;
  const locals = [i32, i32, i32, f64, f64, f64, f64, ...(v.simd ? [ValType.v128, ValType.v128] : [])];
  return { name, params: [i32, i32, i32, i32, i32, i32], results: [], locals, body: kernelBody(v) };
}

const compiled = new Map<string, WebAssembly.Module | null>();

/**
 * The compiled module of a variant, or null when this engine has no WebAssembly or rejects the
 * module (e.g. no SIMD). Compiled once per process (synchronously: the module is tiny).
 */
export function csrSpmvModule(v: KernelVariant): WebAssembly.Module | null {
  const wa = (globalThis as { WebAssembly?: typeof WebAssembly }).WebAssembly;
  if (wa === undefined) return null; // checked on every call: an engine (or a test) may lack it
  const key = `${v.simd ? 'simd' : 'scalar'}-${v.unroll}`;
  if (compiled.has(key)) return compiled.get(key)!;
  let m: WebAssembly.Module | null = null;
  {
    const bytes = csrSpmvModuleBytes(v);
    if (wa.validate(bytes)) m = new wa.Module(bytes);
  }
  compiled.set(key, m);
  return m;
}
