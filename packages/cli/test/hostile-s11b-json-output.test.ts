/**
 * Session 11: `solve --json --with-x` built the whole document as one string; for x of ≳ 19 M
 * rows (≈ 28 characters an entry) that passes V8's longest string (2^29 − 24) after the solve:
 * "Invalid string length", exit 5, minutes of work lost. x is now written in pieces of 65 536
 * entries; the text is the same as before (checked against jsonText, −0 and non-finite included).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../src/main';
import { jsonText, printJsonWithArray } from '../src/util/context';
import { captured, captureOutput } from './capture';

captureOutput();

describe('a long array in --json output', () => {
  let writes: number[] = [];
  afterEach(() => {
    writes = [];
  });
  function spyWrites(): void {
    // the capture's spy, with each write's length noted
    vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
      writes.push(String(s).length);
      captured.stdout += String(s);
      return true;
    });
  }

  it('printJsonWithArray writes the same text as jsonText (−0, NaN, Infinity, an empty array)', () => {
    const x = Float64Array.of(1, -0, 0.1, -2.5e-300, Number.NaN, Number.POSITIVE_INFINITY, 1e21);
    const value = { method: 'cg', converged: true, history: [{ iteration: 0, residual: 1 }] };
    printJsonWithArray(value, 'x', x);
    expect(captured.stdout).toBe(`${jsonText({ ...value, x }, 2)}\n`);
    const back = JSON.parse(captured.stdout) as { x: unknown[] };
    expect(Object.is(back.x[1], -0)).toBe(true);
    captured.stdout = '';
    printJsonWithArray(value, 'x', new Float64Array(0));
    expect(captured.stdout).toBe(`${jsonText({ ...value, x: [] }, 2)}\n`);
  });

  it('300 000 entries: no write longer than 2 MB (printJson writes the whole document at once, 5.8 MB here)', () => {
    spyWrites();
    const x = Float64Array.from({ length: 300_000 }, (_, i) => Math.sin(i) / 3);
    printJsonWithArray({ converged: true }, 'x', x);
    expect(Math.max(...writes)).toBeLessThan(2 * 2 ** 20);
    expect(writes.reduce((s, n) => s + n, 0)).toBeGreaterThan(5e6);
    const back = JSON.parse(captured.stdout) as { x: number[] };
    expect(back.x).toHaveLength(300_000);
    expect(back.x[12345]).toBe(x[12345]);
  });

  it('solve --json --with-x on 90 000 rows: a valid document holding all of x, written in pieces (one string before)', async () => {
    spyWrites();
    expect(await main(['solve', 'gen:poisson2d:300', '--backend', 'cpu', '--json', '--with-x', '--rtol', '1e-2'])).toBe(0);
    const doc = JSON.parse(captured.stdout) as { x: number[]; rows: number };
    expect(doc.x).toHaveLength(90_000);
    expect(writes.length).toBeGreaterThan(2);
  }, 60000);
});
