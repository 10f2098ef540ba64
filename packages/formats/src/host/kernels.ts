/**
 * The WebAssembly module of the host backend: the CSR product and the BLAS-1 kernels of a
 * solve (dot, axpby, element-wise product, multi-dot, multi-combine), f64x2 SIMD, in one memory
 * that is imported and shared, so worker threads run the same kernels on the same vectors.
 *
 * Rounding is fixed by construction, the same for any split over threads:
 * - a dot product is a sum of *block partials* ({@link DOT_BLOCK} elements per block): inside a
 *   block two f64x2 accumulators take elements i ≡ 0,1 and 2,3 (mod 4), a trailing pair goes to
 *   the first, a trailing single is added last: ((a₀ + a₁) + (a₂ + a₃)) + s. The caller sums the
 *   partials of blocks 0, 1, 2, … in order. Threads split at block boundaries, so each partial
 *   is computed by exactly the same instructions whatever the thread count.
 * - element-wise kernels (axpby, combine, multiply) compute each element by one fixed
 *   expression; combine is ((β·yᵢ + c₀x₀ᵢ) + c₁x₁ᵢ) + … (the order of {@link combineF64}).
 * - the product is the kernel of ../csr/wasm/spmv-kernel (row by row, fixed per row).
 * WebAssembly has no FMA, so lane-wise f64x2 mul/add are the scalar IEEE operations.
 * @module
 */
import { csrSpmvFunction } from '../csr/wasm/spmv-kernel';
import { buildModule, CodeBuilder, type FunctionSpec, Op, SimdOp, ValType } from '../csr/wasm/module-bytes';

/** Elements per dot-product partial (32 KiB of one vector). */
export const DOT_BLOCK = 4096;
/** Elements per block of `combine`: y's block stays in L1 while the k vectors sweep over it. */
export const COMBINE_BLOCK = 2048;

const { i32, f64, v128 } = ValType;
// opcodes beyond ../csr/wasm/module-bytes' Op
const I32_EQ = 0x46;
const I32_NE = 0x47;
const F64_MUL = 0xa2;
const SELECT = 0x1b;
const CALL = 0x10;
const V128_STORE = 0x0b;

/** Function indices (the order of {@link hostKernelFunctions}). */
const FN = { spmv: 0, dotRange: 1, dotBlocks: 2, multiDotBlocks: 3, axpy0: 4, axpy1: 5, axpby2: 6, scale: 7, multiply: 8, combine: 9, fill: 10, copy: 11, axpy4: 12, dot4: 13 } as const;

function v128Store(c: CodeBuilder, offset: number): void {
  c.simd(V128_STORE, 3, offset);
}
function splat(c: CodeBuilder, local: number): void {
  c.localGet(local).simd(SimdOp.f64x2Splat);
}
function zeroV128(c: CodeBuilder): void {
  c.simd(SimdOp.v128Const, ...new Array<number>(16).fill(0));
}
/** p += bytes for each pointer local. */
function advance(c: CodeBuilder, ptrs: readonly number[], bytes: number): void {
  for (const p of ptrs) c.localGet(p).i32Const(bytes).op(Op.i32Add).localSet(p);
}
/** p += 8·m for each pointer local (m an i32 local). */
function advanceBy(c: CodeBuilder, ptrs: readonly number[], m: number): void {
  for (const p of ptrs) c.localGet(p).localGet(m).i32Const(3).op(Op.i32Shl, Op.i32Add).localSet(p);
}
/** m = min(n, block) (unsigned). */
function minInto(c: CodeBuilder, m: number, n: number, block: number): void {
  c.localGet(n).localGet(block).localGet(n).localGet(block).op(Op.i32LtU, SELECT).localSet(m);
}

/**
 * An element-wise loop over n elements: `pair(off)` handles elements at byte offset off (two
 * lanes), `single()` the last odd one. Four elements per iteration, then a pair, then a single.
 * `end` is a scratch i32 local, `drive` the pointer compared against it.
 */
function elementwise(c: CodeBuilder, ptrs: readonly number[], drive: number, n: number, end: number, pair: (off: number) => void, single: () => void): void {
  c.localGet(drive).localGet(n).i32Const(3).op(Op.i32Shl, Op.i32Add).localSet(end);
  c.block().loop();
  c.localGet(end).localGet(drive).op(Op.i32Sub).i32Const(32).op(Op.i32LtU).brIf(1);
  pair(0);
  pair(16);
  advance(c, ptrs, 32);
  c.br(0).end().end();
  c.localGet(end).localGet(drive).op(Op.i32Sub).i32Const(16).op(Op.i32GeU).if();
  pair(0);
  advance(c, ptrs, 16);
  c.end();
  c.localGet(end).localGet(drive).op(I32_NE).if();
  single();
  c.end();
}

/** dotRange(x, y, n) → f64: one block partial (see the module comment for the order). */
function dotRange(): FunctionSpec {
  const [X, Y, N, END, A0, A1, S] = [0, 1, 2, 3, 4, 5, 6];
  const c = new CodeBuilder();
  zeroV128(c);
  c.localSet(A0);
  zeroV128(c);
  c.localSet(A1);
  c.localGet(X).localGet(N).i32Const(3).op(Op.i32Shl, Op.i32Add).localSet(END);
  c.block().loop();
  c.localGet(END).localGet(X).op(Op.i32Sub).i32Const(32).op(Op.i32LtU).brIf(1);
  for (const [acc, off] of [[A0, 0], [A1, 16]] as const) {
    c.localGet(acc).localGet(X).v128Load(off).localGet(Y).v128Load(off);
    c.simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add).localSet(acc);
  }
  advance(c, [X, Y], 32);
  c.br(0).end().end();
  c.localGet(END).localGet(X).op(Op.i32Sub).i32Const(16).op(Op.i32GeU).if();
  c.localGet(A0).localGet(X).v128Load(0).localGet(Y).v128Load(0).simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add).localSet(A0);
  advance(c, [X, Y], 16);
  c.end();
  c.f64Const(0).localSet(S);
  c.localGet(END).localGet(X).op(I32_NE).if();
  c.localGet(X).f64Load(0).localGet(Y).f64Load(0).op(F64_MUL).localSet(S);
  c.end();
  c.localGet(A0).f64x2ExtractLane(0).localGet(A0).f64x2ExtractLane(1).op(Op.f64Add);
  c.localGet(A1).f64x2ExtractLane(0).localGet(A1).f64x2ExtractLane(1).op(Op.f64Add, Op.f64Add);
  c.localGet(S).op(Op.f64Add);
  return { name: 'dotRange', params: [i32, i32, i32], results: [f64], locals: [i32, v128, v128, f64], body: c };
}

/**
 * dot4(x0, x1, x2, x3, y, n, out, stride): out[t·stride] = dotRange(x_t, y, n) for t < 4, each
 * by the same operations in the same order as dotRange, with y's elements loaded once for the
 * four (the inner loop of multiDotBlocks).
 */
function dot4(): FunctionSpec {
  const [X0, Y, N, OUT, STRIDE, END, A, YV, S] = [0, 4, 5, 6, 7, 8, 9, 17, 19];
  const xs = [X0, X0 + 1, X0 + 2, X0 + 3];
  const acc = (t: number, half: number) => A + 2 * t + half;
  const c = new CodeBuilder();
  for (let t = 0; t < 4; t++) {
    for (const h of [0, 1]) {
      zeroV128(c);
      c.localSet(acc(t, h));
    }
  }
  c.localGet(Y).localGet(N).i32Const(3).op(Op.i32Shl, Op.i32Add).localSet(END);
  c.block().loop();
  c.localGet(END).localGet(Y).op(Op.i32Sub).i32Const(32).op(Op.i32LtU).brIf(1);
  c.localGet(Y).v128Load(0).localSet(YV);
  c.localGet(Y).v128Load(16).localSet(YV + 1);
  for (let t = 0; t < 4; t++) {
    for (const h of [0, 1]) c.localGet(acc(t, h)).localGet(xs[t]!).v128Load(16 * h).localGet(YV + h).simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add).localSet(acc(t, h));
  }
  advance(c, [...xs, Y], 32);
  c.br(0).end().end();
  c.localGet(END).localGet(Y).op(Op.i32Sub).i32Const(16).op(Op.i32GeU).if();
  for (let t = 0; t < 4; t++) c.localGet(acc(t, 0)).localGet(xs[t]!).v128Load(0).localGet(Y).v128Load(0).simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add).localSet(acc(t, 0));
  advance(c, [...xs, Y], 16);
  c.end();
  for (let t = 0; t < 4; t++) c.f64Const(0).localSet(S + t);
  c.localGet(END).localGet(Y).op(I32_NE).if();
  for (let t = 0; t < 4; t++) c.localGet(xs[t]!).f64Load(0).localGet(Y).f64Load(0).op(F64_MUL).localSet(S + t);
  c.end();
  for (let t = 0; t < 4; t++) {
    c.localGet(OUT).localGet(STRIDE).i32Const(3 + 0).op(Op.i32Shl).i32Const(t).op(0x6c /* i32.mul */, Op.i32Add);
    c.localGet(acc(t, 0)).f64x2ExtractLane(0).localGet(acc(t, 0)).f64x2ExtractLane(1).op(Op.f64Add);
    c.localGet(acc(t, 1)).f64x2ExtractLane(0).localGet(acc(t, 1)).f64x2ExtractLane(1).op(Op.f64Add, Op.f64Add);
    c.localGet(S + t).op(Op.f64Add).f64Store(0);
  }
  return { name: 'dot4', params: [i32, i32, i32, i32, i32, i32, i32, i32], results: [], locals: [i32, v128, v128, v128, v128, v128, v128, v128, v128, v128, v128, f64, f64, f64, f64], body: c };
}

/** dotBlocks(x, y, n, out, block): out[b] = partial of block b of [0, n). */
function dotBlocks(): FunctionSpec {
  const [X, Y, N, OUT, BLOCK, M] = [0, 1, 2, 3, 4, 5];
  const c = new CodeBuilder();
  c.block().loop();
  c.localGet(N).op(Op.i32Eqz).brIf(1);
  minInto(c, M, N, BLOCK);
  c.localGet(OUT).localGet(X).localGet(Y).localGet(M).op(CALL, FN.dotRange).f64Store(0);
  advanceBy(c, [X, Y], M);
  c.localGet(N).localGet(M).op(Op.i32Sub).localSet(N);
  advance(c, [OUT], 8);
  c.br(0).end().end();
  return { name: 'dotBlocks', params: [i32, i32, i32, i32, i32], results: [], locals: [i32], body: c };
}

/**
 * multiDotBlocks(k, table, off, y, n, out, stride, block): for each block b of [0, n) and each
 * j < k, out[j·stride + b] = partial of x_j·y, x_j = i32 table[j] + off (off: the byte offset of
 * this range in every x_j; y is already offset). One pass over y's block per k vectors.
 */
function multiDotBlocks(): FunctionSpec {
  const [K, TABLE, OFF, Y, N, OUT, STRIDE, BLOCK, M, J, TP, OP] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
  const c = new CodeBuilder();
  c.block().loop();
  c.localGet(N).op(Op.i32Eqz).brIf(1);
  minInto(c, M, N, BLOCK);
  c.i32Const(0).localSet(J);
  c.localGet(TABLE).localSet(TP);
  c.localGet(OUT).localSet(OP);
  // groups of four x's against one load of y's elements (dot4), then the rest one by one
  c.block().loop();
  c.localGet(K).localGet(J).op(Op.i32Sub).i32Const(4).op(Op.i32LtU).brIf(1);
  for (let t = 0; t < 4; t++) c.localGet(TP).i32Load(4 * t).localGet(OFF).op(Op.i32Add);
  c.localGet(Y).localGet(M).localGet(OP).localGet(STRIDE).op(CALL, FN.dot4);
  advance(c, [TP], 16);
  c.localGet(OP).localGet(STRIDE).i32Const(5).op(Op.i32Shl, Op.i32Add).localSet(OP);
  c.localGet(J).i32Const(4).op(Op.i32Add).localSet(J);
  c.br(0).end().end();
  c.block().loop();
  c.localGet(J).localGet(K).op(I32_EQ).brIf(1);
  c.localGet(OP).localGet(TP).i32Load(0).localGet(OFF).op(Op.i32Add).localGet(Y).localGet(M).op(CALL, FN.dotRange).f64Store(0);
  advance(c, [TP], 4);
  c.localGet(OP).localGet(STRIDE).i32Const(3).op(Op.i32Shl, Op.i32Add).localSet(OP);
  c.localGet(J).i32Const(1).op(Op.i32Add).localSet(J);
  c.br(0).end().end();
  advanceBy(c, [OFF, Y], M);
  c.localGet(N).localGet(M).op(Op.i32Sub).localSet(N);
  advance(c, [OUT], 8);
  c.br(0).end().end();
  return { name: 'multiDotBlocks', params: [i32, i32, i32, i32, i32, i32, i32, i32], results: [], locals: [i32, i32, i32, i32], body: c };
}

/** axpy0(a, x, y, n): y = a·x.  axpy1: y = y + a·x. */
function axpy(add: boolean): FunctionSpec {
  const [A, X, Y, N, END, AV] = [0, 1, 2, 3, 4, 5];
  const c = new CodeBuilder();
  splat(c, A);
  c.localSet(AV);
  elementwise(
    c,
    [X, Y],
    Y,
    N,
    END,
    (off) => {
      c.localGet(Y);
      if (add) c.localGet(Y).v128Load(off);
      c.localGet(AV).localGet(X).v128Load(off).simd(SimdOp.f64x2Mul);
      if (add) c.simd(SimdOp.f64x2Add);
      v128Store(c, off);
    },
    () => {
      c.localGet(Y);
      if (add) c.localGet(Y).f64Load(0);
      c.localGet(A).localGet(X).f64Load(0).op(F64_MUL);
      if (add) c.op(Op.f64Add);
      c.f64Store(0);
    },
  );
  return { name: add ? 'axpy1' : 'axpy0', params: [f64, i32, i32, i32], results: [], locals: [i32, v128], body: c };
}

/**
 * axpy4(a0, a1, a2, a3, x0, x1, x2, x3, y, n): y = (((y + a0·x0) + a1·x1) + a2·x2) + a3·x3, the
 * rounding of four axpy1 calls in a row, with y read and written once instead of four times
 * (the inner loop of combine).
 */
function axpy4(): FunctionSpec {
  const [A0, X0, Y, N, END, AV0] = [0, 4, 8, 9, 10, 11];
  const c = new CodeBuilder();
  for (let t = 0; t < 4; t++) {
    splat(c, A0 + t);
    c.localSet(AV0 + t);
  }
  const xs = [X0, X0 + 1, X0 + 2, X0 + 3];
  elementwise(
    c,
    [...xs, Y],
    Y,
    N,
    END,
    (off) => {
      c.localGet(Y).localGet(Y).v128Load(off);
      for (let t = 0; t < 4; t++) c.localGet(AV0 + t).localGet(xs[t]!).v128Load(off).simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add);
      v128Store(c, off);
    },
    () => {
      c.localGet(Y).localGet(Y).f64Load(0);
      for (let t = 0; t < 4; t++) c.localGet(A0 + t).localGet(xs[t]!).f64Load(0).op(F64_MUL, Op.f64Add);
      c.f64Store(0);
    },
  );
  return { name: 'axpy4', params: [f64, f64, f64, f64, i32, i32, i32, i32, i32, i32], results: [], locals: [i32, v128, v128, v128, v128], body: c };
}

/** axpby2(a, x, b, y, n): y = a·x + b·y. */
function axpby2(): FunctionSpec {
  const [A, X, B, Y, N, END, AV, BV] = [0, 1, 2, 3, 4, 5, 6, 7];
  const c = new CodeBuilder();
  splat(c, A);
  c.localSet(AV);
  splat(c, B);
  c.localSet(BV);
  elementwise(
    c,
    [X, Y],
    Y,
    N,
    END,
    (off) => {
      c.localGet(Y).localGet(AV).localGet(X).v128Load(off).simd(SimdOp.f64x2Mul);
      c.localGet(BV).localGet(Y).v128Load(off).simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add);
      v128Store(c, off);
    },
    () => {
      c.localGet(Y).localGet(A).localGet(X).f64Load(0).op(F64_MUL);
      c.localGet(B).localGet(Y).f64Load(0).op(F64_MUL, Op.f64Add).f64Store(0);
    },
  );
  return { name: 'axpby2', params: [f64, i32, f64, i32, i32], results: [], locals: [i32, v128, v128], body: c };
}

/** scale(b, y, n): y = b·y. */
function scale(): FunctionSpec {
  const [B, Y, N, END, BV] = [0, 1, 2, 3, 4];
  const c = new CodeBuilder();
  splat(c, B);
  c.localSet(BV);
  elementwise(
    c,
    [Y],
    Y,
    N,
    END,
    (off) => {
      c.localGet(Y).localGet(BV).localGet(Y).v128Load(off).simd(SimdOp.f64x2Mul);
      v128Store(c, off);
    },
    () => {
      c.localGet(Y).localGet(B).localGet(Y).f64Load(0).op(F64_MUL).f64Store(0);
    },
  );
  return { name: 'scale', params: [f64, i32, i32], results: [], locals: [i32, v128], body: c };
}

/** multiply(x, y, z, n): z = x ∘ y (z may alias x or y: each element is read before it is written). */
function multiply(): FunctionSpec {
  const [X, Y, Z, N, END] = [0, 1, 2, 3, 4];
  const c = new CodeBuilder();
  elementwise(
    c,
    [X, Y, Z],
    Z,
    N,
    END,
    (off) => {
      c.localGet(Z).localGet(X).v128Load(off).localGet(Y).v128Load(off).simd(SimdOp.f64x2Mul);
      v128Store(c, off);
    },
    () => {
      c.localGet(Z).localGet(X).f64Load(0).localGet(Y).f64Load(0).op(F64_MUL).f64Store(0);
    },
  );
  return { name: 'multiply', params: [i32, i32, i32, i32], results: [], locals: [i32], body: c };
}

/**
 * combine(k, table, coefs, off, beta, mode, y, n, block): y = β·y + Σ c_j·x_j block by block;
 * mode 0: β = 0 (y's block zeroed, never read), 1: β = 1 (left alone), 2: y = β·y. x_j = i32
 * table[j] + off, c_j = f64 coefs[j]. Per element ((β·y + c₀x₀) + c₁x₁) + … as combineF64.
 */
function combine(): FunctionSpec {
  const [K, TABLE, COEFS, OFF, BETA, MODE, Y, N, BLOCK, M, J] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const c = new CodeBuilder();
  c.block().loop();
  c.localGet(N).op(Op.i32Eqz).brIf(1);
  minInto(c, M, N, BLOCK);
  c.localGet(MODE).op(Op.i32Eqz).if();
  // memory.fill(y, 0, 8·m)
  c.localGet(Y).i32Const(0).localGet(M).i32Const(3).op(Op.i32Shl).op(0xfc, 0x0b, 0x00);
  c.end();
  c.localGet(MODE).i32Const(2).op(I32_EQ).if();
  c.localGet(BETA).localGet(Y).localGet(M).op(CALL, FN.scale);
  c.end();
  c.i32Const(0).localSet(J);
  // groups of four x's per pass over y's block (axpy4), then the rest one by one (axpy1)
  c.block().loop();
  c.localGet(K).localGet(J).op(Op.i32Sub).i32Const(4).op(Op.i32LtU).brIf(1);
  for (let t = 0; t < 4; t++) c.localGet(COEFS).localGet(J).i32Const(3).op(Op.i32Shl, Op.i32Add).f64Load(8 * t);
  for (let t = 0; t < 4; t++) c.localGet(TABLE).localGet(J).i32Const(2).op(Op.i32Shl, Op.i32Add).i32Load(4 * t).localGet(OFF).op(Op.i32Add);
  c.localGet(Y).localGet(M).op(CALL, FN.axpy4);
  c.localGet(J).i32Const(4).op(Op.i32Add).localSet(J);
  c.br(0).end().end();
  c.block().loop();
  c.localGet(J).localGet(K).op(I32_EQ).brIf(1);
  c.localGet(COEFS).localGet(J).i32Const(3).op(Op.i32Shl, Op.i32Add).f64Load(0);
  c.localGet(TABLE).localGet(J).i32Const(2).op(Op.i32Shl, Op.i32Add).i32Load(0).localGet(OFF).op(Op.i32Add);
  c.localGet(Y).localGet(M).op(CALL, FN.axpy1);
  c.localGet(J).i32Const(1).op(Op.i32Add).localSet(J);
  c.br(0).end().end();
  advanceBy(c, [OFF, Y], M);
  c.localGet(N).localGet(M).op(Op.i32Sub).localSet(N);
  c.br(0).end().end();
  return { name: 'combine', params: [i32, i32, i32, i32, f64, i32, i32, i32, i32], results: [], locals: [i32, i32], body: c };
}

/**
 * fill(value, y, n): y[i] = value. In wasm because TypedArray.fill on a SharedArrayBuffer takes
 * V8's slow path (5–8× a plain array's; measured 40–70 µs against 6–9 µs for 16 863 elements).
 */
function fill(): FunctionSpec {
  const [V, Y, N, END, VV] = [0, 1, 2, 3, 4];
  const c = new CodeBuilder();
  splat(c, V);
  c.localSet(VV);
  elementwise(
    c,
    [Y],
    Y,
    N,
    END,
    (off) => {
      c.localGet(Y).localGet(VV);
      v128Store(c, off);
    },
    () => {
      c.localGet(Y).localGet(V).f64Store(0);
    },
  );
  return { name: 'fill', params: [f64, i32, i32], results: [], locals: [i32, v128], body: c };
}

/** copy(dst, src, n): dst[i] = src[i] by memory.copy (overlap allowed; TypedArray.set on shared memory is slow too). */
function copy(): FunctionSpec {
  const [DST, SRC, N] = [0, 1, 2];
  const c = new CodeBuilder();
  c.localGet(DST).localGet(SRC).localGet(N).i32Const(3).op(Op.i32Shl).op(0xfc, 0x0a, 0x00, 0x00);
  return { name: 'copy', params: [i32, i32, i32], results: [], locals: [], body: c };
}

/** The functions of the module, in {@link FN} order. */
function hostKernelFunctions(): FunctionSpec[] {
  return [
    csrSpmvFunction({ simd: true, unroll: 4 }),
    dotRange(),
    dotBlocks(),
    multiDotBlocks(),
    axpy(false),
    axpy(true),
    axpby2(),
    scale(),
    multiply(),
    combine(),
    fill(),
    copy(),
    axpy4(),
    dot4(),
  ];
}

/** Maximum pages of the shared memory: the whole wasm32 space (4 GiB); only address space is reserved. */
export const HOST_MAX_PAGES = 65_536;

/**
 * Module bytes: imports a shared memory `env.memory` (max {@link HOST_MAX_PAGES} pages) and
 * exports spmv, dotRange, dotBlocks, multiDotBlocks, axpy0, axpy1, axpby2, scale, multiply,
 * combine, fill, copy, axpy4 and dot4 (byte addresses, element counts). About 2.1 KB.
 */
export function hostKernelModuleBytes(): Uint8Array<ArrayBuffer> {
  return buildModule(hostKernelFunctions(), { minPages: 1, maxPages: HOST_MAX_PAGES, shared: true, imported: true });
}

let compiled: WebAssembly.Module | null | undefined;

/**
 * The compiled module, or null when this engine lacks WebAssembly, SIMD or shared memory
 * (then the host backend keeps the JavaScript HostVectorSpace). Compiled once per process.
 */
export function hostKernelModule(): WebAssembly.Module | null {
  if (compiled !== undefined) return compiled;
  compiled = null;
  const wa = (globalThis as { WebAssembly?: typeof WebAssembly }).WebAssembly;
  if (wa === undefined || typeof SharedArrayBuffer === 'undefined') return compiled;
  const bytes = hostKernelModuleBytes();
  if (wa.validate(bytes)) compiled = new wa.Module(bytes);
  return compiled;
}

/** The exported kernels (all addresses are byte offsets into the shared memory). */
export interface HostKernels {
  spmv(rows: number, rowPtr: number, colIdx: number, values: number, x: number, y: number): void;
  dotRange(x: number, y: number, n: number): number;
  dotBlocks(x: number, y: number, n: number, out: number, block: number): void;
  multiDotBlocks(k: number, table: number, off: number, y: number, n: number, out: number, stride: number, block: number): void;
  axpy0(a: number, x: number, y: number, n: number): void;
  axpy1(a: number, x: number, y: number, n: number): void;
  axpby2(a: number, x: number, b: number, y: number, n: number): void;
  scale(b: number, y: number, n: number): void;
  multiply(x: number, y: number, z: number, n: number): void;
  combine(k: number, table: number, coefs: number, off: number, beta: number, mode: number, y: number, n: number, block: number): void;
  fill(value: number, y: number, n: number): void;
  copy(dst: number, src: number, n: number): void;
  axpy4(a0: number, a1: number, a2: number, a3: number, x0: number, x1: number, x2: number, x3: number, y: number, n: number): void;
  dot4(x0: number, x1: number, x2: number, x3: number, y: number, n: number, out: number, stride: number): void;
}

/** Instantiate the module on a shared memory. */
export function instantiateHostKernels(module: WebAssembly.Module, memory: WebAssembly.Memory): HostKernels {
  return new WebAssembly.Instance(module, { env: { memory } }).exports as unknown as HostKernels;
}
