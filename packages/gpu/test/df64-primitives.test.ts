/**
 * df64 error-free transformations on the device, bit for bit against exact host arithmetic.
 * These run on lavapipe in CI so that a driver or compiler update that starts folding,
 * reassociating or contracting the barriers is caught here.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { df64Mode, df64OpsOnDevice, df64SelfTest, selfTestPairs } from '../src/df64/selftest';
import { emuAdd, emuMul, emuMulF, joinF64, splitF64 } from '../src/df64/host';
import type { GpuContext } from '../src/index';
import { testContext } from './helpers';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await testContext();
});

describe('df64 primitives on the device', () => {
  it('TwoSum and Fast2Sum are exact on 2^16 pairs (random and hard cases)', async () => {
    const { a, b } = selfTestPairs(1 << 16, 3);
    const rep = await df64SelfTest(ctx, a, b);
    expect(rep.pairs).toBe(1 << 16);
    expect(rep.mismatches.twoSum, JSON.stringify(rep.firstBad.twoSum)).toBe(0);
    expect(rep.mismatches.fast2Sum, JSON.stringify(rep.firstBad.fast2Sum)).toBe(0);
    // at least one TwoProd form is exact, and the chosen mode is one of them
    const mode = await df64Mode(ctx);
    expect(mode).toBeDefined();
    expect(rep.mismatches[mode === 'fma' ? 'twoProdFma' : 'twoProdDekker'], JSON.stringify(rep.firstBad)).toBe(0);
  });

  it('the hard-case generator really produces cancellation, gaps and non-zero error terms', () => {
    const { a, b } = selfTestPairs(1 << 12, 3);
    let cancel = 0;
    let gap = 0;
    let sumErr = 0;
    for (let i = 0; i < a.length; i++) {
      if (a[i] !== 0 && Math.abs(a[i]! + b[i]!) < Math.abs(a[i]!) * 2 ** -16) cancel++;
      if (b[i] !== 0 && Math.abs(a[i]! / b[i]!) > 2 ** 24) gap++;
      if (Math.fround(a[i]! + b[i]!) !== a[i]! + b[i]!) sumErr++;
    }
    expect(cancel).toBeGreaterThan(a.length / 16);
    expect(gap).toBeGreaterThan(a.length / 32);
    expect(sumErr).toBeGreaterThan(a.length / 2);
  });

  it('df_add, df_mul and df_mul_f match the float32 emulation bit for bit and have ≈ 2^-47 relative error', async () => {
    const mode = (await df64Mode(ctx))!;
    const n = 1 << 14;
    const { a: ra, b: rb } = selfTestPairs(2 * n, 11);
    // df64 operands: hi from the pair generator, lo a random value below ½ulp(hi)
    const av = new Float64Array(n);
    const bv = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      av[i] = ra[2 * i]! * (1 + (ra[2 * i + 1]! % 1) * 2 ** -30);
      bv[i] = rb[2 * i]! * (1 - (rb[2 * i + 1]! % 1) * 2 ** -30);
    }
    const A = splitF64(av);
    const B = splitF64(bv);
    const got = await df64OpsOnDevice(ctx, mode, A, B);
    let bad = '';
    let worstAdd = 0;
    let worstMul = 0;
    for (let i = 0; i < n && !bad; i++) {
      const ah = A[2 * i]!;
      const al = A[2 * i + 1]!;
      const bh = B[2 * i]!;
      const bl = B[2 * i + 1]!;
      const want = [...emuAdd(ah, al, bh, bl), ...emuMul(ah, al, bh, bl), ...emuMulF(ah, al, bh)];
      for (let k = 0; k < 6; k++) {
        if (got[6 * i + k] !== want[k]) bad = `element ${i}, output ${k}: got ${got[6 * i + k]}, want ${want[k]} (a = ${ah}+${al}, b = ${bh}+${bl})`;
      }
      const x = ah + al;
      const y = bh + bl;
      worstAdd = Math.max(worstAdd, Math.abs(got[6 * i]! + got[6 * i + 1]! - (x + y)) / (Math.abs(x) + Math.abs(y)));
      if (x * y !== 0) worstMul = Math.max(worstMul, Math.abs(got[6 * i + 2]! + got[6 * i + 3]! - x * y) / Math.abs(x * y));
    }
    expect(bad).toBe('');
    expect(worstAdd).toBeLessThan(2 ** -46);
    expect(worstMul).toBeLessThan(2 ** -45);
  });

  it('splitF64 / joinF64 keep 48 bits', () => {
    const v = Float64Array.from({ length: 1000 }, (_, i) => Math.PI * (i + 1) * 1.000001 ** i * (i % 2 ? -1 : 1));
    const back = joinF64(splitF64(v));
    for (let i = 0; i < v.length; i++) expect(Math.abs(back[i]! - v[i]!)).toBeLessThanOrEqual(Math.abs(v[i]!) * 2 ** -48);
  });
});
