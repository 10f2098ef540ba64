/**
 * Session 13: ciEnergies' `onProgress` returning a Promise. It is a notification (it cannot stop
 * the run), so it is not awaited; but a rejection was left unhandled (which ends a Node process).
 * Now the rejection is kept and ciEnergies rejects with that error once the run is over; an async
 * callback that resolves changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { ciEnergies } from '../src/index';
import { readFcidump } from '../src/fcidump/node';
import { data } from './helpers/vectors';

describe('ciEnergies with an async onProgress', () => {
  it('H4 Davidson: a rejecting callback rejects the run with its error; a resolving one gives the same energies', async () => {
    const fd = await readFcidump(data('H4_sto6g_R1.8_block2.FCIDUMP'));
    const plain = await ciEnergies(fd, { workers: 0, nroots: 2, solver: 'davidson' });
    const stages: string[] = [];
    const ok = await ciEnergies(fd, { workers: 0, nroots: 2, solver: 'davidson', onProgress: async (p) => { await null; stages.push(p.stage); } });
    expect(ok.energies).toEqual(plain.energies);
    expect(stages).toContain('solve');
    const boom = new Error('progress sink closed');
    await expect(ciEnergies(fd, { workers: 0, nroots: 2, solver: 'davidson', onProgress: (p) => (p.stage === 'solve' ? Promise.reject(boom) : undefined) })).rejects.toBe(boom);
  });
});
