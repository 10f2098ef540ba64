/**
 * Strict integer options (`--maxit`): decimal digits only, no sign, exponent, hex or blank,
 * at most Number.MAX_SAFE_INTEGER, at least `min`. Anything else is a usage error (exit 2).
 * @module
 */
import { UsageError } from './context';

/**
 * Parse a strict integer option or raise a UsageError naming it, what was expected and what came.
 * @example
 * intOption('maxit', '500', undefined, 1); // 500
 * intOption('maxit', '1e3', undefined, 1); // throws UsageError: --maxit: expected an integer ≥ 1, got '1e3'
 */
export function intOption<F extends number | undefined>(name: string, v: string | undefined, fallback: F, min: number): number | F {
  if (v === undefined) return fallback;
  const expected = `--${name}: expected an integer ≥ ${min} (decimal digits only)`;
  if (!/^[0-9]+$/.test(v)) throw new UsageError(`${expected}, got '${v}'`);
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${expected} and at most ${Number.MAX_SAFE_INTEGER}, got '${v}'`);
  if (n < min) throw new UsageError(`${expected}, got ${n}`);
  return n;
}
