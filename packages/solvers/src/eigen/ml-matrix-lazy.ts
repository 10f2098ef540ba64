/**
 * ml-matrix, loaded on first use instead of at import time: its module costs ≈ 60–80 ms of CPU
 * on start-up, which a host CI run (whose projected eigenproblems are small enough for the Jacobi
 * solver in dense.ts) never needs. `require` keeps the callers synchronous.
 * @module
 */
import { createRequire } from 'node:module';

type MlMatrix = typeof import('ml-matrix');

let cached: MlMatrix | undefined;

/**
 * The ml-matrix module, required on the first call.
 * @example
 * const { Matrix } = mlMatrix();
 */
export function mlMatrix(): MlMatrix {
  cached ??= createRequire(import.meta.url)('ml-matrix') as MlMatrix;
  return cached;
}

/** Whether ml-matrix has been loaded in this process (start-up cost checks). */
export function mlMatrixLoaded(): boolean {
  return cached !== undefined;
}
