/**
 * The O(diagonals) symbolic phase of the diagonal SpGEMM (C's offsets and pair lists), the
 * format choice, and the float64 CSR product with its error measure — against hand-worked
 * examples and the HM/CDM references.
 */
import { describe, expect, it } from 'vitest';
import { cpuMs } from '../../../scripts/test/cpu-time';
import {
  cdmFromCsr,
  cdmSpgemm,
  cdmToCsr,
  chooseSpgemmFormat,
  csrFromTriplets,
  csrSpgemmReference,
  DimensionMismatchError,
  generators as g,
  hmFromCsr,
  hmSpgemm,
  hmSpgemmDiagonals,
  hmToCsr,
  InvalidParameterError,
  spgemmMaxRelError,
  spgemmSymbolic,
} from '../src/index';
import { groupByCompositeKey, groupByCounting } from '../src/spgemm/symbolic';

const hm = (rows: number, cols: number, offsets: number[]) => ({ format: 'hm' as const, rows, cols, offsets });

describe('spgemmSymbolic', () => {
  it('tridiagonal squared: offsets in HM order, pairs grouped by C diagonal, ascending kA', () => {
    const s = spgemmSymbolic(hm(6, 6, [0, 1, -1]), hm(6, 6, [0, 1, -1]));
    expect(Array.from(s.offsets)).toEqual([0, 1, 2, -1, -2]);
    // C diagonal 0 gets (−1, +1), (0, 0), (+1, −1): A indices 2, 0, 1
    const d0 = [s.pairStart[0]!, s.pairStart[1]!];
    expect(Array.from(s.pairA.slice(d0[0], d0[1]))).toEqual([2, 0, 1]);
    expect(Array.from(s.pairB.slice(d0[0], d0[1]))).toEqual([1, 0, 2]);
    expect(s.pairA.length).toBe(9);
    // shared inner indices j: (0,0): 6; (0,±1), (±1,0), (1,−1), (−1,1): 5 each; (1,1), (−1,−1): 4 each
    expect(s.multiplyAdds).toBe(6 + 6 * 5 + 2 * 4);
  });

  it('HM offsets equal the reference diagonal set on a rectangular product; missed pairs dropped', () => {
    const ha = hmFromCsr(csrFromTriplets(5, 9, [0, 4, 0, 2], [0, 8, 7, 3], [1, 1, 1, 1]));
    const hb = hmFromCsr(csrFromTriplets(9, 4, [0, 8, 3, 7], [0, 3, 1, 0], [1, 1, 1, 1]));
    const s = spgemmSymbolic(hm(5, 9, Array.from(ha.offsets)), hm(9, 4, Array.from(hb.offsets)));
    expect(Array.from(s.offsets).sort((p, q) => p - q)).toEqual(Array.from(hmSpgemmDiagonals(ha, hb)));
  });

  it('CDM: (kA + kB) mod n, ascending, every pair kept', () => {
    const c = { format: 'cdm' as const, rows: 5, cols: 5, offsets: [0, 1, 4] };
    const s = spgemmSymbolic(c, c);
    expect(Array.from(s.offsets)).toEqual([0, 1, 2, 3, 4]);
    expect(s.pairA.length).toBe(9);
    expect(s.multiplyAdds).toBe(45);
  });

  it('costs O(diagonals), not O(n): n = 2·10^9 structures plan as fast as small ones', () => {
    const n = 2_000_000_000;
    const t0 = cpuMs();
    const s = spgemmSymbolic(hm(n, n, [-n / 2, -3, 0, 7]), hm(n, n, [-5, 0, 1, n / 4]));
    const cdm = spgemmSymbolic({ format: 'cdm', rows: n, cols: n, offsets: [0, 1, n - 1] }, { format: 'cdm', rows: n, cols: n, offsets: [0, n - 2] });
    // an O(n) array or loop would take seconds of CPU (CPU time: a loaded machine's wait is not work)
    expect(cpuMs() - t0).toBeLessThan(200);
    expect(s.offsets.length).toBe(16);
    expect(s.lengths[0]).toBe(n);
    expect(Array.from(cdm.offsets)).toEqual([0, 1, n - 3, n - 2, n - 1]);
  });

  it('matches a brute-force enumeration on random HM and CDM structures (offsets in any order)', () => {
    let seed = 11;
    const rnd = () => ((seed = (Math.imul(1664525, seed) + 1013904223) >>> 0) / 2 ** 32);
    for (let it = 0; it < 300; it++) {
      const cdm = it % 3 === 0;
      const [m, inner] = [1 + Math.floor(rnd() * 40), 1 + Math.floor(rnd() * 40)];
      const [k, n] = cdm ? [m, m] : [inner, 1 + Math.floor(rnd() * 40)];
      const pick = (r: number, c: number) => [...new Set(Array.from({ length: Math.floor(rnd() * 9) }, () => (cdm ? Math.floor(rnd() * r) : Math.floor(rnd() * (r + c - 1)) - (r - 1))))];
      const a = { format: cdm ? ('cdm' as const) : ('hm' as const), rows: m, cols: k, offsets: pick(m, k) };
      const b = { format: a.format, rows: k, cols: n, offsets: pick(k, n) };
      const s = spgemmSymbolic(a, b);
      // brute force: for each C diagonal in storage order, the pairs with kA ascending
      const groups = new Map<number, [number, number][]>();
      let mads = 0;
      const byA = a.offsets.map((kA, u) => [kA, u] as const).sort((p, q) => p[0] - q[0]);
      for (const [kA, u] of byA) {
        b.offsets.forEach((kB, v) => {
          let len = m;
          if (!cdm) {
            len = 0; // shared inner indices j: a_(j−kA, j) and b_(j, j+kB) both inside
            for (let j = 0; j < k; j++) if (j - kA >= 0 && j - kA < m && j + kB >= 0 && j + kB < n) len++;
          }
          if (len === 0) return;
          mads += len;
          const kc = cdm ? (kA + kB) % m : kA + kB;
          if (!groups.has(kc)) groups.set(kc, []);
          groups.get(kc)!.push([u, v]);
        });
      }
      const rank = (x: number) => (cdm || x >= 0 ? x : n - x);
      const order = [...groups.keys()].sort((p, q) => rank(p) - rank(q));
      expect(Array.from(s.offsets)).toEqual(order);
      expect(Array.from(s.pairA)).toEqual(order.flatMap((kc) => groups.get(kc)!.map((p) => p[0])));
      expect(Array.from(s.pairB)).toEqual(order.flatMap((kc) => groups.get(kc)!.map((p) => p[1])));
      expect(Array.from(s.pairStart)).toEqual([0, ...order.map((_, d) => order.slice(0, d + 1).reduce((t, kc) => t + groups.get(kc)!.length, 0))]);
      expect(s.multiplyAdds).toBe(mads);
      // the sort path (offsets spread over more values than 4·pairs + 4096) gives the same
      expect(spgemmSymbolic(a, b, 1 << 20, false)).toEqual(s);
    }
  });

  it('the counting-sort window and the sort path agree on the benchmark structures (HM and CDM bands)', () => {
    let seed = 3;
    const rnd = () => ((seed = (Math.imul(1664525, seed) + 1013904223) >>> 0) / 2 ** 32);
    const spread = (n: number, dg: number) => [...new Set(Array.from({ length: dg }, () => Math.floor(rnd() * (n / 2 + 1)) - Math.floor(n / 4)))];
    for (const [n, da, db] of [[5000, 59, 35], [4000, 29, 35], [777, 40, 3]] as const) {
      const a = hm(n, n, spread(n, da));
      const b = hm(n, n, spread(n, db));
      const s = spgemmSymbolic(a, b);
      expect(spgemmSymbolic(a, b, 1 << 20, false)).toEqual(s);
      expect(s.pairStart[s.offsets.length]).toBe(s.pairA.length);
    }
    // a CDM band of n = 10^7 wraps around: offsets n − 2 … n − 1 sit next to 0 … 2 in the window
    const n = 10_000_000;
    const band = { format: 'cdm' as const, rows: n, cols: n, offsets: [n - 2, n - 1, 0, 1, 2] };
    const s = spgemmSymbolic(band, band);
    expect(Array.from(s.offsets)).toEqual([0, 1, 2, 3, 4, n - 4, n - 3, n - 2, n - 1]);
    expect(spgemmSymbolic(band, band, 1 << 20, false)).toEqual(s);
  });

  it('operands in HM order, ascending or any order give the same product (the order is read off without a sort)', () => {
    const offs = [0, 1, 4, 9, -1, -3, -8];
    const orders = [offs, [...offs].sort((p, q) => p - q), [4, -1, 0, -8, 9, 1, -3], [0, 4, 1, 9, -1, -3, -8], [0, 1, 4, 9, -3, -1, -8]];
    const b = hm(30, 30, [-2, 0, 5]);
    const ref = spgemmSymbolic(hm(30, 30, offs), b);
    // pairs named by A's offset rather than its index, so orders compare
    const named = (o: number[]) => {
      const s = spgemmSymbolic(hm(30, 30, o), b);
      return { offsets: Array.from(s.offsets), kA: Array.from(s.pairA, (u) => o[u]), pairB: Array.from(s.pairB), mads: s.multiplyAdds };
    };
    for (const o of orders) expect(named(o)).toEqual(named(offs));
    expect(named(offs).kA.slice(0, ref.pairStart[1])).toEqual([...named(offs).kA.slice(0, ref.pairStart[1])].sort((p, q) => p - q));
    // all negative, descending (HM order with no k ≥ 0) and one diagonal
    expect(named([-1, -4]).offsets).toEqual(named([-4, -1]).offsets);
    expect(named([3]).offsets).toEqual([1, 3, 8]);
  });

  it('a result stays intact after later, larger products (the pair scratch is reused between calls)', () => {
    const first = spgemmSymbolic(hm(50, 50, [0, 2, -3]), hm(50, 50, [1, -1]));
    const copy = structuredClone({ offsets: first.offsets, lengths: first.lengths, pairStart: first.pairStart, pairA: first.pairA, pairB: first.pairB });
    const big = Array.from({ length: 120 }, (_, t) => t - 60);
    spgemmSymbolic(hm(400, 400, big), hm(400, 400, big));
    spgemmSymbolic({ format: 'cdm', rows: 97, cols: 97, offsets: [0, 1, 96] }, { format: 'cdm', rows: 97, cols: 97, offsets: [0, 5] });
    for (const key of ['offsets', 'lengths', 'pairStart', 'pairA', 'pairB'] as const) expect(Array.from(first[key])).toEqual(Array.from(copy[key]));
  });

  it('products past the first scratch size (22 500 pairs) and past 2^31 multiply–adds; an empty product counts +0', () => {
    const offs = Array.from({ length: 150 }, (_, t) => 2 * t - 149);
    const s = spgemmSymbolic(hm(5000, 5000, offs), hm(5000, 5000, offs));
    expect(s.pairA.length).toBe(150 * 150);
    expect(spgemmSymbolic(hm(5000, 5000, offs), hm(5000, 5000, offs), 1 << 20, false)).toEqual(s);
    // CDM counts n per pair: 9 pairs of n = 2^30 is 9·2^30 > 2^31, exact in a double
    const n = 2 ** 30;
    const band = { format: 'cdm' as const, rows: n, cols: n, offsets: [0, 1, n - 1] };
    expect(spgemmSymbolic(band, band).multiplyAdds).toBe(9 * n);
    // diagonals that never meet: no pair, and the count is +0 (the accumulator starts at −0)
    const empty = spgemmSymbolic(hm(4, 4, [3]), hm(4, 4, [3]));
    expect(empty.pairA.length).toBe(0);
    expect(Object.is(empty.multiplyAdds, 0)).toBe(true);
  });

  it('the composite-key grouping and its counting fallback agree (ties keep emission order)', () => {
    let seed = 5;
    const rnd = () => ((seed = (Math.imul(1664525, seed) + 1013904223) >>> 0) / 2 ** 32);
    for (const np of [0, 1, 7, 500]) {
      const ranks = Float64Array.from({ length: np }, () => Math.floor(rnd() * 20) * 1e6);
      const pa = Int32Array.from({ length: np }, (_, t) => t);
      const pb = Int32Array.from({ length: np }, () => Math.floor(rnd() * 9));
      const x = groupByCompositeKey(ranks, np, pa, pb);
      const y = groupByCounting(ranks, np, pa, pb);
      for (const key of ['distinct', 'pairStart', 'pairA', 'pairB'] as const) expect(Array.from(x[key])).toEqual(Array.from(y[key]));
      // inside a group the emission indices ascend
      for (let d = 0; d + 1 < x.pairStart.length; d++) for (let s = x.pairStart[d]! + 1; s < x.pairStart[d + 1]!; s++) expect(x.pairA[s]!).toBeGreaterThan(x.pairA[s - 1]!);
    }
  });

  it('refuses mismatched dimensions, mixed formats and too many diagonals', () => {
    expect(() => spgemmSymbolic(hm(3, 4, [0]), hm(3, 3, [0]))).toThrow(DimensionMismatchError);
    expect(() => spgemmSymbolic(hm(3, 3, [0]), { format: 'cdm', rows: 3, cols: 3, offsets: [0] })).toThrow(InvalidParameterError);
    expect(() => spgemmSymbolic(hm(9, 9, [0, 1, 2]), hm(9, 9, [0, 3]), 5)).toThrow(InvalidParameterError);
  });
});

describe('csrSpgemmReference and spgemmMaxRelError', () => {
  it('a 2×2 product by hand; a perturbed C is measured against Σ|a·b|', () => {
    const a = csrFromTriplets(2, 2, [0, 0, 1], [0, 1, 1], [1, 2, 3]);
    const b = csrFromTriplets(2, 2, [0, 1, 1], [0, 0, 1], [4, 5, -6]);
    const ref = csrSpgemmReference(a, b);
    // [[1,2],[0,3]]·[[4,0],[5,−6]] = [[14,−12],[15,−18]]
    expect(Array.from(ref.c.values)).toEqual([14, -12, 15, -18]);
    expect(Array.from(ref.absSum)).toEqual([14, 12, 15, 18]);
    expect(spgemmMaxRelError(ref.c, ref)).toBe(0);
    const off = { ...ref.c, values: Float64Array.of(14, -12, 15, -18 + 0.018) };
    expect(spgemmMaxRelError(off, ref)).toBeCloseTo(0.001, 12);
    const missing = csrFromTriplets(2, 2, [0, 1, 1], [0, 0, 1], [14, 15, -18]);
    expect(spgemmMaxRelError(missing, ref)).toBe(1);
  });

  it('agrees with the HM and CDM float64 references', () => {
    const a = g.banded(40, 3, 2);
    const b = g.banded(40, 2, 4);
    const ref = csrSpgemmReference(a, b);
    const viaHm = hmSpgemm(hmFromCsr(a), hmFromCsr(b));
    const viaCdm = cdmSpgemm(cdmFromCsr(a), cdmFromCsr(b));
    for (const c of [hmToCsr(viaHm), cdmToCsr(viaCdm)]) {
      expect(c.values.length).toBe(ref.c.values.length);
      expect(spgemmMaxRelError(c, ref)).toBeLessThan(1e-15);
    }
  });
});

describe('chooseSpgemmFormat', () => {
  it('CDM for a narrow square band, HM for far diagonals or rectangles, refusal past the limit', () => {
    expect(chooseSpgemmFormat(g.banded(500, 3, 7), g.banded(500, 2, 8))).toBe('cdm');
    const far = csrFromTriplets(100, 100, [0, 0], [0, 60], [1, 1]);
    expect(chooseSpgemmFormat(far, far)).toBe('hm');
    expect(chooseSpgemmFormat(csrFromTriplets(3, 4, [0], [0], [1]), csrFromTriplets(4, 3, [0], [0], [1]))).toBe('hm');
    expect(() => chooseSpgemmFormat(g.banded(50, 3, 1), g.banded(50, 3, 1), 4)).toThrow(InvalidParameterError);
  });
});
