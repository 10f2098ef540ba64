/**
 * csr-vi (issue 20, session 13: CSR-VI with column windows) on Hamiltonians this package assembles:
 * H4 STO-6G and N2 STO-3G FCI (with and without the irrep filter), v chosen by the plan and fixed at
 * 16; N2's Hamiltonian with its columns spread over 3.65·10^6 (column j → 2003·j: every row spans
 * ~3.6·10^6 columns as the 2.39·10^6-determinant FCI's rows do, so v = 16 gives ~56 windows and
 * segment boundaries in every row); row blocks over small bindings; csr-vi-slice (the sliced layout)
 * on the same cases; and the tuner timing csr-vi as an
 * opt-in candidate (conversion in its objective). Oracle: the float64 CSR product of the
 * float32-rounded matrix with the conformance tier's per-row bound (checkKernel).
 */
import { type CsrMatrix, csrViFromCsr } from '@gpusparse/formats';
import { autotune, csrViKernel, csrViSliceKernel, getKernel } from '@gpusparse/gpu';
import { describe, expect, it } from 'vitest';
import { CI_CASES, expectBothScalings, expectTimedWithPreparation, hamiltonian } from './helpers/ci-matrices';
import { gpuTier, gpuTierSkipped } from './helpers/gpu-tier';

const tier = gpuTier();

/** `a` with column j moved to `stride`·j (cols·stride columns; rows keep their sorted order). */
const spread = (a: CsrMatrix, stride: number): CsrMatrix => ({ ...a, cols: a.cols * stride, colIdx: a.colIdx.map((c) => c * stride) });

const check = (a: CsrMatrix, p: Record<string, number>, opts?: { maxBindingBytes: number }, k: typeof csrViKernel | typeof csrViSliceKernel = csrViKernel) => expectBothScalings(tier.ctx, k, p, a, opts);

describe.skipIf(gpuTierSkipped)('csr-vi on assembled CI Hamiltonians', () => {
  it.each(CI_CASES)('%s %o: v from the plan and v = 16, lanes 8 / 32, within the float32 bound', async (file, opts) => {
    const a = await hamiltonian(file, opts);
    for (const p of [{ valueBits: 0 }, { valueBits: 16, lanes: 8, unroll: 8 }, { valueBits: 0, lanes: 32, unroll: 2 }] as Record<string, number>[]) await check(a, p);
    for (const p of [{ valueBits: 0 }, { valueBits: 16, sliceHeight: 16, unroll: 8 }] as Record<string, number>[]) await check(a, p, undefined, csrViSliceKernel);
  });

  it('N2 STO-3G spread over 3.65·10^6 columns: ~56 windows at v = 16, segments in every row, 16 KiB bindings', async () => {
    const a = spread(await hamiltonian('N2_sto3g_R1.1A_block2.FCIDUMP'), 2003);
    const m = csrViFromCsr(a, { valueBits: 16 });
    expect(new Set(m.segBase).size).toBeGreaterThan(50);
    expect(m.segEnd.length / m.rows).toBeGreaterThan(10);
    // most entries are table words: the Hamiltonian repeats its integral combinations
    expect(m.packed.length / m.nnz).toBeGreaterThan(0.5);
    await check(a, { valueBits: 16 });
    await check(a, { valueBits: 0, lanes: 16 }, { maxBindingBytes: 16384 });
    await check(a, { valueBits: 16, sliceHeight: 32, unroll: 4 }, { maxBindingBytes: 65536 }, csrViSliceKernel);
  });

  it('the tuner times csr-vi as an opt-in candidate, its conversion and upload in the objective', async () => {
    const a = await hamiltonian('N2_sto3g_R1.1A_block2.FCIDUMP');
    const products = 1000;
    const r = await autotune(tier.ctx, a, { cache: false, exhaustive: true, expectedProducts: products, kernels: [getKernel('csr-scalar'), csrViKernel], candidates: ['csr-vi', 'csr-scalar'], warn: () => {} });
    expectTimedWithPreparation(r.report.trials, 'csr-vi', products);
    const w = r.report.trials.find((t) => t.kernel === r.kernel && JSON.stringify(t.params) === JSON.stringify(r.params))!;
    expect(w.verified).toBe(true);
  });
});
