import { csrFromDense, csrSpmv, generators, HostOperator, HostVectorSpace, InvalidMatrixError, NotSupportedError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { bicg, blockJacobi, blockJacobiFor, blockJacobiInverse, cg, factorBlock, gmres, identityPreconditioner, jacobi, ZeroPivotError } from '../src/index';
import { badlyScaled, convectionDiffusion, denseSolve, loadShared, norm, residual64, rhs } from './krylov-matrices';

const space = new HostVectorSpace();

describe('identity and Jacobi', () => {
  it('identity: pcg with M = I takes the same iterations as cg', async () => {
    const a = generators.poisson2d(8);
    const op = HostOperator.fromCsr(a);
    const b = rhs(64);
    const plain = await cg(space, op, space.fromArray(b), { rtol: 1e-10, checkEvery: 1 });
    const pre = await cg(space, op, space.fromArray(b), { rtol: 1e-10, checkEvery: 1, preconditioner: identityPreconditioner(space, 64) });
    expect(pre.iterations).toBe(plain.iterations);
    expect(pre.stats.precondApplies).toBeGreaterThan(0);
  });

  it('jacobi applies D⁻¹ exactly and is symmetric', () => {
    const a = csrFromDense([
      [2, 1, 0],
      [0, 4, 0],
      [1, 0, -8],
    ]);
    const m = jacobi(space, HostOperator.fromCsr(a));
    const y = new Float64Array(3);
    m.apply(Float64Array.of(2, 4, 8), y);
    expect(Array.from(y)).toEqual([1, 1, -1]);
    m.applyTranspose!(Float64Array.of(2, 4, 8), y);
    expect(Array.from(y)).toEqual([1, 1, -1]);
    m.applyScaled(2, Float64Array.of(2, 4, 8), 1, y);
    expect(Array.from(y)).toEqual([3, 3, -3]);
    expect(Array.from(jacobi(space, Float64Array.of(4, 2)).diagonal!())).toEqual([0.25, 0.5]);
  });

  it('jacobi: a zero diagonal entry throws ZeroPivotError naming the row', () => {
    const a = csrFromDense([
      [1, 1, 0],
      [1, 0, 1],
      [0, 1, 1],
    ]);
    expect(() => jacobi(space, HostOperator.fromCsr(a))).toThrow(ZeroPivotError);
    expect(() => jacobi(space, HostOperator.fromCsr(a))).toThrow(/row 1: expected a non-zero finite pivot, got 0/);
    expect(() => jacobi(space, HostOperator.fromCsr(a))).toThrow(InvalidMatrixError);
    const noDiag = { rows: 2, cols: 2, label: 'fn', apply: () => {}, applyScaled: () => {} };
    expect(() => jacobi(space, noDiag)).toThrow(NotSupportedError);
  });

  it('jacobi removes bad scaling: far fewer CG iterations on D·A·D', async () => {
    const a = badlyScaled(generators.poisson2d(10), 3);
    const op = HostOperator.fromCsr(a);
    const b = rhs(100);
    const plain = await cg(space, op, space.fromArray(b), { rtol: 1e-8, maxIterations: 5000 });
    const pre = await cg(space, op, space.fromArray(b), { rtol: 1e-8, preconditioner: jacobi(space, op) });
    expect(pre.converged).toBe(true);
    expect(residual64(a, pre.x, b).r).toBeLessThanOrEqual(1e-8 * norm(b) * 1.001);
    expect(pre.iterations * 3).toBeLessThan(plain.iterations);
  });
});

describe('block Jacobi', () => {
  it('factorBlock: Cholesky for SPD blocks, pivoted LU otherwise; solve and solveTranspose match dense', () => {
    const spd = [
      [4, 1, 0],
      [1, 3, 1],
      [0, 1, 2],
    ];
    const f = factorBlock(spd, 0, 'auto');
    expect(f.kind).toBe('cholesky');
    const x = Float64Array.of(1, 2, 3);
    f.solve(x);
    const back = csrSpmv(csrFromDense(spd), x);
    expect(norm(back.map((v, i) => v - [1, 2, 3][i]!))).toBeLessThan(1e-14);

    // a zero leading entry needs pivoting
    const ns = [
      [0, 2, 1],
      [3, 1, 0],
      [1, 0, 5],
    ];
    const g = factorBlock(ns, 10, 'auto');
    expect(g.kind).toBe('lu');
    const y = Float64Array.of(1, -1, 2);
    g.solve(y);
    expect(norm(csrSpmv(csrFromDense(ns), y).map((v, i) => v - [1, -1, 2][i]!))).toBeLessThan(1e-14);
    const z = Float64Array.of(1, -1, 2);
    g.solveTranspose(z);
    const nsT = ns.map((_, i) => ns.map((row) => row[i]!));
    expect(norm(csrSpmv(csrFromDense(nsT), z).map((v, i) => v - [1, -1, 2][i]!))).toBeLessThan(1e-14);
  });

  it('a singular block throws ZeroPivotError naming its rows', () => {
    const a = csrFromDense([
      [1, 2, 0, 0],
      [2, 4, 0, 0],
      [0, 0, 1, 0],
      [0, 0, 0, 1],
    ]);
    expect(() => blockJacobi(a, { blockSize: 2 })).toThrow(/rows 0\.\.1: row 1/);
    expect(() => blockJacobi(a, { blockSize: 2, factorization: 'cholesky' })).toThrow(ZeroPivotError);
    expect(() => blockJacobi(a, { blockSize: 0 })).toThrow(/blockSize/);
  });

  it('blockSize = n is the exact inverse: one CG iteration', async () => {
    const a = generators.poisson2d(5);
    const res = await cg(space, HostOperator.fromCsr(a), space.fromArray(rhs(25)), { rtol: 1e-10, preconditioner: blockJacobi(a, { blockSize: 25 }) });
    expect(res.converged).toBe(true);
    expect(res.iterations).toBe(1);
  });

  it('blockJacobiInverse times each diagonal block is the identity; blockJacobiFor matches the host operator', () => {
    const a = convectionDiffusion(6, 2); // nonsymmetric blocks → LU
    const inv = blockJacobiInverse(a, { blockSize: 4 });
    expect(inv.rowPtr[1]).toBe(4);
    expect(inv.rowPtr[36]).toBe(9 * 16);
    const host = blockJacobi(a, { blockSize: 4 });
    const viaFactory = blockJacobiFor(a, { blockSize: 4, makeOperator: (m) => HostOperator.fromCsr(m) });
    const x = rhs(36, 3);
    const y1 = new Float64Array(36);
    const y2 = new Float64Array(36);
    host.apply(x, y1);
    viaFactory.apply(x, y2);
    expect(norm(y1.map((v, i) => v - y2[i]!))).toBeLessThan(1e-12 * norm(y1));
    // block 0 of A times block 0 of the inverse
    const blockA = [0, 1, 2, 3].map((i) => [0, 1, 2, 3].map((j) => {
      for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) if (a.colIdx[k] === j) return a.values[k]!;
      return 0;
    }));
    const e = Float64Array.of(0, 0, 1, 0);
    const col = denseSolve(csrFromDense(blockA), e);
    for (let i = 0; i < 4; i++) expect(inv.values[i * 4 + 2]).toBeCloseTo(col[i]!, 13);
  });

  it('block Jacobi (6 dof per node) beats Jacobi on bcsstk05; works with GMRES and BiCG', async () => {
    const a = await loadShared('bcsstk05.mtx');
    const op = HostOperator.fromCsr(a);
    const b = rhs(a.rows);
    const opts = { rtol: 1e-8, maxIterations: 5000 };
    const jac = await cg(space, op, space.fromArray(b), { ...opts, preconditioner: jacobi(space, op) });
    const blk = await cg(space, op, space.fromArray(b), { ...opts, preconditioner: blockJacobi(a, { blockSize: 6 }) });
    expect(jac.converged && blk.converged).toBe(true);
    expect(blk.iterations).toBeLessThan(jac.iterations);
    expect(residual64(a, blk.x, b).r).toBeLessThanOrEqual(1e-8 * norm(b) * 1.001);
    const g = await gmres(space, op, space.fromArray(b), { ...opts, restart: 50, preconditioner: blockJacobi(a, { blockSize: 6 }) });
    expect(g.converged).toBe(true);
    const c = convectionDiffusion(8, 2);
    const bc = rhs(64);
    const bi = await bicg(space, HostOperator.fromCsr(c), space.fromArray(bc), { rtol: 1e-10, preconditioner: blockJacobi(c, { blockSize: 8 }) });
    expect(bi.converged).toBe(true);
    expect(residual64(c, bi.x, bc).r).toBeLessThanOrEqual(1e-10 * norm(bc) * 1.001);
  });
});
