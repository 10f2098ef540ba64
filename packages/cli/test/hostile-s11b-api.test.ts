/**
 * Session 11 hostile inputs to the one-call API. A bigint entry of b beyond float64's range
 * (10n ** 400n) became Infinity in the conversion, after the finiteness check of number entries:
 * the solve ended 'non-finite' with x = 0. An ml-matrix-like input whose get() returned strings or
 * booleans was converted without a word ('4' → 4, true → 1), while fromMathjs refused the same.
 * `solve('gen:poisson2d:10', …)` (the command's spec) failed as a missing file of that name.
 * Option objects that are Proxies or class instances, and getters, were checked and are fine.
 */
import { generators as g } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { eigsh, fromMlMatrix, solve } from '../src/api';

const A = g.poisson2d(4);
const cpu = { backend: 'cpu' as const };

describe('b as bigints', () => {
  it('a bigint beyond float64 range: InvalidParameterError naming b[i] (was reason non-finite, x = 0)', async () => {
    const b: bigint[] = Array.from({ length: A.rows }, () => 1n);
    b[3] = -(10n ** 400n);
    await expect(solve(A, b as unknown as number[], cpu)).rejects.toThrow(/b\[3\]: expected a finite number \(a bigint within float64 range\), got a bigint of 401 digits/);
  });
  it('bigints within range still solve (the same x as numbers)', async () => {
    const r = await solve(A, Array.from({ length: A.rows }, () => 2n) as unknown as number[], cpu);
    const s = await solve(A, new Float64Array(A.rows).fill(2), cpu);
    expect(r.converged).toBe(true);
    expect(Array.from(r.x)).toEqual(Array.from(s.x));
  });
});

describe('ml-matrix-like entries that are not numbers', () => {
  const like = (get: (i: number, j: number) => unknown) => ({ rows: 2, columns: 2, get: get as (i: number, j: number) => number });
  it("a string entry ('4'): refused naming its position (was converted to 4)", () => {
    expect(() => fromMlMatrix(like((i, j) => (i === j ? '4' : 0)))).toThrow(/fromMlMatrix: expected number entries, got string at \(0, 0\)/);
  });
  it('a boolean entry (true): refused (was converted to 1)', async () => {
    await expect(solve(like((i, j) => (i === j ? 4 : i === 1 ? true : 0)), [1, 1], cpu)).rejects.toThrow(/got boolean at \(1, 0\)/);
  });
  it('undefined or null: named as such (was "expected a finite value, got NaN")', () => {
    expect(() => fromMlMatrix(like(() => undefined))).toThrow(/got undefined at \(0, 0\)/);
    expect(() => fromMlMatrix(like(() => null))).toThrow(/got null at \(0, 0\)/);
  });
});

describe('option objects of other shapes (fine already)', () => {
  it('a Proxy and a class instance are read as their properties; a throwing getter propagates its own error', async () => {
    expect((await solve(A, new Float64Array(A.rows).fill(1), new Proxy({ backend: 'cpu' as const }, {}))).converged).toBe(true);
    const opts = new (class {
      backend = 'cpu' as const;
    })();
    expect((await solve(A, new Float64Array(A.rows).fill(1), opts)).converged).toBe(true);
    const throwing = {
      backend: 'cpu' as const,
      get rtol(): number {
        throw new Error('the caller getter');
      },
    };
    await expect(solve(A, new Float64Array(A.rows).fill(1), throwing)).rejects.toThrow('the caller getter');
  });
});

describe("the command's gen: specs given to the API", () => {
  it("solve('gen:poisson2d:10', …) and eigsh: InvalidParameterError pointing to generators (was ENOENT for a file of that name)", async () => {
    await expect(solve('gen:poisson2d:10', new Float64Array(100).fill(1), cpu)).rejects.toThrow(/parameter A: expected a Matrix Market path \(the 'gen:' specs are the gpusparse command's: .*generators\.poisson2d\(300\)\), got 'gen:poisson2d:10'/);
    await expect(eigsh('gen:poisson2d:10', 2, cpu)).rejects.toThrow(/'gen:' specs/);
  });
  it("an empty path: named as an empty string (was \":0: … ENOENT … open ''\")", async () => {
    await expect(solve('', [1], cpu)).rejects.toThrow(/expected a Matrix Market path, got '' \(an empty string\)/);
  });
});
