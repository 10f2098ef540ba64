/**
 * CG's vector update in one pass (the host module's `cgUpdateBlocks`): x += α·p, r += (−α)·q and
 * the block partials of ⟨r, r⟩ of the updated r, with p, q, x, r each read once and x, r written
 * once — where two axpy and a dot read r three times. Every element is the expression of axpy1
 * (y + a·x) and every partial the order of dotRange (../kernels.ts), so the result is
 * bit-identical to axpby, axpby, dot.
 *
 * `cgTrueUpdateBlocks` is the same pass for CG's step that replaces the recursive residual by
 * the true one: r holds t = A·x on entry (computed with q = A·p in one sweep of A,
 * `spmvPairDotBlocks`), and becomes r = (b − t) + (−α)·q = b − A·(x + α·p) — the residual of the
 * new x up to one rounding of x + α·p, so ‖r‖ is the exit's true-residual check without its own
 * product.
 * @module
 */
import { CodeBuilder, type FunctionSpec, Op, SimdOp } from '../../csr/wasm/module-bytes';
import { advance, F64_MUL, F64_SUB, F64X2_SUB, f64, I32_NE, i32, minInto, splat, v128, v128Store, zeroV128 } from './codegen';

/** Parameter and local indices of one variant (the true-residual one has b after r). */
function layout(b: boolean) {
  const o = b ? 1 : 0;
  const [A, MA, P, Q, X, R] = [0, 1, 2, 3, 4, 5];
  const B = b ? 6 : -1;
  const [N, OUT, BLOCK] = [6 + o, 7 + o, 8 + o];
  const [END, M, AV, MAV, ACC0, ACC1, RV, S, RS] = [9, 10, 11, 12, 13, 14, 15, 16, 17].map((i) => i + o) as [number, number, number, number, number, number, number, number, number];
  return { A, MA, P, Q, X, R, B, N, OUT, BLOCK, END, M, AV, MAV, ACC0, ACC1, RV, S, RS, ptrs: b ? [P, Q, X, R, B] : [P, Q, X, R] };
}
type Layout = ReturnType<typeof layout>;

/** x[off] += a·p[off]; r[off] = r[off] (or b[off] − r[off]) + ma·q[off] (two lanes); the new r pair is left in RV. */
function pairUpdate(c: CodeBuilder, L: Layout, off: number): void {
  c.localGet(L.X).localGet(L.X).v128Load(off).localGet(L.AV).localGet(L.P).v128Load(off).simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add);
  v128Store(c, off);
  if (L.B >= 0) c.localGet(L.B).v128Load(off).localGet(L.R).v128Load(off).simd(F64X2_SUB);
  else c.localGet(L.R).v128Load(off);
  c.localGet(L.MAV).localGet(L.Q).v128Load(off).simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add).localSet(L.RV);
  c.localGet(L.R).localGet(L.RV);
  v128Store(c, off);
}

/** acc += RV ⊙ RV. */
function accumulate(c: CodeBuilder, L: Layout, acc: number): void {
  c.localGet(acc).localGet(L.RV).localGet(L.RV).simd(SimdOp.f64x2Mul).simd(SimdOp.f64x2Add).localSet(acc);
}

/** One block of M elements: the update and its ⟨r, r⟩ partial stored at OUT (dotRange's order). */
function blockBody(c: CodeBuilder, L: Layout): void {
  zeroV128(c);
  c.localSet(L.ACC0);
  zeroV128(c);
  c.localSet(L.ACC1);
  c.localGet(L.R).localGet(L.M).i32Const(3).op(Op.i32Shl, Op.i32Add).localSet(L.END);
  c.block().loop();
  c.localGet(L.END).localGet(L.R).op(Op.i32Sub).i32Const(32).op(Op.i32LtU).brIf(1);
  pairUpdate(c, L, 0);
  accumulate(c, L, L.ACC0);
  pairUpdate(c, L, 16);
  accumulate(c, L, L.ACC1);
  advance(c, L.ptrs, 32);
  c.br(0).end().end();
  // a trailing pair goes to the first accumulator
  c.localGet(L.END).localGet(L.R).op(Op.i32Sub).i32Const(16).op(Op.i32GeU).if();
  pairUpdate(c, L, 0);
  accumulate(c, L, L.ACC0);
  advance(c, L.ptrs, 16);
  c.end();
  // a trailing single is added last
  c.f64Const(0).localSet(L.S);
  c.localGet(L.END).localGet(L.R).op(I32_NE).if();
  c.localGet(L.X).localGet(L.X).f64Load(0).localGet(L.A).localGet(L.P).f64Load(0).op(F64_MUL, Op.f64Add).f64Store(0);
  if (L.B >= 0) c.localGet(L.B).f64Load(0).localGet(L.R).f64Load(0).op(F64_SUB);
  else c.localGet(L.R).f64Load(0);
  c.localGet(L.MA).localGet(L.Q).f64Load(0).op(F64_MUL, Op.f64Add).localSet(L.RS);
  c.localGet(L.R).localGet(L.RS).f64Store(0);
  c.localGet(L.RS).localGet(L.RS).op(F64_MUL).localSet(L.S);
  advance(c, L.ptrs, 8);
  c.end();
  c.localGet(L.OUT);
  c.localGet(L.ACC0).f64x2ExtractLane(0).localGet(L.ACC0).f64x2ExtractLane(1).op(Op.f64Add);
  c.localGet(L.ACC1).f64x2ExtractLane(0).localGet(L.ACC1).f64x2ExtractLane(1).op(Op.f64Add, Op.f64Add);
  c.localGet(L.S).op(Op.f64Add).f64Store(0);
}

/**
 * cgUpdateBlocks(a, ma, p, q, x, r, n, out, block): for each block b of [0, n): x += a·p,
 * r += ma·q over the block, then out[b] = the block partial of ⟨r, r⟩ (ma = −a, passed so the
 * negation is the caller's exact one). Byte addresses; p, q, x, r must not overlap.
 * With `trueResidual`: cgTrueUpdateBlocks(a, ma, p, q, x, r, b, n, out, block), where r = (b − r) + ma·q.
 */
export function cgUpdateBlocks(trueResidual = false): FunctionSpec {
  const L = layout(trueResidual);
  const c = new CodeBuilder();
  splat(c, L.A);
  c.localSet(L.AV);
  splat(c, L.MA);
  c.localSet(L.MAV);
  c.block().loop();
  c.localGet(L.N).op(Op.i32Eqz).brIf(1);
  minInto(c, L.M, L.N, L.BLOCK);
  blockBody(c, L);
  c.localGet(L.N).localGet(L.M).op(Op.i32Sub).localSet(L.N);
  advance(c, [L.OUT], 8);
  c.br(0).end().end();
  const params = [f64, f64, i32, i32, i32, i32, ...(trueResidual ? [i32] : []), i32, i32, i32];
  return { name: trueResidual ? 'cgTrueUpdateBlocks' : 'cgUpdateBlocks', params, results: [], locals: [i32, i32, v128, v128, v128, v128, v128, f64, f64], body: c };
}
