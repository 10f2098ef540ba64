/**
 * The time-reversal operator's whole and half products share one pair of scratch vectors and
 * one diag(H) of the other parity (24 B per determinant less than a pair per product): products
 * interleaved in any order give what each gives alone, and the operator's byte count covers them.
 */
import { describe, expect, it } from 'vitest';
import { directSigmaOperator } from '../src/direct/operator';
import { buildCiSpace } from '../src/determinants/build';
import { readFcidump } from '../src/fcidump/node';
import { data, randomVector } from './helpers/vectors';

describe('direct σ with time reversal: shared scratch', () => {
  it.each([1, 2])('N2/STO-3G irrep 1, %i thread(s): whole, half, whole products interleaved = each alone (bit for bit)', async (threads) => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep: 1 });
    const alone = await directSigmaOperator(fcidump, space, { timeReversal: 'even', threads });
    const mixed = await directSigmaOperator(fcidump, space, { timeReversal: 'even', threads });
    try {
      const half = mixed.half!;
      const x = randomVector(space.size, 3);
      alone.project!(x);
      const u = randomVector(half.rows, 5);
      const wantWhole = new Float64Array(space.size);
      alone.apply(x, wantWhole);
      const wantHalf = new Float64Array(half.rows);
      alone.half!.apply(u, wantHalf);
      // on `mixed`: half, whole, half, whole — each product must not see the other's leftovers
      const h1 = new Float64Array(half.rows);
      const w1 = new Float64Array(space.size);
      const h2 = new Float64Array(half.rows);
      const w2 = new Float64Array(space.size);
      half.apply(u, h1);
      mixed.apply(x, w1);
      half.apply(u, h2);
      mixed.apply(x, w2);
      expect(Array.from(h1)).toEqual(Array.from(wantHalf));
      expect(Array.from(h2)).toEqual(Array.from(wantHalf));
      expect(Array.from(w1)).toEqual(Array.from(wantWhole));
      expect(Array.from(w2)).toEqual(Array.from(wantWhole));
      // the diagonal (8), the other parity's (8), the scratch (16) and the half-space maps (≥ 8): ≥ 40 B per determinant counted
      expect(mixed.bytes).toBeGreaterThan(40 * space.size);
    } finally {
      alone.dispose();
      mixed.dispose();
    }
  });
});
