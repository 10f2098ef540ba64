/**
 * The in-solve fixture of the session-8 hostile tests (hostile-s8-in-solve, hostile-s8b-in-solve):
 * in-solve tuning over four CSR/ELL candidates, checked to give an InSolveOperator with at least
 * one candidate besides the verified kernel. Uses vitest's expect (the benches use ./faults.ts).
 */
import type { CsrMatrix } from '@gpusparse/formats';
import { expect } from 'vitest';
import { type GpuOperator, InSolveOperator } from '../../src/index';
import { testContext } from '../helpers';
import { internals, type Tuned, tunedInSolve } from './faults';

/** The candidates the session-8 in-solve tests tune over. */
export const IN_SOLVE_CANDIDATES = ['csr-scalar', 'csr-vector', 'ell', 'sliced-ell'];

/** In-solve tuning of `a` on the test context: the operator and its candidates other than the verified one. */
export async function inSolve(a: CsrMatrix): Promise<{ op: Tuned; others: GpuOperator[] }> {
  const ctx = await testContext();
  const op = await tunedInSolve(ctx, a, IN_SOLVE_CANDIDATES);
  expect(op).toBeInstanceOf(InSolveOperator);
  const others = internals(op).others;
  expect(others.length).toBeGreaterThanOrEqual(1);
  return { op: op as Tuned, others };
}
