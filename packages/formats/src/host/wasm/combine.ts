/**
 * The multi-combine kernel of the host module: y = β·y + Σ c_j·x_j block by block, four vectors
 * per pass over y's block (axpy4), then the rest one by one.
 * @module
 */
import { CodeBuilder, type FunctionSpec, Op } from '../../csr/wasm/module-bytes';
import { advanceBy, CALL, f64, FN, I32_EQ, i32, minInto } from './codegen';

/** Elements per block of `combine`: y's block stays in L1 while the k vectors sweep over it. */
export const COMBINE_BLOCK = 2048;

/**
 * combine(k, table, coefs, off, beta, mode, y, n, block): y = β·y + Σ c_j·x_j block by block;
 * mode 0: β = 0 (y's block zeroed, never read), 1: β = 1 (left alone), 2: y = β·y. x_j = i32
 * table[j] + off, c_j = f64 coefs[j]. Per element ((β·y + c₀x₀) + c₁x₁) + … as combineF64.
 */
export function combine(): FunctionSpec {
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
 * combineDotBlocks(k, table, coefs, off, beta, mode, y, n, out, block): `combine` over blocks of
 * `block` elements (DOT_BLOCK), each followed at once by its ⟨y, y⟩ partial (dotRange) while the
 * block of y is in cache: y = β·y + Σ c_j·x_j and the partials of ‖y‖², where combine then a norm
 * read y again. The same kernels on the same elements: bit-identical to combine then dotBlocks.
 */
export function combineDotBlocks(): FunctionSpec {
  const [K, TABLE, COEFS, OFF, BETA, MODE, Y, N, OUT, BLOCK, M] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const c = new CodeBuilder();
  c.block().loop();
  c.localGet(N).op(Op.i32Eqz).brIf(1);
  minInto(c, M, N, BLOCK);
  c.localGet(K).localGet(TABLE).localGet(COEFS).localGet(OFF).localGet(BETA).localGet(MODE).localGet(Y).localGet(M).i32Const(COMBINE_BLOCK).op(CALL, FN.combine);
  c.localGet(OUT).localGet(Y).localGet(Y).localGet(M).op(CALL, FN.dotRange).f64Store(0);
  advanceBy(c, [OFF, Y], M);
  c.localGet(N).localGet(M).op(Op.i32Sub).localSet(N);
  c.localGet(OUT).i32Const(8).op(Op.i32Add).localSet(OUT);
  c.br(0).end().end();
  return { name: 'combineDotBlocks', params: [i32, i32, i32, i32, f64, i32, i32, i32, i32, i32], results: [], locals: [i32], body: c };
}
