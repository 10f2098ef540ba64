import { type CsrMatrix, csrDiagonal, csrSpmv, generators as g, HostOperator, HostVectorSpace, WasmVectorSpace } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { bicgstab, cg, davidson, gmres, lanczos, lobpcg } from '../src/index';

const host = new HostVectorSpace();
const made: WasmVectorSpace[] = [];
function wasm(threads: number): WasmVectorSpace {
  // thresholds of 1: even these small problems are split over the threads
  const s = WasmVectorSpace.create({ threads, parallelMinLength: 1, parallelMinNnz: 1 });
  if (!s) throw new Error('WebAssembly SIMD with shared memory is expected in node 20');
  made.push(s);
  return s;
}
afterAll(() => {
  for (const s of made) s.dispose();
});

/** Non-symmetric, diagonally dominant: uniform random columns plus a dominant diagonal. */
function nonsymmetric(n: number): CsrMatrix {
  const a = g.uniformRandom(n, n, 6, 3);
  const d = g.banded(n, 0, 0, { seed: 1, spd: true });
  const rowPtr = new Int32Array(n + 1);
  const cols: number[] = [];
  const vals: number[] = [];
  for (let i = 0; i < n; i++) {
    let s = 1;
    for (let q = a.rowPtr[i]!; q < a.rowPtr[i + 1]!; q++) {
      if (a.colIdx[q] === i) continue;
      cols.push(a.colIdx[q]!);
      vals.push(a.values[q]!);
      s += Math.abs(a.values[q]!);
    }
    cols.push(i);
    vals.push(s + d.values[i]!);
    rowPtr[i + 1] = cols.length;
  }
  return { ...a, rowPtr, colIdx: Int32Array.from(cols), values: Float64Array.from(vals) };
}

const bits = (a: Float64Array) => Array.from(new BigUint64Array(a.slice().buffer));

describe('Krylov solvers on WasmVectorSpace', () => {
  const spd = g.poisson2d(60);
  const ns = nonsymmetric(9000);
  const cases = [
    ['cg', spd, (s: HostVectorSpace, op: HostOperator | ReturnType<WasmVectorSpace['csrOperator']>, b: Float64Array) => cg(s, op, b, { rtol: 1e-10 })],
    ['gmres(30)', ns, (s: HostVectorSpace, op: HostOperator | ReturnType<WasmVectorSpace['csrOperator']>, b: Float64Array) => gmres(s, op, b, { rtol: 1e-10, restart: 30 })],
    ['bicgstab', ns, (s: HostVectorSpace, op: HostOperator | ReturnType<WasmVectorSpace['csrOperator']>, b: Float64Array) => bicgstab(s, op, b, { rtol: 1e-10 })],
  ] as const;
  for (const [name, a, solve] of cases) {
    it(`${name}: converges to HostVectorSpace's answer; 1 and 2 threads give the same bits`, async () => {
      const b = csrSpmv(a, new Float64Array(a.cols).fill(1), new Float64Array(a.rows));
      const ref = await solve(host, HostOperator.fromCsr(a), host.fromArray(b));
      const runs = [];
      for (const t of [1, 2]) {
        const s = wasm(t);
        const r = await solve(s, s.csrOperator(a), s.fromArray(b));
        expect(r.reason).toBe('converged');
        runs.push({ x: await s.toArray(r.x), it: r.iterations });
      }
      expect(ref.reason).toBe('converged');
      const xr = await host.toArray(ref.x);
      for (let i = 0; i < xr.length; i++) expect(Math.abs(runs[0]!.x[i]! - xr[i]!)).toBeLessThan(1e-8);
      expect(Math.abs(runs[0]!.it - ref.iterations)).toBeLessThanOrEqual(2);
      expect(bits(runs[1]!.x)).toEqual(bits(runs[0]!.x));
      expect(runs[1]!.it).toBe(runs[0]!.it);
    });
  }
});

describe('eigensolvers on WasmVectorSpace', () => {
  const p = g.poisson2d(20);
  // Davidson needs a varied diagonal (its preconditioner): the stencil plus diag(i/10)
  const ci = { ...p, values: p.values.slice() };
  for (let i = 0; i < p.rows; i++) for (let q = p.rowPtr[i]!; q < p.rowPtr[i + 1]!; q++) if (p.colIdx[q] === i) ci.values[q] = p.values[q]! + i / 10;
  it('Lanczos, LOBPCG and Davidson find HostVectorSpace eigenvalues; 2 threads give the same bits', async () => {
    const runs = {
      lanczos: (s: HostVectorSpace, op: HostOperator | ReturnType<WasmVectorSpace['csrOperator']>) => lanczos(op, s, { k: 4, which: 'smallest', tol: 1e-10 }),
      lobpcg: (s: HostVectorSpace, op: HostOperator | ReturnType<WasmVectorSpace['csrOperator']>) => lobpcg(op, s, { k: 4, tol: 1e-9 }),
      davidson: (s: HostVectorSpace, op: HostOperator | ReturnType<WasmVectorSpace['csrOperator']>) => davidson(op, s, { k: 4, diagonal: csrDiagonal(ci), rtol: 1e-9 }),
    };
    for (const [name, run] of Object.entries(runs)) {
      const a = name === 'davidson' ? ci : p;
      const ref = await run(host, HostOperator.fromCsr(a));
      const s1 = wasm(1);
      const s2 = wasm(2);
      const r1 = await run(s1, s1.csrOperator(a));
      const r2 = await run(s2, s2.csrOperator(a));
      expect(ref.converged, name).toBe(true);
      expect(r1.converged, name).toBe(true);
      for (let j = 0; j < 4; j++) expect(Math.abs(r1.values[j]! - ref.values[j]!), name).toBeLessThan(1e-8);
      expect(r2.values, name).toEqual(r1.values);
    }
  });
});
