import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';
import { dataFile } from '../../../testdata/index';

const data = (f: string) => dataFile('matrices', f);
const h2o = new URL('../../chem/data/H2O_sto2g_hande.FCIDUMP', import.meta.url).pathname;

captureOutput();

describe('gpusparse solve / eigs / ci (CPU backend)', () => {
  it('solve --json: CG on a real SPD matrix converges, residual checked in float64', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpusparse-'));
    const plot = join(dir, 'conv.svg');
    expect(await main(['solve', data('bcsstk01.mtx'), '--backend', 'cpu', '--method', 'cg', '--precond', 'jacobi', '--rtol', '1e-10', '--plot', plot, '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.converged).toBe(true);
    expect(j.relativeResidualFloat64).toBeLessThan(1e-9);
    expect(readFileSync(plot, 'utf8')).toMatch(/<polyline/);
  });
  it('solve reports non-convergence with exit code 1', async () => {
    expect(await main(['solve', 'gen:poisson2d:30', '--backend', 'cpu', '--method', 'gmres', '--maxit', '3', '--rtol', '1e-12'])).toBe(1);
    expect(captured.stdout).toMatch(/max-iterations|breakdown/);
  });
  it('solve rejects an unknown method with exit code 2', async () => {
    expect(await main(['solve', 'gen:poisson2d:10', '--method', 'sor'])).toBe(2);
    expect(captured.stderr).toMatch(/--method: expected cg, gmres, bicgstab or bicg, got 'sor'/);
  });
  it('eigs: the 4 smallest eigenvalues of the 1-D Laplacian match the closed form', async () => {
    const n = 200;
    expect(await main(['eigs', `gen:laplacian1d:${n}`, '--backend', 'cpu', '--k', '4', '--method', 'lanczos', '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    const exact = [1, 2, 3, 4].map((k) => 2 - 2 * Math.cos((k * Math.PI) / (n + 1)));
    for (const [i, v] of (j.values as number[]).entries()) expect(Math.abs(v - exact[i]!)).toBeLessThan(1e-9);
  });
  it('ci: H2O/STO-2G ground and excited states in A1 match HANDE', async () => {
    expect(await main(['ci', h2o, '--backend', 'cpu', '--irrep', '1', '--nroots', '3', '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.determinants).toBe(133);
    expect(Math.abs(j.energies[0] - -72.786196191345)).toBeLessThan(1e-8);
    expect(j.s2).toHaveLength(3);
  });
  it('ci rejects a malformed space with exit code 2', async () => {
    expect(await main(['ci', h2o, '--space', 'cas:x'])).toBe(2);
    expect(captured.stderr).toMatch(/--space: expected/);
  });
});
