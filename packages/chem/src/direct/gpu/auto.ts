/**
 * `--sigma auto` on a WebGPU backend: the device direct σ or the explicit H (chunked assembly
 * to the device), per problem, from one σ product timed on the device against a model of the
 * explicit path (host assembly per stored non-zero, device product per non-zero), and whether
 * the explicit H would fit the device at all. The choice and its numbers go into the notes.
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { type GpuContext, GpuVector, writeData } from '@gpusparse/gpu';
import type { DeterminantSpace } from '../../determinants/space';
import type { Fcidump } from '../../fcidump/types';
import { explicitSize } from '../choose';
import { checkGpuDirectFits, type GpuDirectCiHamiltonian, gpuDirectParts, type GpuDirectHamiltonianOptions, gpuParityFor } from './ci';
import { type GpuDirectSigmaOperator, gpuDirectSigmaOperator } from './operator';

/**
 * The explicit path on the GPU machine (H100, 16 cores; bench/RESULTS.md, N2 CAS(10e,16o),
 * 1.38·10^9 non-zeros): chunked assembly 31.9–51.4 s wall with 8–16 worker threads, i.e. about
 * 480 ns of CPU per stored non-zero (divided by the cores here); the float32 CSR product on the
 * device reads 8 bytes per non-zero (≈ 0.004 ns at 2 TB/s); device bytes per non-zero with the
 * df64 polish's low parts: 12.
 */
export const GPU_EXPLICIT_RATES = { assemblyCpuNs: 480, productNs: 0.004, deviceBytesPerNnz: 12 } as const;

/** Options of {@link gpuAutoHamiltonian}. */
export interface GpuAutoOptions extends GpuDirectHamiltonianOptions {
  /** Expected float32 products (Davidson and the polish's corrections). */
  products: number;
  /** Host cores the explicit assembly would use (default: every core, at most 16). */
  cores?: number;
}

/**
 * Milliseconds per product of `op` on the device: one warm-up (pipeline compile), then `reps`
 * products between two synchronisations. Cost: reps + 1 products.
 * @example const ms = await timeDeviceProduct(ctx, op, 3);
 */
export async function timeDeviceProduct(ctx: GpuContext, op: GpuDirectSigmaOperator, reps = 3): Promise<number> {
  const n = op.rows;
  const x = new GpuVector(ctx.buffers.acquire(4 * Math.max(1, n), undefined, 'direct-time-x'), n);
  const y = new GpuVector(ctx.buffers.acquire(4 * Math.max(1, n), undefined, 'direct-time-y'), n);
  try {
    writeData(ctx, x.buf, Float32Array.from({ length: n }, (_, i) => Math.sin(i + 1)));
    op.apply(x, y);
    await ctx.finish();
    const t0 = performance.now();
    for (let r = 0; r < reps; r++) op.apply(x, y);
    await ctx.finish();
    return (performance.now() - t0) / reps;
  } finally {
    x.buf.dispose();
    y.buf.dispose();
  }
}

async function coreCount(c: number | undefined): Promise<number> {
  if (c !== undefined) return c;
  try {
    const os = await import('node:os');
    return Math.min(16, typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length);
  } catch {
    return 1;
  }
}

/**
 * A `CiOptions.hamiltonian` factory for a WebGPU backend on `ctx` that picks the device direct σ
 * or declines (the driver then assembles H explicitly, chunked to the device): direct when the
 * explicit H would not fit the device (`deviceBytes`), or when `products` timed σ products cost
 * less than the modelled assembly plus explicit products. Spaces that are not FCI/CAS: explicit.
 * Cost of deciding: the nnz sample, the device tables, 4 σ products.
 * @example ciEnergies(fd, { backend, hamiltonian: gpuAutoHamiltonian(ctx, { products: 300 }) });
 */
export function gpuAutoHamiltonian(ctx: GpuContext, options: GpuAutoOptions): (fd: Fcidump, space: DeterminantSpace, notes: string[]) => Promise<GpuDirectCiHamiltonian | undefined> {
  if (!(options.products > 0)) throw new InvalidParameterError('products', 'a positive number of expected products', options.products);
  return async (fd, space, notes) => {
    const t0 = performance.now();
    const { full, nnz } = explicitSize(fd, space);
    if (!full) {
      notes.push('sigma auto: explicit — not an FCI/CAS space (the direct σ needs every string of each spin)');
      return undefined;
    }
    const estimate = await checkGpuDirectFits(ctx, fd, space, options);
    const parity = gpuParityFor(space, options.multiplicity);
    const dev = gpuDirectSigmaOperator(ctx, fd, space, parity === undefined ? {} : { parity });
    const sigmaMs = await timeDeviceProduct(ctx, dev);
    const r = GPU_EXPLICIT_RATES;
    const cores = await coreCount(options.cores);
    const directMs = options.products * sigmaMs;
    const explicitMs = (nnz * r.assemblyCpuNs) / cores / 1e6 + (options.products * nnz * r.productNs) / 1e6;
    const explicitBytes = nnz * r.deviceBytesPerNnz;
    const s = (ms: number) => `${(ms / 1e3).toFixed(2)} s`;
    const model = `σ measured ${sigmaMs.toFixed(2)} ms on the device × ${options.products} products = ${s(directMs)} direct vs ${s(explicitMs)} explicit (assembly of ≈ ${nnz.toExponential(2)} non-zeros on ${cores} cores + products, modelled)`;
    if (options.deviceBytes !== undefined && explicitBytes > 0.8 * options.deviceBytes) {
      notes.push(`sigma auto: direct — the explicit H would need ${(explicitBytes / 1e9).toFixed(1)} GB of the device's ${(options.deviceBytes / 1e9).toFixed(1)} GB; ${model}`);
      return gpuDirectParts(dev, fd, space, options, t0, estimate, notes);
    }
    if (directMs < explicitMs) {
      notes.push(`sigma auto: direct — ${model}`);
      return gpuDirectParts(dev, fd, space, options, t0, estimate, notes);
    }
    dev.dispose();
    notes.push(`sigma auto: explicit — ${model}`);
    return undefined;
  };
}
