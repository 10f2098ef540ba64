/**
 * The string-driven assembly kernel (dense (α, β) table, sorted connection lists) against the
 * hash kernel it replaces (`assembleHamiltonianReference`): same CSR structure and the same
 * float64 values bit for bit, on real FCIDUMPs, with and without an irrep filter, for a
 * reordered (non-monotone) space, a truncated CI space, and on a worker thread.
 */
import { describe, expect, it } from 'vitest';
import { buildCiSpace, type SpaceSpec } from '../src/determinants/build';
import type { BuildSpaceOptions } from '../src/determinants/build';
import { readFcidump } from '../src/fcidump/node';
import { type AssembledHamiltonian, assembleHamiltonian, assembleHamiltonianReference } from '../src/hamiltonian/assemble';
import { dataFile } from '../../../testdata/index';

const data = (f: string) => dataFile('fcidump', f);

/** Entry-by-entry equality; returns the number of stored entries compared. */
function expectSameMatrix(got: AssembledHamiltonian, ref: AssembledHamiltonian): number {
  expect(got.matrix.rows).toBe(ref.matrix.rows);
  expect(got.stats.nnz).toBe(ref.stats.nnz);
  expect(Array.from(got.matrix.rowPtr)).toEqual(Array.from(ref.matrix.rowPtr));
  let colDiff = 0;
  let valDiff = 0;
  for (let k = 0; k < ref.stats.nnz; k++) {
    if (got.matrix.colIdx[k] !== ref.matrix.colIdx[k]) colDiff++;
    // Object.is: bit-identical values (also distinguishes −0 from +0)
    if (!Object.is(got.matrix.values[k], ref.matrix.values[k])) valDiff++;
  }
  expect(colDiff).toBe(0);
  expect(valDiff).toBe(0);
  for (let i = 0; i < ref.matrix.rows; i++) expect(Object.is(got.diagonal[i], ref.diagonal[i])).toBe(true);
  return ref.stats.nnz;
}

async function compare(file: string, spec: SpaceSpec, opts: BuildSpaceOptions, workers = 0): Promise<AssembledHamiltonian> {
  const fd0 = await readFcidump(data(file));
  const { fcidump, space } = buildCiSpace(fd0, spec, opts);
  const ref = await assembleHamiltonianReference(fcidump, space, { workers: 0 });
  const got = await assembleHamiltonian(fcidump, space, { workers });
  expect(ref.stats.kernel).toBe('hash');
  expect(expectSameMatrix(got, ref)).toBeGreaterThan(space.size);
  return got;
}

describe('string-driven assembly kernel equals the hash kernel', () => {
  it('H4 STO-6G FCI and N2 STO-3G FCI (14 400 determinants), bit for bit', async () => {
    const h4 = await compare('H4_sto6g_R1.8_block2.FCIDUMP', 'fci', {});
    expect(h4.stats.kernel).toBe('string');
    const n2 = await compare('N2_sto3g_R1.1A_block2.FCIDUMP', 'fci', {});
    expect(n2.stats.kernel).toBe('string');
    expect(n2.stats.nnz).toBe(1_400_064);
  });

  it('N2 STO-3G with an irrep filter (holes in the (α, β) table) and H8 on a worker thread', async () => {
    const n2 = await compare('N2_sto3g_R1.1A_block2.FCIDUMP', 'fci', { irrep: 'isym' });
    expect(n2.stats.kernel).toBe('string');
    expect(n2.matrix.rows).toBeLessThan(14_400);
    const h8 = await compare('H8_sto6g_R1.8_block2.FCIDUMP', 'fci', {}, 1);
    expect(h8.stats.kernel).toBe('string');
    expect(h8.stats.workers).toBe(1);
  });

  it('reordered space (Reference region first: rows sorted in the kernel) and truncated CISD', async () => {
    const r = await compare('N2_sto3g_R1.1A_block2.FCIDUMP', 'fci', { referenceLevel: 2 });
    expect(r.stats.kernel).toBe('string');
    const cisd = await compare('N2_sto3g_R1.1A_block2.FCIDUMP', { kind: 'cisd' }, { irrep: 'isym' });
    expect(cisd.matrix.rows).toBeGreaterThan(1);
  });
});
