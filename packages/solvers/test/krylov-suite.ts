/**
 * The Krylov solver suite, parameterised by a backend (a vector space and an operator factory),
 * so that the same tests run on HostVectorSpace (float64), the float32 host emulation, and the
 * GPU vector space (packages/gpu imports this file). Every answer is checked in float64 against
 * the original matrix.
 * @module
 */
import { type CsrMatrix, DimensionMismatchError, generators, type LinearOperator, NotSupportedError, type VectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { bicg, bicgstab, cg, gmres, jacobi, type SolveOptions, type SolveResult } from '../src/index';
import { badlyScaled, convectionDiffusion, denseInverseCsr, denseSolve, loadShared, norm, residual64, rhs, shiftedPoisson } from './krylov-matrices';

/** What the suite needs from a backend. */
export interface KrylovBackend<V, S> {
  name: string;
  makeSpace(): VectorSpace<V, S>;
  makeOp(a: CsrMatrix, space: VectorSpace<V, S>): LinearOperator<V>;
  /** Tolerance for convergence tests (default 1e-8 for f64, 1e-4 for f32). */
  rtol?: number;
}

type Solver = <V, S>(space: VectorSpace<V, S>, op: LinearOperator<V>, b: V, o?: SolveOptions<V>) => Promise<SolveResult<V>>;
const solvers: Record<string, Solver> = { cg, gmres, bicgstab, bicg };

/** Register the suite for one backend. */
export function krylovSuite<V, S>(backend: KrylovBackend<V, S>): void {
  const eps = (space: VectorSpace<V, S>) => (space.precision === 'f32' ? 2 ** -24 : 2 ** -53);
  const rtolOf = (space: VectorSpace<V, S>) => backend.rtol ?? (space.precision === 'f32' ? 1e-4 : 1e-8);

  /** Solve and check the answer in float64: converged, residual within tolerance, reported residual honest. */
  async function solveAndCheck(name: string, a: CsrMatrix, opts: SolveOptions<V> & Record<string, unknown> = {}, bArr = rhs(a.rows)) {
    const space = backend.makeSpace();
    const op = backend.makeOp(a, space);
    const rtol = (opts.rtol as number | undefined) ?? rtolOf(space);
    const res = await solvers[name]!(space, op, space.fromArray(bArr), { maxIterations: 3000, ...opts, rtol });
    const x = await space.toArray(res.x);
    const { r, scale } = residual64(a, x, bArr);
    const bn = norm(bArr);
    const rounding = 30 * eps(space) * scale;
    expect(res.reason, `${name}: ${res.detail ?? ''}`).toBe('converged');
    expect(res.converged).toBe(true);
    expect(r).toBeLessThanOrEqual(rtol * bn * 1.001 + rounding);
    expect(Math.abs(res.trueResidual - r)).toBeLessThanOrEqual(0.01 * r + rounding);
    expect(res.stats.matvecs).toBeGreaterThan(0);
    return { res, x, r, bn };
  }

  describe(`krylov suite on ${backend.name}`, () => {
    const all = ['cg', 'gmres', 'bicgstab', 'bicg'];

    for (const name of all) {
      it(`${name}: SPD poisson2d(10) matches the float64 dense solution`, async () => {
        const a = generators.poisson2d(10);
        const b = rhs(a.rows);
        const { x } = await solveAndCheck(name, a, {}, b);
        const ref = denseSolve(a, b);
        const err = norm(x.map((v, i) => v - ref[i]!)) / norm(ref);
        // κ(poisson2d(10)) ≈ 48: the forward error is at most κ times the relative residual
        expect(err).toBeLessThanOrEqual(100 * rtolOf(backend.makeSpace()));
      });
    }

    for (const name of ['gmres', 'bicgstab', 'bicg']) {
      it(`${name}: nonsymmetric convection–diffusion and banded matrices`, async () => {
        await solveAndCheck(name, convectionDiffusion(10, 1.5));
        await solveAndCheck(name, generators.banded(120, 2, 3, { spd: true }));
      });
      it(`${name}: symmetric indefinite poisson2d(8) − 1.3·I`, async () => {
        await solveAndCheck(name, shiftedPoisson(8, 1.3), { restart: 64 });
      });
    }

    it('cg on an indefinite matrix either converges honestly or reports why it stopped', async () => {
      const a = shiftedPoisson(8, 1.3);
      const space = backend.makeSpace();
      const b = rhs(a.rows);
      const res = await cg(space, backend.makeOp(a, space), space.fromArray(b), { rtol: rtolOf(space), maxIterations: 500 });
      const { r } = residual64(a, await space.toArray(res.x), b);
      if (res.converged) expect(r).toBeLessThanOrEqual(rtolOf(space) * norm(b) * 1.01 + 1e-5 * norm(b) * (space.precision === 'f32' ? 1 : 0));
      else expect(['breakdown', 'max-iterations']).toContain(res.reason);
    });

    it('ill-conditioned: laplacian1d(100) with every solver, badly scaled poisson with Jacobi-PCG', async () => {
      for (const name of all) await solveAndCheck(name, generators.laplacian1d(100), { restart: 100 });
      const a = badlyScaled(generators.poisson2d(8), 2);
      const space = backend.makeSpace();
      const plain = await solveAndCheck('cg', a);
      const pre = await solveAndCheck('cg', a, { preconditioner: jacobi(space, backend.makeOp(a, space)) });
      expect(pre.res.iterations).toBeLessThan(plain.res.iterations);
      expect(pre.res.method).toBe('pcg');
    });

    it('real SPD matrices bcsstk01 / bcsstk05 with Jacobi-PCG and GMRES', async () => {
      for (const file of ['bcsstk01.mtx', 'bcsstk05.mtx']) {
        const a = await loadShared(file);
        const space = backend.makeSpace();
        const tight = space.precision === 'f32' ? 1e-3 : 1e-8;
        await solveAndCheck('cg', a, { preconditioner: jacobi(space, backend.makeOp(a, space)), rtol: tight });
        await solveAndCheck('gmres', a, { preconditioner: jacobi(space, backend.makeOp(a, space)), rtol: tight, restart: 60 });
      }
    });

    for (const name of all) {
      it(`${name}: an exact-inverse preconditioner converges in ≤ 3 operator applications`, async () => {
        const a = generators.poisson2d(5);
        const space = backend.makeSpace();
        const m = backend.makeOp(denseInverseCsr(a), space);
        const { res } = await solveAndCheck(name, a, { preconditioner: m, checkEvery: 8 });
        expect(res.stats.matvecs).toBeLessThanOrEqual(3);
        // BiCG applies M⁻¹ and M⁻ᵀ once each per iteration
        expect(res.stats.precondApplies).toBeLessThanOrEqual(name === 'bicg' ? 4 : 3);
        expect(res.iterations).toBe(1);
      });

      it(`${name}: zero right-hand side returns x = 0 at once`, async () => {
        const space = backend.makeSpace();
        const a = generators.poisson2d(4);
        const x0 = space.fromArray(rhs(16));
        const res = await solvers[name]!(space, backend.makeOp(a, space), space.create(16), { x0 });
        expect(res.converged).toBe(true);
        expect(res.iterations).toBe(0);
        expect(res.stats.matvecs).toBe(0);
        expect(Array.from(await space.toArray(res.x))).toEqual(new Array(16).fill(0));
      });

      it(`${name}: x0 is not mutated and a good x0 helps`, async () => {
        const space = backend.makeSpace();
        const a = generators.poisson2d(6);
        const b = rhs(36);
        const guess = denseSolve(a, b).map((v, i) => v + 1e-3 * Math.sin(i));
        const x0 = space.fromArray(guess);
        const before = await space.toArray(x0);
        const res = await solvers[name]!(space, backend.makeOp(a, space), space.fromArray(b), { x0, rtol: rtolOf(space) });
        expect(res.converged).toBe(true);
        expect(res.x).not.toBe(x0);
        expect(Array.from(await space.toArray(x0))).toEqual(Array.from(before));
      });

      it(`${name}: NaN in b gives reason 'non-finite', not an exception`, async () => {
        const space = backend.makeSpace();
        const b = rhs(16);
        b[3] = Number.NaN;
        const res = await solvers[name]!(space, backend.makeOp(generators.poisson2d(4), space), space.fromArray(b));
        expect(res.reason).toBe('non-finite');
        expect(res.converged).toBe(false);
        expect(res.detail).toMatch(/b contains non-finite/);
      });

      it(`${name}: an operator that starts returning NaN is reported as 'non-finite' with a finite x`, async () => {
        const space = backend.makeSpace();
        const a = generators.poisson2d(8);
        const inner = backend.makeOp(a, space);
        let calls = 0;
        const op: LinearOperator<V> = {
          rows: inner.rows,
          cols: inner.cols,
          label: 'nan-after-5',
          apply(x, y) {
            inner.apply(x, y);
            if (++calls > 5) space.fill(y, Number.NaN);
          },
          applyScaled: (al, x, be, y) => inner.applyScaled(al, x, be, y),
          applyTranspose(x, y) {
            inner.applyTranspose!(x, y);
            if (++calls > 5) space.fill(y, Number.NaN);
          },
        };
        const res = await solvers[name]!(space, op, space.fromArray(rhs(64)), { rtol: 1e-12, checkEvery: 8 });
        expect(res.reason).toBe('non-finite');
        expect(res.detail).toMatch(/iteration \d+/);
        expect((await space.toArray(res.x)).every(Number.isFinite)).toBe(true);
      });

      it(`${name}: onIteration returning false and an AbortSignal stop the solve`, async () => {
        const space = backend.makeSpace();
        const a = generators.poisson2d(12);
        const op = backend.makeOp(a, space);
        const b = space.fromArray(rhs(144));
        const seen: number[] = [];
        const res = await solvers[name]!(space, op, b, {
          rtol: 1e-12,
          checkEvery: 4,
          onIteration: (info) => {
            seen.push(info.iteration);
            return info.iteration < 8;
          },
        });
        expect(res.reason).toBe('stopped');
        expect(res.iterations).toBe(8);
        expect(seen).toEqual([1, 4, 8]);
        expect(Number.isFinite(res.trueResidual)).toBe(true);

        const ctl = new AbortController();
        ctl.abort();
        const pre = await solvers[name]!(space, op, b, { signal: ctl.signal });
        expect(pre.reason).toBe('stopped');
        expect(pre.iterations).toBe(0);

        const ctl2 = new AbortController();
        const mid = await solvers[name]!(space, op, b, {
          rtol: 1e-12,
          checkEvery: 8, // callbacks at 1, 8, 16, …: the abort at 8 stops by the next iteration
          signal: ctl2.signal,
          onIteration: (info) => {
            if (info.iteration >= 8) ctl2.abort();
          },
        });
        expect(mid.reason).toBe('stopped');
        expect(mid.iterations).toBeLessThanOrEqual(9);
      });

      it(`${name}: checks read back every checkEvery iterations`, async () => {
        const space = backend.makeSpace();
        const a = generators.poisson2d(12);
        const res = await solvers[name]!(space, backend.makeOp(a, space), space.fromArray(rhs(144)), { rtol: rtolOf(space), checkEvery: 8 });
        expect(res.converged).toBe(true);
        expect(res.iterations).toBeGreaterThan(16);
        // one per check, one for ‖b‖, one for the true residual, one per GMRES restart
        expect(res.stats.readbacks).toBeLessThanOrEqual(Math.ceil(res.iterations / 8) + 8);
        expect(res.history[0]!.iteration).toBe(0);
      });

      it(`${name}: maxIterations stops with 'max-iterations' and an honest residual`, async () => {
        const space = backend.makeSpace();
        const a = generators.poisson2d(12);
        const b = rhs(144);
        const res = await solvers[name]!(space, backend.makeOp(a, space), space.fromArray(b), { rtol: 1e-12, maxIterations: 5 });
        expect(res.reason).toBe('max-iterations');
        expect(res.converged).toBe(false);
        expect(res.iterations).toBe(5);
        const { r, scale } = residual64(a, await space.toArray(res.x), b);
        expect(Math.abs(res.trueResidual - r)).toBeLessThanOrEqual(1e-3 * r + 30 * eps(space) * scale);
        expect(r).toBeLessThan(norm(b));
      });

      it(`${name}: releases every work vector and device scalar it creates`, async () => {
        const base = backend.makeSpace();
        const live = new Set<unknown>();
        const scalars = new Set<unknown>();
        const scalarOps = new Set(['dot', 'norm2', 'multiDot', 'scalar', 'div', 'mul', 'add', 'sub', 'neg', 'sqrt']);
        const space = new Proxy(base, {
          get(t, prop, recv) {
            const v = Reflect.get(t, prop, recv);
            if (typeof v !== 'function') return v;
            if (prop === 'create' || prop === 'fromArray') {
              return (...args: unknown[]) => {
                const out = v.apply(t, args);
                live.add(out);
                return out;
              };
            }
            if (scalarOps.has(prop as string)) {
              return (...args: unknown[]) => {
                const out = v.apply(t, args);
                for (const o of Array.isArray(out) ? out : [out]) scalars.add(o);
                return out;
              };
            }
            if (prop === 'release') {
              return (x: unknown) => {
                live.delete(x);
                scalars.delete(x);
                v.call(t, x);
              };
            }
            return v.bind(t);
          },
        }) as VectorSpace<V, S>;
        const a = generators.poisson2d(12);
        const b = space.fromArray(rhs(144));
        const res = await solvers[name]!(space, backend.makeOp(a, space), b, { rtol: rtolOf(space), checkEvery: 4 });
        expect(res.converged).toBe(true);
        expect(res.iterations).toBeGreaterThanOrEqual(12);
        live.delete(b);
        live.delete(res.x);
        expect(live.size).toBe(0);
        // nothing per iteration may leak: the GPU space has a finite pool of scalar slots
        expect(scalars.size).toBe(0);
      });

      it(`${name}: wrong shapes throw DimensionMismatchError`, async () => {
        const space = backend.makeSpace();
        const op = backend.makeOp(generators.poisson2d(4), space);
        await expect(solvers[name]!(space, op, space.create(15))).rejects.toThrow(DimensionMismatchError);
        await expect(solvers[name]!(space, op, space.create(16), { x0: space.create(3) })).rejects.toThrow(/x0/);
      });
    }

    it('forced breakdowns are reasons with the scalar and the iteration', async () => {
      const space = backend.makeSpace();
      // [[0, 1], [1, 0]] with b = e₀: ⟨p, A·p⟩ = ⟨r̂, A·p⟩ = 0 at the first iteration
      const swap = { format: 'csr', rows: 2, cols: 2, rowPtr: Int32Array.of(0, 1, 2), colIdx: Int32Array.of(1, 0), values: Float64Array.of(1, 1) } as const;
      const b = space.fromArray([1, 0]);
      const expected: Record<string, RegExp> = { cg: /⟨p, A·p⟩ = 0 at iteration 1/, bicgstab: /⟨r̂, v⟩ = 0 at iteration 1/, bicg: /⟨p̂, A·p⟩ = 0 at iteration 1/ };
      for (const name of ['cg', 'bicgstab', 'bicg']) {
        const res = await solvers[name]!(space, backend.makeOp(swap, space), b);
        expect(res.reason, name).toBe('breakdown');
        expect(res.detail).toMatch(expected[name]!);
        expect(Array.from(await space.toArray(res.x))).toEqual([0, 0]);
        expect(res.trueResidual).toBe(1);
      }
      // nilpotent [[0, 1], [0, 0]] with b = e₀: A·v₀ = 0, the least-squares problem is singular
      const nil = { format: 'csr', rows: 2, cols: 2, rowPtr: Int32Array.of(0, 1, 1), colIdx: Int32Array.of(1), values: Float64Array.of(1) } as const;
      const g = await gmres(space, backend.makeOp(nil, space), b);
      expect(g.reason).toBe('breakdown');
      expect(g.detail).toMatch(/H\[0\]\[0\]/);
    });

    it('divergence stops with a reason and returns the best iterate', async () => {
      // random nonsymmetric indefinite matrix: CG's residual estimate explodes within a few dozen iterations
      const a = generators.uniformRandom(100, 100, 5, 3);
      const space = backend.makeSpace();
      const b = rhs(100);
      const res = await cg(space, backend.makeOp(a, space), space.fromArray(b), { rtol: 1e-8, maxIterations: 1000 });
      expect(res.reason).toBe('breakdown');
      expect(res.detail).toMatch(/divergence at iteration \d+/);
      expect(res.iterations).toBeLessThan(200);
      const { r } = residual64(a, await space.toArray(res.x), b);
      expect(r).toBeLessThanOrEqual(norm(b) * 1.0001);
      expect(res.trueResidual).toBeLessThanOrEqual(norm(b) * 1.0001);
    });

    it('an exactly solved half step (A = I) is convergence, not breakdown', async () => {
      const space = backend.makeSpace();
      const n = 20;
      const eye = { format: 'csr', rows: n, cols: n, rowPtr: Int32Array.from({ length: n + 1 }, (_, i) => i), colIdx: Int32Array.from({ length: n }, (_, i) => i), values: new Float64Array(n).fill(1) } as const;
      for (const name of all) {
        const b = rhs(n);
        const res = await solvers[name]!(space, backend.makeOp(eye, space), space.fromArray(b), { rtol: 1e-12 });
        expect(res.reason, `${name}: ${res.detail}`).toBe('converged');
        expect(norm((await space.toArray(res.x)).map((v, i) => v - Math.fround(b[i]!)))).toBeLessThanOrEqual(1e-6 * norm(b));
      }
    });

    it('gmres: mgs, cgs2 and cgs agree; a short restart still converges', async () => {
      const a = convectionDiffusion(8, 1);
      const m1 = await solveAndCheck('gmres', a, { orthogonalization: 'mgs', checkEvery: 1 });
      const m2 = await solveAndCheck('gmres', a, { orthogonalization: 'cgs2', checkEvery: 1 });
      const m3 = await solveAndCheck('gmres', a, { orthogonalization: 'cgs', checkEvery: 1 });
      expect(Math.abs(m1.res.iterations - m2.res.iterations)).toBeLessThanOrEqual(2);
      expect(Math.abs(m3.res.iterations - m2.res.iterations)).toBeLessThanOrEqual(2);
      const short = await solveAndCheck('gmres', a, { restart: 5, checkEvery: 1 });
      expect(short.res.method).toBe('gmres(5)');
      expect(short.res.iterations).toBeGreaterThan(m2.res.iterations);
    });

    it('bicg without applyTranspose throws NotSupportedError naming the operator', async () => {
      const space = backend.makeSpace();
      const inner = backend.makeOp(generators.poisson2d(4), space);
      const op: LinearOperator<V> = { rows: 16, cols: 16, label: 'no-transpose', apply: (x, y) => inner.apply(x, y), applyScaled: (a, x, b, y) => inner.applyScaled(a, x, b, y) };
      await expect(bicg(space, op, space.create(16))).rejects.toThrow(NotSupportedError);
      await expect(bicg(space, op, space.create(16))).rejects.toThrow(/'no-transpose'.*bicgstab or gmres/);
    });
  });
}
