/**
 * Total spin S² = S_z² + S_z + S₋S₊ in a determinant space, exactly from the determinant
 * expansion: the matrix, and ⟨c|S²|c⟩ without it (on the calling thread or on workers). The
 * kernels' inputs are built in ./spin-context; the spin-penalty operator H + λ(S² − S(S+1))²
 * that selects one multiplicity is in ./spin-penalty (both re-exported here).
 * Determinants are |D⟩ = Π a†_α Π a†_β |0⟩ (alpha creators first), as in the Hamiltonian.
 * @module
 */
import { type CsrMatrix, csrFromTriplets, InvalidParameterError } from '@gpusparse/formats';
import type { DeterminantSpace } from '../determinants/space';
import { spinContext } from './spin-context';
import { spinPairsKernel, spinRowsKernel } from './spin-kernel';
import { runSpinOnWorkers } from './spin-worker';

export type { SpinContext, SpinStrings } from './spin-kernel';
export { spinPairsKernel, spinRowsKernel } from './spin-kernel';
export { type SpinContextOptions, spinContext } from './spin-context';
export { expectationValue, SpinPenaltyOperator, spinPenaltyMatrix } from './spin-penalty';

/**
 * S² as a sparse symmetric matrix over `space`. Diagonal: S_z² + S_z + #(β-only orbitals);
 * off-diagonal: S₋S₊ moves one β-only orbital p to α and one α-only orbital q to β,
 * D' = a†_qβ a_qα a†_pα a_pβ D, with the fermionic sign. Determinants outside the space are
 * dropped (exact when the space is closed under spin flips, e.g. FCI, CAS, or truncated CI
 * from a closed-shell reference). Cost O(size · n_open²).
 * @example
 * const s2 = spinSquaredMatrix(fciSpace(2, 1, 1)); // [[1,0,0,0],[0,1,1,0],...] in some order
 */
export function spinSquaredMatrix(space: DeterminantSpace): CsrMatrix {
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  spinRowsKernel(
    spinContext(space),
    [],
    0,
    space.size,
    (k, d) => {
      ri.push(k);
      ci.push(k);
      v.push(d);
    },
    (k, t, sign) => {
      ri.push(t);
      ci.push(k);
      v.push(sign);
    },
  );
  return csrFromTriplets(space.size, space.size, ri, ci, v);
}

/**
 * ⟨c|S²|c⟩ / ⟨c|c⟩ for several host CI vectors at once, without building S² (the matrix of a
 * 10^7-determinant space would hold ~10^8 entries). Same terms and conventions as
 * {@link spinSquaredMatrix}. FCI and CAS spaces (also of one irrep, also reordered) go by
 * alpha string with the vector read row by row; other spaces by determinant. Cost O(size · n_open²) table reads
 * (hash probes only where a table would be too large), one pass, on the calling thread; see
 * {@link spinSquaredExpectationsParallel} for worker threads.
 * @example
 * spinSquaredExpectations(space, [c0, c1]); // [0, 2] for a singlet and a triplet
 */
export function spinSquaredExpectations(space: DeterminantSpace, vectors: readonly Float64Array[]): number[] {
  checkVectors(space, vectors, 'spinSquaredExpectations');
  const ctx = spinContext(space);
  const sums = ctx.pairOff.length > 0 ? spinPairsKernel(ctx, vectors, 0, ctx.alpha.count) : spinRowsKernel(ctx, vectors, 0, space.size);
  return ratios(sums, vectors.length);
}

/** Options of {@link spinSquaredExpectationsParallel}. */
export interface SpinExpectationOptions {
  /**
   * Worker threads besides the main thread: 0 runs on the main thread; 'auto' (default)
   * uses availableParallelism − 1 workers (at most 15) from 2·10^6 determinants in FCI and
   * CAS spaces (~0.05 s per 10^6 on one thread) or 5·10^5 in other spaces, none below.
   */
  workers?: number | 'auto';
}

/**
 * {@link spinSquaredExpectations} on worker threads (shared memory; the main thread computes
 * too). Same terms; the partial sums are added in a fixed order, so the result does not
 * depend on scheduling, and differs from the synchronous one by rounding only. Falls back to
 * the main thread where worker threads are unavailable. Cost as the synchronous version over
 * workers + 1 threads, plus one copy of the vectors into shared memory.
 * @example
 * const [s2] = await spinSquaredExpectationsParallel(space, [c], { workers: 8 });
 */
export async function spinSquaredExpectationsParallel(
  space: DeterminantSpace,
  vectors: readonly Float64Array[],
  options: SpinExpectationOptions = {},
): Promise<number[]> {
  checkVectors(space, vectors, 'spinSquaredExpectationsParallel');
  const asked = options.workers ?? 'auto';
  if (asked !== 'auto' && !(Number.isInteger(asked) && asked >= 0)) {
    throw new InvalidParameterError('spinSquaredExpectationsParallel workers', "a non-negative integer or 'auto'", asked);
  }
  const ctx = spinContext(space);
  const pairs = ctx.pairOff.length > 0;
  const items = pairs ? ctx.alpha.count : space.size;
  // worker start-up and the shared copies cost ~0.1 s: worth it from ~0.3 s of kernel time
  const want = asked === 'auto' ? (space.size >= (pairs ? 2_000_000 : 500_000) ? await availableWorkers() : 0) : asked;
  if (want > 0 && items > 1) {
    const nchunks = Math.min(items, (want + 1) * 16);
    const chunks: [number, number][] = [];
    for (let c = 0; c < nchunks; c++) chunks.push([Math.floor((c * items) / nchunks), Math.floor(((c + 1) * items) / nchunks)]);
    const sums = await runSpinOnWorkers(ctx, vectors, pairs ? 'pairs' : 'rows', chunks, Math.min(want, nchunks));
    if (sums) return ratios(sums, vectors.length);
  }
  return ratios(pairs ? spinPairsKernel(ctx, vectors, 0, items) : spinRowsKernel(ctx, vectors, 0, items), vectors.length);
}

function checkVectors(space: DeterminantSpace, vectors: readonly Float64Array[], where: string): void {
  vectors.forEach((c, r) => {
    if (c.length !== space.size) throw new InvalidParameterError(`${where} vectors[${r}].length`, String(space.size), c.length);
  });
}

/**
 * [num_r..., den_r...] → num_r / den_r, at least 0: S² is positive semidefinite, and a singlet's
 * cancelling terms can round to −1e-17 (printed as "-0.0000").
 */
function ratios(sums: Float64Array, count: number): number[] {
  return Array.from({ length: count }, (_, r) => Math.max(0, sums[r]! / sums[count + r]!));
}

/** availableParallelism − 1, at most 15 (0 where node:os is missing). */
async function availableWorkers(): Promise<number> {
  try {
    const os = await import('node:os');
    const p = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
    return Math.max(0, Math.min(p - 1, 15));
  } catch {
    return 0;
  }
}
