/**
 * The CI driver's assembly step: the whole float64 CSR (host backends, small matrices), or row
 * chunks streamed to the backend's device sink (./hamiltonian/chunked.ts) with float64 row
 * blocks kept for the host polish — or none kept when the polish runs on the device (df64:
 * the sink keeps the low parts there). The driver gets the diagonal, nnz and, unless the
 * polish is on the device, a float64 host operator.
 * @module
 */
import { type CsrMatrix, HostOperator, type LinearOperator } from '@gpusparse/formats';
import type { DeterminantSpace } from './determinants/space';
import type { Fcidump } from './fcidump/types';
import { assembleHamiltonian } from './hamiltonian/assemble';
import { assembleChunked, type ChunkSink, rowBlockOperator } from './hamiltonian/chunked';
import { parallelRowBlockOperator } from './hamiltonian/parallel-product';

/** H as the driver uses it. */
export interface CiHamiltonian<V> {
  /** The whole float64 CSR (undefined when assembled in chunks). */
  matrix: CsrMatrix | undefined;
  diagonal: Float64Array;
  nnz: number;
  /** float64 y = H·x on the host (CSR, or the kept row blocks); undefined when chunked with keepHost false. */
  host: LinearOperator<Float64Array> | undefined;
  /** The device operator over the uploaded chunks (chunked assembly only). */
  device: (() => Promise<LinearOperator<V>>) | undefined;
  stats: { ms: number; rate: number; bytesPerNnz: number; workers: number; chunks: number };
  /**
   * Optional: ⟨S²⟩ per vector computed where the operator lives (the device direct σ's tables):
   * vectors of the device polish's space, of the backend's space, or host float64 arrays (then
   * uploaded). Undefined (or a promise of undefined): the driver computes ⟨S²⟩ on the host.
   */
  spinSquared?: (vs: readonly unknown[]) => Promise<number[] | undefined>;
}

/** Options of {@link assembleForCi}. */
export interface CiAssemblyOptions<V> {
  /** Chunked assembly into this sink (else the whole CSR). */
  sink?: ChunkSink<V>;
  chunkNnz?: number;
  perRow: number;
  workers?: number | 'auto';
  onProgress?: (rowsDone: number, rows: number) => void;
  /** Threads of the float64 host product over the kept blocks (default: every core above 2^25 non-zeros, else 1). */
  hostThreads?: number;
  /** Chunked: keep float64 row blocks on the host for a host polish (default true). */
  keepHost?: boolean;
}

/** Cores for the host product (at most 16), 1 where node:os is unavailable. */
async function hostThreadCount(): Promise<number> {
  try {
    const os = await import('node:os');
    return Math.min(16, typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length);
  } catch {
    return 1;
  }
}

/**
 * Assemble H for the driver. Cost: the assembly; host memory 24 B/nnz at the peak for the
 * whole CSR, or 12 B/nnz (kept blocks; none with keepHost false) + the chunks in flight when
 * chunked.
 */
export async function assembleForCi<V>(fd: Fcidump, space: DeterminantSpace, o: CiAssemblyOptions<V>): Promise<CiHamiltonian<V>> {
  const common = { ...(o.workers === undefined ? {} : { workers: o.workers }), ...(o.onProgress ? { onProgress: o.onProgress } : {}) };
  if (!o.sink) {
    const h = await assembleHamiltonian(fd, space, common);
    return {
      matrix: h.matrix,
      diagonal: h.diagonal,
      nnz: h.stats.nnz,
      host: HostOperator.fromCsr(h.matrix),
      device: undefined,
      stats: { ms: h.stats.ms, rate: h.stats.rate, bytesPerNnz: h.stats.bytesPerNnz, workers: h.stats.workers, chunks: 1 },
    };
  }
  const sink = o.sink;
  const keepHost = o.keepHost !== false;
  const h = await assembleChunked(fd, space, sink, { ...common, perRow: o.perRow, keepHost, ...(o.chunkNnz === undefined ? {} : { chunkNnz: o.chunkNnz }) });
  const stats = { ms: h.stats.ms, rate: h.stats.rate, bytesPerNnz: h.nnz === 0 ? 0 : (keepHost ? 12 : 0) + (4 * (space.size + h.chunks)) / h.nnz, workers: h.stats.workers, chunks: h.chunks };
  if (!keepHost) return { matrix: undefined, diagonal: h.diagonal, nnz: h.nnz, host: undefined, device: async () => sink.finish(), stats };
  // the float64 polish multiplies by the kept blocks: on every core above 2^25 non-zeros (a
  // 1.4·10^9-non-zero H took seconds per product on one thread); the originals are dropped
  const threads = o.hostThreads ?? (h.nnz >= 2 ** 25 ? await hostThreadCount() : 1);
  const parallel = threads > 1 ? await parallelRowBlockOperator(h.blocks, space.size, threads) : undefined;
  if (parallel) h.blocks.length = 0;
  return {
    matrix: undefined,
    diagonal: h.diagonal,
    nnz: h.nnz,
    host: parallel ?? rowBlockOperator(h.blocks, space.size),
    device: async () => sink.finish(),
    stats,
  };
}
