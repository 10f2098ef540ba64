/**
 * Davidson's start vectors of the CI driver (ci-start.ts): the lowest diagonal unit vectors plus
 * a seeded random part of 1e-3 per entry (the same vectors on every call), spin-adapted starts
 * with 4 spare ones, and the projection applied before the hand-over.
 */
import { describe, expect, it } from 'vitest';
import { startVectors } from '../src/ci-start';
import type { HalfSpaceOperator } from '../src/direct/operator';
import { buildCiSpace } from '../src/determinants/index';
import { readFcidump } from '../src/fcidump/node';
import { dataFile } from '../../../testdata/index';

async function h4() {
  const fd = await readFcidump(dataFile('fcidump', 'H4_sto6g_R1.8_block2.FCIDUMP'));
  const { space } = buildCiSpace(fd, 'fci');
  // a diagonal whose lowest entries are known: 7, 3, 11 lowest in that order
  const diagonal = Float64Array.from({ length: space.size }, (_, i) => 10 + i);
  diagonal[7] = -3;
  diagonal[3] = -2;
  diagonal[11] = -1;
  return { space, diagonal };
}

describe('startVectors', () => {
  it('unit vectors at the lowest diagonal entries plus a seeded random part below 5e-4 per entry', async () => {
    const { space, diagonal } = await h4();
    const a = startVectors({ space, diagonal, kSolve: 3, fromArray: (g) => g });
    const b = startVectors({ space, diagonal, kSolve: 3, fromArray: (g) => g });
    expect(a.initial.length).toBe(3);
    expect(a.spare).toEqual([]);
    [7, 3, 11].forEach((idx, r) => {
      const g = a.initial[r]!;
      expect(g[idx]).toBe(1);
      let rest = 0;
      g.forEach((x, i) => void (i === idx ? 0 : (rest = Math.max(rest, Math.abs(x)))));
      expect(rest).toBeGreaterThan(0);
      expect(rest).toBeLessThanOrEqual(5e-4);
      expect(Array.from(g)).toEqual(Array.from(b.initial[r]!));
    });
  });

  it('spin-adapted starts keep 4 spare vectors; the projection runs on every start', async () => {
    const { space, diagonal } = await h4();
    let projected = 0;
    const s = startVectors({ space, diagonal, kSolve: 2, multiplicity: 1, project: () => void projected++, fromArray: (g) => g });
    expect(s.initial.length).toBe(2);
    expect(s.spare.length).toBe(4);
    expect(projected).toBe(6);
  });

  it('half space, spin-adapted: two projections of random parts for all starts (was one per start), distinct starts', async () => {
    const { space, diagonal } = await h4();
    let projections = 0;
    const half = {
      rows: space.size,
      compress: (g: Float64Array) => Float64Array.from(g),
      spinProject: () => void projections++,
    } as unknown as HalfSpaceOperator;
    const s = startVectors({ space, diagonal, kSolve: 3, multiplicity: 1, half, fromArray: (g) => g });
    expect(s.initial.length + s.spare.length).toBe(7);
    expect(projections).toBe(2);
    const all = [...s.initial, ...s.spare];
    // the random parts differ between starts (a combination of the two with its own coefficients)
    const diff = (a: Float64Array, b: Float64Array) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);
    for (let i = 1; i < all.length; i++) expect(diff(all[i]!, all[i - 1]!)).toBeGreaterThan(0);
    for (const v of all) expect(Math.max(...v.map(Math.abs))).toBeLessThanOrEqual(1 + 1e-3);
  });
});
