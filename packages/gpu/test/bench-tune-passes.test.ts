/**
 * bench/tune.ts's second pass (session 11, issue 16; bench/tune-passes.ts, no device): the order
 * differs from the first pass at its start, and each matrix's verdicts are the worse run's — the
 * session-10 call let one call's first-matrix cost (stencil27-56³: 518 ms with the upload, against
 * 469 in the call before) decide the overhead verdict alone.
 */
import { describe, expect, it } from 'vitest';
import { type PassRun, passSummary, shuffledOrder, worstOfTwo } from '../../../bench/tune-passes';

const run = (o: Partial<PassRun>): PassRun => ({ position: 3, kernel: 'ell', params: {}, spentMs: 300, overheadMs: 280, csrUploadMs: 20, budgetMs: 500, compileMs: 0, costs: {}, sameChoice: true, ratio: 1, ...o });

describe('shuffledOrder', () => {
  it('is a seeded permutation whose first item is never the first pass\'s first', () => {
    const names = Array.from({ length: 15 }, (_, i) => `m${i}`);
    for (let seed = 0; seed < 50; seed++) {
      const o = shuffledOrder(names, seed);
      expect([...o].sort()).toEqual([...names].sort());
      expect(o[0]).not.toBe('m0');
      expect(shuffledOrder(names, seed)).toEqual(o); // deterministic
    }
    expect(shuffledOrder(['only'], 1)).toEqual(['only']);
  });
});

describe('worstOfTwo', () => {
  const first = { overheadMs: 480, tuningMs: 518, overheadTargetMs: 500, ratio: 1.0, budgetMs: 500 };
  it('takes the overhead verdicts on the worse run, either way', () => {
    // session 10's stencil27: fine without the upload, over with it in pass 1; pass 2 quicker
    expect(worstOfTwo(first, run({ overheadMs: 200, spentMs: 230 }))).toMatchObject({ overheadMs: 480, spentMs: 518, overheadOk: true, totalWithUploadOk: false });
    // a quick pass 1 does not hide a slow pass 2
    expect(worstOfTwo({ ...first, overheadMs: 200, tuningMs: 220 }, run({ overheadMs: 560, spentMs: 590 }))).toMatchObject({ overheadMs: 560, overheadOk: false, totalWithUploadOk: false });
  });
  it('takes the product ratio on the worse run and counts it only with both', () => {
    expect(worstOfTwo(first, run({ ratio: 1.13, sameChoice: false }))).toMatchObject({ ratio: 1.13, within10pct: false });
    expect(worstOfTwo(first, run({ ratio: 1.04, sameChoice: false }))).toMatchObject({ ratio: 1.04, within10pct: true });
    expect(worstOfTwo(first, run({ ratio: undefined })).within10pct).toBeUndefined();
  });
  it('honours the budget only when both runs do (or a run says which fixed cost exceeded it)', () => {
    expect(worstOfTwo(first, run({ overheadMs: 700 })).budgetHonoured).toBe(false);
    expect(worstOfTwo(first, run({ overheadMs: 700, budgetNote: 'the statistics' })).budgetHonoured).toBe(true);
  });
});

describe('passSummary', () => {
  it('counts the worst-of-two verdicts and names each pass\'s first matrix', () => {
    const rows = [
      { name: 'a', position: 0, pass2: run({ position: 1 }), worstOfTwo: { overheadOk: true, totalWithUploadOk: false, within10pct: true, budgetHonoured: true } },
      { name: 'b', position: 1, pass2: run({ position: 0, compileMs: 120 }), worstOfTwo: { overheadOk: true, totalWithUploadOk: true, within10pct: true, budgetHonoured: true } },
    ];
    const [counts, second] = passSummary(rows);
    expect(counts).toMatch(/first matrices: a \(pass 1\), b \(pass 2\)/);
    expect(counts).toMatch(/overhead within max\(0\.5 s, 10 % of the work\) 2\/2, with the shared CSR upload 1\/2; product within 10 % in both passes 2\/2; budget honoured in both 2\/2/);
    expect(second).toMatch(/b 280\* \(compiles 120\)/);
    expect(passSummary([{ name: 'x' }])).toEqual([]);
  });
});
