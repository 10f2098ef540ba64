/**
 * The direct σ in the CI driver: `ciEnergies(fd, { hamiltonian: directHamiltonian() })` solves
 * with the matrix-free operator instead of an assembled H (no stored matrix: the run holds
 * strings, integrals and Davidson's vectors).
 * @module
 */
import { type CsrMatrix, type LinearOperator, ResourceLimitError } from '@gpusparse/formats';
import type { CiHamiltonian } from '../ci-assembly';
import type { DeterminantSpace } from '../determinants/space';
import type { Fcidump } from '../fcidump/types';
import { hostMemoryAvailable } from '../memory-estimate';
import { type DirectSigmaOperator, type DirectSigmaOptions, directSigmaOperator } from './operator';

/**
 * Host bytes per determinant a direct run needs: the operator's tables, diagonal and shared
 * vectors (≤ 80 B measured) plus Davidson's basis and products (2 · 24 vectors of 8 B at the
 * largest default subspace, 4 roots).
 */
export const DIRECT_BYTES_PER_DETERMINANT = 80 + 2 * 24 * 8;

/**
 * A `CiOptions.hamiltonian` factory: the direct σ operator of the space, its diagonal, no
 * matrix (tagged `storesMatrix: false`: the driver samples no non-zeros of H to size the run). Stats:
 * `ms` is the time to build the string tables, `workers` the σ threads.
 * Refuses with ResourceLimitError, before building anything, a space whose vectors would not fit
 * (`hostBytes`: the memory to assume, default what the host has free).
 * @example
 * const r = await ciEnergies(fd, { irrep: 1, hamiltonian: directHamiltonian({ threads: 2 }) });
 */
export function directHamiltonian(options: DirectSigmaOptions & { hostBytes?: number } = {}): ((fd: Fcidump, space: DeterminantSpace) => Promise<CiHamiltonian<Float64Array> & { notes: string[] }>) & { readonly storesMatrix: false } {
  // storesMatrix: the driver's sizing then samples no non-zeros of H (./ci-plan.ts)
  const factory = async (fd: Fcidump, space: DeterminantSpace): Promise<CiHamiltonian<Float64Array> & { notes: string[] }> => {
    const t0 = performance.now();
    const available = options.hostBytes ?? (await hostMemoryAvailable()).bytes;
    const need = DIRECT_BYTES_PER_DETERMINANT * space.size + 8 * fd.norb ** 4;
    if (need > available) throw new ResourceLimitError(`direct CI over ${space.size} determinants (Davidson vectors and string tables)`, need, available, 'use point-group symmetry (irrep) or a smaller active space');
    const op = await directSigmaOperator(fd, space, options);
    return {
      matrix: undefined,
      diagonal: op.diagonal(),
      nnz: 0,
      host: op,
      device: undefined,
      stats: { ms: performance.now() - t0, rate: 0, bytesPerNnz: 0, workers: op.threads, chunks: 0 },
      notes: [directMemoryNote(op, space.size, fd.norb)],
    };
  };
  return Object.assign(factory, { storesMatrix: false as const });
}

/**
 * The host direct run's memory per determinant for the notes (issue 19: the direct path holds
 * only vectors, strings and integrals): the operator's own bytes (strings, replacement lists,
 * same-spin rows, diagonal, layout, time-reversal maps, shared vectors), the integrals, and
 * what each of Davidson's float64 vectors adds.
 */
export function directMemoryNote(op: Pick<DirectSigmaOperator, 'bytes' | 'label'>, determinants: number, norb: number): string {
  const per = op.bytes / Math.max(1, determinants);
  return `memory of the host direct σ (${op.label ?? 'direct-sigma'}): ${(op.bytes / 1e6).toFixed(1)} MB held (${per.toFixed(1)} B per determinant: strings, replacement lists, same-spin rows, diagonal, layout, shared vectors) + integrals ${((8 * norb ** 4) / 1e6).toFixed(1)} MB; each Davidson vector 8 B per determinant (the half space's 4 B under time reversal); no stored H`;
}

/**
 * A small operator as a dense CSR (columns H·e_j), for the dense solver when H is not stored.
 * Cost n products, 8n² bytes.
 * @example const { rowPtr, colIdx, values } = denseColumnsCsr(op, 36);
 */
export function denseColumnsCsr(op: LinearOperator<Float64Array>, n: number): Pick<CsrMatrix, 'rowPtr' | 'colIdx' | 'values'> {
  const values = new Float64Array(n * n);
  const e = new Float64Array(n);
  const col = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    e.fill(0);
    e[j] = 1;
    op.apply(e, col);
    for (let i = 0; i < n; i++) values[i * n + j] = col[i]!;
  }
  return { rowPtr: Int32Array.from({ length: n + 1 }, (_, i) => i * n), colIdx: Int32Array.from({ length: n * n }, (_, k) => k % n), values };
}
