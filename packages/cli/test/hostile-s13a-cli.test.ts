/**
 * Session 13 sweep through the API and the CLI: a relative eigen tolerance ≥ 1 accepts any
 * vector. `eigs --tol 2` reached the solvers (shift-invert's refusal, exit 3, naming
 * lanczosShiftInvert) and the API's eigsh({ tol: 2 }) 'converged' to values that are not
 * eigenvalues. Now the flag is a usage error (exit 2) naming --tol, the API an
 * InvalidParameterError naming tol. Found fine (exit 2 naming the flag): eigs -k 10^9, -k NaN,
 * --tol NaN / −1, --maxit 0; solve --rtol NaN, --atol NaN; ci --tol NaN, --maxit 0, --nroots 10^9
 * (exit 3, the space size named); solve --rtol 0 and --maxit 0 (exit 1, not converged).
 */
import { describe, expect, it } from 'vitest';
import { eigsh } from '../src/api';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();

describe('eigen tolerances ≥ 1', () => {
  it('eigs --tol 2 / 1: usage error naming --tol (exit 2); --tol 0.5 runs', async () => {
    for (const tol of ['2', '1']) {
      captured.stderr = '';
      expect(await main(['eigs', 'gen:poisson2d:10', '--backend', 'cpu', '--tol', tol])).toBe(2);
      expect(captured.stderr).toMatch(/--tol: expected a relative tolerance below 1/);
    }
    expect(await main(['eigs', 'gen:poisson2d:10', '--backend', 'cpu', '--tol', '0.5', '--json'])).toBe(0);
  });
  it('eigsh({ tol: 2 }): InvalidParameterError naming tol (was converged to non-eigenvalues)', async () => {
    const { generators } = await import('@gpusparse/formats');
    await expect(eigsh(generators.poisson2d(6), 2, { tol: 2, backend: 'cpu' })).rejects.toThrow(/parameter tol: expected a finite number > 0 and below 1 \(a relative tolerance: ≥ 1 accepts any vector\), got 2/);
    const ok = await eigsh(generators.poisson2d(6), 2, { tol: 1e-8, backend: 'cpu' });
    expect(Math.abs(ok.values[0]! - 8 * Math.sin(Math.PI / 14) ** 2)).toBeLessThan(1e-10);
  });
});
