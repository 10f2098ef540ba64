/**
 * Driver plumbing: formats ('auto' → the hybrid ELL+CSR format on an excitation-ordered space),
 * a user backend, progress events, errors; the Reference + Expansion structure measured.
 */
import { HostOperator, HostVectorSpace, InvalidParameterError, type LinearOperator } from '@gpusparse/formats';
import { lowestIndices } from '@gpusparse/solvers';
import { describe, expect, it } from 'vitest';
import { type CiBackend, type CiProgress, ciEnergies } from '../src/ci';
import { buildCiSpace } from '../src/determinants/build';
import { readFcidump } from '../src/fcidump/node';
import { assembleHamiltonian } from '../src/hamiltonian/assemble';
import { regionStats } from '../src/hamiltonian/structure';
import { syntheticCiMatrix } from '../src/synthetic';
import { dataFile } from '../../../testdata/index';

const data = (f: string) => dataFile('fcidump', f);

describe('ciEnergies options', () => {
  it("format 'auto' picks the hybrid format for a reference-ordered space; same energies", async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const a = await ciEnergies(fd, { irrep: 1, format: 'auto', referenceLevel: 2, nroots: 2 });
    expect(a.format).toBe('hybrid');
    const b = await ciEnergies(fd, { irrep: 1, format: 'ell', nroots: 2 });
    expect(b.format).toBe('ell');
    for (let r = 0; r < 2; r++) expect(Math.abs(a.energies[r]! - b.energies[r]!)).toBeLessThan(1e-9);
    expect(Math.abs(a.energies[0]! - -4.3450794027)).toBeLessThan(1e-8);
  });

  it('a user backend is used for every product; progress events arrive in order', async () => {
    let applies = 0;
    const backend: CiBackend<Float64Array> = {
      space: new HostVectorSpace(),
      operator(matrix): LinearOperator<Float64Array> {
        const op = HostOperator.fromCsr(matrix);
        return {
          rows: op.rows,
          cols: op.cols,
          label: 'counting',
          apply: (x, y) => {
            applies++;
            op.apply(x, y);
          },
          applyScaled: (alpha, x, beta, y) => {
            applies++;
            op.applyScaled(alpha, x, beta, y);
          },
        };
      },
    };
    const stages: string[] = [];
    const r = await ciEnergies(data('Hubbard1D_L8_U2_block2.FCIDUMP'), { backend, onProgress: (p: CiProgress) => stages.push(p.stage) });
    expect(applies).toBeGreaterThanOrEqual(r.solver.matvecs);
    expect(applies).toBeGreaterThan(0);
    expect(Math.abs(r.energies[0]! - -6.2256341447)).toBeLessThan(1e-8);
    expect(stages[0]).toBe('read');
    expect(stages.indexOf('assembly')).toBeGreaterThan(stages.indexOf('space'));
    expect(stages.lastIndexOf('solve')).toBeGreaterThan(stages.indexOf('solve-start'));
    expect(r.timings.assembly).toBeGreaterThan(0);
    expect(r.assembly.bytesPerNnz).toBeGreaterThan(12);
  });

  it('rejects bad options with the expected values in the message', async () => {
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    await expect(ciEnergies(fd, { nroots: 37 })).rejects.toThrow(/nroots: expected an integer in 1\.\.36/);
    await expect(ciEnergies(fd, { ms2: 1 })).rejects.toBeInstanceOf(InvalidParameterError);
    await expect(ciEnergies(fd, { spin: { multiplicity: 2 } })).rejects.toThrow(/spin\.multiplicity/);
    await expect(ciEnergies(fd, { format: 'nope' })).rejects.toThrow(/parameter format: expected a registered format name \(one of csr, .*got 'nope'/);
    await expect(ciEnergies(fd, { space: { kind: 'cas', electrons: 3, orbitals: 2 } })).rejects.toThrow(/even number of core electrons/);
  });
});

describe('Reference + Expansion structure', () => {
  it('regionStats recovers the synthetic densities', () => {
    const s = syntheticCiMatrix({ n: 800, seed: 5 });
    const st = regionStats(s.matrix, s.boundary);
    expect(st.referenceDensity).toBeCloseTo(s.measured.referenceDensity, 12);
    expect(st.expansionDensity).toBeCloseTo(s.measured.expansionDensity, 12);
  });

  it('an excitation-ordered CISD matrix is denser in its Reference region', async () => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const { space } = buildCiSpace(fd, { kind: 'cisd' }, { irrep: 1, referenceLevel: 1 });
    const h = await assembleHamiltonian(fd, space, { workers: 0 });
    const st = regionStats(h.matrix, space.referenceSize);
    expect(space.referenceSize).toBeGreaterThan(1);
    expect(st.referenceDensity).toBeGreaterThan(st.expansionDensity);
  });
});

describe('lowestIndices', () => {
  it('equals the first k of a full sort by (value, index), ties included', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (const [n, k] of [[0, 1], [1, 1], [5, 5], [5, 9], [1000, 0], [1000, 1], [1000, 7], [1000, 64], [1000, 65], [300, 300]] as const) {
      const d = Float64Array.from({ length: n }, () => Math.floor(rand() * 20) / 4); // many ties
      const want = Array.from(d.keys()).sort((x, y) => d[x]! - d[y]! || x - y).slice(0, k);
      expect(lowestIndices(d, k)).toEqual(want);
    }
  });
});
