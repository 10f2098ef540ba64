/**
 * CG's vector update in one pass (the host module's `cgUpdateBlocks`): x += α·p, r += (−α)·q and
 * the block partials of ⟨r, r⟩ of the updated r, with p, q, x, r each read once and x, r written
 * once — where two axpy and a dot read r three times. Every element is the expression of axpy1
 * (y + a·x) and every partial the order of dotRange (../kernels.ts), so the result is
 * bit-identical to axpby, axpby, dot.
 * @module
 */
import { CodeBuilder, type FunctionSpec, Op, SimdOp } from '../../csr/wasm/module-bytes';
import { advance, F64_MUL, f64, I32_NE, i32, minInto, splat, v128, v128Store, zeroV128 } from './codegen';

/**
 * Locals: parameters a, ma (= −α), p, q, x, r, n, out, block; then the block end, the block
 * length, the splats of a and −α, the two f64x2 accumulators, the new r pair, the single tail
 * term (f64) and the new r single.
 */
const [A, MA, P, Q, X, R, N, OUT, BLOCK] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
const [END, M, AV, MAV, ACC0, ACC1, RV, S, RS] = [9, 10, 11, 12, 13, 14, 15, 16, 17];

/** x[off] += a·p[off]; r[off] += ma·q[off] (two lanes); the new r pair is left in RV. */
function pairUpdate(c: CodeBuilder, off: number): void {
  c.localGet(X).localGet(X).v128Load(off).localGet(AV).localGet(P).v128Load(off).simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add);
  v128Store(c, off);
  c.localGet(R).v128Load(off).localGet(MAV).localGet(Q).v128Load(off).simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add).localSet(RV);
  c.localGet(R).localGet(RV);
  v128Store(c, off);
}

/** acc += RV ⊙ RV. */
function accumulate(c: CodeBuilder, acc: number): void {
  c.localGet(acc).localGet(RV).localGet(RV).simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add).localSet(acc);
}

/** One block of M elements: the update and its ⟨r, r⟩ partial stored at OUT (dotRange's order). */
function blockBody(c: CodeBuilder): void {
  zeroV128(c);
  c.localSet(ACC0);
  zeroV128(c);
  c.localSet(ACC1);
  c.localGet(R).localGet(M).i32Const(3).op(Op.i32Shl, Op.i32Add).localSet(END);
  c.block().loop();
  c.localGet(END).localGet(R).op(Op.i32Sub).i32Const(32).op(Op.i32LtU).brIf(1);
  pairUpdate(c, 0);
  accumulate(c, ACC0);
  pairUpdate(c, 16);
  accumulate(c, ACC1);
  advance(c, [P, Q, X, R], 32);
  c.br(0).end().end();
  // a trailing pair goes to the first accumulator
  c.localGet(END).localGet(R).op(Op.i32Sub).i32Const(16).op(Op.i32GeU).if();
  pairUpdate(c, 0);
  accumulate(c, ACC0);
  advance(c, [P, Q, X, R], 16);
  c.end();
  // a trailing single is added last
  c.f64Const(0).localSet(S);
  c.localGet(END).localGet(R).op(I32_NE).if();
  c.localGet(X).localGet(X).f64Load(0).localGet(A).localGet(P).f64Load(0).op(F64_MUL, Op.f64Add).f64Store(0);
  c.localGet(R).f64Load(0).localGet(MA).localGet(Q).f64Load(0).op(F64_MUL, Op.f64Add).localSet(RS);
  c.localGet(R).localGet(RS).f64Store(0);
  c.localGet(RS).localGet(RS).op(F64_MUL).localSet(S);
  advance(c, [P, Q, X, R], 8);
  c.end();
  c.localGet(OUT);
  c.localGet(ACC0).f64x2ExtractLane(0).localGet(ACC0).f64x2ExtractLane(1).op(Op.f64Add);
  c.localGet(ACC1).f64x2ExtractLane(0).localGet(ACC1).f64x2ExtractLane(1).op(Op.f64Add, Op.f64Add);
  c.localGet(S).op(Op.f64Add).f64Store(0);
}

/**
 * cgUpdateBlocks(a, ma, p, q, x, r, n, out, block): for each block b of [0, n): x += a·p,
 * r += ma·q over the block, then out[b] = the block partial of ⟨r, r⟩ (ma = −a, passed so the
 * negation is the caller's exact one). Byte addresses; p, q, x, r must not overlap.
 */
export function cgUpdateBlocks(): FunctionSpec {
  const c = new CodeBuilder();
  splat(c, A);
  c.localSet(AV);
  splat(c, MA);
  c.localSet(MAV);
  c.block().loop();
  c.localGet(N).op(Op.i32Eqz).brIf(1);
  minInto(c, M, N, BLOCK);
  blockBody(c);
  c.localGet(N).localGet(M).op(Op.i32Sub).localSet(N);
  advance(c, [OUT], 8);
  c.br(0).end().end();
  return { name: 'cgUpdateBlocks', params: [f64, f64, i32, i32, i32, i32, i32, i32, i32], results: [], locals: [i32, i32, v128, v128, v128, v128, v128, f64, f64], body: c };
}
