/**
 * The df64 self-test at scale: 2^20 f32 pairs (random and hard cases) through every error-free
 * transformation on the device, mismatch counts per primitive against exact host arithmetic,
 * and the bit-for-bit check of df_add / df_mul / df_mul_f against the float32 emulation.
 * Prints one JSON object (and writes it with --out).
 *
 *   node .gpukit/app/df64-selftest.mjs [--pairs 1048576] [--out $OUT/df64-selftest.json]
 */
import { writeFileSync } from 'node:fs';
import { createGpuContext } from '../packages/gpu/src/index';
import { emuAdd, emuMul, emuMulF, splitF64 } from '../packages/gpu/src/df64/host';
import { df64Mode, df64OpsOnDevice, df64SelfTest, selfTestPairs } from '../packages/gpu/src/df64/selftest';
import type { TwoProdMode } from '../packages/gpu/src/df64/wgsl';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const pairs = Number(opt('--pairs') ?? 1 << 20);
const out = opt('--out');

const ctx = await createGpuContext();
const device = ctx.describeText().split('\n')[0];
const { a, b } = selfTestPairs(pairs, 2026);
const t0 = performance.now();
const rep = await df64SelfTest(ctx, a, b);
const mode = await df64Mode(ctx);

/** df64 operations vs the float32 emulation, for both TwoProd forms. */
async function opsMismatches(m: TwoProdMode): Promise<{ add: number; mul: number; mulF: number }> {
  const n = pairs >> 1;
  const av = new Float64Array(n);
  const bv = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    av[i] = a[2 * i]! * (1 + (a[2 * i + 1]! % 1) * 2 ** -30);
    bv[i] = b[2 * i]! * (1 - (b[2 * i + 1]! % 1) * 2 ** -30);
  }
  const A = splitF64(av);
  const B = splitF64(bv);
  const got = await df64OpsOnDevice(ctx, m, A, B);
  const c = { add: 0, mul: 0, mulF: 0 };
  for (let i = 0; i < n; i++) {
    const [ah, al, bh, bl] = [A[2 * i]!, A[2 * i + 1]!, B[2 * i]!, B[2 * i + 1]!];
    const w = [emuAdd(ah, al, bh, bl), emuMul(ah, al, bh, bl), emuMulF(ah, al, bh)];
    (['add', 'mul', 'mulF'] as const).forEach((k, j) => {
      if (got[6 * i + 2 * j] !== w[j]![0] || got[6 * i + 2 * j + 1] !== w[j]![1]) c[k]++;
    });
  }
  return c;
}

const result = {
  device,
  pairs,
  chosenTwoProd: mode ?? 'none (df64 disabled on this device)',
  mismatches: rep.mismatches,
  firstBad: rep.firstBad,
  opsVsEmulation: { fma: await opsMismatches('fma'), dekker: await opsMismatches('dekker') },
  ms: Math.round(performance.now() - t0),
};
const text = JSON.stringify(result, null, 2);
console.log(text);
if (out) writeFileSync(out, text);
ctx.dispose();
