/**
 * ml-matrix, loaded on first use instead of at import time: its module costs ≈ 40–80 ms of CPU
 * on start-up, which a host CI run (whose projected eigenproblems are small enough for the Jacobi
 * solver in dense.ts) never needs. In Node (≥ 20.16, `process.getBuiltinModule`) it is required
 * synchronously on the first call, so the callers stay synchronous. Elsewhere (a browser bundle,
 * older Node) a dynamic import starts when this module loads — as early as the static import it
 * replaces — and a call before it has settled gets a NotSupportedError saying so.
 * @module
 */
import { NotSupportedError } from '@gpusparse/formats';

type MlMatrix = typeof import('ml-matrix');
type Require = (id: string) => unknown;

let cached: MlMatrix | undefined;

/** Node's synchronous require for this module, or undefined where the runtime has none. */
function nodeRequire(): Require | undefined {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof proc?.getBuiltinModule !== 'function') return undefined;
  const mod = proc.getBuiltinModule('node:module') as { createRequire?: (url: string) => Require } | undefined;
  return mod?.createRequire?.(import.meta.url);
}

const req = nodeRequire();
if (req === undefined) {
  void import('ml-matrix').then((m) => {
    cached = m;
  });
}

/**
 * The ml-matrix module, required on the first call.
 * @example
 * const { Matrix } = mlMatrix();
 */
export function mlMatrix(): MlMatrix {
  if (cached) return cached;
  if (req) return (cached = req('ml-matrix') as MlMatrix);
  throw new NotSupportedError('ml-matrix (dense factorisations and eigenproblems above order 32) is still loading in this runtime: call again after an await');
}

/** Whether ml-matrix has been loaded in this process (start-up cost checks). */
export function mlMatrixLoaded(): boolean {
  return cached !== undefined;
}
