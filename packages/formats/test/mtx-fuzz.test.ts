import { describe, expect, it } from 'vitest';
import { cpuMs } from '../../../scripts/test/cpu-time';
import type { CsrMatrix } from '../src/core/types';
import { csrEquals, validateCsr } from '../src/csr/csr';
import { rng } from '../src/generators/index';
import { MatrixMarketError, parseMatrixMarket, parseMatrixMarketStream } from '../src/mtx/index';

/** Valid seed files covering every format, field and symmetry the reader accepts. */
const CORPUS = [
  '%%MatrixMarket matrix coordinate real general\n% comment\n4 5 6\n1 1 1.5\n2 3 -2e-3\n4 5 .25\n3 1 7\n1 1 1\n4 4 -0\n',
  '%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 2\n2 1 -1\n3 2 4.000000000000001\n3 3 1e-300\n',
  '%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 3\n3 1 -4\n',
  '%%MatrixMarket matrix coordinate pattern symmetric\n%\n\n5 5 4\n2 1\n3 3\n5 4\n5 1\n',
  '%%MatrixMarket matrix coordinate real hermitian\n2 2 2\n1 1 1\n2 1 0.5\n',
  '%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n0\n5\n6\n',
  '%%MatrixMarket matrix array integer symmetric\n3 3\n1\n2\n3\n4\n5\n6\n',
  '%%MatrixMarket matrix array real skew-symmetric\n3 3\n1.5\n2\n-3\n',
  '%%MatrixMarket matrix coordinate real general\r\n2 2 1\r\n2 2 3.25\r\n',
].map((s) => new TextEncoder().encode(s));

const NUMBERS = ['0', '-1', '1', '2', '3', '4', '5', '6', '99', '2147483647', '2147483648', '4294967297', '1e400', 'nan', '-inf', '1.5', '.', '-', '+', '1e', '0x1', '1d5', '00', '-0', '9'.repeat(30), '3000000', '67108864'];
const SPECIAL = [0, 9, 10, 13, 32, 37, 43, 45, 46, 48, 49, 57, 101, 127, 128, 255];

type Rand = () => number;
const pick = <T>(r: Rand, a: readonly T[]): T => a[Math.floor(r() * a.length)]!;

function lines(b: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let s = 0;
  for (let k = 0; k <= b.length; k++) {
    if (k === b.length || b[k] === 10) {
      out.push(b.subarray(s, Math.min(k + 1, b.length)));
      s = k + 1;
    }
  }
  return out;
}
const join = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};

/** One deterministic mutation of a corpus file (or pure random bytes). */
function mutate(r: Rand, base: Uint8Array): Uint8Array {
  const kind = Math.floor(r() * 9);
  const b = base.slice();
  switch (kind) {
    case 0: {
      // byte flips
      const n = 1 + Math.floor(r() * 4);
      for (let t = 0; t < n && b.length > 0; t++) b[Math.floor(r() * b.length)] = r() < 0.5 ? pick(r, SPECIAL) : Math.floor(r() * 256);
      return b;
    }
    case 1:
      return b.slice(0, Math.floor(r() * b.length)); // truncation
    case 2: {
      const ls = lines(b);
      ls.splice(Math.floor(r() * ls.length), 1); // line deletion
      return join(ls);
    }
    case 3: {
      const ls = lines(b);
      const k = Math.floor(r() * ls.length);
      ls.splice(Math.floor(r() * ls.length), 0, ls[k]!); // line duplication
      return join(ls);
    }
    case 4: {
      // replace a number token
      const text = new TextDecoder().decode(b);
      const spans = [...text.matchAll(/[-+.0-9eE]+/g)];
      if (spans.length === 0) return b;
      const m = pick(r, spans);
      return new TextEncoder().encode(text.slice(0, m.index) + pick(r, NUMBERS) + text.slice(m.index! + m[0].length));
    }
    case 5: {
      const n = Math.floor(r() * 300); // random binary
      return Uint8Array.from({ length: n }, () => (r() < 0.2 ? pick(r, SPECIAL) : Math.floor(r() * 256)));
    }
    case 6: {
      // insert random bytes
      const at = Math.floor(r() * (b.length + 1));
      const ins = Uint8Array.from({ length: 1 + Math.floor(r() * 8) }, () => pick(r, SPECIAL));
      return join([b.subarray(0, at), ins, b.subarray(at)]);
    }
    case 7: {
      // swap two lines (moves the banner / size line around)
      const ls = lines(b);
      const i = Math.floor(r() * ls.length);
      const j = Math.floor(r() * ls.length);
      [ls[i], ls[j]] = [ls[j]!, ls[i]!];
      return join(ls.map((l) => (l[l.length - 1] === 10 ? l : join([l, Uint8Array.of(10)]))));
    }
    default: {
      // two mutations in a row
      return mutate(r, mutate(r, b));
    }
  }
}

type Outcome = { ok: true; m: CsrMatrix } | { ok: false; e: MatrixMarketError };

/** Parse, requiring either a valid CSR result or a MatrixMarketError; anything else fails. */
function outcome(input: Uint8Array, label: string): Outcome {
  try {
    const r = parseMatrixMarket(input, { name: 'fuzz.mtx' });
    validateCsr(r.matrix, label);
    expect(r.matrix.rows, label).toBe(r.header.rows);
    expect(r.matrix.values.every(Number.isFinite), label).toBe(true);
    return { ok: true, m: r.matrix };
  } catch (e) {
    if (!(e instanceof MatrixMarketError)) {
      throw new Error(`${label}: expected MatrixMarketError, got ${(e as Error)?.constructor?.name}: ${(e as Error)?.message}\ninput: ${JSON.stringify(new TextDecoder().decode(input))}`);
    }
    expect(Number.isInteger(e.line) && e.line >= 0, label).toBe(true);
    return { ok: false, e };
  }
}

describe('Matrix Market fuzzing (seeded, deterministic)', () => {
  it('20000 mutated files: no crash, no hang, every failure a MatrixMarketError', async () => {
    const r = rng(20261121);
    let failures = 0;
    let successes = 0;
    let slowest = 0;
    // CPU time, not wall time: on a loaded CI machine the process waits its turn between readings
    const start = cpuMs();
    for (let t = 0; t < 20000; t++) {
      const input = mutate(r, pick(r, CORPUS));
      const label = `case ${t}`;
      const t0 = cpuMs();
      const res = outcome(input, label);
      const dt = cpuMs() - t0;
      slowest = Math.max(slowest, dt);
      expect(dt, `${label} took ${dt} ms of CPU`).toBeLessThan(500);
      if (res.ok) successes++;
      else failures++;
      if (t % 8 === 0) {
        // the streaming path with random chunk sizes must agree exactly
        const chunks: Uint8Array[] = [];
        for (let s = 0; s < input.length; ) {
          const n = 1 + Math.floor(r() * 9);
          chunks.push(input.slice(s, s + n));
          s += n;
        }
        let streamed: Outcome;
        try {
          streamed = { ok: true, m: (await parseMatrixMarketStream(chunks, { name: 'fuzz.mtx' })).matrix };
        } catch (e) {
          if (!(e instanceof MatrixMarketError)) throw new Error(`${label} (stream): ${(e as Error).message}`);
          streamed = { ok: false, e };
        }
        expect(streamed.ok, label).toBe(res.ok);
        if (res.ok && streamed.ok) expect(csrEquals(res.m, streamed.m), label).toBe(true);
        if (!res.ok && !streamed.ok) expect(streamed.e.message, label).toBe(res.e.message);
      }
    }
    // the mutations must exercise both outcomes
    expect(failures).toBeGreaterThan(5000);
    expect(successes).toBeGreaterThan(500);
    // about 1.5 s on an idle core; the bound only catches a hang or a quadratic blow-up
    expect(cpuMs() - start).toBeLessThan(30_000);
    expect(slowest).toBeLessThan(500);
  }, 60_000);

  it('a tiny file claiming a huge empty matrix is refused instead of allocating gigabytes', () => {
    const text = '%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 0\n';
    expect(() => parseMatrixMarket(text)).toThrow(/maxDimension/);
    expect(parseMatrixMarket('%%MatrixMarket matrix coordinate real general\n5000000 3 0\n', { maxDimension: 5e6 }).matrix.rows).toBe(5e6);
  });
});
