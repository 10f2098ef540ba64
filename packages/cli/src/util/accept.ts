/**
 * `--accept residual|bound` of `gpusparse eigs` and `gpusparse ci`: how the float64 polish after
 * a float32 phase accepts an eigenvalue (docs/guides/precision.md, "Accepting eigenvalues by a
 * bound"), and the two table columns that show it per root.
 * @module
 */
import { UsageError } from './context';

/** Parse --accept (default residual). */
export function parseAccept(s: string | undefined): 'residual' | 'bound' {
  if (s === undefined || s === 'residual' || s === 'bound') return s ?? 'residual';
  throw new UsageError(`--accept: expected residual or bound, got '${s}'`);
}

/** 'accepted by' and 'bound' cells of root j ('—' where no guard root gave a finite bound). */
export function acceptColumns(bounds: { acceptedBy: readonly string[]; bound: readonly number[] }, j: number): [string, string] {
  const b = bounds.bound[j];
  return [bounds.acceptedBy[j] ?? 'none', b !== undefined && Number.isFinite(b) ? b.toExponential(1) : '—'];
}
