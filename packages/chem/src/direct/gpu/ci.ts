/**
 * The device direct σ in the CI driver: `ciEnergies(fd, { backend: <webgpu>, hamiltonian:
 * gpuDirectHamiltonian(ctx) })` runs the float32 Davidson on the GPU over ./operator.ts (no
 * assembly, no stored H) and polishes in float64 on the host with the host direct σ
 * (../operator.ts, worker threads): the polish does a few products, the float32 phase most.
 * @module
 */
import { type LinearOperator, ResourceLimitError } from '@gpusparse/formats';
import { type Df64Vector, Df64VectorSpace, type GpuContext, type GpuVector } from '@gpusparse/gpu';
import type { CiHamiltonian } from '../../ci-assembly';
import type { DeterminantSpace } from '../../determinants/space';
import type { Fcidump } from '../../fcidump/types';
import { hostMemoryAvailable } from '../../memory-estimate';
import { DIRECT_BYTES_PER_DETERMINANT } from '../ci';
import { type DirectSigmaOptions, directSigmaOperator } from '../operator';
import { type GpuDirectSigmaOperator, gpuDirectSigmaOperator } from './operator';

/**
 * Device bytes per determinant of a device direct run besides the tables: Davidson's basis and
 * products in float32 (2 · 24 vectors at the largest default subspace, 4 roots), its work
 * vectors and the correction solver's (≈ 16 more).
 */
export const GPU_DIRECT_BYTES_PER_DETERMINANT = 4 * (2 * 24 + 16);

/** What {@link gpuDirectHamiltonian} gives the CI driver. */
export type GpuDirectCiHamiltonian = CiHamiltonian<GpuVector> & {
  notes: string[];
  /** H in the device polish's space: the df64 direct σ for a Df64VectorSpace of the same context, else undefined. */
  polishOperator(space: unknown): LinearOperator<Df64Vector> | undefined;
};

/** Options of {@link gpuDirectHamiltonian}. */
export interface GpuDirectHamiltonianOptions {
  /** Threads of the host float64 direct σ of the polish (default 'auto': every core, at most 16). */
  threads?: DirectSigmaOptions['threads'];
  /** Host bytes to assume (default what the host has free). */
  hostBytes?: number;
  /** Device bytes to assume (default: not checked beyond one binding per table and vector). */
  deviceBytes?: number;
}

/** Refuse, before building anything, a space whose vectors would not fit (see {@link gpuDirectHamiltonian}). */
export async function checkGpuDirectFits(fd: Fcidump, space: DeterminantSpace, options: GpuDirectHamiltonianOptions): Promise<void> {
  const host = options.hostBytes ?? (await hostMemoryAvailable()).bytes;
  const needHost = DIRECT_BYTES_PER_DETERMINANT * space.size + 8 * fd.norb ** 4;
  if (needHost > host) throw new ResourceLimitError(`device direct CI over ${space.size} determinants (the host float64 polish: vectors and string tables)`, needHost, host, 'use point-group symmetry (irrep) or a smaller active space');
  const needDevice = GPU_DIRECT_BYTES_PER_DETERMINANT * space.size + 4 * fd.norb ** 4;
  if (options.deviceBytes !== undefined && needDevice > options.deviceBytes) {
    throw new ResourceLimitError(`device direct CI over ${space.size} determinants (Davidson's float32 vectors)`, needDevice, options.deviceBytes, 'use point-group symmetry (irrep) or a smaller active space');
  }
}

/**
 * The driver's Hamiltonian around a built device operator `dev`: adds the host float64 direct σ
 * for the polish (worker threads) and the notes. Disposing the host operator (the driver does,
 * at the end) releases the device tables too.
 */
export async function gpuDirectParts(dev: GpuDirectSigmaOperator, fd: Fcidump, space: DeterminantSpace, options: GpuDirectHamiltonianOptions, t0: number): Promise<GpuDirectCiHamiltonian> {
  let hostOp: Awaited<ReturnType<typeof directSigmaOperator>>;
  try {
    hostOp = await directSigmaOperator(fd, space, { threads: options.threads ?? 'auto' });
  } catch (e) {
    dev.dispose();
    throw e;
  }
  const perDet = (dev.deviceBytes / Math.max(1, space.size)).toFixed(1);
  const notes = [
    `direct σ on the device (float32, ${dev.label}): tables ${(dev.deviceBytes / 1e6).toFixed(1)} MB (${perDet} B per determinant) + integrals; float64 polish: the df64 direct σ on the device where the backend offers df64, else the host direct σ (${hostOp.threads} thread${hostOp.threads === 1 ? '' : 's'})`,
  ];
  const host: LinearOperator<Float64Array> & { dispose(): void } = {
    rows: hostOp.rows,
    cols: hostOp.cols,
    label: hostOp.label,
    apply: (x, y) => hostOp.apply(x, y),
    applyScaled: (a, x, b, y) => hostOp.applyScaled(a, x, b, y),
    diagonal: () => hostOp.diagonal(),
    dispose: () => {
      hostOp.dispose();
      dev.dispose();
    },
  };
  return {
    matrix: undefined,
    diagonal: dev.diagonal(),
    nnz: 0,
    host,
    device: async () => dev,
    // the CI driver's device polish (df64 on WebGPU): the same σ in df64 over these tables
    polishOperator: (s: unknown) => (s instanceof Df64VectorSpace && s.ctx === dev.ctx ? dev.df64(s.d) : undefined),
    stats: { ms: performance.now() - t0, rate: 0, bytesPerNnz: 0, workers: hostOp.threads, chunks: 0 },
    notes,
  };
}

/**
 * A `CiOptions.hamiltonian` factory for a WebGPU backend on `ctx`: `device` gives the float32
 * direct σ on the GPU, `host` the float64 direct σ for the polish, no matrix. Refuses with
 * ResourceLimitError, before building anything, a space whose vectors would not fit.
 * @example
 * const r = await ciEnergies(fd, { irrep: 1, backend, hamiltonian: gpuDirectHamiltonian(ctx) });
 */
export function gpuDirectHamiltonian(ctx: GpuContext, options: GpuDirectHamiltonianOptions = {}): (fd: Fcidump, space: DeterminantSpace) => Promise<GpuDirectCiHamiltonian> {
  return async (fd, space) => {
    const t0 = performance.now();
    await checkGpuDirectFits(fd, space, options);
    return gpuDirectParts(gpuDirectSigmaOperator(ctx, fd, space), fd, space, options, t0);
  };
}
