/**
 * Session 11 hostile FCIDUMP headers and paths. TREL=.TRUE. (a relativistic file: Kramers spinors,
 * complex integrals, in NECI's and M7's reading) was accepted and read as spatial orbitals — an
 * energy without a word. Now refused at its line, like IUHF=1. A FCIDUMP from a named pipe was
 * opened twice (gzip sniff, then the stream): ESPIPE; now one open serves both.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { parseFcidump } from '../src/fcidump/index';
import { readFcidump } from '../src/fcidump/node';

const H2 = ` &FCI NORB=2,NELEC=2,MS2=0,
  ORBSYM=1,1,
  ISYM=1,
 &END
  0.6745   1   1   1   1
  0.1813   2   1   2   1
  0.6636   2   1   1   1
  0.6975   2   2   2   2
 -1.2528   1   1   0   0
 -0.4759   2   2   0   0
  0.7137   0   0   0   0
`;
const withKey = (kv: string) => H2.replace('MS2=0,', `MS2=0, ${kv},`);

describe('TREL (relativistic FCIDUMP)', () => {
  it('TREL=.TRUE. and TREL=1: refused naming the key and its line (read as spatial orbitals before)', () => {
    expect(() => parseFcidump(withKey('TREL=.TRUE.'), { file: 'rel.FCIDUMP' })).toThrow(/rel\.FCIDUMP:1: expected a non-relativistic FCIDUMP \(TREL=\.FALSE\. or absent\), got TREL=true, which is not supported \(relativistic spinor integrals\)/);
    expect(() => parseFcidump(withKey('TREL=1'), { file: 'rel.FCIDUMP' })).toThrow(/got TREL=1, which is not supported/);
  });
  it('TREL=.FALSE. and TREL=0 read as without it (same integrals)', () => {
    const plain = parseFcidump(H2);
    for (const kv of ['TREL=.FALSE.', 'TREL=0']) {
      const f = parseFcidump(withKey(kv));
      expect(f.ecore).toBe(plain.ecore);
      expect(Array.from(f.h1)).toEqual(Array.from(plain.h1));
    }
  });
});

const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s11b-fcidump-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(process.platform === 'win32')('a FCIDUMP from a named pipe', () => {
  for (const [name, bytes] of [['plain', Buffer.from(H2)], ['gzip', gzipSync(H2)]] as const) {
    it(`${name}: read once, the same integrals as the text (ESPIPE before)`, async () => {
      const fifo = join(dir, `${name}.fifo`);
      execFileSync('mkfifo', [fifo]);
      const src = join(dir, `${name}.src`);
      writeFileSync(src, bytes);
      const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', src, fifo], { stdio: 'ignore' });
      let timer: NodeJS.Timeout | undefined;
      try {
        const f = await Promise.race([readFcidump(fifo), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no answer in 60 s')), 60_000)))]);
        expect(f.ecore).toBe(0.7137);
        expect(f.norb).toBe(2);
      } finally {
        clearTimeout(timer);
        writer.kill();
        try {
          closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
        } catch {
          // no reader waiting
        }
      }
    }, 90_000); // a hang is forever; a loaded CI machine can take seconds to start the writer
  }
  it('a regular gzip file still reads (the one-open path)', async () => {
    const p = join(dir, 'h2.FCIDUMP.gz');
    writeFileSync(p, gzipSync(H2));
    expect((await readFcidump(p)).ecore).toBe(0.7137);
    expect(readFileSync(p).length).toBeGreaterThan(0);
  });
});
