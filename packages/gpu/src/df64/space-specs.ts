/**
 * The pipelines a {@link Df64VectorSpace} compiles (its vector and scalar operations and the
 * float32 hand-over; with a shape, a Df64CsrOperator's too): the list behind its `prewarmSpecs`.
 * @module
 */
import type { PipelineSpec } from '../device/pipelines';
import { signature } from '../kernels/wgsl/index';
import type { Df64Blas } from './blas';
import { DF_DOT2_BINDINGS, dfDot2Wgsl } from './blas.kernel';
import { Df64CsrOperator } from './csr-operator';
import * as k from './space.kernel';

/**
 * The pipeline specs of a df64 space over `d` whose multi-dots and combines take `g` vectors at
 * a time, plus those of a Df64CsrOperator of `shape` when given.
 * @example ctx.pipelines.prewarm(df64SpaceSpecs(space.d, 8, { rows: n, nnz }))
 */
export function df64SpaceSpecs(d: Df64Blas, g: number, shape?: { rows: number; nnz: number }): PipelineSpec[] {
  const m = d.mode;
  return [
    d.spec('space-scale', () => k.dfScaleWgsl(m), signature(k.SCALE_BINDINGS)),
    d.spec('space-axpby', () => k.dfAxpbyWgsl(m), signature(k.AXPBY_BINDINGS)),
    d.spec('space-multiply', () => k.dfMultiplyWgsl(m), signature(k.MULTIPLY_BINDINGS)),
    d.spec('space-shifted-divide', () => k.dfShiftedDivideWgsl(m), signature(k.SHIFTED_DIVIDE_BINDINGS)),
    d.spec(`space-mdot1-${g}`, () => k.dfMultiDot1Wgsl(m, g), signature(k.multiDotBindings(g))),
    d.spec('dot2', () => dfDot2Wgsl(m), signature(DF_DOT2_BINDINGS)),
    d.spec(`space-combine-${g}`, () => k.dfCombineWgsl(m, g), signature(k.combineBindings(g))),
    d.spec('space-scalar', () => k.dfScalarWgsl(m), signature(k.SCALAR_BINDINGS)),
    d.ewSpec('fromF32'),
    d.ewSpec('toF32'),
    ...(shape ? Df64CsrOperator.prewarmSpecs(d, shape.rows, shape.nnz) : []),
  ];
}
