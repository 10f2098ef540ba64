/**
 * The element-wise kernels of the host module: axpy (y = a·x, y += a·x), axpy4, axpby2, scale,
 * multiply, fill and copy — each element by one fixed expression, f64x2 SIMD with a scalar tail.
 * @module
 */
import { CodeBuilder, type FunctionSpec, Op, SimdOp } from '../../csr/wasm/module-bytes';
import { elementwise, F64_MUL, f64, i32, splat, v128, v128Store } from './codegen';

/** axpy0(a, x, y, n): y = a·x.  axpy1: y = y + a·x. */
export function axpy(add: boolean): FunctionSpec {
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
export function axpy4(): FunctionSpec {
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
export function axpby2(): FunctionSpec {
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
export function scale(): FunctionSpec {
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
export function multiply(): FunctionSpec {
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
 * fill(value, y, n): y[i] = value. In wasm because TypedArray.fill on a SharedArrayBuffer takes
 * V8's slow path (5–8× a plain array's; measured 40–70 µs against 6–9 µs for 16 863 elements).
 */
export function fill(): FunctionSpec {
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
export function copy(): FunctionSpec {
  const [DST, SRC, N] = [0, 1, 2];
  const c = new CodeBuilder();
  c.localGet(DST).localGet(SRC).localGet(N).i32Const(3).op(Op.i32Shl).op(0xfc, 0x0a, 0x00, 0x00);
  return { name: 'copy', params: [i32, i32, i32], results: [], locals: [], body: c };
}
