/**
 * The CI driver's sizing step: from a prepared space and the driver's options to a memory plan,
 * an estimate, and (unless disabled) a refusal before the space is built. Also the public
 * `estimateCiEnergies` behind `gpusparse ci --dry-run`.
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import type { Fcidump } from './fcidump/types';
import { type BuildSpaceOptions, type PreparedSpace, prepareCiSpace, type SpaceSpec } from './determinants/build';
import { defaultWorkers } from './hamiltonian/assemble';
import type { NnzEstimate } from './hamiltonian/nnz-estimate';
import { type AvailableMemory, type CiEstimate, type CiMemoryPlan, checkCiMemory, estimateCi, hostMemoryAvailable } from './memory-estimate';

/** Memory limits of a CI run. */
export interface CiMemoryOptions {
  /** Host bytes the run may use (default: measured by hostMemoryAvailable). */
  hostBytes?: number;
  /** Device bytes (default: what the backend declares; not checked when unknown). */
  deviceBytes?: number;
  /** false: estimate only, never refuse (default true). */
  check?: boolean;
}

/** What the sizing needs from the driver's options. */
export interface SizingOptions {
  nroots?: number;
  extraRoots?: number;
  workers?: number | 'auto';
  spin?: { multiplicity: number };
  memory?: CiMemoryOptions;
  /** 'host' (float64) or 'device' (float32 + float64 polish). */
  backend: 'host' | 'device';
  deviceMemory?: AvailableMemory;
  /** Non-zeros per chunk when the device path assembles in chunks. */
  chunkNnz?: number;
  /** Device path: where the float64 polish runs ('host' default; 'device': df64 on the GPU). */
  polish?: 'host' | 'device';
  /** false: H is never stored (a direct σ), so its non-zeros are not sampled (≈ 0.15 s at 4·10^5 determinants) and count as 0. */
  storesMatrix?: boolean;
}

/** The non-zero "estimate" of an operator that stores no H. */
export const NO_STORED_MATRIX: NnzEstimate = { nnz: 0, perRow: 0, stderr: 0, maxRow: 0, rowsSampled: 0, method: 'not sampled: the operator stores no H' };

/**
 * Estimate the run and throw ResourceLimitError when it cannot fit. Cost: milliseconds.
 * @throws ResourceLimitError (needed vs available bytes, and what to change)
 */
export async function sizeCiRun(prepared: PreparedSpace, o: SizingOptions): Promise<{ estimate: CiEstimate; plan: CiMemoryPlan }> {
  const nroots = o.nroots ?? 1;
  const plan: CiMemoryPlan = {
    backend: o.backend,
    kSolve: nroots + (o.extraRoots ?? (nroots > 1 ? 1 : 0)),
    workers: 0,
    ...(o.chunkNnz === undefined ? {} : { chunked: { chunkNnz: o.chunkNnz } }),
    ...(o.spin ? { spinPenalty: true } : {}),
    ...(o.backend === 'device' && o.polish === 'device' ? { polish: 'device' as const } : {}),
  };
  const host: AvailableMemory = o.memory?.hostBytes === undefined ? await hostMemoryAvailable() : { bytes: o.memory.hostBytes, source: `${o.memory.hostBytes} bytes (option)` };
  const device: AvailableMemory | undefined = o.memory?.deviceBytes === undefined ? o.deviceMemory : { bytes: o.memory.deviceBytes, source: `${o.memory.deviceBytes} bytes (option)` };
  const limits = { host, ...(device ? { device } : {}), ...(o.storesMatrix === false ? { nnz: NO_STORED_MATRIX } : {}) };
  let estimate = estimateCi(prepared, plan, limits);
  const workers = o.workers === undefined || o.workers === 'auto' ? await defaultWorkers(estimate.determinants) : o.workers;
  if (workers > 0) {
    plan.workers = workers;
    estimate = estimateCi(prepared, plan, limits);
  }
  if (o.memory?.check !== false) checkCiMemory(estimate, prepared, plan);
  return { estimate, plan };
}

/**
 * More roots than determinants is the option's fault, said before any memory verdict (which
 * sizes Davidson's basis by nroots: 10^11 roots of 36 determinants read as "needs 115 TB").
 * An empty space (0 determinants) is left to the space's own error.
 */
export function assertRootsFit(nroots: number | undefined, determinants: number): void {
  if (nroots !== undefined && determinants > 0 && nroots > determinants) throw new InvalidParameterError('nroots', `an integer in 1..${determinants} (the space size)`, nroots);
}

/**
 * Size a CI run without running it: determinants (exact), H's non-zeros (sampled), and the
 * host and device bytes of each stage. Reads the FCIDUMP (a path is read from disk).
 * @example
 * const e = await estimateCiEnergies('N2.FCIDUMP', { irrep: 1, nroots: 6, backend: 'device' });
 * e.estimate.peakHost; // bytes
 */
export async function estimateCiEnergies(
  input: Fcidump | string | URL,
  options: BuildSpaceOptions & Omit<SizingOptions, 'memory'> & { space?: SpaceSpec; symmetry?: 8 | 4 | 'auto'; memory?: CiMemoryOptions },
): Promise<{ label: string; estimate: CiEstimate; plan: CiMemoryPlan }> {
  let fd: Fcidump;
  if (typeof input === 'string' || input instanceof URL) {
    const { readFcidump } = await import('./fcidump/node');
    fd = await readFcidump(input, { ...(options.symmetry === undefined ? {} : { symmetry: options.symmetry }), ...(options.ms2 === undefined ? {} : { ms2: options.ms2 }) });
  } else fd = input;
  const prepared = prepareCiSpace(fd, options.space ?? 'fci', options);
  const { estimate, plan } = await sizeCiRun(prepared, { ...options, memory: { ...options.memory, check: false } });
  assertRootsFit(options.nroots, estimate.determinants);
  const label = `${prepared.kind.toUpperCase()}${prepared.level === undefined ? '' : `(level ${prepared.level})`}(${prepared.fcidump.norb}o; ${prepared.nalpha}α,${prepared.nbeta}β${prepared.irrep === undefined ? '' : `; irrep ${prepared.irrep}`})`;
  return { label, estimate, plan };
}
