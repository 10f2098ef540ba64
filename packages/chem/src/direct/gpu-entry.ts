/**
 * The GPU direct σ's CI factories without loading the GPU runtime: `@gpusparse/chem` exports
 * these wrappers, which import ./gpu (and with it @gpusparse/gpu, ≈ 0.1 CPU s of module loading)
 * only when the driver first calls the factory — a CPU run never does. Everything else of the
 * GPU direct σ (operators, kernels, packed tables) is in the subpath `@gpusparse/chem/gpu`.
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import type { GpuContext } from '@gpusparse/gpu';
import type { DeterminantSpace } from '../determinants/space';
import type { Fcidump } from '../fcidump/types';
import type { GpuAutoOptions } from './gpu/auto';
import type { GpuDirectCiHamiltonian, GpuDirectHamiltonianOptions } from './gpu/ci';

/**
 * `CiOptions.hamiltonian` with the direct σ on the GPU (float32 Davidson, float64 polish): see
 * ./gpu/ci.ts gpuDirectHamiltonian, which this loads on the first call.
 * @example const r = await ciEnergies(fd, { backend, hamiltonian: gpuDirectHamiltonian(ctx) });
 */
export function gpuDirectHamiltonian(ctx: GpuContext, options: GpuDirectHamiltonianOptions = {}): ((fd: Fcidump, space: DeterminantSpace, notes?: string[]) => Promise<GpuDirectCiHamiltonian>) & { readonly spinParity: boolean } {
  const factory = async (fd: Fcidump, space: DeterminantSpace, notes?: string[]) => (await import('./gpu/ci')).gpuDirectHamiltonian(ctx, options)(fd, space, notes);
  return Object.assign(factory, { spinParity: options.multiplicity !== undefined });
}

/**
 * `CiOptions.hamiltonian` choosing explicit or direct on the GPU by a measured cost model: see
 * ./gpu/auto.ts gpuAutoHamiltonian, which this loads on the first call.
 * @throws InvalidParameterError unless `options.products` > 0 (at once, as the loaded one would)
 */
export function gpuAutoHamiltonian(ctx: GpuContext, options: GpuAutoOptions): (fd: Fcidump, space: DeterminantSpace, notes: string[]) => Promise<GpuDirectCiHamiltonian | undefined> {
  if (!(options.products > 0)) throw new InvalidParameterError('products', 'a positive number of expected products', options.products);
  return async (fd, space, notes) => (await import('./gpu/auto')).gpuAutoHamiltonian(ctx, options)(fd, space, notes);
}
