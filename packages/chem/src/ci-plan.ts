/**
 * The CI driver's steps before the solve (./ci.ts): read the FCIDUMP, size the run (refused
 * before anything is allocated when it cannot fit), build the determinant space, validate the
 * options, then assemble H (whole, in chunks to the device, or an operator factory's) and
 * decide where the float64 polish runs.
 * @module
 */
import { getFormat, InvalidParameterError, type LinearOperator, NotSupportedError } from '@gpusparse/formats';
import { assembleForCi, type CiHamiltonian } from './ci-assembly';
import { assertRootsFit, sizeCiRun } from './ci-estimate';
import type { CiDevicePolish } from './ci-polish';
import { type CiBackend, type CiOptions, type CiProgress, hostBackend } from './ci-types';
import { buildCiSpace, prepareCiSpace } from './determinants/build';
import { spinStateCount } from './spin-count';
import type { DeterminantSpace } from './determinants/space';
import type { Fcidump } from './fcidump/types';
import type { ChunkSink } from './hamiltonian/chunked';
import type { CiEstimate } from './memory-estimate';

const DENSE_LIMIT = 4000;

/** What the driver knows before assembly. */
export interface CiPlan<V, S> {
  fd: Fcidump;
  space: DeterminantSpace;
  backend: CiBackend<V, S>;
  devicePolish: CiDevicePolish<V> | undefined;
  estimate: CiEstimate;
  chunked: boolean;
  nroots: number;
  format: string;
  solverName: 'dense' | 'davidson';
  /** Milliseconds of reading and of sizing + building the space. */
  read: number;
  spaceMs: number;
}

function pickFormat(requested: string | undefined, referenceSize: number): string {
  if (requested === undefined || requested === 'csr') return 'csr';
  if (requested !== 'auto') {
    getFormat(requested); // throws with the list of known names
    return requested;
  }
  if (referenceSize > 0) {
    for (const name of ['hybrid-ell-csr', 'hybrid']) {
      try {
        getFormat(name);
        return name;
      } catch {
        /* not registered */
      }
    }
  }
  return 'csr';
}

/**
 * The device polish the run will use (CiOptions.polish), checked before anything is built.
 * @throws InvalidParameterError for an unknown value; NotSupportedError for 'device' where none is offered
 */
async function pickPolish<V, S>(options: CiOptions<V, S>, backend: CiBackend<V, S>, ms2: number): Promise<CiDevicePolish<V> | undefined> {
  const want = options.polish ?? 'auto';
  if (want !== 'auto' && want !== 'device' && want !== 'host') throw new InvalidParameterError('polish', "'auto', 'device' or 'host'", want);
  // s14-harden-e: 'device' on a float64 backend was dropped here without a word (the refusal below names that case)
  if (want === 'device' && backend.space.precision !== 'f32') throw new NotSupportedError(`ciEnergies polish 'device': the backend (${backend.space.name}) solves in float64, with no float32 phase to polish; use polish 'auto' or 'host'`);
  if (want === 'host' || backend.space.precision !== 'f32' || options.solver === 'dense') return undefined;
  // an operator that keeps the spin parity at MS2 = 0 (the device direct σ with a multiplicity) needs no penalty matrix
  const byParity = ms2 === 0 && (options.hamiltonian as { spinParity?: boolean } | undefined)?.spinParity === true;
  if (options.spin && !byParity) {
    if (want === 'device') throw new NotSupportedError("ciEnergies polish 'device': not with a spin penalty (the S² matrix stays on the host); use polish 'host'");
    return undefined;
  }
  const dp = backend.devicePolish ? await backend.devicePolish() : undefined;
  if (!dp && want === 'device') throw new NotSupportedError(`ciEnergies polish 'device': the backend (${backend.space.name}) offers no float64-accurate device space (a CPU backend, or a device that fails the df64 self-test)`);
  return dp;
}

/** Read `input` (a path, URL or parsed FCIDUMP): the FCIDUMP and the milliseconds taken. */
async function readInput<V, S>(input: Fcidump | string | URL, options: CiOptions<V, S>): Promise<{ fd0: Fcidump; read: number }> {
  const t = performance.now();
  if (typeof input !== 'string' && !(input instanceof URL)) return { fd0: input, read: performance.now() - t };
  const { readFcidump } = await import('./fcidump/node');
  const fd0 = await readFcidump(input, { ...(options.symmetry === undefined ? {} : { symmetry: options.symmetry }), ...(options.ms2 === undefined ? {} : { ms2: options.ms2 }) });
  return { fd0, read: performance.now() - t };
}

/**
 * Read, size (the memory check), build the space and validate every option before the
 * (possibly long) assembly.
 * @throws InvalidParameterError / NotSupportedError / ResourceLimitError naming the option
 */
export async function planCi<V, S>(input: Fcidump | string | URL, options: CiOptions<V, S>, emit: (p: CiProgress) => void, notes: string[]): Promise<CiPlan<V, S>> {
  const { fd0, read } = await readInput(input, options);
  notes.push(...fd0.notes);
  emit({ stage: 'read' });
  const t = performance.now();
  const prepared = prepareCiSpace(fd0, options.space ?? 'fci', options);
  const backend = options.backend ?? (hostBackend() as unknown as CiBackend<V, S>);
  const devicePolish = await pickPolish(options, backend, prepared.nalpha - prepared.nbeta);
  const sizing = {
    ...options,
    backend: backend.space.precision === 'f32' ? ('device' as const) : ('host' as const),
    polish: devicePolish ? ('device' as const) : ('host' as const),
    ...(backend.deviceMemory ? { deviceMemory: backend.deviceMemory } : {}),
    ...(options.hamiltonian ? { memory: { ...options.memory, check: false } } : {}),
  };
  const mode = options.assembly ?? 'auto';
  if (mode !== 'auto' && mode !== 'chunked' && mode !== 'whole') throw new InvalidParameterError('assembly', "'auto', 'chunked' or 'whole'", mode);
  const canChunk = backend.chunkSink !== undefined && options.solver !== 'dense' && (options.format === undefined || options.format === 'csr' || options.format === 'auto');
  if (mode === 'chunked' && !canChunk) throw new InvalidParameterError('assembly', "'chunked' only with a backend that has a chunk sink, the Davidson solver and format 'csr'", mode);
  // a factory that stores no H (the host direct σ) needs no sampled nnz: ≈ 0.15 s saved at 4·10^5 determinants
  const storesMatrix = (options.hamiltonian as { storesMatrix?: boolean } | undefined)?.storesMatrix !== false;
  let { estimate } = await sizeCiRun(prepared, { ...sizing, storesMatrix, memory: { ...options.memory, check: false } });
  assertRootsFit(options.nroots, estimate.determinants); // before the memory check, which sizes by nroots
  const chunked = canChunk && (mode === 'chunked' || (mode === 'auto' && estimate.nnz.nnz >= 5e7));
  // with an operator factory the memory check is off: the first estimate is the same (≈ 0.16 s of nnz sampling saved)
  if (!options.hamiltonian) ({ estimate } = await sizeCiRun(prepared, { ...sizing, ...(chunked ? { chunkNnz: options.chunkNnz ?? 2 ** 24 } : {}) }));
  emit({ stage: 'estimate', estimate });
  const { fcidump: fd, space } = buildCiSpace(fd0, options.space ?? 'fci', options, prepared);
  if (fd !== fd0) notes.push(...fd.notes.slice(fd0.notes.length));
  const spaceMs = performance.now() - t;
  emit({ stage: 'space' });
  // every configuration whole: FCI and CAS (irrep filters keep whole configurations), truncated CI from a closed-shell reference
  const ref = prepared.reference;
  const complete = prepared.kind !== 'ci' || (ref.alpha.length === ref.beta.length && ref.alpha.every((p) => ref.beta.includes(p)));
  const checked = validateRun(options, space, complete);
  return { fd, space, backend, devicePolish, estimate, chunked, ...checked, read, spaceMs };
}

/** nroots, spin, format and solver against the built space. */
function validateRun<V, S>(options: CiOptions<V, S>, space: DeterminantSpace, complete: boolean): { nroots: number; format: string; solverName: 'dense' | 'davidson' } {
  const nroots = options.nroots ?? 1;
  // −1 ran no Davidson iteration and returned the start vectors' energies (not converged)
  const maxit = options.maxIterations;
  if (maxit !== undefined && !(Number.isSafeInteger(maxit) && maxit >= 0)) throw new InvalidParameterError('maxIterations', 'an integer ≥ 0', maxit);
  if (!Number.isInteger(nroots) || nroots < 1 || nroots > space.size) {
    throw new InvalidParameterError('nroots', `an integer in 1..${space.size} (the space size)`, nroots);
  }
  const spin = options.spin;
  if (spin) {
    const m = spin.multiplicity;
    // 0 leaves the other spin states in place, a negative weight lowers them below the wanted ones
    if (spin.penalty !== undefined && !(Number.isFinite(spin.penalty) && spin.penalty > 0)) {
      throw new InvalidParameterError('spin.penalty', 'a finite weight > 0 in Eh (0 or less does not push other spin states out)', spin.penalty);
    }
    const ms2 = space.nalpha - space.nbeta;
    if (!Number.isInteger(m) || m < 1 || Math.abs(ms2) > m - 1 || (m - 1 - ms2) % 2 !== 0) {
      throw new InvalidParameterError('spin.multiplicity', `2S+1 with S ≥ |M_S| = ${Math.abs(ms2) / 2} and the parity of MS2=${ms2}`, m);
    }
    // no determinant has more unpaired electrons than min(N, 2·norb − N): a larger S cannot be reached by any penalty
    const nel = space.nalpha + space.nbeta;
    const unpaired = Math.min(nel, 2 * space.norb - nel);
    if (m > unpaired + 1) {
      throw new InvalidParameterError('spin.multiplicity', `at most ${unpaired + 1} (${unpaired} unpaired electrons: ${nel} in ${space.norb} orbitals)`, m);
    }
    assertSpinRoots(space, m, nroots, complete);
  }
  const format = pickFormat(options.format, space.referenceSize);
  let solverName = options.solver ?? 'auto';
  if (solverName === 'auto') solverName = space.size <= 64 ? 'dense' : 'davidson';
  if (solverName !== 'dense' && solverName !== 'davidson') throw new InvalidParameterError('solver', "'davidson', 'dense' or 'auto'", solverName);
  if (solverName === 'dense' && space.size > DENSE_LIMIT) {
    throw new NotSupportedError(`ciEnergies: the dense solver takes at most ${DENSE_LIMIT} determinants, got ${space.size}; use solver: 'davidson'`);
  }
  if (options.accept !== undefined && options.accept !== 'residual' && options.accept !== 'bound') throw new InvalidParameterError('accept', "'residual' or 'bound'", options.accept);
  if (options.residualFloor !== undefined && !(Number.isFinite(options.residualFloor) && options.residualFloor > 0)) throw new InvalidParameterError('residualFloor', 'a positive number of Eh', options.residualFloor);
  return { nroots, format, solverName };
}

/**
 * More roots of a multiplicity than the space holds states of it: refused before any solve, on
 * every path (dense, Davidson, host, device; session 12's Davidson returned roots of other spins,
 * named only in `notes`). The count is exact (./spin-count.ts) except for incomplete
 * configurations of more than 12 open shells, where it is an upper bound: still a sound refusal.
 */
function assertSpinRoots(space: DeterminantSpace, m: number, nroots: number, complete: boolean): void {
  const { count, exact } = spinStateCount(space, m, complete);
  if (nroots <= count) return;
  throw new InvalidParameterError('nroots', `at most ${count}${exact ? '' : ' (an upper bound)'}: the states of multiplicity ${m} in this space (${space.label}, ${space.size} determinants)`, nroots);
}

/** H as the solve uses it, and where its float64 polish runs. */
export interface CiBuilt<V> {
  h: CiHamiltonian<V>;
  sink: ChunkSink<V> | undefined;
  /** An operator factory's own H in the device polish's space. */
  polishOp: LinearOperator<unknown> | undefined;
  /** The device polish, unless an operator factory's H has no product in its space. */
  devicePolish: CiDevicePolish<V> | undefined;
}

/** Assemble H (or take the operator factory's), per the plan. */
export async function buildCiHamiltonian<V, S>(plan: CiPlan<V, S>, options: CiOptions<V, S>, emit: (p: CiProgress) => void, notes: string[]): Promise<CiBuilt<V>> {
  const { fd, space, backend, estimate, chunked } = plan;
  let devicePolish = plan.devicePolish;
  // an operator factory may decline (e.g. its cost model chose the explicit H): then H is assembled as without one
  const custom = options.hamiltonian ? await options.hamiltonian(fd, space, notes) : undefined;
  const sink = chunked && !custom ? await backend.chunkSink!(space.size, estimate.nnz.perRow, { keepLo: devicePolish !== undefined }) : undefined;
  const h = custom ?? await assembleForCi<V>(fd, space, {
    ...(sink ? { sink } : {}),
    keepHost: !(chunked && devicePolish),
    ...(options.chunkNnz === undefined ? {} : { chunkNnz: options.chunkNnz }),
    perRow: estimate.nnz.perRow,
    ...(options.workers === undefined ? {} : { workers: options.workers }),
    onProgress: (rowsDone, rows) => emit({ stage: 'assembly', rowsDone, rows }),
  });
  if (sink) notes.push(`H assembled in ${h.stats.chunks} row chunks straight to the device (float32); ${devicePolish ? 'low parts of inexact values kept on the device for the df64 polish' : 'float64 row blocks kept on the host for the polish'}`);
  notes.push(...((h as { notes?: string[] }).notes ?? [])); // e.g. why an operator factory chose its path
  if (devicePolish && options.spin) {
    // the device polish was allowed for a spin-parity operator: one of another parity (or none) would need the penalty matrix
    const want = ((options.spin.multiplicity - 1) / 2) % 2 === 0 ? 1 : -1;
    if ((h.host as { parity?: number } | undefined)?.parity !== want) {
      if (options.polish === 'device') {
        (h.host as { dispose?: () => void } | undefined)?.dispose?.(); // the factory's device tables
        throw new NotSupportedError("ciEnergies polish 'device': not with a spin penalty (the operator of options.hamiltonian keeps no spin parity of this multiplicity); use polish 'host'");
      }
      devicePolish = undefined;
      notes.push('float64 polish on the host: the spin penalty matrix stays on the host');
    }
  }
  let polishOp: LinearOperator<unknown> | undefined;
  if (custom && backend.space.precision === 'f32') {
    // an operator factory on a float32 backend: its device operator runs Davidson, its host operator the float64 polish
    if (!h.device || !h.host) {
      throw new NotSupportedError(`ciEnergies: options.hamiltonian on a float32 backend must give a device operator and a float64 host operator (e.g. gpuDirectHamiltonian); this one gave ${h.device ? 'no host operator' : 'no device operator'}`);
    }
    // its own operator in the device polish's space (e.g. the direct σ in df64), or the host polish
    polishOp = devicePolish ? (custom as { polishOperator?: (s: unknown) => LinearOperator<unknown> | undefined }).polishOperator?.(devicePolish.space) : undefined;
    if (devicePolish && !polishOp) {
      if (options.polish === 'device') throw new NotSupportedError(`ciEnergies polish 'device': the operator of options.hamiltonian has no product in the device polish's space (${devicePolish.precision}); use polish 'host' (or 'auto')`);
      devicePolish = undefined;
      notes.push(`float64 polish on the host: the operator of options.hamiltonian has no product in the device polish's space`);
    }
  }
  if (!h.matrix && !h.device) notes.push(`H not stored: σ = H·c by ${h.host?.label ?? 'an operator'}`);
  return { h, sink, polishOp, devicePolish };
}
