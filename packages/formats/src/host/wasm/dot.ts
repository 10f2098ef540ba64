/**
 * The dot-product kernels of the host module: one block partial (dotRange), four partials
 * against one load of y (dot4), the partials of every block of a range (dotBlocks) and of k
 * vectors against one y (multiDotBlocks). The rounding order is the module's (../kernels.ts).
 * @module
 */
import { CodeBuilder, type FunctionSpec, Op, SimdOp } from '../../csr/wasm/module-bytes';
import { advance, advanceBy, CALL, F64_MUL, f64, FN, I32_EQ, I32_NE, i32, minInto, v128, zeroV128 } from './codegen';

/** Elements per dot-product partial (32 KiB of one vector). */
export const DOT_BLOCK = 4096;

/** dotRange(x, y, n) → f64: one block partial (see the module comment for the order). */
export function dotRange(): FunctionSpec {
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
export function dot4(): FunctionSpec {
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
export function dotBlocks(): FunctionSpec {
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
 * With `copyTo`: multiDotCopyBlocks(k, table, off, y, n, out, stride, block, dst), which also
 * copies each block of y to dst while it is in cache (icgs's chunked projection keeps the
 * incoming w so: one read of w fewer than multiDot then copy, and split over threads with it).
 */
export function multiDotBlocks(copyTo = false): FunctionSpec {
  const [K, TABLE, OFF, Y, N, OUT, STRIDE, BLOCK] = [0, 1, 2, 3, 4, 5, 6, 7];
  const DST = copyTo ? 8 : -1;
  const o = copyTo ? 1 : 0;
  const [M, J, TP, OP] = [8 + o, 9 + o, 10 + o, 11 + o];
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
  if (copyTo) c.localGet(DST).localGet(Y).localGet(M).i32Const(3).op(Op.i32Shl).op(0xfc, 0x0a, 0x00, 0x00); // memory.copy(dst, y, 8·m)
  advanceBy(c, copyTo ? [OFF, Y, DST] : [OFF, Y], M);
  c.localGet(N).localGet(M).op(Op.i32Sub).localSet(N);
  advance(c, [OUT], 8);
  c.br(0).end().end();
  return { name: copyTo ? 'multiDotCopyBlocks' : 'multiDotBlocks', params: new Array<typeof i32>(8 + o).fill(i32), results: [], locals: [i32, i32, i32, i32], body: c };
}
