/**
 * `gpusparse eigs` and `gpusparse ci` convergence defaults (issue 13 point 7, issue 17 eigs):
 * relative residual rule, shift-invert for the smallest eigenvalues of stiff SPD matrices,
 * strict `--maxit`, the CI verdict on the requested roots only. CPU backend.
 */
import { existsSync } from 'node:fs';
import { readMatrixMarket } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { csrToDense, denseEigenvalues } from '../../solvers/test/eigen-matrices'; // ml-matrix's dense solver
import { eigsProgress } from '../src/commands/eigs';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

const data = (f: string) => new URL(`../../../../shared/data/matrices/${f}`, import.meta.url).pathname;
const h2o = new URL('../../chem/data/H2O_sto2g_hande.FCIDUMP', import.meta.url).pathname;
const shared = existsSync(data('bcsstk09.mtx'));

captureOutput();

/** bcsstk09's four smallest eigenvalues (ml-matrix dense EigenvalueDecomposition of the 1083×1083 matrix). */
const BCSSTK09 = [7102.2290572421625, 27341.557902541997, 27341.55790262667, 54956.82031220751];

async function denseSmallest(path: string, k: number): Promise<number[]> {
  return denseEigenvalues(csrToDense((await readMatrixMarket(path)).matrix)).slice(0, k);
}

describe.skipIf(!shared)('eigs on real stiff matrices (../shared/data)', () => {
  for (const method of ['lanczos', 'lobpcg']) {
    it(`bcsstk09 (‖A‖ ≈ 6.8e7) --method ${method}: converged by default, λ to 1e-10`, async () => {
      const extra = method === 'lanczos' ? ['--shift-invert', 'off'] : [];
      expect(await main(['eigs', data('bcsstk09.mtx'), '--backend', 'cpu', '--k', '4', '--method', method, ...extra, '--json'])).toBe(0);
      const j = JSON.parse(captured.stdout);
      expect(j.converged).toBe(true);
      expect(j.tolerance.rule).toBe('‖A·v − λ·v‖ ≤ max(tol·‖A‖est, atol)');
      (j.values as number[]).forEach((v, i) => { expect(Math.abs(v - BCSSTK09[i]!) / BCSSTK09[i]!).toBeLessThan(1e-10); });
    });
  }

  it("the README's form `eigs A --k 4 --method lanczos --which smallest` converges on a stiff SPD matrix (bcsstk04, cond 2e6) by shift-invert", async () => {
    const ref = await denseSmallest(data('bcsstk04.mtx'), 4);
    expect(await main(['eigs', data('bcsstk04.mtx'), '--backend', 'cpu', '--k', '4', '--method', 'lanczos', '--which', 'smallest', '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.method).toMatch(/shift-invert/);
    expect(j.converged).toBe(true);
    (j.values as number[]).forEach((v, i) => { expect(Math.abs(v - ref[i]!) / ref[i]!, `λ${i}`).toBeLessThan(1e-8); });
  });

  it('plain Lanczos (--shift-invert off) reports non-convergence honestly, with a hint', async () => {
    expect(await main(['eigs', data('bcsstk04.mtx'), '--backend', 'cpu', '--k', '4', '--shift-invert', 'off', '--maxit', '200'])).toBe(1);
    expect(captured.stdout).toMatch(/not converged \(max-iterations\) in 200 iterations/);
    expect(captured.stdout).toMatch(/note: the smallest eigenvalues of a stiff matrix converge slowly/);
  });
});

describe('--maxit', () => {
  for (const bad of ['0', '-1', '1.5', '1e3', '0x10', '', ' 5', '9007199254740993']) {
    it(`eigs and ci refuse --maxit '${bad}' with exit code 2`, async () => {
      expect(await main(['eigs', 'gen:laplacian1d:20', '--backend', 'cpu', `--maxit=${bad}`])).toBe(2);
      expect(captured.stderr).toMatch(/--maxit: expected an integer ≥ 1/);
      captured.stderr = '';
      expect(await main(['ci', h2o, '--backend', 'cpu', `--maxit=${bad}`])).toBe(2);
      expect(captured.stderr).toMatch(/--maxit: expected an integer ≥ 1/);
    });
  }

  it('eigs --maxit caps the iterations (exit 1 when that is too few)', async () => {
    expect(await main(['eigs', 'gen:laplacian1d:300', '--backend', 'cpu', '--k', '2', '--shift-invert', 'off', '--maxit', '7', '--json'])).toBe(1);
    const j = JSON.parse(captured.stdout);
    expect(j.reason).toBe('max-iterations');
    expect(j.iterations).toBe(7);
  });

  it('ci --maxit caps the Davidson iterations (exit 1 when that is too few)', async () => {
    expect(await main(['ci', h2o, '--backend', 'cpu', '--irrep', '1', '--nroots', '2', '--maxit', '3', '--json'])).toBe(1);
    const j = JSON.parse(captured.stdout);
    expect(j.solver.converged).toBe(false);
    expect(j.solver.iterations).toBe(3);
  });
});

describe('ci: convergence is judged on the requested roots', () => {
  it('H2O/STO-2G --irrep 2 --nroots 2 --multiplicity 1: converged although the guard root is not yet', async () => {
    // the two singlets converge by iteration ~52; the guard root (third) needs 58 iterations
    expect(await main(['ci', h2o, '--backend', 'cpu', '--irrep', '2', '--nroots', '2', '--multiplicity', '1', '--solver', 'davidson', '--maxit', '55', '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    expect(j.solver.converged).toBe(true);
    expect(j.solver.iterations).toBeLessThan(55);
    expect(j.energies).toHaveLength(2);
    (j.residualNorms as number[]).forEach((r) => { expect(r).toBeLessThan(1e-8); });
    (j.s2 as number[]).forEach((s) => { expect(Math.abs(s)).toBeLessThan(1e-6); });
  });
});

describe.skipIf(Boolean(process.stderr.isTTY))('eigs progress off a terminal', () => {
  it('one line per interval on stderr: iteration, pairs below the threshold, best and worst residual', () => {
    const info = { iteration: 12, values: [1, 2], residualNorms: [1e-3, 1e-9], threshold: 1e-8 };
    const quiet = eigsProgress('lanczos', true); // 5 s interval: nothing in the first seconds
    quiet.update(info);
    expect(captured.stderr).toBe('');
    const p = eigsProgress('lanczos', true, 0);
    p.update(info);
    expect(captured.stderr).toMatch(/^eigs lanczos: iter 12, 1\/2 converged, residual best 1\.00e-9 worst 1\.00e-3, \d+ s\n$/);
    captured.stderr = '';
    eigsProgress('lanczos', false, 0).update(info); // --no-progress / --json
    expect(captured.stderr).toBe('');
  });
});
