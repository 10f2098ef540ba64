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
  /**
   * Two products in one pass over A (SIMD only): y = A·x and y2 = A·x2, each entry's value and
   * column read once for both, each output the single kernel's sum order (two parameters more:
   * x2, y2 after y).
   */
  pair?: boolean;
}

/**
 * Local indices of a variant. Parameters: rows, rowPtr (running pointer to rowPtr[i]), colIdx
 * base, values (running pointer to values[k]), x base, y (running pointer to y[i]), then for a
 * pair x2 base and y2. Then the i32 locals rpEnd, endc (byte address of colIdx[rowPtr[i + 1]]),
 * pc (running pointer to colIdx[k]); the f64 accumulators s0..s3 (t0..t3 of the second product);
 * the SIMD lanes (s0, s1) and (s2, s3) (and the second product's); for a pair the values pair
 * and the two byte offsets of x it is multiplied with.
 */
function layout(v: KernelVariant) {
  const two = v.pair === true;
  const [ROWS, RP, CI, VA, XP, YP] = [0, 1, 2, 3, 4, 5];
  const X2 = two ? 6 : -1;
  const Y2 = two ? 7 : -1;
  let next = two ? 8 : 6;
  const take = (k: number) => {
    const at = next;
    next += k;
    return at;
  };
  const [RP_END, ENDC, PC] = [take(1), take(1), take(1)];
  const S0 = take(4);
  const T0 = two ? take(4) : -1;
  const ACC01 = v.simd ? take(1) : -1;
  const ACC23 = v.simd ? take(1) : -1;
  const ACC01B = two ? take(1) : -1;
  const ACC23B = two ? take(1) : -1;
  const VV = two ? take(1) : -1;
  const C0 = two ? take(1) : -1;
  const C1 = two ? take(1) : -1;
  return { two, ROWS, RP, CI, VA, XP, YP, X2, Y2, RP_END, ENDC, PC, S0, T0, ACC01, ACC23, ACC01B, ACC23B, VV, C0, C1 };
}
type Layout = ReturnType<typeof layout>;

/** Push the address of x[colIdx[k + off/4]]: xp + (colIdx << 3). */
function xAddr(c: CodeBuilder, L: Layout, colOffset: number, base = L.XP): void {
  c.localGet(base).localGet(L.PC).i32Load(colOffset).i32Const(3).op(Op.i32Shl, Op.i32Add);
}

/** s_j ← s_j + values[k + j'] · x[colIdx[k + j']] (j' = entry offset within the group); a pair: t_j alike with x2. */
function scalarTerm(c: CodeBuilder, L: Layout, j: number, entry: number): void {
  c.localGet(L.S0 + j).localGet(L.VA).f64Load(8 * entry);
  xAddr(c, L, 4 * entry);
  c.f64Load(0).op(Op.f64Mul, Op.f64Add).localSet(L.S0 + j);
  if (!L.two) return;
  c.localGet(L.T0 + j).localGet(L.VA).f64Load(8 * entry);
  xAddr(c, L, 4 * entry, L.X2);
  c.f64Load(0).op(Op.f64Mul, Op.f64Add).localSet(L.T0 + j);
}

/** acc ← acc + values[k + e..k + e + 1] ⊙ (x[colIdx[k + e]], x[colIdx[k + e + 1]]); a pair: the values and columns read once for x and x2. */
function simdPair(c: CodeBuilder, L: Layout, acc: number, accB: number, entry: number): void {
  if (!L.two) {
    c.localGet(acc).localGet(L.VA).v128Load(8 * entry);
    xAddr(c, L, 4 * (entry + 1)); // address of lane 1 (consumed by load64_lane)
    xAddr(c, L, 4 * entry);
    c.v128Load64Splat(0).v128Load64Lane(1, 0);
    c.simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add).localSet(acc);
    return;
  }
  c.localGet(L.VA).v128Load(8 * entry).localSet(L.VV);
  for (const [loc, e] of [[L.C0, entry], [L.C1, entry + 1]] as const) c.localGet(L.PC).i32Load(4 * e).i32Const(3).op(Op.i32Shl).localSet(loc);
  for (const [a, base] of [[acc, L.XP], [accB, L.X2]] as const) {
    c.localGet(a).localGet(L.VV);
    c.localGet(base).localGet(L.C1).op(Op.i32Add); // address of lane 1
    c.localGet(base).localGet(L.C0).op(Op.i32Add);
    c.v128Load64Splat(0).v128Load64Lane(1, 0);
    c.simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add).localSet(a);
  }
}

/** One group of four entries at pc/va + group offset, into s0..s3 (or the two f64x2 lanes). */
function group4(c: CodeBuilder, L: Layout, simd: boolean, first: number): void {
  if (simd) {
    simdPair(c, L, L.ACC01, L.ACC01B, first);
    simdPair(c, L, L.ACC23, L.ACC23B, first + 2);
  } else for (let j = 0; j < 4; j++) scalarTerm(c, L, j, first + j);
}

/** pc += 4·n; va += 8·n. */
function advance(c: CodeBuilder, L: Layout, n: number): void {
  c.localGet(L.PC).i32Const(4 * n).op(Op.i32Add).localSet(L.PC);
  c.localGet(L.VA).i32Const(8 * n).op(Op.i32Add).localSet(L.VA);
}

/** Push the number of column bytes left in the row: endc − pc (a multiple of 4, ≥ 0). */
function left(c: CodeBuilder, L: Layout): void {
  c.localGet(L.ENDC).localGet(L.PC).op(Op.i32Sub);
}

/** *y = (s0 + s1) + (s2 + s3) (from local s0 on); y += 8. */
function storeRow(c: CodeBuilder, y: number, s0: number): void {
  c.localGet(y).localGet(s0).localGet(s0 + 1).op(Op.f64Add).localGet(s0 + 2).localGet(s0 + 3);
  c.op(Op.f64Add, Op.f64Add).f64Store(0);
  c.localGet(y).i32Const(8).op(Op.i32Add).localSet(y);
}

/** The function body of one variant. */
function kernelBody(v: KernelVariant): CodeBuilder {
  const L = layout(v);
  const c = new CodeBuilder();
  const sets = L.two ? [L.S0, L.T0] : [L.S0];
  const accs = L.two ? [L.ACC01, L.ACC23, L.ACC01B, L.ACC23B] : [L.ACC01, L.ACC23];
  // rpEnd = rp + 4·rows; pc = ci + 4·rowPtr[i0], va += 8·rowPtr[i0]: rp may point into the middle
  // of rowPtr (a row range of a threaded product; rowPtr[0] = 0 for a whole matrix)
  c.localGet(L.RP).localGet(L.ROWS).i32Const(2).op(Op.i32Shl, Op.i32Add).localSet(L.RP_END);
  c.localGet(L.CI).localGet(L.RP).i32Load(0).i32Const(2).op(Op.i32Shl, Op.i32Add).localSet(L.PC);
  c.localGet(L.VA).localGet(L.RP).i32Load(0).i32Const(3).op(Op.i32Shl, Op.i32Add).localSet(L.VA);
  c.block().loop(); // rows
  c.localGet(L.RP).localGet(L.RP_END).op(Op.i32GeU).brIf(1);
  // endc = ci + 4·rowPtr[i + 1]
  c.localGet(L.CI).localGet(L.RP).i32Load(4).i32Const(2).op(Op.i32Shl, Op.i32Add).localSet(L.ENDC);
  if (v.simd) {
    for (const acc of accs) c.simd(SimdOp.v128Const, ...new Array<number>(16).fill(0)).localSet(acc);
  } else for (let j = 0; j < 4; j++) c.f64Const(0).localSet(L.S0 + j);
  // main loop: while (endc − pc ≥ 4·unroll)
  c.block().loop();
  left(c, L);
  c.i32Const(4 * v.unroll).op(Op.i32LtU).brIf(1);
  for (let g = 0; g < v.unroll; g += 4) group4(c, L, v.simd, g);
  advance(c, L, v.unroll);
  c.br(0).end().end();
  if (v.unroll === 8) {
    // one more group of four: if (endc − pc ≥ 16)
    left(c, L);
    c.i32Const(16).op(Op.i32GeU).if();
    group4(c, L, v.simd, 0);
    advance(c, L, 4);
    c.end();
  }
  // tail pair into s0, s1: if (endc − pc ≥ 8)
  left(c, L);
  c.i32Const(8).op(Op.i32GeU).if();
  if (v.simd) simdPair(c, L, L.ACC01, L.ACC01B, 0);
  else for (let j = 0; j < 2; j++) scalarTerm(c, L, j, j);
  advance(c, L, 2);
  c.end();
  if (v.simd) {
    // unpack the lanes into s0..s3 (t0..t3) for the single tail and the final sum
    for (let j = 0; j < 4; j++) c.localGet(j < 2 ? L.ACC01 : L.ACC23).f64x2ExtractLane(j % 2).localSet(L.S0 + j);
    if (L.two) for (let j = 0; j < 4; j++) c.localGet(j < 2 ? L.ACC01B : L.ACC23B).f64x2ExtractLane(j % 2).localSet(L.T0 + j);
  }
  // tail single into s2: if (endc − pc ≠ 0)
  left(c, L);
  c.if();
  scalarTerm(c, L, 2, 0);
  advance(c, L, 1);
  c.end();
  // y_i = (s0 + s1) + (s2 + s3)
  for (const [t, s0] of sets.entries()) storeRow(c, t === 0 ? L.YP : L.Y2, s0);
  c.localGet(L.RP).i32Const(4).op(Op.i32Add).localSet(L.RP);
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
  const v128 = ValType.v128;
  const two = v.pair === true;
  if (two && !v.simd) throw new Error('csrSpmvFunction: the pair kernel is SIMD only');
  const params = two ? [i32, i32, i32, i32, i32, i32, i32, i32] : [i32, i32, i32, i32, i32, i32];
  const locals = [i32, i32, i32, f64, f64, f64, f64, ...(two ? [f64, f64, f64, f64] : []), ...(v.simd ? [v128, v128] : []), ...(two ? [v128, v128, v128, i32, i32] : [])];
  return { name, params, results: [], locals, body: kernelBody(v) };
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
