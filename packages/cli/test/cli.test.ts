import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';
import { dataFile } from '../../../testdata/index';

const data = (f: string) => dataFile('matrices', f);

captureOutput();

describe('gpusparse CLI', () => {
  it('prints usage and exits 2 without a command', async () => {
    expect(await main([])).toBe(2);
    expect(captured.stdout).toMatch(/usage: gpusparse <command>/);
  });
  it('rejects an unknown command with exit 2 and no stack trace', async () => {
    expect(await main(['frobnicate'])).toBe(2);
    expect(captured.stderr).toMatch(/unknown command 'frobnicate'/);
    expect(captured.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  });
  it('info prints statistics and the memory table of a real matrix', async () => {
    expect(await main(['info', data('bcsstk01.mtx')])).toBe(0);
    expect(captured.stdout).toMatch(/48 x 48, nnz 400/);
    expect(captured.stdout).toMatch(/RSDP/);
    expect(captured.stdout).toMatch(/^csr\s/m);
  });
  it('info --json gives machine-readable statistics', async () => {
    expect(await main(['info', data('bcsstk01.mtx'), '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.stats.nnz).toBe(400);
    expect(j.symmetry).toBe('symmetric');
    expect(j.formats.find((f: { format: string }) => f.format === 'csr').bytesF64).toBe(400 * 8 + 400 * 4 + 49 * 4);
  });
  it('info names a missing file with exit code 3', async () => {
    expect(await main(['info', '/nonexistent/x.mtx'])).toBe(3);
    expect(captured.stderr).toMatch(/x\.mtx/);
  });
  it('info writes a spy plot with the hybrid BOUNDARY drawn', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpusparse-'));
    const svg = join(dir, 'spy.svg');
    expect(await main(['info', 'gen:cilike:300', '--spy', svg, '--overlay', 'hybrid'])).toBe(0);
    const text = readFileSync(svg, 'utf8');
    expect(text.startsWith('<svg')).toBe(true);
    expect(text).toMatch(/BOUNDARY = \d+/);
  });
  it('convert writes a SELL-C-sigma JSON and checks the round trip', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpusparse-'));
    const o = join(dir, 'a.json');
    expect(await main(['convert', data('bcsstk01.mtx'), '--to', 'sell', '--C', '8', '--sigma', '16', '-o', o, '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.roundTripExact).toBe(true);
    expect(j.params).toMatchObject({ C: 8, sigma: 16 });
    const conv = JSON.parse(readFileSync(o, 'utf8'));
    expect(conv.format).toBe('sell');
    expect(conv.rowPerm).toHaveLength(48);
  });
  it('convert rejects an unknown parameter with exit 2', async () => {
    expect(await main(['convert', data('bcsstk01.mtx'), '--to', 'csr', '--param', 'zz=1', '-o', '/tmp/x.json'])).toBe(2);
    expect(captured.stderr).toMatch(/unknown parameter/);
  });
});
