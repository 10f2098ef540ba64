/**
 * Checks of a caller's LinearOperator that its TypeScript type cannot make: the products are
 * synchronous (`apply(x, y): void`), yet an `async apply` type-checks (a function returning a
 * Promise is assignable to one returning void) and its y is written only after the solver has
 * read it. Lanczos then reported the eigenvalue 0 of the zero product as converged (the true
 * smallest was 0.38). Sizes must be integers: a string '4' passed as rows came out as
 * "expected length 4, got 4".
 * @module
 */
import { InvalidParameterError, type LinearOperator } from '@gpusparse/formats';

/** True for an `async function` / `async` method (checked without calling it). */
function isAsyncFunction(f: unknown): boolean {
  return typeof f === 'function' && Object.prototype.toString.call(f) === '[object AsyncFunction]';
}

/**
 * Throw InvalidParameterError when `op`'s rows or cols are not integers ≥ 0, or when one of its
 * products (apply, applyScaled, applyTranspose) is an async function. O(1); nothing is called.
 * @example
 * assertUsableOperator('lanczos', op); // throws for { async apply(x, y) { … } }
 */
export function assertUsableOperator<V>(where: string, op: LinearOperator<V>): void {
  for (const key of ['rows', 'cols'] as const) {
    const n = op[key] as unknown;
    if (!Number.isSafeInteger(n) || (n as number) < 0) {
      throw new InvalidParameterError(`${where} operator ${key}`, 'an integer ≥ 0 (a number)', typeof n === 'string' ? `the string '${n}'` : n);
    }
  }
  for (const key of ['apply', 'applyScaled', 'applyTranspose'] as const) {
    if (isAsyncFunction(op[key])) {
      throw new InvalidParameterError(
        `${where} operator ${key}`,
        'a synchronous product that has written y when it returns (LinearOperator products return void)',
        `an async function: y would be read before it is written (compute the product before the solve, or keep it synchronous)`,
      );
    }
  }
}

/**
 * Check what one product returned (call it around every product of a caller's operator):
 * `apply: (x, y) => work(x, y)` with an async `work`, or any plain function returning a
 * Promise, is not an async function, so {@link assertUsableOperator} cannot see it; its y is
 * written after the solver read it (a silent wrong answer). A thenable here is refused; its own
 * rejection, if any, is swallowed (an unhandled rejection would end the process). With `y` (the
 * product's output vector): an array returned that is not y itself is refused too — the product
 * returned its result instead of writing it. O(1): one comparison when the product returned undefined.
 * @example
 * returnedVoid(op.apply(x, y), 'cg', 'apply', y); // throws when apply returned a Promise
 */
export function returnedVoid(ret: unknown, where: string, key: 'apply' | 'applyScaled' | 'applyTranspose' | 'preconditioner apply' | 'preconditioner applyTranspose', y?: unknown): void {
  if (ret === undefined || ret === null || ret === y || (typeof ret !== 'object' && typeof ret !== 'function')) return;
  // session 13: a product that returns its result instead of writing y left y as it was — lanczos and
  // lobpcg then 'converged' to the eigenvalue 0 of the zero product (returning y itself is fine)
  if (y !== undefined && (ArrayBuffer.isView(ret) || Array.isArray(ret))) {
    throw new InvalidParameterError(
      `${where} operator ${key}`,
      'a product that writes its result into y and returns nothing (LinearOperator products return void)',
      `a returned ${Array.isArray(ret) ? 'Array' : (ret as object).constructor?.name ?? 'typed array'} of length ${(ret as ArrayLike<unknown>).length}: y was left as it was (write into y, e.g. y.set(result))`,
    );
  }
  let then: unknown;
  try {
    then = (ret as { then?: unknown }).then;
  } catch {
    return; // a getter that throws: not a thenable we can reason about; the product wrote y or not as it would anyway
  }
  if (typeof then !== 'function') return;
  try {
    (then as (ok: undefined, bad: () => void) => unknown).call(ret, undefined, () => {});
  } catch {
    // a thenable whose then throws: nothing is pending to swallow
  }
  throw new InvalidParameterError(
    `${where} operator ${key}`,
    'a synchronous product that has written y when it returns (LinearOperator products return void)',
    'a Promise (a thenable) from a function that is not declared async: y would be read before it is written (compute the product before the solve, or keep it synchronous)',
  );
}
