/**
 * The CI driver: FCIDUMP → determinant space → Hamiltonian (CSR, then any format) →
 * eigenpairs (Davidson from @gpusparse/solvers, or a dense solve) → energies, residuals, ⟨S²⟩.
 * @module
 */
import { generators, getFormat, HostOperator, InvalidParameterError, type LinearOperator, NotSupportedError } from '@gpusparse/formats';
import { davidson, type EigenResult, lowestIndices } from '@gpusparse/solvers';
import { sizeCiRun } from './ci-estimate';
import { buildCiSpace, prepareCiSpace } from './determinants/build';
import type { Fcidump } from './fcidump/types';
import { assembleForCi } from './ci-assembly';
import { denseColumnsCsr } from './direct/ci';
import { type CiDevicePolish, type CiPolishOutcome, polishCi } from './ci-polish';
import { SpinPenaltyOperator, spinPenaltyMatrix, spinSquaredExpectations, spinSquaredMatrix } from './hamiltonian/spin';
import type { HalfSpaceOperator } from './direct/operator';
import { solveSpinFiltered, spinAdaptedGuess } from './spin-guess';
import { denseCiSolve, float64Energies, hostJdPolish } from './ci-phases';
import { type CiBackend, type CiOptions, type CiResult, hostBackend } from './ci-types';

export * from './ci-types';

const DENSE_LIMIT = 4000;

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
async function pickPolish<V, S>(options: CiOptions<V, S>, backend: CiBackend<V, S>): Promise<CiDevicePolish<V> | undefined> {
  const want = options.polish ?? 'auto';
  if (want !== 'auto' && want !== 'device' && want !== 'host') throw new InvalidParameterError('polish', "'auto', 'device' or 'host'", want);
  if (want === 'host' || backend.space.precision !== 'f32' || options.solver === 'dense') return undefined;
  if (options.spin) {
    if (want === 'device') throw new NotSupportedError("ciEnergies polish 'device': not with a spin penalty (the S² matrix stays on the host); use polish 'host'");
    return undefined;
  }
  const dp = backend.devicePolish ? await backend.devicePolish() : undefined;
  if (!dp && want === 'device') throw new NotSupportedError(`ciEnergies polish 'device': the backend (${backend.space.name}) offers no float64-accurate device space (a CPU backend, or a device that fails the df64 self-test)`);
  return dp;
}

/**
 * CI energies of an FCIDUMP: the lowest `nroots` eigenvalues of H in the chosen space.
 * Cost: assembly O(nnz) plus the eigensolver's matvecs (Davidson) or O(n³) (dense).
 * @example
 * const r = await ciEnergies('H4.FCIDUMP', { space: 'fci', nroots: 2 });
 * r.energies; // [-2.19038..., ...]
 */
export async function ciEnergies<V = Float64Array, S = unknown>(input: Fcidump | string | URL, options: CiOptions<V, S> = {}): Promise<CiResult> {
  const emit = options.onProgress ?? (() => {});
  const notes: string[] = [];
  let t = performance.now();
  let fd0: Fcidump;
  if (typeof input === 'string' || input instanceof URL) {
    const { readFcidump } = await import('./fcidump/node');
    fd0 = await readFcidump(input, options.symmetry === undefined ? {} : { symmetry: options.symmetry });
  } else fd0 = input;
  notes.push(...fd0.notes);
  const read = performance.now() - t;
  emit({ stage: 'read' });
  t = performance.now();
  const prepared = prepareCiSpace(fd0, options.space ?? 'fci', options);
  const backend0 = options.backend ?? (hostBackend() as unknown as CiBackend<V, S>);
  let devicePolish = await pickPolish(options, backend0);
  const sizing = {
    ...options,
    backend: backend0.space.precision === 'f32' ? ('device' as const) : ('host' as const),
    polish: devicePolish ? ('device' as const) : ('host' as const),
    ...(backend0.deviceMemory ? { deviceMemory: backend0.deviceMemory } : {}),
    ...(options.hamiltonian ? { memory: { ...options.memory, check: false } } : {}),
  };
  const mode = options.assembly ?? 'auto';
  if (mode !== 'auto' && mode !== 'chunked' && mode !== 'whole') throw new InvalidParameterError('assembly', "'auto', 'chunked' or 'whole'", mode);
  const canChunk = backend0.chunkSink !== undefined && options.solver !== 'dense' && (options.format === undefined || options.format === 'csr' || options.format === 'auto');
  if (mode === 'chunked' && !canChunk) throw new InvalidParameterError('assembly', "'chunked' only with a backend that has a chunk sink, the Davidson solver and format 'csr'", mode);
  let { estimate } = await sizeCiRun(prepared, { ...sizing, memory: { ...options.memory, check: false } });
  const chunked = canChunk && (mode === 'chunked' || (mode === 'auto' && estimate.nnz.nnz >= 5e7));
  // with an operator factory the memory check is off: the first estimate is the same (≈ 0.16 s of nnz sampling saved)
  if (!options.hamiltonian) ({ estimate } = await sizeCiRun(prepared, { ...sizing, ...(chunked ? { chunkNnz: options.chunkNnz ?? 2 ** 24 } : {}) }));
  emit({ stage: 'estimate', estimate });
  const { fcidump: fd, space } = buildCiSpace(fd0, options.space ?? 'fci', options, prepared);
  if (fd !== fd0) notes.push(...fd.notes.slice(fd0.notes.length));
  const spaceMs = performance.now() - t;
  emit({ stage: 'space' });
  const nroots = options.nroots ?? 1;
  if (!Number.isInteger(nroots) || nroots < 1 || nroots > space.size) {
    throw new InvalidParameterError('nroots', `an integer in 1..${space.size} (the space size)`, nroots);
  }
  const spin = options.spin;
  if (spin) {
    const m = spin.multiplicity;
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
  }
  // validate everything before the (possibly long) assembly
  let format = pickFormat(options.format, space.referenceSize);
  let solverName = options.solver ?? 'auto';
  if (solverName === 'auto') solverName = space.size <= 64 ? 'dense' : 'davidson';
  if (solverName !== 'dense' && solverName !== 'davidson') throw new InvalidParameterError('solver', "'davidson', 'dense' or 'auto'", solverName);
  if (solverName === 'dense' && space.size > DENSE_LIMIT) {
    throw new NotSupportedError(`ciEnergies: the dense solver takes at most ${DENSE_LIMIT} determinants, got ${space.size}; use solver: 'davidson'`);
  }
  // an operator factory may decline (e.g. its cost model chose the explicit H): then H is assembled as without one
  const custom = options.hamiltonian ? await options.hamiltonian(fd, space, notes) : undefined;
  const sink = chunked && !custom ? await backend0.chunkSink!(space.size, estimate.nnz.perRow, { keepLo: devicePolish !== undefined }) : undefined;
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
  let polishOp: LinearOperator<unknown> | undefined;
  if (custom && backend0.space.precision === 'f32') {
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
  const assemblyMs = h.stats.ms;
  // S² as a matrix only for the spin penalty; ⟨S²⟩ of the roots is computed without it
  const penalty = spin?.penalty ?? 0.2;
  // an operator that keeps only the spin parity (−1)^S (direct σ, time reversal at MS2 = 0) needs no penalty
  const byParity = spin !== undefined && space.nalpha === space.nbeta && (h.host as { parity?: number } | undefined)?.parity === (((spin.multiplicity - 1) / 2) % 2 === 0 ? 1 : -1);
  if (byParity) notes.push(`spin: multiplicity ${spin.multiplicity} by time-reversal parity and a spin-adapted start (no penalty)`);
  const pm = spin && !byParity ? spinPenaltyMatrix(spinSquaredMatrix(space), spin.multiplicity) : undefined;
  const tol = options.tol ?? 1e-8;
  if (options.accept !== undefined && options.accept !== 'residual' && options.accept !== 'bound') throw new InvalidParameterError('accept', "'residual' or 'bound'", options.accept);
  t = performance.now();
  emit({ stage: 'solve-start' });
  let values: number[];
  let vectors: Float64Array[];
  let solverInfo: CiResult['solver'];
  let outcome: CiPolishOutcome | undefined; // the device polish's result, when it ran
  let polishMs = 0;
  let knownS2: number[] | undefined; // ⟨S²⟩ of the roots when the spin filter already computed them
  // an operator factory may build its float64 host product on demand (e.g. the device direct σ): only where it is used
  const prepareHost = async () => (h as { prepareHost?: () => Promise<void> }).prepareHost?.();
  let bounds: CiResult['bounds']; // after a float64 polish
  if (options.accept === 'bound' && (solverName === 'dense' || backend0.space.precision !== 'f32')) notes.push(`accept 'bound': no float32 phase to polish (${solverName === 'dense' ? 'dense solver' : 'float64 backend'}): roots judged by the residual rule`);
  else if (options.accept === 'bound' && pm) notes.push("accept 'bound': not with a spin penalty (the energies are ⟨H⟩, not the penalised eigenvalues the bound would certify): roots judged by the residual rule");
  if (solverName === 'dense') {
    await prepareHost();
    ({ values, vectors } = denseCiSolve(h.matrix ?? denseColumnsCsr(h.host!, space.size), space.size, pm, penalty, nroots)); // the dense solver never chunks, so a host operator exists
    solverInfo = { method: 'dense (tred2/tql2)', converged: true, iterations: 1, matvecs: 0 };
    format = 'dense';
  } else {
    const backend = backend0;
    const hop = h.device ? await h.device() : h.matrix ? await backend.operator(h.matrix, format) : (h.host as unknown as LinearOperator<V>);
    let op: LinearOperator<V> = hop;
    let diagonal = h.diagonal;
    let pdiag = new Float64Array(0);
    if (pm) {
      const pop0 = await backend.operator(pm, format);
      pdiag = new Float64Array(space.size);
      for (let i = 0; i < space.size; i++) {
        for (let k = pm.rowPtr[i]!; k < pm.rowPtr[i + 1]!; k++) if (pm.colIdx[k] === i) pdiag[i] = pm.values[k]!;
      }
      const pop = new SpinPenaltyOperator(hop, pop0, penalty, h.diagonal, pdiag);
      op = pop;
      diagonal = pop.diagonal();
    }
    if (!h.matrix && !sink) format = hop.label ?? h.host?.label ?? 'operator'; // after the penalty's operator, which takes a registry format
    // Guard roots against symmetry: ask for a few extra roots and start from the lowest
    // diagonal unit vectors plus a small seeded random part, so that states orthogonal to
    // every unit-vector guess (other spin or spatial symmetry) are still reachable.
    // accept 'bound' needs a guard root above the wanted ones (it gives the gap), even for one root
    const byBound = options.accept === 'bound' && backend.space.precision === 'f32' && !pm;
    const kSolve = Math.min(space.size, nroots + (options.extraRoots ?? (nroots > 1 || byBound ? 1 : 0)));
    // A float32 backend (WebGPU) cannot reach 1e-8 Eh residuals by itself: it converges to
    // what float32 allows, then a float64 Davidson on the host polishes from its Ritz vectors
    // (docs/guides/precision.md). A float64 backend solves to `tol` directly.
    const lowPrecision = backend.space.precision === 'f32';
    // compile the polish's pipelines and pool its vectors now, overlapped with the float32 solve
    const prewarmed = lowPrecision && devicePolish && !pm ? devicePolish.prewarm?.({ rows: space.size, nnz: h.nnz, vectors: 4 * kSolve + 16 }) : undefined;
    // direct σ with time reversal: Davidson in the half space of the spin parity (half the vectors' length)
    const half = !pm && !lowPrecision && !h.matrix && !h.device ? (h.host as { half?: HalfSpaceOperator } | undefined)?.half : undefined;
    // spin-adapted starts (and a few spare ones for roots of another spin shifted out later)
    const guesses = spin && !pm ? spinAdaptedGuess(space, diagonal, kSolve + 4, spin.multiplicity) : lowestIndices(diagonal, kSolve).slice(0, kSolve).map((i) => [{ index: i, value: 1 }]);
    const rand = generators.rng(12345);
    // spin-adapted starts: parity and the other-spin shift handle what the random part guards against, so
    // keep its norm at ≈ 10^-3 (1e-3 per entry is a norm of 0.13 at 2·10^5 entries: 24 instead of 19 iterations on H2O/6-31G)
    const amp = spin && !pm ? 1e-3 / Math.sqrt(space.size / 12) : 1e-3;
    const initialVectors = guesses.map((entries) => {
      const g = new Float64Array(space.size);
      for (let j = 0; j < g.length; j++) g[j] = (rand() - 0.5) * amp;
      for (const { index, value } of entries) g[index] = value;
      (h.host as { project?: (v: Float64Array) => void } | undefined)?.project?.(g); // e.g. onto one spin parity (direct σ with time reversal)
      return backend.space.fromArray(half ? half.compress(g) : g);
    });
    const spare = initialVectors.splice(kSolve);
    if (half) {
      op = half as unknown as LinearOperator<V>;
      diagonal = half.diagonal();
      notes.push(`Davidson on the ${half.rows}-dimensional half space of the spin parity (time reversal)`);
    }
    const solveFrom = (o: LinearOperator<V>, starts: V[]) =>
      davidson<V, S>(o, backend.space, {
        k: kSolve,
        nConverge: nroots, // the guard roots help Davidson but do not hold the verdict
        diagonal,
        initialVectors: starts,
        // accept 'bound': to 0.3·√tol (3e-5 at 1e-8), where ε²/gap usually meets tol with no correction
        residualTol: lowPrecision ? Math.max(tol, byBound ? Math.min(1e-4, 0.3 * Math.sqrt(tol)) : 1e-4) : tol,
        ...(lowPrecision ? { tol: 1e-6 } : {}),
        ...(options.maxIterations === undefined ? {} : { maxIterations: options.maxIterations }),
        onIteration: (info) => void emit({ stage: 'solve', iteration: info.iteration, values: info.values, residualNorms: info.residualNorms }),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    let res = await solveFrom(op, initialVectors);
    if (half && byParity) {
      // V is Float64Array on this path (a float64 host backend); other spins of the parity are shifted out
      const f = await solveSpinFiltered(res as unknown as EigenResult<Float64Array>, { half, space, multiplicity: spin!.multiplicity, nroots, spare: spare as unknown as Float64Array[], solve: (o, st) => solveFrom(o as unknown as LinearOperator<V>, st as unknown as V[]) as unknown as Promise<EigenResult<Float64Array>> });
      knownS2 = f.s2; // ⟨S²⟩ of these vectors (O(size·n_open²), ≈ 0.25 s at 4·10^5 determinants): not computed twice
      if (f.deflated) notes.push(`spin: ${f.deflated} state(s) of another spin of the same parity shifted out of the lowest roots`);
      res = f as unknown as EigenResult<V>;
    }
    values = res.values.slice(0, nroots);
    solverInfo = { method: res.method, converged: res.converged, iterations: res.iterations, matvecs: res.stats.matvecs };
    if (lowPrecision && devicePolish) {
      // float64-accurate polish on the device (df64): no float64 H and no vector on the host
      const t0 = performance.now(); // the phase includes building H in df64 (an upload on the whole path)
      await prewarmed; // compiles not done by now would block on first use anyway
      const tWarm = performance.now() - t0;
      const pop = polishOp ?? (await devicePolish.operator(h.matrix, sink, hop)); // hop: its float32 arrays can be shared
      const tOp = performance.now() - t0 - tWarm;
      outcome = await polishCi({
        fastOp: op,
        fastSpace: backend.space,
        fastVectors: res.vectors.slice(0, kSolve),
        kSolve,
        nroots,
        diagonal,
        tol,
        maxIterations: options.maxIterations ?? 50,
        device: devicePolish,
        operator: pop,
        ...(byBound ? { accept: 'bound' as const } : {}),
        onIteration: (info) => void emit({ stage: 'polish', iteration: info.iteration, values: info.values, residualNorms: info.residualNorms }),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      (pop as { dispose?: () => void }).dispose?.();
      for (const v of res.vectors) backend.space.release(v); // handed over to the polish on the device
      const p = outcome.result;
      values = outcome.values;
      solverInfo = {
        method: `${res.method} (float32, ${res.stats.matvecs} matvecs) + ${p.method} ${devicePolish.precision} polish (${p.stats.matvecs} device matvecs, ${outcome.correctionMatvecs} float32 correction matvecs)`,
        converged: p.converged,
        iterations: res.iterations + p.iterations,
        matvecs: res.stats.matvecs + p.stats.matvecs + outcome.correctionMatvecs,
      };
      polishMs = performance.now() - t0;
      notes.push(`float32 backend: ${res.iterations} iterations on ${backend.space.name}, then ${p.iterations} iterations in ${devicePolish.precision} on the device (${(polishMs / 1000).toFixed(2)} s; Jacobi–Davidson corrections on ${backend.space.name})`);
      const st = outcome.stages;
      notes.push(`device polish stages: waiting for prewarm ${(tWarm / 1000).toFixed(3)} s, H in ${devicePolish.precision} ${(tOp / 1000).toFixed(3)} s, Davidson ${(st.davidson / 1000).toFixed(3)} s, final check ${(st.check / 1000).toFixed(3)} s`);
      bounds = { accept: byBound ? 'bound' : 'residual', ...outcome.bounds };
      notes.push(`device polish: roots accepted by ${outcome.bounds.acceptedBy.join(', ')}; certified bounds ${outcome.bounds.bound.map((b) => b.toExponential(1)).join(' ')}; Eh (0 ≤ E − λ ≤ bound, docs/guides/precision.md)`);
    }
    let fastVectors = outcome ? outcome.vectors : await Promise.all(res.vectors.slice(0, kSolve).map(async (v) => (half ? half.expand(await backend.space.toArray(v)) : backend.space.toArray(v))));
    if (!outcome) await prepareHost(); // the host polish and the float64 energies below
    if (lowPrecision && !outcome) {
      const t0 = performance.now();
      const hostH = h.host!;
      const hostOp: LinearOperator<Float64Array> = pm
        ? new SpinPenaltyOperator(hostH, HostOperator.fromCsr(pm), penalty, h.diagonal, pdiag)
        : hostH;
      const { polish, jd, judge } = await hostJdPolish(hostOp, op, backend.space, {
        kSolve,
        nroots,
        diagonal,
        fastVectors,
        tol,
        byBound,
        maxIterations: options.maxIterations ?? 50,
        onIteration: (info) => void emit({ stage: 'polish', iteration: info.iteration, values: info.values, residualNorms: info.residualNorms }),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      values = polish.values.slice(0, nroots);
      fastVectors = polish.vectors;
      solverInfo = {
        method: `${res.method} (float32, ${res.stats.matvecs} matvecs) + ${polish.method} float64 polish (${polish.stats.matvecs} host matvecs, ${jd.stats.matvecs} float32 correction matvecs)`,
        converged: polish.converged,
        iterations: res.iterations + polish.iterations,
        matvecs: res.stats.matvecs + polish.stats.matvecs + jd.stats.matvecs,
      };
      polishMs = performance.now() - t0;
      bounds = { accept: byBound ? 'bound' : 'residual', ...judge.report(polish.values, polish.residualNorms) };
      notes.push(`host polish: roots accepted by ${bounds.acceptedBy.join(', ')}; certified bounds ${bounds.bound.map((b) => b.toExponential(1)).join(' ')} Eh (0 ≤ E − λ ≤ bound${pm ? ' of H + spin penalty' : ''}, docs/guides/precision.md)`);
      notes.push(`float32 backend: ${res.iterations} iterations on ${backend.space.name}, then ${polish.iterations} float64 host iterations (${(polishMs / 1000).toFixed(2)} s; Jacobi–Davidson corrections on ${backend.space.name})`);
    }
    vectors = fastVectors.slice(0, nroots);
  }
  const solve = performance.now() - t;
  // energies, residuals and ⟨S²⟩ recomputed in float64 (on the host, or by the device polish in df64)
  const { energies, residualNorms } = outcome
    ? { energies: values.slice(0, vectors.length).map((v) => v + fd.ecore), residualNorms: outcome.residualNorms.slice(0, vectors.length) }
    : float64Energies(h.host!, vectors, spin ? undefined : values, fd.ecore);
  const s2: number[] = [];
  s2.push(...(knownS2 ? knownS2.slice(0, vectors.length) : spinSquaredExpectations(space, vectors)));
  // the threaded host product holds worker threads and a shared copy of H: free them now
  (h.host as { dispose?: () => void } | undefined)?.dispose?.();
  if (spin) {
    const target = ((spin.multiplicity - 1) / 2) * ((spin.multiplicity + 1) / 2);
    s2.forEach((x, r) => {
      if (Math.abs(x - target) > 1e-3) notes.push(`root ${r}: ⟨S²⟩ = ${x.toFixed(6)}, not ${target}: ${pm ? 'raise spin.penalty or nroots' : 'a state of another spin of the same parity; ask for more roots'}`);
    });
  }
  return {
    energies,
    residualNorms,
    s2,
    timings: { read, space: spaceMs, assembly: assemblyMs, solve, polish: polishMs },
    determinants: space.size,
    nnz: h.nnz,
    format,
    space: space.label,
    solver: solverInfo,
    assembly: { rate: h.stats.rate, bytesPerNnz: h.stats.bytesPerNnz, workers: h.stats.workers },
    vectors,
    notes,
    ...(bounds ? { bounds } : {}),
  };
}
