/**
 * The device direct σ in the CI driver: `ciEnergies(fd, { backend: <webgpu>, hamiltonian:
 * gpuDirectHamiltonian(ctx) })` runs the float32 Davidson on the GPU over ./operator.ts (no
 * assembly, no stored H) and polishes in df64 on the device (./operator-df64.ts), or, where the
 * backend has no df64, in float64 on the host with the host direct σ (../operator.ts, worker
 * threads), which is then built on demand. Device memory is estimated and checked first.
 * @module
 */
import { GpuSparseError, type LinearOperator, ResourceLimitError } from '@gpusparse/formats';
import { Df64Vector, Df64VectorSpace, type GpuContext, GpuVector, uploadF32 } from '@gpusparse/gpu';
import type { CiHamiltonian } from '../../ci-assembly';
import { binomial } from '../../determinants/bits';
import type { DeterminantSpace } from '../../determinants/space';
import { FcidumpError } from '../../fcidump/errors';
import type { Fcidump } from '../../fcidump/types';
import { hostMemoryAvailable } from '../../memory-estimate';
import { DIRECT_BYTES_PER_DETERMINANT } from '../ci';
import { type DirectSigmaOperator, type DirectSigmaOptions, directSigmaOperator } from '../operator';
import { type GpuDirectSigmaOperator, gpuDirectSigmaOperator } from './operator';
import { parityOfMultiplicity } from './parity';

/** What {@link gpuDirectHamiltonian} gives the CI driver. */
export type GpuDirectCiHamiltonian = CiHamiltonian<GpuVector> & {
  notes: string[];
  /** H in the device polish's space: the df64 direct σ for a Df64VectorSpace of the same context, else undefined. */
  polishOperator(space: unknown): LinearOperator<Df64Vector> | undefined;
  /**
   * Builds the host float64 direct σ (string tables again, worker threads) that `host` runs
   * on; the driver awaits it only where the host product is used (dense solver, host polish,
   * float64 energies without the device polish). Until then `host.apply` throws.
   */
  prepareHost(): Promise<void>;
  /** Whether `prepareHost` has built the host operator (tests, notes). */
  readonly hostBuilt: boolean;
  /** The device memory estimate checked before building (see {@link estimateGpuDirectBytes}). */
  estimate: GpuDirectEstimate;
};

/** Options of {@link gpuDirectHamiltonian}. */
export interface GpuDirectHamiltonianOptions {
  /** Threads of the host float64 direct σ of the polish (default 'auto': every core, at most 16). */
  threads?: DirectSigmaOptions['threads'];
  /** Host bytes to assume (default what the host has free). */
  hostBytes?: number;
  /** Device bytes to assume (default: the context's device memory where the backend reports it, else unchecked). */
  deviceBytes?: number;
  /** Roots the driver solves for (nroots + guard roots; default 2): sizes Davidson's vectors. */
  roots?: number;
  /** Stage integral blocks in workgroup memory (default false; see gpuDirectSigmaOperator). */
  stageIntegrals?: boolean;
  /**
   * The multiplicity 2S + 1 the run targets: at MS2 = 0 the device σ (and the host σ of a host
   * polish) keeps the spin parity (−1)^S (./parity.ts), so the driver needs no spin penalty and
   * may polish on the device; ignored at MS2 ≠ 0 (the driver's penalty then).
   */
  multiplicity?: number;
}

/**
 * The device σ's spin parity for `multiplicity` over `space`: (−1)^S at MS2 = 0, else undefined.
 * @throws InvalidParameterError for a multiplicity that is not an odd integer ≥ 1 at MS2 = 0
 */
export function gpuParityFor(space: DeterminantSpace, multiplicity: number | undefined): 1 | -1 | undefined {
  if (multiplicity === undefined || space.nalpha !== space.nbeta) return undefined;
  return parityOfMultiplicity(multiplicity);
}

/** Device bytes of a device direct run, by part (see {@link estimateGpuDirectBytes}). */
export interface GpuDirectEstimate {
  determinants: number;
  /** String tables (records, replacement lists, same-spin rows, work list) and the layout permutation with its scratch. */
  tables: number;
  /** (pq|rs) in float32 and in df64. */
  integrals: number;
  /** The float32 Davidson: 2·maxSubspace + 2k vectors of 4 B. */
  davidson: number;
  /** The df64 polish: 2·(4k + 8) + 2k vectors of 8 B, the correction solver's float32 vectors, df64 permutation scratch. */
  polish: number;
  /** tables + integrals + the larger of the two phases (the float32 basis is released before the polish). */
  total: number;
  /** Bytes of the largest single buffer (a df64 vector, 8 B per determinant). */
  largestBuffer: number;
}

/** Float32 vectors of the correction solver (GMRES basis and work) during the polish. */
const CORRECTION_VECTORS = 24;

/**
 * Device bytes a device direct run over `space` will need, from the string counts alone (no
 * table is built): the same-spin rows are bounded by all singles and doubles of a string
 * (the symmetry filter only removes records), the layout permutation is assumed. `roots`: the
 * driver's k (nroots + guard roots); `parity`: the operator keeps an MS2 = 0 spin parity (its swap,
 * scratch and diagonal: 20 B per determinant in float32, 32 in the df64 polish). O(1).
 * @example const e = estimateGpuDirectBytes(fd, space, 7); // e.total, e.largestBuffer
 */
export function estimateGpuDirectBytes(fd: Fcidump, space: DeterminantSpace, roots: number, parity = false): GpuDirectEstimate {
  const n = space.size;
  const norb = fd.norb;
  const k = Math.max(1, Math.min(n, roots));
  const side = (count: number, nel: number) => {
    const m = nel * (norb - nel) + nel;
    const doubles = binomial(nel, 2) * binomial(norb - nel, 2);
    return { info: count, rep: 2 * count * m, hrec: 2 * count * (m + doubles) };
  };
  const a = side(space.alpha.count, space.nalpha);
  const b = side(space.beta.count, space.nbeta);
  const words = 16 * a.info + 4 * b.info + norb * norb + 9 + a.rep + b.rep + a.hrec + b.hrec + 2 * (n / 64 + space.alpha.count);
  const records = (a.hrec + b.hrec) / 2;
  // + permutation (2 index arrays, 2 scratch vectors) + df64 lo parts; a spin parity (./parity.ts): the swap and
  // the float32 projection's scratch and diagonal (5 words per determinant)
  const tables = 4 * words + 16 * n + 4 * records + (parity ? 20 * n : 0);
  const integrals = 12 * norb ** 4;
  const maxSubspace = Math.min(n, 12 + 4 * (k - 1));
  const davidson = 4 * n * (2 * maxSubspace + 2 * k);
  const polishSubspace = Math.min(n, 4 * k + 8);
  const polish = 8 * n * (2 * polishSubspace + 2 * k) + 4 * n * (CORRECTION_VECTORS + k) + 16 * n + (parity ? 32 * n : 0); // parity: df64 scratch and diagonal
  return { determinants: n, tables, integrals, davidson, polish, total: tables + integrals + Math.max(davidson, polish), largestBuffer: 8 * n };
}

const gb = (b: number) => `${(b / 1e9).toFixed(2)} GB`;

/** One line for the notes: the estimate by part and per determinant. */
export function describeGpuDirectEstimate(e: GpuDirectEstimate): string {
  const per = (b: number) => (b / Math.max(1, e.determinants)).toFixed(0);
  return `device memory estimate: ${gb(e.total)} (${per(e.total)} B per determinant): tables ${gb(e.tables)}, integrals ${gb(e.integrals)}, float32 Davidson ${gb(e.davidson)} (${per(e.davidson)} B/det), df64 polish ${gb(e.polish)} (${per(e.polish)} B/det); phases not held together`;
}

/**
 * Refuse, before building anything, a space that would not fit: the host side (diagonal,
 * final vectors, string tables; the host polish's vectors only where it may run), the device
 * estimate against `deviceBytes` (option, else the context's), and one vector (a df64 one,
 * 8 B per determinant) against the device's largest buffer and storage binding. Returns the
 * device estimate.
 */
export async function checkGpuDirectFits(ctx: GpuContext | undefined, fd: Fcidump, space: DeterminantSpace, options: GpuDirectHamiltonianOptions): Promise<GpuDirectEstimate> {
  checkFloat32Integrals(fd);
  const e = estimateGpuDirectBytes(fd, space, options.roots ?? 2, gpuParityFor(space, options.multiplicity) !== undefined);
  const advice = 'use point-group symmetry (irrep), fewer roots or a smaller active space';
  const host = options.hostBytes ?? (await hostMemoryAvailable()).bytes;
  const needHost = DIRECT_BYTES_PER_DETERMINANT * space.size + 8 * fd.norb ** 4;
  if (needHost > host) throw new ResourceLimitError(`device direct CI over ${space.size} determinants (the host side: float64 vectors and string tables)`, needHost, host, advice);
  const limits = ctx?.limits;
  if (limits) {
    const binding = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
    if (e.largestBuffer > binding) throw new ResourceLimitError(`device direct CI over ${space.size} determinants: one df64 vector (8 B per determinant) in one storage binding`, e.largestBuffer, binding, advice);
  }
  const device = options.deviceBytes;
  if (device !== undefined && e.total > device) {
    throw new ResourceLimitError(`device direct CI over ${space.size} determinants (${describeGpuDirectEstimate(e)})`, e.total, device, advice);
  }
  return e;
}

const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * The device σ holds the integrals in float32: one above its range became ±Infinity and every
 * energy NaN (reported as "not converged"). The explicit path refuses such an H element; this is
 * the same refusal for the direct path, naming the integral (1-based indices as in the file).
 * O(norb⁴).
 * @throws FcidumpError naming the integral, its value and --backend cpu
 */
export function checkFloat32Integrals(fd: Fcidump): void {
  const n = fd.norb;
  const way = 'the device direct σ holds integrals in float32; scale the integrals, or use --backend cpu (float64)';
  for (let k = 0; k < fd.h1.length; k++) {
    if (!(Math.abs(fd.h1[k]!) <= FLOAT32_MAX)) {
      throw new FcidumpError(fd.file, undefined, `|h(${Math.floor(k / n) + 1},${(k % n) + 1})| ≤ 3.4e38 (${way})`, String(fd.h1[k]));
    }
  }
  for (let k = 0; k < fd.eri.length; k++) {
    if (!(Math.abs(fd.eri[k]!) <= FLOAT32_MAX)) {
      const [i, j, p, q] = [Math.floor(k / n ** 3), Math.floor(k / n ** 2) % n, Math.floor(k / n) % n, k % n];
      throw new FcidumpError(fd.file, undefined, `|(${i + 1} ${j + 1}|${p + 1} ${q + 1})| ≤ 3.4e38 (${way})`, String(fd.eri[k]));
    }
  }
}

/**
 * The host float64 direct σ behind a handle that builds it on demand (prepareHost); the
 * device tables are released with it.
 */
function lazyHost(dev: GpuDirectSigmaOperator, fd: Fcidump, space: DeterminantSpace, options: GpuDirectHamiltonianOptions) {
  let op: DirectSigmaOperator | undefined;
  const need = (): DirectSigmaOperator => {
    if (!op) throw new GpuSparseError('device direct CI: the host float64 direct σ was used before prepareHost() built it (a driver bug)');
    return op;
  };
  // the device operator's spin parity, seen by the driver on `host` (spinTreatment, start projection)
  const parity = dev.parity !== undefined && dev.project ? { parity: dev.parity, project: dev.project } : {};
  const host: LinearOperator<Float64Array> & { dispose(): void; label: string; parity?: 1 | -1; project?: (v: Float64Array) => void } = {
    ...parity,
    rows: dev.rows,
    cols: dev.cols,
    label: 'direct-sigma(host, built on demand)',
    apply: (x, y) => need().apply(x, y),
    applyScaled: (a, x, b, y) => need().applyScaled(a, x, b, y),
    diagonal: () => dev.diagonal(),
    dispose: () => {
      op?.dispose();
      dev.dispose();
    },
  };
  const prepare = async (): Promise<DirectSigmaOperator> => {
    // the same spin parity as the device σ: the host polish runs the same P H P + (1 − P) D (1 − P)
    op ??= await directSigmaOperator(fd, space, { threads: options.threads ?? 'auto', ...(dev.parity === undefined ? {} : { timeReversal: dev.parity > 0 ? ('even' as const) : ('odd' as const) }) });
    host.label = op.label ?? 'direct-sigma(host)';
    return op;
  };
  return { host, prepare, built: () => op !== undefined };
}

/**
 * ⟨S²⟩ on the device for the driver (CiHamiltonian.spinSquared): df64 or float32 device vectors
 * as they are, host float64 vectors uploaded in float32 (a Rayleigh quotient: ⟨S²⟩ of a spin
 * state moves only to second order in that rounding). Undefined where the kernel's workgroup
 * arrays do not fit the device or the vectors are of another kind: the driver then computes
 * ⟨S²⟩ on the host.
 */
function deviceSpinSquared(dev: GpuDirectSigmaOperator): (vs: readonly unknown[]) => Promise<number[] | undefined> {
  return async (vs) => {
    if (!dev.spinOnDevice) return undefined;
    if (vs.every((v) => v instanceof Df64Vector) || vs.every((v) => v instanceof GpuVector)) return dev.spinSquared(vs as readonly (Df64Vector | GpuVector)[]);
    if (!vs.every((v) => v instanceof Float64Array)) return undefined;
    const up = (vs as readonly Float64Array[]).map((v) => new GpuVector(uploadF32(dev.ctx, Float32Array.from(v), 'direct-spin-host-vector'), v.length));
    try {
      return await dev.spinSquared(up);
    } finally {
      for (const v of up) v.buf.dispose();
    }
  };
}

/**
 * The driver's Hamiltonian around a built device operator `dev`: the host float64 direct σ
 * (worker threads) only on demand (`prepareHost`, for a host polish), and the notes.
 * Disposing the host handle (the driver does, at the end) releases the device tables too.
 * `driverNotes`: the driver's note list (the build of the host operator is noted there).
 */
export function gpuDirectParts(dev: GpuDirectSigmaOperator, fd: Fcidump, space: DeterminantSpace, options: GpuDirectHamiltonianOptions, t0: number, estimate: GpuDirectEstimate, driverNotes?: string[]): GpuDirectCiHamiltonian {
  const lazy = lazyHost(dev, fd, space, options);
  const perDet = (dev.deviceBytes / Math.max(1, space.size)).toFixed(1);
  const notes = [
    `direct σ on the device (float32, ${dev.label}): tables ${(dev.deviceBytes / 1e6).toFixed(1)} MB (${perDet} B per determinant) + integrals; float64 polish: the df64 direct σ on the device where the backend offers df64, else the host direct σ (built only then)`,
    describeGpuDirectEstimate(estimate),
  ];
  return {
    matrix: undefined,
    diagonal: dev.diagonal(),
    nnz: 0,
    host: lazy.host,
    device: async () => dev,
    // the CI driver's device polish (df64 on WebGPU): the same σ in df64 over these tables
    polishOperator: (s: unknown) => {
      if (!(s instanceof Df64VectorSpace && s.ctx === dev.ctx)) return undefined;
      void dev.prewarmSpin(true); // the final ⟨S²⟩ runs on the polish's df64 vectors: compiled during the float32 solve
      return dev.df64(s.d);
    },
    prepareHost: async () => {
      void dev.prewarmSpin(false); // a host polish: the final ⟨S²⟩ gets the host vectors uploaded in float32
      const t = performance.now();
      const built = lazy.built();
      const op = await lazy.prepare();
      // the driver copied `notes` when it got this object: later lines go to its own list
      if (!built) (driverNotes ?? notes).push(`host float64 direct σ built for the polish in ${((performance.now() - t) / 1000).toFixed(2)} s (${op.threads} thread${op.threads === 1 ? '' : 's'})`);
    },
    get hostBuilt() {
      return lazy.built();
    },
    spinSquared: deviceSpinSquared(dev),
    estimate,
    stats: { ms: performance.now() - t0, rate: 0, bytesPerNnz: 0, workers: 0, chunks: 0 },
    notes,
  };
}

/**
 * A `CiOptions.hamiltonian` factory for a WebGPU backend on `ctx`: `device` gives the float32
 * direct σ on the GPU, `host` the float64 direct σ for a host polish (built on demand by
 * `prepareHost`), no matrix. Refuses with ResourceLimitError, before building anything, a
 * space whose estimated device memory ({@link estimateGpuDirectBytes}) exceeds `deviceBytes`
 * or whose df64 vector exceeds one buffer; the estimate goes into the notes.
 * @example
 * const r = await ciEnergies(fd, { irrep: 1, backend, hamiltonian: gpuDirectHamiltonian(ctx) });
 */
export function gpuDirectHamiltonian(ctx: GpuContext, options: GpuDirectHamiltonianOptions = {}): ((fd: Fcidump, space: DeterminantSpace, notes?: string[]) => Promise<GpuDirectCiHamiltonian>) & { readonly spinParity: boolean } {
  const factory = async (fd: Fcidump, space: DeterminantSpace, driverNotes?: string[]) => {
    const t0 = performance.now();
    const estimate = await checkGpuDirectFits(ctx, fd, space, options);
    const parity = gpuParityFor(space, options.multiplicity);
    const dev = gpuDirectSigmaOperator(ctx, fd, space, { stageIntegrals: options.stageIntegrals === true, ...(parity === undefined ? {} : { parity }) });
    // the tables' allocations report out-of-memory asynchronously: wait for their error scopes
    // here (one popErrorScope round trip) so that the ResourceLimitError comes from this build
    try {
      await ctx.settle();
      ctx.check();
    } catch (e) {
      dev.dispose();
      throw e;
    }
    return gpuDirectParts(dev, fd, space, options, t0, estimate, driverNotes);
  };
  // spinParity: at MS2 = 0 its operator keeps the spin parity of `multiplicity` (the driver may then polish on the device)
  return Object.assign(factory, { spinParity: options.multiplicity !== undefined });
}
