/**
 * The CSR product with ⟨x, A·x⟩ in one sweep (the host module's `spmvDotBlocks`, CG's q = A·p
 * and ⟨p, q⟩): the rows are taken in blocks of `block`, and right after a block's product its
 * dot partial is taken while that block of x and y is still in the first-level cache — where
 * the product, then a dot over the whole vectors, read x and y from memory again. The product of
 * a block is the `spmv` kernel on those rows and the partial is `dotRange` on them, so y and
 * every partial are bit-identical to spmv then dotBlocks (../kernels.ts' order).
 *
 * `spmvPairDotBlocks` does the same with a second product in the same pass over A (the
 * `spmvPair` kernel: each entry's value and column read once for both products — CG's q = A·p
 * with the exit check's A·x), bit-identical to spmv, spmv, dotBlocks.
 * @module
 */
import { CodeBuilder, type FunctionSpec, Op } from '../../csr/wasm/module-bytes';
import { advance, advanceBy, CALL, FN, i32, minInto } from './codegen';

/**
 * spmvDotBlocks(rows, rowPtr, colIdx, values, x, xd, y, out, block): y = A·x over the rows [i0,
 * i0 + rows) (rowPtr points at rowPtr[i0], y at y[i0], x is the whole vector, xd = x at x[i0]),
 * and out[b] = the dotRange partial of x·y over the b-th block of `block` rows. A square matrix;
 * x and y must not overlap. Byte addresses. With `pair`: spmvPairDotBlocks(rows, rowPtr, colIdx,
 * values, x, xd, y, x2, y2, out, block), also y2 = A·x2 (x2 whole, y2 at y2[i0]; none overlap).
 */
export function spmvDotBlocks(pair = false): FunctionSpec {
  const [ROWS, RP, CI, VA, X, XD, Y] = [0, 1, 2, 3, 4, 5, 6];
  const [X2, Y2] = pair ? [7, 8] : [-1, -1];
  const o = pair ? 2 : 0;
  const [OUT, BLOCK, M] = [7 + o, 8 + o, 9 + o];
  const c = new CodeBuilder();
  c.block().loop();
  c.localGet(ROWS).op(Op.i32Eqz).brIf(1);
  minInto(c, M, ROWS, BLOCK);
  c.localGet(M).localGet(RP).localGet(CI).localGet(VA).localGet(X).localGet(Y);
  if (pair) c.localGet(X2).localGet(Y2).op(CALL, FN.spmvPair);
  else c.op(CALL, FN.spmv);
  c.localGet(OUT).localGet(XD).localGet(Y).localGet(M).op(CALL, FN.dotRange).f64Store(0);
  c.localGet(RP).localGet(M).i32Const(2).op(Op.i32Shl, Op.i32Add).localSet(RP);
  advanceBy(c, pair ? [XD, Y, Y2] : [XD, Y], M);
  c.localGet(ROWS).localGet(M).op(Op.i32Sub).localSet(ROWS);
  advance(c, [OUT], 8);
  c.br(0).end().end();
  return { name: pair ? 'spmvPairDotBlocks' : 'spmvDotBlocks', params: new Array<typeof i32>(9 + o).fill(i32), results: [], locals: [i32], body: c };
}
