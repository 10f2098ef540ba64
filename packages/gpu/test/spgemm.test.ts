/**
 * GPU SpGEMM with diagonal storage (seed 002) against the float64 CPU references of
 * @gpusparse/formats: HM structured × structured (hmSpgemm, Algorithm 2) and CDM banded × banded
 * with transposed operands (cdmSpgemm, Algorithm 1). The operands are rounded to float32 first
 * (what the device holds), so the bound measures the device's accumulation only: per slot
 * |c − c_ref| ≤ 2·dgA·ε·Σ|a_ij·b_jl| (at most dgA products per entry of C), Σ|a·b| from the
 * reference run on |A|, |B|. C's diagonal set must equal the reference's.
 */
import {
  type CdmMatrix,
  type CsrMatrix,
  cdmFromCsr,
  cdmSpgemm,
  csrFromTriplets,
  DimensionMismatchError,
  generators as g,
  type HmMatrix,
  hmFromCsr,
  hmSpgemm,
  hmToCsr,
  InvalidParameterError,
} from '@gpusparse/formats';
import { beforeAll, describe, expect, it } from 'vitest';
import type { GpuContext } from '../src/index';
import { cdmSpgemmGpu } from '../src/spgemm/cdm-spgemm';
import { hmSpgemmGpu } from '../src/spgemm/hm-spgemm';
import { EPS32, f32, randomVector, testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

/** rows × cols with the given diagonals stored whole (every in-matrix slot), random values. */
function diagonals(rows: number, cols: number, offsets: number[], seed: number): CsrMatrix {
  const ri: number[] = [];
  const ci: number[] = [];
  for (const k of offsets) {
    for (let i = Math.max(0, -k); i < Math.min(rows, cols - k); i++) {
      ri.push(i);
      ci.push(i + k);
    }
  }
  return csrFromTriplets(rows, cols, ri, ci, f32(randomVector(ri.length, seed)));
}

const round = (a: CsrMatrix): CsrMatrix => ({ ...a, values: f32(a.values) });
const abs = <M extends { values: Float64Array }>(m: M): M => ({ ...m, values: m.values.map(Math.abs) });

/** The worst |c − ref| / bound over all slots (≤ 1 passes); the structures must agree. */
function compare(got: Float64Array, ref: { values: Float64Array; offsets: Int32Array }, sumAbs: Float64Array, offsets: Int32Array, dgA: number): number {
  expect(Array.from(offsets)).toEqual(Array.from(ref.offsets));
  expect(got.length).toBe(ref.values.length);
  let worst = 0;
  for (let s = 0; s < got.length; s++) {
    const bound = 2 * dgA * EPS32 * sumAbs[s]!;
    const err = Math.abs(got[s]! - ref.values[s]!);
    if (!(err <= bound)) return Number.POSITIVE_INFINITY;
    if (bound > 0) worst = Math.max(worst, err / bound);
  }
  return worst;
}

async function checkHm(a0: CsrMatrix, b0: CsrMatrix, wg?: number): Promise<number> {
  const a = hmFromCsr(round(a0));
  const b = hmFromCsr(round(b0));
  const prod = hmSpgemmGpu(ctx, a, b, { workgroupSize: wg });
  prod.encode();
  const got = await prod.read();
  prod.dispose();
  const ref = hmSpgemm(a, b);
  return compare(got, ref, hmSpgemm(abs(a), abs(b)).values, prod.template.offsets, a.numDiagonals);
}

describe('HM SpGEMM on the device (Algorithm 2, grouped by C diagonal)', () => {
  it('1-D Laplacian squared (n = 300): pentadiagonal, exact small integers', async () => {
    expect(await checkHm(g.laplacian1d(300), g.laplacian1d(300))).toBe(0);
  });
  it('random structured diagonals, 600 × 600: dgA 9, dgB 5 (seed 002 Table 1 shape)', async () => {
    const a = diagonals(600, 600, [0, 3, -7, 40, -41, 150, -220, 299, -500], 1);
    const b = diagonals(600, 600, [1, -2, 60, -90, 333], 2);
    expect(await checkHm(a, b)).toBeLessThanOrEqual(1);
    expect(await checkHm(a, b, 64)).toBeLessThanOrEqual(1);
  });
  it('rectangular 40 × 70 times 70 × 25, diagonals reaching the corners', async () => {
    const a = diagonals(40, 70, [-39, -3, 0, 5, 30, 69], 3);
    const b = diagonals(70, 25, [-69, -40, -1, 0, 2, 24], 4);
    expect(await checkHm(a, b)).toBeLessThanOrEqual(1);
  });
  it('partially filled diagonals (a random pattern: every slot of a diagonal stored, most fill)', async () => {
    expect(await checkHm(g.uniformRandom(120, 90, 4, 5), g.uniformRandom(90, 110, 3, 6))).toBeLessThanOrEqual(1);
  });
  it('result(): an HmMatrix whose CSR matches the reference product; bit-identical on repeat', async () => {
    const a = hmFromCsr(diagonals(200, 200, [0, 1, -1, 17, -30], 7));
    const b = hmFromCsr(diagonals(200, 200, [0, 2, -5, 44], 8));
    const prod = hmSpgemmGpu(ctx, a, b);
    prod.encode();
    const c1: HmMatrix = await prod.result();
    prod.encode();
    const again = await prod.read();
    prod.dispose();
    expect(Array.from(again)).toEqual(Array.from(c1.values));
    const ref = hmToCsr(hmSpgemm(a, b));
    const got = hmToCsr(c1);
    expect(Array.from(got.rowPtr)).toEqual(Array.from(ref.rowPtr)); // no exact cancellation here
    expect(Array.from(got.colIdx)).toEqual(Array.from(ref.colIdx));
  });
  it('an all-zero operand gives a C with no diagonals (HM and CDM)', async () => {
    const z: CsrMatrix = { format: 'csr', rows: 5, cols: 5, rowPtr: new Int32Array(6), colIdx: new Int32Array(0), values: new Float64Array(0) };
    const p = hmSpgemmGpu(ctx, hmFromCsr(z), hmFromCsr(g.laplacian1d(5)));
    p.encode();
    expect((await p.read()).length).toBe(0);
    expect(p.template.numDiagonals).toBe(0);
    const q = cdmSpgemmGpu(ctx, cdmFromCsr(g.laplacian1d(5)), cdmFromCsr(z));
    q.encode();
    expect((await q.read()).length).toBe(0);
    p.dispose();
    q.dispose();
  });
  it('refuses mismatched shapes and too many C diagonals, naming them', () => {
    const a = hmFromCsr(diagonals(10, 12, [0, 1], 1));
    expect(() => hmSpgemmGpu(ctx, a, a)).toThrow(DimensionMismatchError);
    const b = hmFromCsr(diagonals(12, 10, [0, -1, 1], 2));
    expect(() => hmSpgemmGpu(ctx, a, b, { maxDiagonals: 2 })).toThrow(InvalidParameterError);
  });
});

async function checkCdm(a: CdmMatrix, b: CdmMatrix, opts: { tile?: number; transposeA?: boolean; transposeB?: boolean }): Promise<number> {
  const prod = cdmSpgemmGpu(ctx, a, b, opts);
  prod.encode();
  const got = await prod.read();
  prod.dispose();
  const ref = cdmSpgemm(a, b, opts);
  return compare(got, ref, cdmSpgemm(abs(a), abs(b), opts).values, prod.template.offsets, a.numDiagonals);
}

describe('CDM SpGEMM on the device (Algorithm 1, T×T tiles, A staged in workgroup memory)', () => {
  const a = cdmFromCsr(round(g.banded(203, 2, 2, { seed: 9 }))); // bandwidth 5
  const b = cdmFromCsr(round(g.banded(203, 4, 5, { seed: 10 }))); // bandwidth 10
  for (const tile of [16, 8, 4]) {
    it(`banded 5 × banded 10, n = 203 (not a multiple of T = ${tile})`, async () => {
      expect(await checkCdm(a, b, { tile })).toBeLessThanOrEqual(1);
    });
  }
  for (const [ta, tb] of [[true, false], [false, true], [true, true]] as const) {
    it(`transposed operands through reverse compact diagonals: ${ta ? 'Aᵀ' : 'A'}·${tb ? 'Bᵀ' : 'B'}`, async () => {
      expect(await checkCdm(a, b, { transposeA: ta, transposeB: tb, tile: 8 })).toBeLessThanOrEqual(1);
    });
  }
  it('more A diagonals than one tile (bandwidth 41, dgA = 41 > T = 16), wrap-around products', async () => {
    const w = cdmFromCsr(round(g.banded(150, 20, 20, { seed: 11 })));
    expect(await checkCdm(w, b.rows === 150 ? b : cdmFromCsr(round(g.banded(150, 3, 1, { seed: 12 }))), { tile: 16 })).toBeLessThanOrEqual(1);
  });
  it('refuses different orders and an invalid tile', () => {
    const small = cdmFromCsr(g.laplacian1d(10));
    expect(() => cdmSpgemmGpu(ctx, small, a)).toThrow(DimensionMismatchError);
    expect(() => cdmSpgemmGpu(ctx, small, small, { tile: 5 })).toThrow(/tile/);
  });
});
