/**
 * The CI SpMV kernels (issue 20: sliced-ell-split in each layout, csr-long) on Hamiltonians that
 * this package assembles, not only the bench generator: H4 STO-6G FCI (36 determinants), N2
 * STO-3G FCI (14 400 determinants, 1.4·10^6 entries, the alpha-major structure of the H10
 * benchmark matrix) and N2 with an irrep filter (holes in the (α, β) table: uneven rows and a
 * short last slice). Oracle: the float64 CSR product of the float32-rounded matrix with the
 * conformance tier's per-row bound (checkKernel), for y = A·x and y = 2·A·x − 0.5·y.
 */
import { autotune, getKernel } from '@gpusparse/gpu';
import { describe, expect, it } from 'vitest';
import { CI_CASES, expectBothScalings, expectTimedWithPreparation, hamiltonian } from './helpers/ci-matrices';
import { gpuTier, gpuTierSkipped } from './helpers/gpu-tier';

const tier = gpuTier();

/** [kernel, params]: sliced-ell-split's layouts (u32 columns, 16-bit offsets, interleaved pairs, groups of 4 slots) at the swept shapes, and csr-long's CI variant. */
const VARIANTS: [string, Record<string, number>][] = [
  ['sliced-ell-split', { sliceHeight: 32, parts: 8, unroll: 4, pack: 0, interleave: 0 }],
  ['sliced-ell-split', { sliceHeight: 32, parts: 16, unroll: 8, pack: 1, interleave: 0 }],
  ['sliced-ell-split', { sliceHeight: 32, parts: 16, unroll: 8, pack: 0, interleave: 1 }],
  ['sliced-ell-split', { sliceHeight: 16, parts: 16, unroll: 4, pack: 0, interleave: 1 }],
  ['sliced-ell-split', { sliceHeight: 64, parts: 4, unroll: 2, pack: 0, interleave: 1 }],
  ['sliced-ell-split', { sliceHeight: 32, parts: 16, unroll: 2, pack: 1, interleave: 1 }],
  ['sliced-ell-split', { sliceHeight: 16, parts: 8, unroll: 4, pack: 1, interleave: 1 }],
  ['csr-long', { lanes: 16, unroll: 2, pack: 1, interleave: 1, stage: 0 }],
];

describe.skipIf(gpuTierSkipped)('CI SpMV kernels on assembled Hamiltonians', () => {
  it.each(CI_CASES)('%s %o: every variant within the float32 bound of the float64 product', async (file, opts) => {
    const a = await hamiltonian(file, opts);
    for (const [id, p] of VARIANTS) await expectBothScalings(tier.ctx, getKernel(id), p, a);
  });

  // issue 20: sliced-ell-split as a tuner candidate; its conversion and host packing are part of its objective
  it.each([
    ['H4_sto6g_R1.8_block2.FCIDUMP', 1e6],
    ['N2_sto3g_R1.1A_block2.FCIDUMP', 1],
  ] as const)('the tuner times sliced-ell-split on %s, preparation in its objective (%d products)', async (file, products) => {
    const a = await hamiltonian(file);
    // an opt-in candidate: the caller adds it to the kernels the tuner enumerates
    const r = await autotune(tier.ctx, a, { cache: false, exhaustive: true, expectedProducts: products, kernels: [getKernel('csr-scalar'), getKernel('sliced-ell-split')], candidates: ['sliced-ell-split', 'csr-scalar'], warn: () => {} });
    const split = r.report.trials.filter((t) => t.kernel === 'sliced-ell-split');
    expect(split.map((t) => `${t.params.sliceHeight}/${t.params.parts}`).sort()).toEqual(['16/16', '16/8', '32/16', '32/8']);
    expectTimedWithPreparation(r.report.trials, 'sliced-ell-split', products);
    // the winner was verified on the device against the float64 product
    const w = r.report.trials.find((t) => t.kernel === r.kernel && JSON.stringify(t.params) === JSON.stringify(r.params))!;
    expect(w.verified).toBe(true);
    // one product: the preparation decides; CSR needs none
    if (products === 1) expect(r.kernel).toBe('csr-scalar');
  });
});
