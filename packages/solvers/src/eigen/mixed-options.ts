/**
 * The option checks of eigsMixed (./mixed.ts), before any work: split from it for its length.
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { checkEigenInput, checkPositive } from './common';
import type { MixedEigenOptions } from './mixed-types';

/**
 * The checked settings of an `eigsMixed` call: the operators' shapes, the tolerances, the
 * acceptance rule and the guard. O(1).
 * @throws InvalidParameterError naming the first option that is out of range or inconsistent
 */
export function checkMixedOptions<V, S>(opts: MixedEigenOptions<V, S>) {
  const { k, fastOperator, hostOperator } = opts;
  checkEigenInput('eigsMixed fastOperator', fastOperator, k);
  const target = opts.devicePolish?.operator ?? hostOperator;
  if (!target) throw new InvalidParameterError('eigsMixed hostOperator', 'a float64 host operator (or devicePolish)', hostOperator);
  checkEigenInput(opts.devicePolish ? 'eigsMixed devicePolish.operator' : 'eigsMixed hostOperator', target, k);
  if (target.rows !== fastOperator.rows) {
    throw new InvalidParameterError(opts.devicePolish ? 'eigsMixed devicePolish.operator' : 'eigsMixed hostOperator', `${fastOperator.rows} rows like fastOperator`, target.rows);
  }
  checkPositive('eigsMixed tol', opts.tol);
  checkPositive('eigsMixed residualTol', opts.residualTol);
  checkPositive('eigsMixed fastTol', opts.fastTol);
  // named here rather than as the fast solver's own option (session 13: 'lanczos tol', 'lanczos maxIterations')
  if (opts.fastTol !== undefined && opts.fastTol >= 1) throw new InvalidParameterError('eigsMixed fastTol', 'a relative tolerance below 1 (≥ 1 accepts any vector)', opts.fastTol);
  const fastMax = opts.fastMaxIterations;
  if (fastMax !== undefined && !(Number.isSafeInteger(fastMax) && fastMax >= 0)) throw new InvalidParameterError('eigsMixed fastMaxIterations', 'an integer ≥ 0', fastMax);
  checkPositive('eigsMixed polishMaxSubspace', opts.polishMaxSubspace);
  const which = opts.which ?? 'smallest';
  if (which === 'largest' && opts.method !== 'lanczos') {
    throw new InvalidParameterError('eigsMixed which', `'smallest' with method '${opts.method}' ('largest' needs 'lanczos')`, which);
  }
  if (opts.method === 'davidson' && !opts.diagonal) throw new InvalidParameterError('eigsMixed diagonal', "a Float64Array with method 'davidson'", opts.diagonal);
  if (opts.polish === 'davidson' && !opts.diagonal) throw new InvalidParameterError('eigsMixed diagonal', "a Float64Array with polish 'davidson'", opts.diagonal);
  const tol = opts.tol ?? 1e-10;
  if (opts.rtol !== undefined && opts.residualTol !== undefined) {
    throw new InvalidParameterError('eigsMixed residualTol', 'undefined when rtol is given (rtol replaces the absolute rule)', opts.residualTol);
  }
  checkPositive('eigsMixed rtol', opts.rtol);
  // the polish's residual rule: relative with rtol, else absolute (default 1e-8)
  const rule = opts.rtol !== undefined ? { rtol: opts.rtol, ...(opts.atol === undefined ? {} : { atol: opts.atol }) } : { residualTol: opts.residualTol ?? 1e-8 };
  const accept = opts.accept ?? 'residual';
  if (accept !== 'residual' && accept !== 'bound') throw new InvalidParameterError('eigsMixed accept', "'residual' or 'bound'", accept);
  if (accept === 'bound' && opts.polish === 'lobpcg') throw new InvalidParameterError('eigsMixed polish', "'jd' or 'davidson' with accept 'bound' (a Davidson-based polish)", opts.polish);
  const guard = opts.guard ?? 1;
  if (!(Number.isInteger(guard) && guard >= 1)) throw new InvalidParameterError('eigsMixed guard', 'an integer ≥ 1', opts.guard);
  return { which, tol, rule, accept, guard };
}
