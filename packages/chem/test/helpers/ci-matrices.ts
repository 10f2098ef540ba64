/**
 * What the chem tests of the CI SpMV kernels share (ci-spmv-kernels, ci-csr-vi): the float64 CSR
 * Hamiltonian of a testdata FCIDUMP, and the checks of a tuner's timed trials of an opt-in kernel.
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { TuningReport } from '@gpusparse/gpu';
import { expect } from 'vitest';
import { dataFile } from '../../../../testdata/index';
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
