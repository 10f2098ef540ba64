/**
 * Session 14 hardening (s14-harden-e): the session-13 csr-vi conversions attacked as a user who
 * passes them anything. Found before the fixes:
 * - `csrViFromCsrParallel(a, {}, { workers: 2.5 })` returned a matrix missing the last rows'
 *   entries (the row ranges stopped at chunk ⌊n⌋ of n), vouched for as valid: y = A·x silently
 *   wrong; workers 0 / −3 / NaN and minEntries NaN ran serially without a word;
 * - a worker that exited without answering (process.exit, a kill) left the conversion pending for
 *   ever; one that threw passed its bare error up (no rows named); `null` gave a TypeError;
 * - validateCsrVi accepted an `nnz` that disagreed with the arrays (csrViToCsr then returned a CSR
 *   whose rowPtr runs past its colIdx), and words or raw entries out of column order or repeated
 *   across the two streams (csrViToCsr returned a CSR with unsorted or duplicate columns).
 */
import { describe, expect, it } from 'vitest';
import { type CsrMatrix, type CsrViMatrix, csrFromTriplets, csrViFromCsr, csrViFromCsrParallel, csrViSpmv, csrViToCsr, InvalidMatrixError, InvalidParameterError, validateCsr, validateCsrVi } from '../src/index';
import { RealWorker, restoreWorkersAfterEach, setWorkerClass, type WorkerCtor } from './support/worker-swap';

restoreWorkersAfterEach();

/** Replace the `which`-th Worker the library starts (0-based) by one running `code`; record them all. */
function sabotage(which: number, code: string): InstanceType<WorkerCtor>[] {
  const made: InstanceType<WorkerCtor>[] = [];
  setWorkerClass(
    class extends RealWorker {
      constructor(script: string | URL, opts?: ConstructorParameters<WorkerCtor>[1]) {
        super(made.length === which ? code : script, opts);
        made.push(this);
      }
    } as WorkerCtor,
  );
  return made;
}

/** 50 rows × 6 entries over 40 columns, 5 repeated values. */
function matrix(): CsrMatrix {
  const [ri, ci, v] = [[], [], []] as number[][];
  for (let r = 0; r < 50; r++) for (let j = 0; j < 6; j++) [ri.push(r), ci.push((r * 7 + j * 13) % 40), v.push((j % 5) + 1)];
  return csrFromTriplets(50, 40, ri, ci, v);
}
const a = matrix();
const keys = ['packPtr', 'packed', 'segPtr', 'segEnd', 'segBase', 'rawPtr', 'rawCols', 'table', 'rawValues'] as const;
const same = (p: CsrViMatrix, s: CsrViMatrix) => keys.every((k) => p[k].length === s[k].length && p[k].every((x, i) => Object.is(x, s[k][i])));

/** Resolves to 'hung' when `p` has not settled within `ms` (the failure mode before the fix). */
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<'hung'>((r) => setTimeout(() => r('hung'), ms).unref())]);

/** Whether every worker in `made` has exited within `ms`. */
async function allExited(made: InstanceType<WorkerCtor>[], ms: number): Promise<boolean> {
  const exits = made.map((w) => (w.threadId === -1 ? Promise.resolve() : new Promise<void>((r) => w.once('exit', () => r()))));
  return (await within(Promise.all(exits), ms)) !== 'hung';
}

describe('csrViFromCsrParallel on hostile options and dying workers', () => {
  it('workers 2.5 / 1.5 / 0 / −3 / NaN / Infinity / 300 and minEntries NaN / −1 are refused by name (2.5 returned 240 of 300 entries)', async () => {
    for (const workers of [2.5, 1.5, 0, -3, Number.NaN, Number.POSITIVE_INFINITY, 300]) {
      await expect(csrViFromCsrParallel(a, {}, { workers, minEntries: 0 }), String(workers)).rejects.toThrow(/parameter workers: expected an integer in \[1, 256\]/);
    }
    for (const minEntries of [Number.NaN, -1]) await expect(csrViFromCsrParallel(a, {}, { workers: 2, minEntries })).rejects.toThrow(/parameter minEntries: expected a number ≥ 0/);
    await expect(csrViFromCsrParallel(null as unknown as CsrMatrix)).rejects.toThrow(InvalidMatrixError);
  });

  it('1 worker, 2, 3 and more workers than rows give the serial arrays bit for bit', async () => {
    const s = csrViFromCsr(a);
    for (const workers of [1, 2, 3, 64, 256]) expect(same(await csrViFromCsrParallel(a, {}, { workers, minEntries: 0 }), s), String(workers)).toBe(true);
    const one = csrFromTriplets(1, 3, [0, 0], [0, 2], [5, 5]);
    expect(same(await csrViFromCsrParallel(one, {}, { workers: 8, minEntries: 0 }), csrViFromCsr(one))).toBe(true);
  });

  it('a worker that exits without answering rejects the conversion naming its rows and exit code, and no worker is left running', async () => {
    const made = sabotage(1, 'process.exit(3)');
    const run = within(csrViFromCsrParallel(a, {}, { workers: 3, minEntries: 0 }), 20_000);
    await expect(run).rejects.toThrow(/csr-vi conversion worker \(rows \d+…\d+\) exited \(code 3\) before its result/);
    expect(made.length).toBe(3);
    expect(await allExited(made, 10_000)).toBe(true);
  }, 40_000);

  it('a worker that throws rejects naming its rows; a normal conversion afterwards is complete', async () => {
    const made = sabotage(0, 'throw new Error("boom in the worker")');
    await expect(within(csrViFromCsrParallel(a, {}, { workers: 2, minEntries: 0 }), 20_000)).rejects.toThrow(/csr-vi conversion worker \(rows 0…\d+\): .*boom in the worker/);
    expect(await allExited(made, 10_000)).toBe(true);
    setWorkerClass(RealWorker);
    expect(same(await csrViFromCsrParallel(a, {}, { workers: 2, minEntries: 0 }), csrViFromCsr(a))).toBe(true);
  }, 40_000);
});

describe('validateCsrVi on hand-built matrices', () => {
  const m = csrViFromCsr(csrFromTriplets(2, 8, [0, 0, 0, 0, 1, 1], [1, 2, 3, 4, 0, 7], [5, 5, 5, 6, 5, 9]), { valueBits: 4 });

  it('an nnz that disagrees with the stored entries is refused (csrViToCsr returned rowPtr past colIdx)', () => {
    expect(() => validateCsrVi({ ...m, nnz: m.nnz - 1 })).toThrow(/nnz 5, expected 6 \(4 words \+ 2 raw entries\)/);
    expect(() => csrViToCsr({ ...m, nnz: m.nnz + 3 })).toThrow(InvalidMatrixError);
  });

  it('words or raw entries out of column order, or a column in both streams, are refused (csrViToCsr returned non-canonical CSR)', () => {
    const p = m.packed.slice();
    [p[0], p[1]] = [p[1]!, p[0]!];
    expect(() => validateCsrVi({ ...m, packed: p })).toThrow(/row 0, word 1: column 1 after column 2/);
    const twoRaw = csrViFromCsr(csrFromTriplets(1, 8, [0, 0, 0, 0], [1, 3, 5, 6], [1, 2, 3, 4]), { valueBits: 4 });
    expect(twoRaw.rawCols.length).toBe(4);
    const rc = twoRaw.rawCols.slice().reverse();
    expect(() => validateCsrVi({ ...twoRaw, rawCols: rc })).toThrow(/row 0, raw entry 1: column 5 after column 6/);
    // a raw entry on a word's column: two values for one entry
    const rawCols = m.rawCols.slice();
    rawCols[0] = 2; // row 0's raw entry (value 6 at column 4) moved onto the word at column 2
    expect(() => csrViToCsr({ ...m, rawCols })).toThrow(/row 0: column 2 both in a word and in the raw stream/);
  });

  it('what the conversions build still passes, and round-trips to canonical CSR', () => {
    const back = csrViToCsr(m);
    expect(() => validateCsr(back)).not.toThrow();
    expect([...csrViSpmv(m, new Float64Array(8).fill(1))]).toEqual([21, 14]);
    expect(() => csrViFromCsr(a, { valueBits: 2.5 })).toThrow(InvalidParameterError);
  });
});
