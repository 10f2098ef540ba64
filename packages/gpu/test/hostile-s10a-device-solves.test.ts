/**
 * Session 10 hunt, device solver cases that were found sound (kept as regression tests): two
 * solves at once on one device, an onIteration callback that throws, an operator disposed while
 * a solve on it runs, an aborted signal, x0 with NaN, a singular SPD-looking matrix (b outside
 * its range) in CG and GMRES, eigsMixed with k = n − 1 and k = n.
 */
import { csrSpmv, type CsrMatrix, generators as g, HostOperator, InvalidParameterError } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { cg, eigsMixed, gmres } from '../../solvers/src/index';
import { gpuOperatorFromCsr, GpuVectorSpace, UseAfterDisposeError } from '../src/index';
import { testContext, trueRelative } from './helpers';

afterAll(async () => (await testContext()).dispose());

const a = g.poisson2d(16);

/** The path graph's Laplacian (singular: A·1 = 0), n rows. */
function pathLaplacian(n: number): CsrMatrix {
  const rowPtr = [0];
  const colIdx: number[] = [];
  const values: number[] = [];
  for (let i = 0; i < n; i++) {
    const nb = [i - 1, i + 1].filter((j) => j >= 0 && j < n);
    for (const j of [...nb, i].sort((p, q) => p - q)) {
      colIdx.push(j);
      values.push(j === i ? nb.length : -1);
    }
    rowPtr.push(colIdx.length);
  }
  return { rows: n, cols: n, rowPtr: Int32Array.from(rowPtr), colIdx: Int32Array.from(colIdx), values: Float64Array.from(values) } as unknown as CsrMatrix;
}

describe('device solves under hostile use', () => {
  it('two CG solves at once (Promise.all), on two operators and on the same one: each its own right x', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const x1 = Float64Array.from({ length: a.rows }, (_, i) => 1 + (i % 7));
    const x2 = Float64Array.from({ length: a.rows }, (_, i) => 2 - (i % 3));
    const [b1, b2] = [csrSpmv(a, x1), csrSpmv(a, x2)];
    const o1 = gpuOperatorFromCsr(ctx, a);
    const o2 = gpuOperatorFromCsr(ctx, a, { kernel: 'csr-scalar' });
    for (const pair of [[o1, o2], [o1, o1]]) {
      const [r1, r2] = await Promise.all([cg(space, pair[0]!, space.fromArray(b1), { rtol: 1e-5 }), cg(space, pair[1]!, space.fromArray(b2), { rtol: 1e-5 })]);
      expect(r1.converged && r2.converged).toBe(true);
      expect(trueRelative(a, await space.toArray(r1.x), b1)).toBeLessThan(1e-4);
      expect(trueRelative(a, await space.toArray(r2.x), b2)).toBeLessThan(1e-4);
    }
    o1.dispose();
    o2.dispose();
  });

  it("an onIteration that throws: the caller's error comes out as it is, and the next solve works", async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const op = gpuOperatorFromCsr(ctx, a);
    const b = space.fromArray(csrSpmv(a, new Float64Array(a.rows).fill(1)));
    const boom = new Error('user boom');
    await expect(cg(space, op, b, { checkEvery: 1, onIteration: () => { throw boom; } })).rejects.toBe(boom);
    await expect(gmres(space, op, b, { checkEvery: 1, onIteration: () => { throw boom; } })).rejects.toBe(boom);
    expect((await cg(space, op, b, { rtol: 1e-5 })).converged).toBe(true);
    op.dispose();
  });

  it('the operator disposed in the middle of its solve: UseAfterDisposeError, not a result', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const op = gpuOperatorFromCsr(ctx, a);
    const b = space.fromArray(csrSpmv(a, new Float64Array(a.rows).fill(1)));
    await expect(cg(space, op, b, { rtol: 1e-9, checkEvery: 1, onIteration: (i) => void (i.iteration === 3 && op.dispose()) })).rejects.toThrow(UseAfterDisposeError);
  });

  it("an aborted signal: 'stopped' with the true residual; x0 with NaN: 'non-finite' naming x0 (cg, gmres)", async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const op = gpuOperatorFromCsr(ctx, a);
    const bh = csrSpmv(a, new Float64Array(a.rows).fill(1));
    const ac = new AbortController();
    const r = await cg(space, op, space.fromArray(bh), { rtol: 1e-9, checkEvery: 1, signal: ac.signal, onIteration: (i) => void (i.iteration === 4 && ac.abort()) });
    expect(r.reason).toBe('stopped');
    expect(Math.abs(r.trueResidual / r.bNorm - trueRelative(a, await space.toArray(r.x), bh))).toBeLessThan(1e-5);
    const x0 = new Float64Array(a.rows);
    x0[5] = Number.NaN;
    for (const solve of [cg, gmres]) {
      const s = await solve(space, op, space.fromArray(bh), { x0: space.fromArray(x0) });
      expect(s.reason).toBe('non-finite');
      expect(s.converged).toBe(false);
    }
    op.dispose();
  });

  it('a singular SPD-looking matrix with b outside its range: never converged (cg, gmres)', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const l = pathLaplacian(200);
    const op = gpuOperatorFromCsr(ctx, l);
    const b = new Float64Array(200).fill(1); // ⟂ to the range (the range is ⟂ to 1)
    for (const solve of [cg, gmres]) {
      const r = await solve(space, op, space.fromArray(b), { rtol: 1e-6, maxIterations: 2000 });
      expect(r.converged).toBe(false);
      expect(r.trueResidual / r.bNorm).toBeGreaterThan(0.5);
    }
    op.dispose();
  });

  it('eigsMixed with k = n − 1 and k = n: every eigenvalue right; k = n + 1 refused', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const small = g.poisson2d(3); // n = 9
    const want: number[] = [];
    for (let i = 1; i <= 3; i++) for (let j = 1; j <= 3; j++) want.push(4 - 2 * Math.cos((i * Math.PI) / 4) - 2 * Math.cos((j * Math.PI) / 4));
    want.sort((p, q) => p - q);
    const op = gpuOperatorFromCsr(ctx, small);
    for (const k of [8, 9]) {
      for (const method of ['lanczos', 'lobpcg'] as const) {
        const r = await eigsMixed({ k, method, fastOperator: op, fastSpace: space, hostOperator: HostOperator.fromCsr(small) });
        expect(r.converged, `${method} k=${k}`).toBe(true);
        expect(r.values.length).toBe(k);
        r.values.forEach((v, i) => {
          expect(Math.abs(v - want[i]!), `${method} k=${k} λ${i}`).toBeLessThan(1e-8);
        });
      }
    }
    await expect(eigsMixed({ k: 10, method: 'lanczos', fastOperator: op, fastSpace: space, hostOperator: HostOperator.fromCsr(small) })).rejects.toThrow(InvalidParameterError);
    op.dispose();
  });
});
