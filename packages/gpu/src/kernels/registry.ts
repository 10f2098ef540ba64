/**
 * Every SpMV kernel, in one list. A kernel not listed here is not tested by the conformance
 * loop and does not ship. Adding a kernel: write `kernels/<format>/<variant>.kernel.ts`
 * exporting an {@link SpmvKernel}, then add one line below.
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { csrAdaptiveKernel } from './csr/adaptive.kernel';
import { csrScalarKernel } from './csr/scalar.kernel';
import { csrVectorKernel } from './csr/vector.kernel';
import { csrVec4Kernel } from './csr4/vec4.kernel';
import { csrLongKernel } from './csr-long/long.kernel';
import { csrBalancedKernel } from './csrb/balanced.kernel';
import { csrStreamKernel } from './csr-stream/stream.kernel';
import { csrMergeKernel } from './csr-merge/merge.kernel';
import { ellKernel } from './ell/ell.kernel';
import { ellRKernel } from './ell/ell-r.kernel';
import { slicedEllKernel } from './ell/sliced-ell.kernel';
import { slicedEllRKernel } from './ell/sliced-ell-r.kernel';
import { slicedSplitKernel } from './ell/sliced-split.kernel';
import { hybridKernel } from './hybrid/hybrid.kernel';
import { sellKernel } from './sell/sell.kernel';
import { diaKernel } from './dia/dia.kernel';
import { diaTiledKernel } from './dia/dia-tiled.kernel';
import { diaVec4Kernel } from './dia/dia-vec4.kernel';
import { hmKernel } from './hm/hm.kernel';
import { bcsrKernel } from './bcsr/bcsr.kernel';
import { cmrsKernel } from './cmrs/cmrs.kernel';
import { axcKernel } from './axt/axc.kernel';
import { axtch1Kernel } from './axt/axtch1.kernel';
import { axtchKernel } from './axt/axtch.kernel';
import { axtuh1Kernel } from './axt/axtuh1.kernel';
import { axtuhKernel } from './axt/axtuh.kernel';
import { cooKernel } from './coo/coo.kernel';
import { csrViSliceKernel } from './csr-vi/vi-slice.kernel';
import { csrViKernel } from './csr-vi/vi.kernel';
import type { AnySpmvKernel } from './types';

/** All registered kernels. */
export const kernels: readonly AnySpmvKernel[] = [
  csrScalarKernel,
  csrVectorKernel,
  csrAdaptiveKernel,
  csrVec4Kernel,
  csrLongKernel,
  csrBalancedKernel,
  csrMergeKernel,
  // -- other formats' kernels: one line each --
  axcKernel,
  axtuh1Kernel,
  axtuhKernel,
  axtch1Kernel,
  axtchKernel,
  diaKernel,
  diaTiledKernel,
  hmKernel,
  bcsrKernel,
  cmrsKernel,
  cooKernel,
  ellKernel,
  ellRKernel,
  slicedEllKernel,
  slicedEllRKernel,
  sellKernel,
  hybridKernel,
];

/**
 * Kernels that are tested (their own test files, the conformance cases) and benchmarked
 * (`bench/spmv.ts` times them with the others) but are not default autotuner candidates: the
 * tuner enumerates {@link kernels} unless its caller passes `kernels`.
 * `sliced-ell-split` (issue 20) carries its own cost terms and a grid of its H100 winners, so a
 * caller tuning a CI Hamiltonian can add it (`autotune(ctx, a, { kernels: [...kernels,
 * slicedSplitKernel] })`); it is not in the default list because the static short-list model
 * (`autotune/cost-model.ts`) has no case for it and costs it as plain CSR: it displaced ELL and
 * the diagonal family from the short-list on stencils (autotune-answers tests).
 * `csr-stream` (issue 20, session 10) reads the shared CSR arrays (no conversion); at the H100's
 * full clock it beats cuSPARSE on CI rows (1.14–1.15×, session 11) but loses to csr-adaptive on
 * power-law rows (0.38× against 0.88×): a candidate for long rows once the tuner's short-list
 * model has a case for it (not done here: the tuner is another branch's).
 */
export const experimentalKernels: readonly AnySpmvKernel[] = [
  slicedSplitKernel,
  csrStreamKernel,
  // dia-vec4 (issue 20, session 12): aligned vec4 DIA; on the H100 5–17 % slower than dia-tiled (bench/RESULTS.md session 12)
  diaVec4Kernel,
  // csr-vi (issue 20, session 13): CSR-VI with column windows, ≈ 4.2 bytes per entry on CI Hamiltonians
  // (format csr-vi); a CI kernel for bench/spmv.ts and `autotune(…, { kernels: [...kernels, csrViKernel] })`:
  // the short-list model has no case for it (its conversion is a host pass with hashing, O(nnz))
  csrViKernel,
  // csr-vi-slice: the same format, sliced slot-major (rows of a slice share x lines at a slot)
  csrViSliceKernel,
];

/**
 * Look a kernel up by id (registered or experimental); an unknown id is an InvalidParameterError
 * ('kernel') listing the known ids.
 * @example getKernel('csr-vector')
 */
export function getKernel(id: string): AnySpmvKernel {
  const all = [...kernels, ...experimentalKernels];
  const k = all.find((d) => d.id === id);
  if (!k) throw new InvalidParameterError('kernel', `a known SpMV kernel id (one of ${all.map((d) => d.id).join(', ')})`, `'${id}'`);
  return k;
}

/** The parameter variants of a kernel (defaults, then each other declared value of each parameter). */
export function kernelVariants(k: AnySpmvKernel): Record<string, number>[] {
  const out: Record<string, number>[] = [{ ...k.defaults }];
  for (const [name, spec] of Object.entries(k.params as Record<string, { values: readonly number[] }>)) {
    for (const v of spec.values) if (v !== k.defaults[name]) out.push({ ...k.defaults, [name]: v });
  }
  return out;
}
