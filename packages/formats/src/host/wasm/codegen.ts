/**
 * Code-generation helpers of the host kernel module (../kernels.ts): opcodes beyond
 * ../../csr/wasm/module-bytes' Op, the function index table for calls between kernels, pointer
 * arithmetic and the element-wise loop shape shared by the BLAS-1 kernels.
 * @module
 */
import { type CodeBuilder, Op, SimdOp, ValType } from '../../csr/wasm/module-bytes';

export const { i32, f64, v128 } = ValType;
// opcodes beyond module-bytes' Op
export const I32_EQ = 0x46;
export const I32_NE = 0x47;
export const F64_SUB = 0xa1;
export const F64_MUL = 0xa2;
/** f64x2.sub (SIMD opcode). */
export const F64X2_SUB = 0xf1;
export const SELECT = 0x1b;
export const CALL = 0x10;
export const V128_STORE = 0x0b;

/** Function indices (the order of hostKernelFunctions in ../kernels.ts: calls between kernels use them). */
export const FN = { spmv: 0, dotRange: 1, dotBlocks: 2, multiDotBlocks: 3, axpy0: 4, axpy1: 5, axpby2: 6, scale: 7, multiply: 8, combine: 9, fill: 10, copy: 11, axpy4: 12, dot4: 13, cgUpdateBlocks: 14, spmvDotBlocks: 15, combineDotBlocks: 16, cgTrueUpdateBlocks: 17, spmvPairDotBlocks: 18, spmvPair: 19, multiDotCopyBlocks: 20 } as const;

/** v128.store at the address below the value on the stack, plus offset (alignment hint 8 bytes). */
export function v128Store(c: CodeBuilder, offset: number): void {
  c.simd(V128_STORE, 3, offset);
}
/** Push local's f64 splat to both lanes. */
export function splat(c: CodeBuilder, local: number): void {
  c.localGet(local).simd(SimdOp.f64x2Splat);
}
/** Push a zero v128. */
export function zeroV128(c: CodeBuilder): void {
  c.simd(SimdOp.v128Const, ...new Array<number>(16).fill(0));
}
/** p += bytes for each pointer local. */
export function advance(c: CodeBuilder, ptrs: readonly number[], bytes: number): void {
  for (const p of ptrs) c.localGet(p).i32Const(bytes).op(Op.i32Add).localSet(p);
}
/** p += 8·m for each pointer local (m an i32 local). */
export function advanceBy(c: CodeBuilder, ptrs: readonly number[], m: number): void {
  for (const p of ptrs) c.localGet(p).localGet(m).i32Const(3).op(Op.i32Shl, Op.i32Add).localSet(p);
}
/** m = min(n, block) (unsigned). */
export function minInto(c: CodeBuilder, m: number, n: number, block: number): void {
  c.localGet(n).localGet(block).localGet(n).localGet(block).op(Op.i32LtU, SELECT).localSet(m);
}

/**
 * An element-wise loop over n elements: `pair(off)` handles elements at byte offset off (two
 * lanes), `single()` the last odd one. Four elements per iteration, then a pair, then a single.
 * `end` is a scratch i32 local, `drive` the pointer compared against it.
 */
export function elementwise(c: CodeBuilder, ptrs: readonly number[], drive: number, n: number, end: number, pair: (off: number) => void, single: () => void): void {
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
