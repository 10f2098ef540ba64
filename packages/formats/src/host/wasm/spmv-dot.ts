/**
 * The CSR product with ⟨x, A·x⟩ in one sweep (the host module's `spmvDotBlocks`, CG's q = A·p
 * and ⟨p, q⟩): the rows are taken in blocks of `block`, and right after a block's product its
 * dot partial is taken while that block of x and y is still in the first-level cache — where
 * the product, then a dot over the whole vectors, read x and y from memory again. The product of
 * a block is the `spmv` kernel on those rows and the partial is `dotRange` on them, so y and
 * every partial are bit-identical to spmv then dotBlocks (../kernels.ts' order).
 * @module
 */
import { CodeBuilder, type FunctionSpec, Op } from '../../csr/wasm/module-bytes';
import { advance, advanceBy, CALL, FN, i32, minInto } from './codegen';

/**
 * spmvDotBlocks(rows, rowPtr, colIdx, values, x, xd, y, out, block): y = A·x over the rows [i0,
 * i0 + rows) (rowPtr points at rowPtr[i0], y at y[i0], x is the whole vector, xd = x at x[i0]),
 * and out[b] = the dotRange partial of x·y over the b-th block of `block` rows. A square matrix;
 * x and y must not overlap. Byte addresses.
 */
export function spmvDotBlocks(): FunctionSpec {
  const [ROWS, RP, CI, VA, X, XD, Y, OUT, BLOCK, M] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const c = new CodeBuilder();
  c.block().loop();
  c.localGet(ROWS).op(Op.i32Eqz).brIf(1);
  minInto(c, M, ROWS, BLOCK);
  c.localGet(M).localGet(RP).localGet(CI).localGet(VA).localGet(X).localGet(Y).op(CALL, FN.spmv);
  c.localGet(OUT).localGet(XD).localGet(Y).localGet(M).op(CALL, FN.dotRange).f64Store(0);
  c.localGet(RP).localGet(M).i32Const(2).op(Op.i32Shl, Op.i32Add).localSet(RP);
  advanceBy(c, [XD, Y], M);
  c.localGet(ROWS).localGet(M).op(Op.i32Sub).localSet(ROWS);
  advance(c, [OUT], 8);
  c.br(0).end().end();
  return { name: 'spmvDotBlocks', params: [i32, i32, i32, i32, i32, i32, i32, i32, i32], results: [], locals: [i32], body: c };
}

/**
 * spmvPairDotBlocks(rows, rowPtr, colIdx, values, x, xd, y, x2, y2, out, block, sub): y = A·x and
 * y2 = A·x2 over the rows [i0, i0 + rows) in one sweep of A — sub-blocks of `sub` rows, each
 * multiplied by x then by x2 while its part of A is in cache (CG's q = A·p with the exit check's
 * A·x: one read of the matrix from memory where two products read it twice) — and out[b] = the
 * dotRange partial of x·y over the b-th block of `block` rows. Every row of y and y2 is the
 * `spmv` kernel's, every partial spmvDotBlocks': bit-identical to spmv, spmv, dotBlocks. A
 * square matrix; x, y, x2, y2 must not overlap. Byte addresses (xd = x at x[i0]).
 */
export function spmvPairDotBlocks(): FunctionSpec {
  const [ROWS, RP, CI, VA, X, XD, Y, X2, Y2, OUT, BLOCK, SUB] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
  const [M, L, S, RPB, YB, Y2B] = [12, 13, 14, 15, 16, 17];
  const c = new CodeBuilder();
  c.block().loop();
  c.localGet(ROWS).op(Op.i32Eqz).brIf(1);
  minInto(c, M, ROWS, BLOCK);
  c.localGet(M).localSet(L);
  c.localGet(RP).localSet(RPB);
  c.localGet(Y).localSet(YB);
  c.localGet(Y2).localSet(Y2B);
  c.block().loop();
  c.localGet(L).op(Op.i32Eqz).brIf(1);
  minInto(c, S, L, SUB);
  c.localGet(S).localGet(RPB).localGet(CI).localGet(VA).localGet(X).localGet(YB).op(CALL, FN.spmv);
  c.localGet(S).localGet(RPB).localGet(CI).localGet(VA).localGet(X2).localGet(Y2B).op(CALL, FN.spmv);
  c.localGet(RPB).localGet(S).i32Const(2).op(Op.i32Shl, Op.i32Add).localSet(RPB);
  advanceBy(c, [YB, Y2B], S);
  c.localGet(L).localGet(S).op(Op.i32Sub).localSet(L);
  c.br(0).end().end();
  c.localGet(OUT).localGet(XD).localGet(Y).localGet(M).op(CALL, FN.dotRange).f64Store(0);
  c.localGet(RP).localGet(M).i32Const(2).op(Op.i32Shl, Op.i32Add).localSet(RP);
  advanceBy(c, [XD, Y, Y2], M);
  c.localGet(ROWS).localGet(M).op(Op.i32Sub).localSet(ROWS);
  advance(c, [OUT], 8);
  c.br(0).end().end();
  return { name: 'spmvPairDotBlocks', params: [i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32], results: [], locals: [i32, i32, i32, i32, i32, i32], body: c };
}
