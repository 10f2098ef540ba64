/**
 * One argument order for every solver family: the vector space first, then the operator
 * (`cg(space, op, b, opts)`, `lanczos(space, op, opts)`), as the preconditioner factories
 * (`jacobi(space, d)`) already take it. The eigensolvers used to take `(op, space, opts)`; that
 * order still works (the two interfaces are told apart by their methods) and is marked
 * deprecated in the overloads.
 * @module
 */
import { InvalidParameterError, type LinearOperator, type VectorSpace } from '@gpusparse/formats';

function isSpace(x: unknown): boolean {
  const s = x as Partial<VectorSpace<unknown>> | null;
  return typeof s === 'object' && s !== null && typeof s.fromArray === 'function' && typeof s.axpby === 'function';
}

function isOperator(x: unknown): boolean {
  const o = x as Partial<LinearOperator<unknown>> | null;
  return typeof o === 'object' && o !== null && typeof o.apply === 'function' && typeof o.rows === 'number';
}

/**
 * The (space, operator) pair from a solver's first two arguments in either order: space first
 * (current) or operator first (deprecated). Anything else is an InvalidParameterError naming
 * the solver.
 */
export function spaceAndOperator<V, S>(
  where: string,
  first: VectorSpace<V, S> | LinearOperator<V>,
  second: VectorSpace<V, S> | LinearOperator<V>,
): [VectorSpace<V, S>, LinearOperator<V>] {
  if (isSpace(first) && isOperator(second)) return [first as VectorSpace<V, S>, second as LinearOperator<V>];
  if (isOperator(first) && isSpace(second)) return [second as VectorSpace<V, S>, first as LinearOperator<V>];
  const kind = (x: unknown) => (isSpace(x) ? 'a VectorSpace' : isOperator(x) ? 'a LinearOperator' : x === null ? 'null' : typeof x);
  throw new InvalidParameterError(`${where}(space, op, …) arguments`, 'a VectorSpace and a LinearOperator (space first)', `${kind(first)} and ${kind(second)}`);
}
