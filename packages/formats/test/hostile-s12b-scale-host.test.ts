/**
 * Session 12, matrices past one storage binding on the host side. The generators kept one small
 * Int32Array per row until the end (≈ 360 bytes of JavaScript heap a row): poisson3d(250), 15.6 M
 * rows, took 112 s and 5.5 GB (load 17); poisson3d(450), the size whose arrays pass NVIDIA's 2 GiB
 * binding, needed ≈ 33 GB of heap, past Node's default limit. They now write one growing array
 * (6.1 s and 1.47 GB for poisson3d(250)) and give the very same matrices. The eigsh symmetry check
 * used a Map per row (minutes on 10^8 rows); firstAsymmetry searches the mirror entry instead.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type CsrMatrix, csrFromTriplets, firstAsymmetry, generators as g } from '../src/index';

const sha1 = (a: CsrMatrix): string => {
  const h = createHash('sha1');
  for (const x of [a.rowPtr, a.colIdx, a.values] as ArrayBufferView[]) h.update(new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
  return `${h.digest('hex')} ${a.rows}x${a.cols} ${a.values.length}`;
};

describe('generators at scale', () => {
  it('give the same matrices as the per-row build did (hashes taken from it before the change)', () => {
    const cases: [string, () => CsrMatrix][] = [
      ['bc3455d8fcb7ea6c90597b548f38db6f99c1e592 3000x2000 21000', () => g.uniformRandom(3000, 2000, 7, 3)],
      ['25d8ecf62311ecbaf3c135cfcb26bf1c80a899c1 50x10 400', () => g.uniformRandom(50, 10, 8, 2)],
      ['20fe65d56e118dbaf980d62216de47b850ac568b 5000x5000 23201', () => g.powerLaw(5000, 5000, { seed: 4 })],
      ['ff3193ca8afdb1a1dd4608b3ef63b3494a99794a 3000x3000 26979', () => g.banded(3000, 3, 5, { seed: 2 })],
      ['a2e0d5732de00eadd9fcc2ac2e320b12fac63c9d 3000x3000 26980', () => g.banded(3000, 4, 4, { spd: true })],
      ['a09033777d7014097b14da8d19ce9828866ee1ee 2800x2800 13780', () => g.poisson2d(70, 40)],
      ['fd3c8aaad4309e4e868d0c5d7e0559164e61bb5a 819x819 5191', () => g.poisson3d(13, 9, 7)],
      ['4432619bc31219471106662d9ca518031677dd95 2000x2000 6825', () => g.withEmptyRows(2000, 2000, 5, 0.3, 5)],
      ['718409d4202bc32c889080ec3b551f0f850c0d4c 2000x2000 9496', () => g.oneDenseRow(2000, 2000, 4, 1500, 7, 3)],
      ['7e66644d051951fcfc2c7e27052a7f2a64e0ae1b 300x200 2400', () => g.blockStructured(100, 100, 3, 2, 4, 9)],
      ['519244fb343a498c51c294ce3f594854f0c1b550 3000x3000 265034', () => g.ciLike(3000, { seed: 6 })],
      ['9069ca78e7450a285173431b3e52c5c25299e473 0x0 0', () => g.uniformRandom(0, 0, 3)],
    ];
    for (const [want, make] of cases) expect(sha1(make())).toBe(want);
  });

  it('poisson3d(120) (1.7 M rows) leaves no per-row arrays on the JavaScript heap (the per-row build grew it by 426 MB)', () => {
    const before = process.memoryUsage().heapUsed;
    const a = g.poisson3d(120);
    const grown = process.memoryUsage().heapUsed - before;
    expect(a.values.length).toBe(7 * 120 ** 3 - 6 * 120 ** 2);
    expect(grown).toBeLessThan(200e6);
  });
});

describe('firstAsymmetry (the eigsh / eigs symmetry check)', () => {
  const sym = g.poisson3d(9);
  it('sorted rows (binary search) and unsorted rows (transpose) agree: none on a symmetric matrix, the pair on a perturbed one', () => {
    const rev = (a: CsrMatrix): CsrMatrix => {
      const colIdx = a.colIdx.slice();
      const values = a.values.slice();
      for (let i = 0; i < a.rows; i++) {
        colIdx.subarray(a.rowPtr[i]!, a.rowPtr[i + 1]!).reverse();
        values.subarray(a.rowPtr[i]!, a.rowPtr[i + 1]!).reverse();
      }
      return { ...a, colIdx, values };
    };
    expect(firstAsymmetry(sym)).toBeUndefined();
    expect(firstAsymmetry(rev(sym))).toBeUndefined();
    const bent = { ...sym, values: sym.values.slice() };
    const k = sym.rowPtr[300]! + 1; // an off-diagonal entry of row 300
    bent.values[k] = -1.5;
    const j = sym.colIdx[k]!;
    const first = Math.min(300, j);
    for (const a of [bent, rev(bent)]) {
      const bad = firstAsymmetry(a)!;
      expect(bad.row).toBe(first);
      expect([bad.aij, bad.aji].sort((x, y) => x - y)).toEqual([-1.5, -1]);
    }
  });
  it('a triangle stored alone (a missing mirror counts as 0), explicit zeros, a non-square matrix', () => {
    const upper = csrFromTriplets(2, 2, [0, 0, 1], [0, 1, 1], [4, 10, 5]);
    expect(firstAsymmetry(upper)).toEqual({ row: 0, col: 1, aij: 10, aji: 0 });
    expect(firstAsymmetry(csrFromTriplets(2, 2, [0, 0, 1], [0, 1, 1], [4, 0, 5]))).toBeUndefined();
    expect(firstAsymmetry(csrFromTriplets(2, 3, [0, 1], [0, 2], [1, 7]))).toEqual({ row: 1, col: 2, aij: 7, aji: 0 });
  });
});
