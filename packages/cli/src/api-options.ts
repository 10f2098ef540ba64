/**
 * Checks of the one-call API's option objects (api.ts). A key the function does not know was
 * ignored without a word: SciPy's `tol` for solve (its `rtol` since SciPy 1.12) ran at the
 * default 1e-8 whatever was asked, and eigsh's `sigma` (shift-invert) returned the smallest
 * eigenvalues instead of those nearest sigma. `null` as the options threw a TypeError, and a
 * backend name such as 'gpu' or 'CPU' ran as 'auto'.
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import type { Backend } from './api';

/** SciPy / CuPy spellings and what this API calls them (undefined: not offered). */
const SCIPY_NAMES: Record<string, Record<string, string | undefined>> = {
  solve: { tol: 'rtol', maxiter: 'maxIterations', M: 'precond', preconditioner: 'precond', x0: undefined, atol: undefined, callback: undefined },
  eigsh: { rtol: 'tol', maxiter: 'maxIterations', sigma: undefined, v0: undefined, ncv: undefined, mode: undefined, return_eigenvectors: undefined },
};

/**
 * `options` when it is undefined or a plain object whose every key is in `known`; otherwise an
 * InvalidParameterError naming the key (and this API's name for a SciPy spelling).
 * @example
 * const o = checkedOptions('solve', { tol: 1e-10 }, ['rtol']); // throws: use rtol
 */
export function checkedOptions<T extends object>(fn: 'solve' | 'eigsh', options: T | null | undefined, known: readonly string[]): T {
  if (options === undefined) return {} as T;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidParameterError(`${fn} options`, 'an object (or nothing)', options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options);
  }
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const names = SCIPY_NAMES[fn]!;
    const hint = Object.hasOwn(names, key) ? (names[key] ? `: this API calls it '${names[key]}'` : ': not offered by this API') : '';
    throw new InvalidParameterError(`${fn} options.${key}`, `one of the options ${known.join(', ')}`, `an unknown option '${key}'${hint} (it would be ignored)`);
  }
  return options;
}

const BACKENDS: readonly Backend[] = ['auto', 'webgpu', 'cpu'];

/** 'auto' when undefined; 'webgpu' or 'cpu' as given; anything else (e.g. 'gpu', 'CPU') refused. */
export function checkedBackend(fn: 'solve' | 'eigsh', backend: unknown): Backend {
  if (backend === undefined) return 'auto';
  if (typeof backend === 'string' && (BACKENDS as readonly string[]).includes(backend)) return backend as Backend;
  throw new InvalidParameterError(`${fn} options.backend`, "'auto', 'webgpu' or 'cpu'", typeof backend === 'string' ? `'${backend}'` : String(backend));
}
