/**
 * What the chem tests of the CI SpMV kernels share (ci-spmv-kernels, ci-csr-vi): the float64 CSR
 * Hamiltonian of a testdata FCIDUMP, the cases both run, a kernel's check for y = A·x and
 * y = 2·A·x − 0.5·y, and the checks of a tuner's timed trials of an opt-in kernel.
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { AnySpmvKernel, GpuContext, TuningReport, UploadOptions } from '@gpusparse/gpu';
import { expect } from 'vitest';
import { dataFile } from '../../../../testdata/index';
import { checkKernel } from '../../../gpu/src/testing/conformance';
import { type BuildSpaceOptions, buildCiSpace } from '../../src/determinants/build';
import { readFcidump } from '../../src/fcidump/node';
import { assembleHamiltonian } from '../../src/hamiltonian/assemble';

/** The FCI Hamiltonian of testdata/fcidump/`file` (float64 CSR, main thread). */
export async function hamiltonian(file: string, opts: BuildSpaceOptions = {}): Promise<CsrMatrix> {
  const { fcidump, space } = buildCiSpace(await readFcidump(dataFile('fcidump', file)), 'fci', opts);
  return (await assembleHamiltonian(fcidump, space, { workers: 0 })).matrix;
}

/** Every trial of `kernel` was timed, with its conversion and upload in an objective for `products` products. */
export function expectTimedWithPreparation(trials: TuningReport['trials'], kernel: string, products: number): void {
  const mine = trials.filter((t) => t.kernel === kernel);
  expect(mine.length).toBeGreaterThan(0);
  for (const t of mine) {
    expect(t.status, `${JSON.stringify(t.params)}: ${t.error}`).toBe('timed');
    expect(t.ms).toBeGreaterThan(0);
    expect(t.conversionMs! + t.uploadMs!).toBeGreaterThan(0);
    expect(t.objectiveMs).toBeCloseTo(t.conversionMs! + t.uploadMs! + products * t.ms!, 6);
  }
}

/** The assembled cases: H4 STO-6G FCI, N2 STO-3G FCI, and N2 with the irrep filter (holes in the (α, β) table). */
export const CI_CASES = [
  ['H4_sto6g_R1.8_block2.FCIDUMP', {}],
  ['N2_sto3g_R1.1A_block2.FCIDUMP', {}],
  ['N2_sto3g_R1.1A_block2.FCIDUMP', { irrep: 'isym' }],
] as const;

/** `kernel` with `params` (over its defaults) within the float32 bound of the float64 product, for y = A·x and y = 2·A·x − 0.5·y. */
export async function expectBothScalings(ctx: GpuContext, kernel: AnySpmvKernel, params: Record<string, number>, a: CsrMatrix, opts?: UploadOptions): Promise<void> {
  const p = { ...kernel.defaults, ...params };
  expect(await checkKernel(ctx, kernel, p, a, 11, 1, 0, opts), `${kernel.id} ${JSON.stringify(params)}`).toBe('');
  expect(await checkKernel(ctx, kernel, p, a, 12, 2, -0.5, opts), `${kernel.id} ${JSON.stringify(params)} α 2 β −0.5`).toBe('');
}
