/**
 * Explicit H or direct σ, per problem: a cost model over the sampled size of H and the measured
 * rates of both paths on the host (float64), and the memory the explicit H would need. The
 * choice and its reason go into the CI result's notes.
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { assembleForCi, type CiHamiltonian } from '../ci-assembly';
import { binomial } from '../determinants/bits';
import { prepareCiSpace } from '../determinants/build';
import type { DeterminantSpace } from '../determinants/space';
import { stringIrreps } from '../determinants/strings';
import type { Fcidump } from '../fcidump/types';
import { estimateNnz } from '../hamiltonian/nnz-estimate';
import { countPrepared, hostMemoryAvailable } from '../memory-estimate';
import { directHamiltonian } from './ci';
import type { DirectSigmaOptions } from './operator';

/**
 * Host rates, ns of CPU per unit (2-core AMD EPYC VM, node 20, bench/ci-direct.ts on H2O/6-31G
 * CAS(8e,12o), 25·10^6 non-zeros, 2026-11-25, a loaded machine): explicit assembly per stored
 * non-zero, explicit product per non-zero (wasm CSR), direct σ per non-zero of the H it does
 * not store (its multiply–adds are ≈ 1.3 per non-zero; wasm f64x2 kernels: 22 ms CPU per σ,
 * one thread, was 4.3 ns with the JavaScript loops); time reversal halves the direct figure.
 */
export const SIGMA_RATES = { assemblyNs: 100, productNs: 0.7, directNs: 0.9 } as const;

/** Peak host bytes per non-zero of the whole-CSR assembly (chunks plus the final CSR). */
const ASSEMBLY_BYTES_PER_NNZ = 24;

function blockIrrep(fd: Fcidump, space: DeterminantSpace): number {
  const a = space.detAlpha[0]!;
  const b = space.detBeta[0]!;
  const ga = stringIrreps(space.alpha.lo.subarray(a, a + 1), space.alpha.hi.subarray(a, a + 1), fd.orbsym)[0]!;
  const gb = stringIrreps(space.beta.lo.subarray(b, b + 1), space.beta.hi.subarray(b, b + 1), fd.orbsym)[0]!;
  return (ga ^ gb) + 1;
}

/**
 * Whether `space` has every string of each spin (an FCI or CAS space: the direct σ applies),
 * and, if so, the sampled number of non-zeros of its explicit H (0 otherwise). Cost: the nnz
 * sample (milliseconds).
 * @example const { full, nnz } = explicitSize(fd, space);
 */
export function explicitSize(fd: Fcidump, space: DeterminantSpace): { full: boolean; nnz: number } {
  const full = space.alpha.count === binomial(space.norb, space.nalpha) && space.beta.count === binomial(space.norb, space.nbeta);
  if (!full) return { full, nnz: 0 };
  // the block's irrep (Molpro numbering) from its first determinant, none for the whole product
  const irrep = space.size === space.alpha.count * space.beta.count ? undefined : blockIrrep(fd, space);
  const prepared = prepareCiSpace(fd, 'fci', { ms2: space.nalpha - space.nbeta, ...(irrep === undefined ? {} : { irrep }) });
  return { full, nnz: estimateNnz(fd, countPrepared(prepared)).nnz };
}

/** What {@link chooseSigma} decided and why. */
export interface SigmaChoice {
  sigma: 'direct' | 'explicit';
  reason: string;
  nnz: number;
  explicitMs: number;
  directMs: number;
}

/**
 * Decide between the explicit H and the direct σ for `space` over `fd`, expecting `products`
 * Davidson products, with `hostBytes` available. Direct when the space is FCI/CAS and either
 * the explicit H would not fit in half the memory or its modelled time (assembly + products)
 * is longer. Cost: the nnz sample (milliseconds).
 * @example chooseSigma(fd, space, { products: 20, hostBytes: 8e9 }).sigma; // 'direct'
 */
export function chooseSigma(fd: Fcidump, space: DeterminantSpace, o: { products: number; hostBytes: number; timeReversal?: boolean }): SigmaChoice {
  if (!(o.products > 0)) throw new InvalidParameterError('products', 'a positive number of expected products', o.products);
  const { full, nnz } = explicitSize(fd, space);
  const r = SIGMA_RATES;
  const explicitMs = (nnz * (r.assemblyNs + o.products * r.productNs)) / 1e6;
  const directMs = (nnz * o.products * r.directNs * (o.timeReversal ? 0.5 : 1)) / 1e6;
  const need = ASSEMBLY_BYTES_PER_NNZ * nnz;
  const gb = (b: number) => `${(b / 1e9).toFixed(2)} GB`;
  if (!full) return { sigma: 'explicit', reason: 'not an FCI/CAS space (the direct σ needs every string of each spin)', nnz, explicitMs, directMs };
  if (need > 0.5 * o.hostBytes) return { sigma: 'direct', reason: `the explicit H (≈ ${nnz.toExponential(2)} non-zeros) would need ${gb(need)} at assembly, more than half of the ${gb(o.hostBytes)} available`, nnz, explicitMs, directMs };
  const model = `modelled ${(directMs / 1e3).toFixed(1)} s direct vs ${(explicitMs / 1e3).toFixed(1)} s explicit (assembly + products) for ≈ ${o.products} products of ≈ ${nnz.toExponential(2)} non-zeros`;
  return directMs < explicitMs ? { sigma: 'direct', reason: model, nnz, explicitMs, directMs } : { sigma: 'explicit', reason: model, nnz, explicitMs, directMs };
}

/**
 * A `CiOptions.hamiltonian` factory that picks the explicit H or the direct σ per problem
 * ({@link chooseSigma}), and says which and why in the result's notes. `products`: expected
 * Davidson products (the CLI passes 20 per root solved).
 * @example ciEnergies(fd, { hamiltonian: autoHamiltonian({ products: 40, threads: 2 }) });
 */
export function autoHamiltonian(options: DirectSigmaOptions & { products: number; workers?: number | 'auto' }): (fd: Fcidump, space: DeterminantSpace) => Promise<CiHamiltonian<Float64Array> & { notes: string[] }> {
  return async (fd, space) => {
    const host = await hostMemoryAvailable();
    const choice = chooseSigma(fd, space, { products: options.products, hostBytes: host.bytes, timeReversal: options.timeReversal !== undefined });
    const note = `sigma auto: ${choice.sigma} — ${choice.reason}`;
    if (choice.sigma === 'direct') {
      const h = await directHamiltonian(options)(fd, space);
      return { ...h, notes: [note, ...h.notes] };
    }
    const perRow = Math.max(1, Math.ceil(choice.nnz / space.size));
    const h = await assembleForCi<Float64Array>(fd, space, { perRow, ...(options.workers === undefined ? {} : { workers: options.workers }) });
    return { ...h, notes: [note] };
  };
}
