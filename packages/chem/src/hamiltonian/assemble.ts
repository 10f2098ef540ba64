/**
 * Assembly of the CI Hamiltonian (electronic part, without the constant) of a determinant
 * space straight into canonical CSR, on worker threads when available.
 * @module
 */
import { type CsrMatrix, getFormat, InvalidParameterError, type SparseMatrix } from '@gpusparse/formats';
import type { DeterminantSpace } from '../determinants/space';
import type { Fcidump } from '../fcidump/types';
import { assembleRowsKernel, type KernelContext, type KernelSpin } from './kernel';
import { productContext } from './product';
import { assembleRowsProduct, type ProductContext, type ProductScratch } from './product-kernel';
import { spinTables } from './tables';
import { type RowChunk, runOnWorkers } from './workers';

/** Options of {@link assembleHamiltonian}. */
export interface AssembleOptions {
  /**
   * Worker threads: 0 runs on the main thread; 'auto' (default) uses
   * min(availableParallelism − 1, 63) workers when the space has ≥ 20 000 determinants.
   * With the string kernel the main thread assembles rows too (workers + 1 threads: every core).
   */
  workers?: number | 'auto';
  /** Off-diagonal entries with |value| ≤ dropTolerance are not stored (default 0: exact zeros). */
  dropTolerance?: number;
  /** Called after each block of rows: (rows done, total rows). */
  onProgress?: (rowsDone: number, rows: number) => void;
  /**
   * 'auto' (default): the string-driven kernel (./product-kernel.ts, dense (α, β) table,
   * no hashing, no sort for FCI/CAS spaces) when its table fits, else the hash kernel;
   * 'reference': always the hash kernel of ./kernel.ts. Both give the same matrix bit for bit.
   */
  kernel?: 'auto' | 'reference';
  /**
   * Integral screening of the string kernel (./screening.ts; default true): singles and
   * alpha-beta doubles whose elements are sums of exact zeros are never walked. The matrix is
   * the same bit for bit either way; false is for comparisons and benchmarks.
   */
  screen?: boolean;
}

/** Timings and storage of one assembly. */
export interface AssemblyStats {
  /** Wall-clock milliseconds (tables + rows + concatenation). */
  ms: number;
  /** Milliseconds building the per-string tables. */
  tablesMs: number;
  nnz: number;
  /** Non-zeros per second. */
  rate: number;
  /** CSR bytes per non-zero: (8 + 4) + 4·(rows + 1)/nnz (float64 values, int32 indices). */
  bytesPerNnz: number;
  /** Worker threads used (0 = main thread). */
  workers: number;
  /** Which row kernel ran: 'string' (./product-kernel.ts) or 'hash' (./kernel.ts). */
  kernel: 'string' | 'hash';
}

/** The assembled Hamiltonian. */
export interface AssembledHamiltonian {
  /** H_el in CSR (symmetric; the constant E_core is NOT on the diagonal). */
  matrix: CsrMatrix;
  /** diag(H_el), for Davidson's preconditioner. */
  diagonal: Float64Array;
  /** The FCIDUMP constant, to add to eigenvalues. */
  ecore: number;
  stats: AssemblyStats;
}

/**
 * Flat kernel inputs for a space (exported for tests and benchmarks): per-string tables,
 * J = (ii|jj), the determinant hash. Cost O(strings · excitations).
 * @example
 * const out = assembleRowsKernel(kernelContext(fd, space), 0, 10); // rows 0..9
 */
export function kernelContext(fd: Fcidump, space: DeterminantSpace, dropTolerance = 0): KernelContext {
  if (fd.norb !== space.norb) throw new InvalidParameterError('space.norb', `NORB=${fd.norb} of ${fd.file}`, space.norb);
  // ≥ 0 keeps exact zeros out, which the integral screen of the string kernel relies on
  if (!(dropTolerance >= 0 && dropTolerance < Infinity)) throw new InvalidParameterError('dropTolerance', 'a finite number ≥ 0', dropTolerance);
  const n = fd.norb;
  const toSpin = (t: ReturnType<typeof spinTables>): KernelSpin => ({ ...t });
  const alpha = toSpin(spinTables(space.alpha, n, fd.h1, fd.eri));
  const beta = space.beta === space.alpha ? alpha : toSpin(spinTables(space.beta, n, fd.h1, fd.eri));
  const jmat = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) jmat[i * n + j] = fd.eri[((i * n + i) * n + j) * n + j]!;
  return {
    norb: n,
    h1: fd.h1,
    eri: fd.eri,
    jmat,
    detAlpha: space.detAlpha,
    detBeta: space.detBeta,
    // read on use: only the hash kernel probes the determinant hash (the space builds it lazily)
    get hashMask() {
      return space.detHash.mask;
    },
    get hashLo() {
      return space.detHash.keyLo;
    },
    get hashHi() {
      return space.detHash.keyHi;
    },
    get hashVals() {
      return space.detHash.vals;
    },
    dropTolerance,
    alpha,
    beta,
  };
}

/** Most worker threads 'auto' starts (each holds a chunk's output buffers). */
const MAX_AUTO_WORKERS = 63;

/**
 * Worker threads for `rows` rows on `cores` cores under `workers: 'auto'`: one per core but
 * one (the main thread assembles rows too, so every core works), at most 63; none below
 * 20 000 rows, where starting threads costs more than it saves.
 * @example autoWorkers(1e6, 16); // 15
 */
export function autoWorkers(rows: number, cores: number): number {
  if (rows < 20_000) return 0;
  return Math.max(0, Math.min(Math.floor(cores) - 1, MAX_AUTO_WORKERS));
}

/** {@link autoWorkers} on this machine's cores (availableParallelism; 0 where node:os is missing). */
export async function defaultWorkers(rows: number): Promise<number> {
  if (rows < 20_000) return 0;
  try {
    const os = await import('node:os');
    return autoWorkers(rows, typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length);
  } catch {
    return 0;
  }
}

/**
 * Build H_el of `space` from the integrals of `fd` in CSR. Cost O(Σ_rows (candidates + sort)),
 * memory 12 bytes per non-zero plus the per-string tables. Worker threads when asked or
 * worth it; the main thread otherwise (same kernel, same result bit for bit).
 * @example
 * const { matrix, diagonal, stats } = await assembleHamiltonian(fd, fciSpace(4, 2, 2));
 * stats.rate; // non-zeros per second
 */
export async function assembleHamiltonian(fd: Fcidump, space: DeterminantSpace, options: AssembleOptions = {}): Promise<AssembledHamiltonian> {
  const t0 = performance.now();
  const ctx = kernelContext(fd, space, options.dropTolerance ?? 0);
  const kind = options.kernel ?? 'auto';
  if (kind !== 'auto' && kind !== 'reference') throw new InvalidParameterError('kernel', "'auto' or 'reference'", kind);
  const pctx: ProductContext | undefined = kind === 'auto' ? productContext(ctx, space, { screen: options.screen !== false }) : undefined;
  const tablesMs = performance.now() - t0;
  const rows = space.size;
  const want = options.workers === undefined || options.workers === 'auto' ? await defaultWorkers(rows) : options.workers;
  if (!Number.isInteger(want) || want < 0) throw new InvalidParameterError('workers', "a non-negative integer or 'auto'", want);
  const nchunks = want > 0 ? Math.min(rows, (want + 1) * 16) : Math.min(rows, 16);
  const chunks: [number, number][] = [];
  for (let c = 0; c < nchunks; c++) {
    const s = Math.floor((c * rows) / nchunks);
    const e = Math.floor(((c + 1) * rows) / nchunks);
    if (e > s) chunks.push([s, e]);
  }
  const progress = (done: number) => options.onProgress?.(chunks.slice(0, done).reduce((acc, [s, e]) => acc + e - s, 0), rows);
  const scratch: ProductScratch = { cols: new Int32Array(0), vals: new Float64Array(0) };
  let parts: RowChunk[] | undefined;
  let used = 0;
  if (want > 0) {
    parts = pctx
      ? await runOnWorkers(pctx, chunks, Math.min(want, chunks.length), progress, 'product', (s, e) => assembleRowsProduct(pctx, s, e, scratch))
      : await runOnWorkers(ctx, chunks, Math.min(want, chunks.length), progress, 'hash');
    if (parts) used = Math.min(want, chunks.length);
  }
  if (!parts) {
    parts = [];
    for (let c = 0; c < chunks.length; c++) {
      const [s, e] = chunks[c]!;
      parts.push({ start: s, end: e, out: pctx ? assembleRowsProduct(pctx, s, e, scratch) : assembleRowsKernel(ctx, s, e) });
      progress(c + 1);
    }
  }
  let nnz = 0;
  for (const p of parts) nnz += p.out.cols.length;
  if (nnz > 2 ** 31 - 1) throw new InvalidParameterError('space', 'a Hamiltonian with < 2^31 non-zeros (int32 CSR)', `${nnz} non-zeros`);
  const rowPtr = new Int32Array(rows + 1);
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  const diagonal = new Float64Array(rows);
  let w = 0;
  for (const p of parts) {
    colIdx.set(p.out.cols, w);
    values.set(p.out.vals, w);
    diagonal.set(p.out.diag, p.start);
    for (let i = p.start; i < p.end; i++) {
      w += p.out.lengths[i - p.start]!;
      rowPtr[i + 1] = w;
    }
  }
  const ms = performance.now() - t0;
  return {
    matrix: { format: 'csr', rows, cols: rows, rowPtr, colIdx, values },
    diagonal,
    ecore: fd.ecore,
    stats: {
      ms,
      tablesMs,
      nnz,
      rate: nnz / Math.max(ms / 1000, 1e-9),
      bytesPerNnz: nnz === 0 ? 0 : 12 + (4 * (rows + 1)) / nnz,
      workers: used,
      kernel: pctx ? 'string' : 'hash',
    },
  };
}

/**
 * {@link assembleHamiltonian} with the hash kernel of ./kernel.ts (one hash probe per
 * candidate, one sort per row): the reference the string-driven kernel is tested against.
 * Same cost bounds, about 2–3× slower.
 * @example
 * const ref = await assembleHamiltonianReference(fd, space, { workers: 0 });
 */
export function assembleHamiltonianReference(fd: Fcidump, space: DeterminantSpace, options: Omit<AssembleOptions, 'kernel'> = {}): Promise<AssembledHamiltonian> {
  return assembleHamiltonian(fd, space, { ...options, kernel: 'reference' });
}

/**
 * Convert the assembled CSR to a registered format (`getFormat(name).fromCsr`). 'csr'
 * returns the CSR descriptor's copy. Throws for an unknown name with the list of formats.
 * @example
 * const ell = toFormat(h.matrix, 'ell');
 */
export function toFormat(matrix: CsrMatrix, name: string, params?: object): SparseMatrix {
  return getFormat(name).fromCsr(matrix, params);
}
