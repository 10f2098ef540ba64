/**
 * The Krylov suite of the float64 host space (packages/solvers/test) on the df64 device space:
 * CG, GMRES, BiCGSTAB and BiCG run unchanged on Df64VectorSpace + Df64CsrOperator with scalars
 * on the device (BiCG's Aᵀ·x: a second df64 operator over the transpose).
 */
import { csrTranspose, type LinearOperator } from '@gpusparse/formats';
import { beforeAll, describe } from 'vitest';
import { krylovSuite } from '../../solvers/test/krylov-suite';
import { Df64CsrOperator, type Df64Vector, Df64VectorSpace } from '../src/index';
import { testContext } from './helpers';

describe('Krylov suite in df64 on WebGPU', () => {
  // built in beforeAll, not while collecting: without an adapter the GPU tier skips these tests,
  // and collecting must not touch the (placeholder) context
  let s: Df64VectorSpace;
  beforeAll(async () => {
    const space = await Df64VectorSpace.of(await testContext());
    if (!space) throw new Error('df64 self-test failed on this adapter: no Df64VectorSpace');
    s = space;
  });
  krylovSuite({
    name: 'webgpu-df64',
    makeSpace: () => s,
    makeOp: (a): LinearOperator<Df64Vector> => {
      const op = Df64CsrOperator.fromCsr(s.d, a);
      const t = Df64CsrOperator.fromCsr(s.d, csrTranspose(a));
      return { rows: op.rows, cols: op.cols, label: op.label, apply: (x, y) => op.apply(x, y), applyScaled: (al, x, be, y) => op.applyScaled(al, x, be, y), applyTranspose: (x, y) => t.apply(x, y), diagonal: op.diagonal };
    },
  });
});
