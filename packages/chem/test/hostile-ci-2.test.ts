/**
 * Hostile CI options, second sweep (session 6): a spin penalty of 0 or less ran before — 0
 * leaves the other spin states among the roots, a negative weight lowers them below the wanted
 * multiplicity — and was reported as converged roots of that multiplicity.
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { ciEnergies } from '../src/ci';
import { readFcidump } from '../src/fcidump/node';
import { dataFile } from '../../../testdata/index';

describe('ciEnergies: spin penalty weight', () => {
  it('penalty 0, −1, NaN, ∞: InvalidParameterError naming spin.penalty, before assembly', async () => {
    const fd = await readFcidump(dataFile('fcidump', 'H4_sto6g_R1.8_block2.FCIDUMP'));
    for (const penalty of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const run = ciEnergies(fd, { spin: { multiplicity: 1, penalty } });
      await expect(run).rejects.toThrow(InvalidParameterError);
      await expect(ciEnergies(fd, { spin: { multiplicity: 1, penalty } })).rejects.toThrow(/spin\.penalty: expected a finite weight > 0/);
    }
  });
});
