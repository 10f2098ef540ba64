/**
 * Issue 19's memory item on the host: a direct run reports what it holds per determinant (the
 * operator's strings, lists, diagonal and layout; the integrals; 8 B per Davidson vector) in the
 * result's notes, as the device direct path does; `sigma auto` keeps the line after its reason.
 */
import { describe, expect, it } from 'vitest';
import { ciEnergies } from '../src/ci';
import { buildCiSpace } from '../src/determinants/build';
import { directHamiltonian } from '../src/direct/ci';
import { autoHamiltonian } from '../src/direct/choose';
import { directSigmaOperator } from '../src/direct/operator';
import { readFcidump } from '../src/fcidump/node';
import { data } from './helpers/vectors';

describe('host direct σ: bytes per determinant in the notes', () => {
  it('N2/STO-3G Ag: the note gives the operator bytes per determinant and the integrals; sigma auto (direct) keeps it', async () => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep: 1 });
    const op = await directSigmaOperator(fcidump, space, { threads: 1 });
    const perDet = (op.bytes / space.size).toFixed(1);
    op.dispose();
    const r = await ciEnergies(fd, { irrep: 1, nroots: 1, hamiltonian: directHamiltonian({ threads: 1 }) });
    const line = r.notes.find((x) => x.startsWith('memory of the host direct σ'));
    expect(line).toBeDefined();
    expect(line).toContain(`(${perDet} B per determinant`);
    expect(line).toContain(`integrals ${((8 * 10 ** 4) / 1e6).toFixed(1)} MB`);
    // one expected product: assembling H cannot pay off, the cost model picks the direct σ and says why first
    const auto = await ciEnergies(fd, { irrep: 1, nroots: 1, hamiltonian: autoHamiltonian({ threads: 1, products: 1 }) });
    const i = auto.notes.findIndex((x) => x.startsWith('sigma auto: direct'));
    expect(i).toBeGreaterThanOrEqual(0);
    expect(auto.notes[i + 1]).toBe(line);
  });
});
