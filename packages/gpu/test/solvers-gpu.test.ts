/**
 * The solver tier on the GPU vector space: the same Krylov and eigen suites that run on the
 * float64 host space (packages/solvers/test) run here on GpuVectorSpace + GpuOperator, float32
 * on the device with scalars kept there. On lavapipe this takes about a minute.
 */
import { describe } from 'vitest';
import { eigenSuite } from '../../solvers/test/eigen-suite';
import { krylovSuite } from '../../solvers/test/krylov-suite';
import { type GpuContext, gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';
import { testContext } from './helpers';

let ctx: GpuContext | undefined;
const context = async () => (ctx ??= await testContext());

describe('Krylov suite on WebGPU', async () => {
  const c = await context();
  krylovSuite({
    name: 'webgpu-f32',
    makeSpace: () => new GpuVectorSpace(c),
    makeOp: (a) => gpuOperatorFromCsr(c, a, { kernel: 'csr-vector' }),
  });
});

describe('eigen suite on WebGPU', () => {
  eigenSuite(
    async () => {
      const c = await context();
      return { name: 'webgpu-f32', space: new GpuVectorSpace(c), operator: (a) => gpuOperatorFromCsr(c, a, { kernel: 'csr-vector' }) };
    },
    { sizes: 'small' },
  );
});
