/**
 * csrSymmetryDefect (the one-pass symmetry check of assembled Hamiltonians) against a brute-force
 * comparison through the transpose: on small hand-made matrices with a changed value, a missing
 * mirror in either triangle, explicit zeros, and on the assembled N2 STO-3G FCI Hamiltonian; the
 * one-pass fingerprint (csrSymmetryFingerprint) flags exactly the rows of a changed pair, and
 * symmetryOfRows measures them.
 */
import { type CsrMatrix, csrFromTriplets, csrTranspose, InvalidMatrixError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { buildCiSpace } from '../src/determinants/build';
import { readFcidump } from '../src/fcidump/node';
import { assembleHamiltonian } from '../src/hamiltonian/assemble';
import { csrSymmetryDefect, csrSymmetryFingerprint, symmetryOfRows } from '../src/hamiltonian/symmetry-defect';
import { dataFile } from '../../../testdata/index';

/** max |A − Aᵀ| and the count of stored entries whose mirror is not stored, through the transpose. */
function bruteForce(a: CsrMatrix): { maxAbsDiff: number; unmatched: number } {
  const t = csrTranspose(a);
  const at = (m: CsrMatrix, i: number, j: number): number | undefined => {
    for (let k = m.rowPtr[i]!; k < m.rowPtr[i + 1]!; k++) if (m.colIdx[k] === j) return m.values[k]!;
    return undefined;
  };
  let maxAbsDiff = 0;
  let unmatched = 0;
  for (let i = 0; i < a.rows; i++) {
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const j = a.colIdx[k]!;
      if (j === i) continue;
      const mirror = at(t, i, j) === undefined ? undefined : at(a, j, i);
      if (mirror === undefined) unmatched++;
      maxAbsDiff = Math.max(maxAbsDiff, Math.abs(a.values[k]! - (mirror ?? 0)));
    }
  }
  return { maxAbsDiff, unmatched };
}

/** A random symmetric n×n matrix with about `perRow` entries per row, sorted rows. */
function randomSymmetric(n: number, perRow: number, seed: number): CsrMatrix {
  let s = seed;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const t: [number, number, number][] = [];
  for (let i = 0; i < n; i++) {
    t.push([i, i, rand() - 0.5]);
    for (let e = 0; e < perRow / 2; e++) {
      const j = Math.floor(rand() * n);
      if (j === i) continue;
      const v = rand() - 0.5;
      t.push([i, j, v], [j, i, v]);
    }
  }
  // duplicates (the same pair drawn twice) are summed on both sides alike: still symmetric
  return csrFromTriplets(n, n, t.map((x) => x[0]), t.map((x) => x[1]), t.map((x) => x[2]));
}

describe('csrSymmetryDefect', () => {
  it('finds a symmetric matrix symmetric and counts each off-diagonal pair once', () => {
    const a = randomSymmetric(300, 12, 7);
    const d = csrSymmetryDefect(a);
    const offDiagonal = a.rowPtr[a.rows]! - Array.from({ length: a.rows }, (_, i) => i).filter((i) => a.colIdx.subarray(a.rowPtr[i]!, a.rowPtr[i + 1]!).includes(i)).length;
    expect(d).toMatchObject({ unmatched: 0, maxAbsDiff: 0, pairs: offDiagonal / 2 });
    expect(d.maxAbs).toBeGreaterThan(0);
  });

  it('reports the largest value difference and where it is', () => {
    const a = randomSymmetric(200, 10, 3);
    const values = Float64Array.from(a.values);
    // change one upper entry of row 50 by 1e-9 and another of row 120 by 3e-6
    const upper = (i: number) => Array.from({ length: a.rowPtr[i + 1]! - a.rowPtr[i]! }, (_, q) => a.rowPtr[i]! + q).find((k) => a.colIdx[k]! > i)!;
    values[upper(50)]! += 1e-9;
    values[upper(120)]! += 3e-6;
    const b = { ...a, values };
    const d = csrSymmetryDefect(b);
    expect(d.unmatched).toBe(0);
    expect(d.maxAbsDiff).toBeCloseTo(3e-6, 12);
    expect(d.maxAbsDiff).toBe(bruteForce(b).maxAbsDiff);
    expect(d.worst).toMatchObject({ row: 120, col: a.colIdx[upper(120)] });
  });

  it.each(['upper', 'lower'])('finds an entry whose mirror is missing (%s triangle kept)', (kept) => {
    const a = randomSymmetric(150, 8, 11);
    // drop one off-diagonal entry of row 40: its mirror is then unmatched
    const k0 = Array.from({ length: a.rowPtr[41]! - a.rowPtr[40]! }, (_, q) => a.rowPtr[40]! + q).find((k) => (kept === 'upper' ? a.colIdx[k]! < 40 : a.colIdx[k]! > 40))!;
    const col = a.colIdx[k0]!;
    const keep = (k: number) => k !== k0;
    const idx = Array.from({ length: a.rowPtr[a.rows]! }, (_, k) => k).filter(keep);
    const rows = Array.from({ length: a.rows }, (_, i) => Array.from({ length: a.rowPtr[i + 1]! - a.rowPtr[i]! }, () => i)).flat().filter((_, k) => keep(k));
    const b = csrFromTriplets(a.rows, a.cols, rows, idx.map((k) => a.colIdx[k]!), idx.map((k) => a.values[k]!));
    const d = csrSymmetryDefect(b);
    expect(d.unmatched).toBe(1);
    expect(d.firstUnmatched).toMatchObject({ row: col, col: 40, aji: 0 });
    expect(d).toMatchObject(bruteForce(b));
  });

  it('counts an explicit zero without a mirror as unmatched, with difference 0', () => {
    const b: CsrMatrix = { format: 'csr', rows: 3, cols: 3, rowPtr: Int32Array.from([0, 2, 4, 5]), colIdx: Int32Array.from([0, 2, 1, 2, 1]), values: Float64Array.from([1, 0, 2, 5, 5]) };
    const d = csrSymmetryDefect(b);
    expect(d.pairs).toBe(1);
    expect(d.unmatched).toBe(1);
    expect(d.firstUnmatched).toEqual({ row: 0, col: 2, aij: 0, aji: 0 });
    expect(d.maxAbsDiff).toBe(0);
  });

  it('refuses a rectangular matrix and a row with unsorted or repeated columns, naming the row', () => {
    expect(() => csrSymmetryDefect(csrFromTriplets(2, 3, [0], [2], [1]))).toThrow(InvalidMatrixError);
    const unsorted: CsrMatrix = { format: 'csr', rows: 2, cols: 2, rowPtr: Int32Array.from([0, 1, 3]), colIdx: Int32Array.from([1, 1, 0]), values: Float64Array.from([1, 1, 2]) };
    expect(() => csrSymmetryDefect(unsorted)).toThrow(/row 1: expected strictly increasing columns in 0\.\.1, got 0 at entry 2 after 1/);
    const repeated: CsrMatrix = { ...unsorted, colIdx: Int32Array.from([1, 0, 0]) };
    expect(() => csrSymmetryDefect(repeated)).toThrow(/row 1: .* got 0 at entry 2 after 0/);
  });

  it('finds the assembled N2 STO-3G FCI Hamiltonian symmetric to rounding, as the transpose does', async () => {
    const fd = await readFcidump(dataFile('fcidump', 'N2_sto3g_R1.1A_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep: 'isym' });
    const h = await assembleHamiltonian(fcidump, space, { workers: 0 });
    const d = csrSymmetryDefect(h.matrix);
    expect(d.unmatched).toBe(0);
    expect(2 * d.pairs + space.size).toBe(h.matrix.rowPtr[h.matrix.rows]);
    expect(d.maxAbsDiff).toBeLessThanOrEqual(1e-13 * d.maxAbs);
    expect(d).toMatchObject(bruteForce(h.matrix));
  });

  it('fingerprint: no row of a symmetric matrix is flagged, both rows of a changed or missing pair are', () => {
    const a = randomSymmetric(400, 12, 5);
    expect(csrSymmetryFingerprint(a)).toEqual({ mismatchedRows: 0, rows: [] });
    // one ulp on one upper entry of row 77
    const k = Array.from({ length: a.rowPtr[78]! - a.rowPtr[77]! }, (_, q) => a.rowPtr[77]! + q).find((x) => a.colIdx[x]! > 77)!;
    const j = a.colIdx[k]!;
    const values = Float64Array.from(a.values);
    values[k] = values[k]! + Math.abs(values[k]!) * 2 ** -52;
    const b = { ...a, values };
    const f = csrSymmetryFingerprint(b);
    expect(f).toEqual({ mismatchedRows: 2, rows: [77, j].sort((x, y) => x - y) });
    const d = symmetryOfRows(b, f.rows);
    expect(d.unmatched).toBe(0);
    expect(d.maxAbsDiff).toBe(bruteForce(b).maxAbsDiff);
    expect(d.maxAbsDiff).toBeGreaterThan(0);
    // an entry stored without its mirror (value 0.5 at (3, 9), none at (9, 3))
    const t = Array.from({ length: a.rows }, (_, i) => Array.from({ length: a.rowPtr[i + 1]! - a.rowPtr[i]! }, (_, q) => [i, a.colIdx[a.rowPtr[i]! + q]!, a.values[a.rowPtr[i]! + q]!] as const)).flat();
    const kept = t.filter(([i, c]) => !(i === 9 && c === 3) && !(i === 3 && c === 9));
    const c = csrFromTriplets(a.rows, a.cols, [...kept.map((x) => x[0]), 3], [...kept.map((x) => x[1]), 9], [...kept.map((x) => x[2]), 0.5]);
    const g = csrSymmetryFingerprint(c);
    expect(g).toEqual({ mismatchedRows: 2, rows: [3, 9] });
    expect(symmetryOfRows(c, g.rows)).toMatchObject({ unmatched: 1, firstUnmatched: { row: 3, col: 9, aij: 0.5, aji: 0 }, maxAbsDiff: 0.5 });
  });

  it('fingerprint: the assembled N2 STO-3G Hamiltonian is symmetric bit for bit', async () => {
    const fd = await readFcidump(dataFile('fcidump', 'N2_sto3g_R1.1A_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', {});
    const h = await assembleHamiltonian(fcidump, space, { workers: 0 });
    // the product kernel computes H(i, j) and H(j, i) by the same operations: equal bit for bit
    expect(csrSymmetryDefect(h.matrix)).toMatchObject({ unmatched: 0, maxAbsDiff: 0 });
    expect(csrSymmetryFingerprint(h.matrix)).toEqual({ mismatchedRows: 0, rows: [] });
    expect(() => csrSymmetryFingerprint(csrFromTriplets(2, 3, [0], [1], [1]))).toThrow(/expected a square matrix, got 2×3/);
  });
});
