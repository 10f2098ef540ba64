/**
 * Session 10 hostile calls of the one-call API (solve, eigsh): options that were ignored or ran
 * as something else. solve(A, b, { tol: 1e-12 }) (SciPy's name until 1.12) solved to the
 * default 1e-8 — ‖r‖/‖b‖ ≈ 1e-9 here, not 1e-12 — without a word; eigsh(A, 1, { sigma: 3 })
 * (SciPy's shift-invert) returned the smallest eigenvalue, not the one nearest 3; backend 'gpu'
 * or 'CPU' ran as 'auto'; null options threw a TypeError; b with NaN came back 'non-finite'
 * with x = 0 and no index.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CsrMatrix, generators, InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { eigsh, solve } from '../src/api';

const a: CsrMatrix = generators.laplacian1d(30);
const b = new Float64Array(30).fill(1);

describe('option keys the API does not know', () => {
  it("solve { tol: 1e-12 }: refused naming 'rtol' (solved to the default 1e-8 before); { rtol: 1e-12 } reaches it", async () => {
    await expect(solve(a, b, { tol: 1e-12, backend: 'cpu' } as never)).rejects.toThrow(InvalidParameterError);
    await expect(solve(a, b, { tol: 1e-12, backend: 'cpu' } as never)).rejects.toThrow(/solve options\.tol: .*unknown option 'tol': this API calls it 'rtol'/);
    await expect(solve(a, b, { maxiter: 5, backend: 'cpu' } as never)).rejects.toThrow(/this API calls it 'maxIterations'/);
    await expect(solve(a, b, { x0: b, backend: 'cpu' } as never)).rejects.toThrow(/unknown option 'x0': not offered by this API/);
    await expect(solve(a, b, { tolerance: 1e-12, backend: 'cpu' } as never)).rejects.toThrow(/one of the options method, rtol, maxIterations, precond, backend, threads, got an unknown option 'tolerance'/);
    const r = await solve(a, b, { rtol: 1e-12, backend: 'cpu' });
    expect(r.converged).toBe(true);
    expect(r.relativeResidual).toBeLessThan(1e-12);
  });
  it("eigsh { sigma: 3 } (shift-invert: gave the smallest λ) and { rtol } (eigsh's is tol): refused; known keys set to undefined are fine", async () => {
    await expect(eigsh(a, 1, { sigma: 3, backend: 'cpu' } as never)).rejects.toThrow(/eigsh options\.sigma: .*unknown option 'sigma': not offered by this API/);
    await expect(eigsh(a, 1, { rtol: 1e-10, backend: 'cpu' } as never)).rejects.toThrow(/this API calls it 'tol'/);
    const r = await eigsh(a, 1, { which: undefined, tol: undefined, backend: 'cpu' });
    expect(r.values[0]).toBeCloseTo(2 - 2 * Math.cos(Math.PI / 31), 8);
  });
});

describe('options of the wrong kind', () => {
  it('null, an array or a number as the options: InvalidParameterError (null threw "Cannot read properties of null")', async () => {
    for (const bad of [null, [], 5]) {
      await expect(solve(a, b, bad as never), String(bad)).rejects.toThrow(/parameter solve options: expected an object \(or nothing\)/);
      await expect(eigsh(a, 1, bad as never), String(bad)).rejects.toThrow(/parameter eigsh options: expected an object \(or nothing\)/);
    }
  });
  it("backend 'gpu', 'CPU', '' or null (ran as 'auto'): refused naming the three names", async () => {
    for (const bad of ['gpu', 'CPU', '', null]) {
      await expect(solve(a, b, { backend: bad as never }), String(bad)).rejects.toThrow(/solve options\.backend: expected 'auto', 'webgpu' or 'cpu'/);
      await expect(eigsh(a, 1, { backend: bad as never }), String(bad)).rejects.toThrow(/eigsh options\.backend: expected 'auto', 'webgpu' or 'cpu'/);
    }
  });
});

describe('a right-hand side with non-finite entries', () => {
  it("b with NaN / ±Infinity at index 7: InvalidParameterError naming b[7] (was reason 'non-finite', x = 0)", async () => {
    for (const v of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const bad = Float64Array.from(b);
      bad[7] = v;
      await expect(solve(a, bad, { backend: 'cpu' }), String(v)).rejects.toThrow(new RegExp(`parameter b\\[7\\]: expected a finite number, got ${v}`));
    }
  });
  it('A null is named as null (was "got object")', async () => {
    await expect(solve(null as never, b)).rejects.toThrow(/got null$/);
  });
});

describe("a Matrix Market path: the reader's warnings reach the result", () => {
  it('summed repeats and a pattern file (as every reader warning) are in stats.warnings of solve and eigsh (they were dropped)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s10b-api-'));
    try {
      const twice = join(dir, 'twice.mtx');
      writeFileSync(twice, '%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n1 1 4\n2 2 4\n3 3 4\n');
      const pattern = join(dir, 'pattern.mtx');
      writeFileSync(pattern, '%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 2\n');
      const r = await solve(twice, [8, 4, 4], { backend: 'cpu' });
      expect(Array.from(r.x)).toEqual([1, 1, 1]); // A(1,1) = 4 + 4: the sum, and now said
      expect(r.stats.warnings).toEqual([`${twice}:2: 1 entry repeats a position given earlier in the file and was summed into it (4 entries read, 3 distinct positions)`]);
      const e = await eigsh(pattern, 1, { backend: 'cpu' });
      expect(e.values[0]).toBeCloseTo(1, 12);
      expect(e.stats.warnings).toEqual([`${pattern}: a pattern file (structure only, no values): every stored entry is taken as 1`]);
      // a clean file adds nothing
      const clean = join(dir, 'clean.mtx');
      writeFileSync(clean, '%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 2\n2 2 2\n');
      expect((await solve(clean, [2, 2], { backend: 'cpu' })).stats.warnings).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
