/**
 * Session 10: a matrix the device cannot hold in float32, given to the library calls. The CLI
 * refused it (session 7), but gpuOperatorFromCsr uploaded 1e39 as Infinity (refinedSolve then
 * ended 'non-finite' blaming b's range; CG 'non-finite' blaming x0) and 1e-40 as zeros (CG
 * "⟨p, A·p⟩ = 0", as if A were singular); the tuner said that no kernel passed verification.
 * Now both calls throw InvalidMatrixError naming the entry and the way out.
 */
import { csrSpmv, type CsrMatrix, generators as g, InvalidMatrixError } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { cg } from '../../solvers/src/index';
import { gpuOperatorFromCsr, GpuVectorSpace, tunedOperator } from '../src/index';
import { testContext, trueRelative } from './helpers';

afterAll(async () => (await testContext()).dispose());

const a = g.poisson2d(8);
const scaled = (s: number): CsrMatrix => ({ ...a, values: a.values.map((v) => v * s) });

describe('a matrix outside float32 range is refused by the device operator builds', () => {
  it('gpuOperatorFromCsr, a value of 1e39: InvalidMatrixError naming row and column', async () => {
    const ctx = await testContext();
    const m = { ...a, values: a.values.slice() };
    m.values[a.rowPtr[5]! + 1] = 1e39;
    expect(() => gpuOperatorFromCsr(ctx, m)).toThrow(InvalidMatrixError);
    expect(() => gpuOperatorFromCsr(ctx, m)).toThrow(/gpuOperatorFromCsr: A\(row 6, column \d+\).*expected \|value\| ≤ 3\.4e38.*got 1e\+39.*scale A and b/);
  });

  it('gpuOperatorFromCsr, every value underflows (A·1e-40): InvalidMatrixError', async () => {
    const ctx = await testContext();
    expect(() => gpuOperatorFromCsr(ctx, scaled(1e-40))).toThrow(/largest \|value\| ≥ 1\.2e-38.*underflows/);
  });

  it('tunedOperator / autotune, A·1e39: InvalidMatrixError before any candidate', async () => {
    const ctx = await testContext();
    await expect(tunedOperator(ctx, scaled(1e39), { warn: () => {}, cache: false })).rejects.toThrow(InvalidMatrixError);
  });

  it('one tiny entry beside normal ones, and A·1e4: accepted, the solve is right', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const m = { ...a, values: a.values.slice() };
    m.values[3] = 1e-42;
    for (const mat of [m, scaled(1e4)]) {
      const op = gpuOperatorFromCsr(ctx, mat);
      const b = csrSpmv(mat, new Float64Array(mat.rows).fill(1));
      const r = await cg(space, op, space.fromArray(b), { rtol: 1e-5 });
      expect(r.converged).toBe(true);
      expect(trueRelative(mat, await space.toArray(r.x), b)).toBeLessThan(1e-4);
      op.dispose();
    }
  });
});
