/**
 * The CI driver: FCIDUMP → determinant space → Hamiltonian (CSR, then any format) →
 * eigenpairs (Davidson from @gpusparse/solvers, or a dense solve) → energies, residuals, ⟨S²⟩.
 * The steps: ./ci-plan.ts (read, size, space, validation, assembly), ./ci-solve.ts (Davidson and
 * the float64 polish), ./ci-phases.ts (dense solve, float64 energies).
 * @module
 */
import { buildCiHamiltonian, type CiBuilt, type CiPlan, planCi } from './ci-plan';
import { checkParityRun, denseHalfSolve, parityHalf } from './ci-parity';
import { denseCiSolve, float64Energies } from './ci-phases';
import { type CiSolved, type CiSpin, davidsonCi } from './ci-solve';
import type { CiOptions, CiProgress, CiResult } from './ci-types';
import { denseColumnsCsr } from './direct/ci';
import type { DeterminantSpace } from './determinants/space';
import type { Fcidump } from './fcidump/types';
import { spinPenaltyMatrix, spinSquaredExpectations, spinSquaredMatrix } from './hamiltonian/spin';

export * from './ci-types';

/**
 * CI energies of an FCIDUMP: the lowest `nroots` eigenvalues of H in the chosen space.
 * Cost: assembly O(nnz) plus the eigensolver's matvecs (Davidson) or O(n³) (dense).
 * @example
 * const r = await ciEnergies('H4.FCIDUMP', { space: 'fci', nroots: 2 });
 * r.energies; // [-2.19038..., ...]
 */
export async function ciEnergies<V = Float64Array, S = unknown>(input: Fcidump | string | URL, options: CiOptions<V, S> = {}): Promise<CiResult> {
  // onProgress is a notification: a Promise it returns is not awaited, but its rejection is kept
  // (not left unhandled, which ends a Node process) and rejects the run once the run is over
  let failed: { error: unknown } | undefined;
  const user = options.onProgress;
  const onProgress = user && ((p: CiProgress) => {
    const ret: unknown = user(p);
    if (ret !== null && typeof ret === 'object' && typeof (ret as { then?: unknown }).then === 'function') {
      (ret as PromiseLike<unknown>).then(undefined, (error: unknown) => {
        failed ??= { error };
      });
    }
  });
  const r = await ciRun(input, { ...options, ...(onProgress ? { onProgress } : {}) }, true);
  await null; // a callback's rejection of the last event settles first
  if (failed) throw failed.error;
  const short = r.spinShortfall;
  if (!short) return r;
  // the roots do not answer the request: not converged, whatever Davidson's own verdict (the CLI exits non-zero)
  const what = [short.otherSpin.length > 0 ? `roots ${short.otherSpin.join(', ')} have another spin` : '', short.missing > 0 ? `${short.missing} root(s) of the multiplicity missing` : ''].filter(Boolean).join('; ');
  return { ...r, solver: { ...r.solver, converged: false }, notes: [...r.notes, `spin: the request for ${options.nroots ?? 1} root(s) of multiplicity ${options.spin?.multiplicity} is not met (${what}): reported as not converged (spinShortfall)`] };
}

/** {@link ciEnergies}; `mayRepeat`: whether a run whose spin parity let another spin in may repeat itself ({@link dropOtherSpins}). */
async function ciRun<V, S>(input: Fcidump | string | URL, options: CiOptions<V, S>, mayRepeat: boolean): Promise<CiResult> {
  const emit = options.onProgress ?? (() => {});
  const notes: string[] = [];
  const plan = await planCi(input, options, emit, notes);
  const built = await buildCiHamiltonian(plan, options, emit, notes);
  const spin = spinTreatment(plan, built, options, notes);
  checkParityRun(built.h.host, options.spin?.multiplicity, plan.nroots);
  const t = performance.now();
  emit({ stage: 'solve-start' });
  if (options.accept === 'bound' && plan.solverName === 'dense') notes.push("accept 'bound': the dense solver is exact: no stop rule to apply");
  else if (options.accept === 'bound' && spin.pm) notes.push("accept 'bound': not with a spin penalty (the energies are ⟨H⟩, not the penalised eigenvalues the bound would certify): roots judged by the residual rule");
  else if (options.accept === 'bound' && options.energyChange !== undefined && plan.backend.space.precision !== 'f32') notes.push("accept 'bound': energyChange replaces it (OpenMolcas' rule, not certified)");
  const solved = plan.solverName === 'dense' ? await denseSolve(plan, built, spin) : await davidsonCi(plan, built, spin, options, emit, notes);
  const solve = performance.now() - t;
  const result = await finishCi(plan, built, spin, solved, notes, { solve, assembly: built.h.stats.ms }, options.spin !== undefined);
  if (spin.byParity && mayRepeat) return await dropOtherSpins(input, options, plan.nroots, plan.space.size, result);
  return spin.pm && mayRepeat ? await raisePenalty(input, options, result) : result;
}

/**
 * A spin penalty below the spread of the wanted roots lets a shifted state of another spin take
 * one of them (H4 STO-6G, 20 singlets by Davidson at 0.2 Eh: 6 triplets among them). Then the run is
 * repeated with the penalty raised — at least doubled, and at least the spread of the energies
 * found, so that a shift of ≥ 4·penalty clears them — at most three times; a note says so, and the
 * per-root notes of a last run that still holds another spin stay.
 */
async function raisePenalty<V, S>(input: Fcidump | string | URL, options: CiOptions<V, S>, first: CiResult): Promise<CiResult> {
  const m = options.spin!.multiplicity;
  let r = first;
  let penalty = options.spin!.penalty ?? 0.2;
  for (let round = 1; round <= 3; round++) {
    const wrong = r.s2.filter((x) => !isSpin(x, m)).length;
    if (wrong === 0) return r;
    const spread = Math.max(...r.energies) - Math.min(...r.energies);
    const before = penalty;
    penalty = Math.max(2 * penalty, spread);
    const again = await ciRun(input, { ...options, spin: { ...options.spin!, penalty } }, false);
    r = { ...again, notes: [...again.notes, `spin: ${wrong} of the ${r.energies.length} roots had another spin at penalty ${before.toPrecision(3)} Eh (the roots spread over ${spread.toPrecision(3)} Eh): repeated with penalty ${penalty.toPrecision(3)} Eh${round === 3 ? ' (the last try: if roots of another spin remain, the space may hold fewer states of this spin)' : ''}`] };
  }
  return r;
}

/** Whether ⟨S²⟩ = x is the S(S+1) of multiplicity m. */
const isSpin = (x: number, m: number): boolean => Math.abs(x - ((m - 1) / 2) * ((m + 1) / 2)) <= 1e-3;

/**
 * A spin parity (time reversal at MS2 = 0) keeps (−1)^S only: a state of another spin of the same
 * parity (a quintet among singlets) can take one of the wanted roots where no spin filter runs
 * (the device direct σ). Then the run is repeated once with as many more roots as came wrong
 * (plus one), and the wanted multiplicity's lowest `nroots` are kept; a note says so, and what
 * is still missing if the larger run did not find enough.
 */
async function dropOtherSpins<V, S>(input: Fcidump | string | URL, options: CiOptions<V, S>, nroots: number, size: number, first: CiResult): Promise<CiResult> {
  const m = options.spin!.multiplicity;
  const wrong = first.s2.filter((x) => !isSpin(x, m)).length;
  if (wrong === 0 || nroots >= size) return first;
  const more = Math.min(size, nroots + wrong + 1);
  const again = await ciRun(input, { ...options, nroots: more }, false);
  const keep = again.s2.map((x, i) => (isSpin(x, m) ? i : -1)).filter((i) => i >= 0).slice(0, nroots);
  const pick = <T>(a: readonly T[]): T[] => keep.map((i) => a[i]!);
  const note = `spin: ${wrong} of the ${nroots} roots of the first run had another spin of the same parity (⟨S²⟩ ≠ ${((m - 1) / 2) * ((m + 1) / 2)}): repeated with ${more} roots and kept the ${keep.length} of multiplicity ${m}${keep.length < nroots ? ` — only ${keep.length} found; ask for more roots or use the spin penalty (a host direct or explicit H)` : ''}`;
  if (keep.length === 0) return { ...first, notes: [...first.notes, note], spinShortfall: { otherSpin: first.spinShortfall?.otherSpin ?? [], missing: nroots } };
  // the larger run's own spinShortfall names its other-spin roots, which are not kept
  const { spinShortfall: _others, ...rest } = again;
  return {
    ...rest,
    energies: pick(again.energies),
    residualNorms: pick(again.residualNorms),
    s2: pick(again.s2),
    vectors: pick(again.vectors),
    ...(again.bounds ? { bounds: { ...again.bounds, bound: pick(again.bounds.bound), acceptedBy: pick(again.bounds.acceptedBy) } } : {}),
    notes: [...again.notes.filter((n) => !/^root \d+: ⟨S²⟩/.test(n)), note],
    ...(keep.length < nroots ? { spinShortfall: { otherSpin: [], missing: nroots - keep.length } } : {}),
  };
}

/** The spin penalty (S² as a matrix only for it) or the operator's spin parity. */
function spinTreatment<V, S>(plan: CiPlan<V, S>, built: CiBuilt<V>, options: CiOptions<V, S>, notes: string[]): CiSpin {
  const { space } = plan;
  const spin = options.spin;
  const penalty = spin?.penalty ?? 0.2;
  // an operator that keeps only the spin parity (−1)^S (direct σ, time reversal at MS2 = 0) needs no penalty
  const byParity = spin !== undefined && space.nalpha === space.nbeta && (built.h.host as { parity?: number } | undefined)?.parity === (((spin.multiplicity - 1) / 2) % 2 === 0 ? 1 : -1);
  if (byParity) notes.push(`spin: multiplicity ${spin.multiplicity} by time-reversal parity and a spin-adapted start (no penalty)`);
  const pm = spin && !byParity ? spinPenaltyMatrix(spinSquaredMatrix(space), spin.multiplicity) : undefined;
  return { multiplicity: spin?.multiplicity, pm, penalty, byParity };
}

/** All eigenpairs of a small H (+ penalty) by a dense solve; the dense solver never chunks, so a host operator exists. */
async function denseSolve<V, S>(plan: CiPlan<V, S>, built: CiBuilt<V>, spin: CiSpin): Promise<CiSolved> {
  const { h } = built;
  await (h as { prepareHost?: () => Promise<void> }).prepareHost?.();
  // time reversal: the whole operator also holds a diagonal block on the other parity (not H's eigenvalues)
  const half = spin.pm ? undefined : parityHalf(h.host);
  if (half) return { ...denseHalfSolve(half, plan.space, plan.nroots, spin.multiplicity), solver: { method: `dense (tred2/tql2) on the ${half.rows}-dimensional half space of the spin parity`, converged: true, iterations: 1, matvecs: 0 }, format: 'dense', polishMs: 0 };
  const { values, vectors } = denseCiSolve(h.matrix ?? denseColumnsCsr(h.host!, plan.space.size), plan.space.size, spin.pm, spin.penalty, plan.nroots);
  return { values, vectors, solver: { method: 'dense (tred2/tql2)', converged: true, iterations: 1, matvecs: 0 }, format: 'dense', polishMs: 0 };
}

/** Energies, residuals and ⟨S²⟩ in float64 (on the host, or from the device polish in df64), and the result. */
async function finishCi<V, S>(plan: CiPlan<V, S>, built: CiBuilt<V>, spin: CiSpin, r: CiSolved, notes: string[], ms: { solve: number; assembly: number }, withSpin: boolean): Promise<CiResult> {
  const { h } = built;
  const { fd, space } = plan;
  const { vectors, values, outcome } = r;
  const { energies, residualNorms } = outcome
    ? { energies: values.slice(0, vectors.length).map((v) => v + fd.ecore), residualNorms: outcome.residualNorms.slice(0, vectors.length) }
    : float64Energies(h.host!, vectors, withSpin ? undefined : values, fd.ecore);
  const { s2, spinMs } = await spinOfRoots(built, space, r, vectors, notes);
  // the threaded host product holds worker threads and a shared copy of H: free them now
  (h.host as { dispose?: () => void } | undefined)?.dispose?.();
  const otherSpin: number[] = [];
  if (spin.multiplicity !== undefined) {
    const m = spin.multiplicity;
    const target = ((m - 1) / 2) * ((m + 1) / 2);
    s2.forEach((x, i) => {
      if (!isSpin(x, m)) otherSpin.push(i);
      if (Math.abs(x - target) > 1e-3) notes.push(`root ${i}: ⟨S²⟩ = ${x.toFixed(6)}, not ${target}: ${spin.pm ? 'raise spin.penalty or nroots' : 'a state of another spin of the same parity; ask for more roots'}`);
    });
  }
  return {
    energies,
    residualNorms,
    s2,
    timings: { read: plan.read, space: plan.spaceMs, assembly: ms.assembly, solve: ms.solve, polish: r.polishMs, spin: spinMs, ...(r.polishStages ? { polishStages: r.polishStages } : {}) },
    determinants: space.size,
    nnz: h.nnz,
    format: r.format,
    space: space.label,
    solver: r.solver,
    assembly: { rate: h.stats.rate, bytesPerNnz: h.stats.bytesPerNnz, workers: h.stats.workers },
    vectors,
    notes,
    ...(r.bounds ? { bounds: r.bounds } : {}),
    ...(otherSpin.length > 0 ? { spinShortfall: { otherSpin, missing: 0 } } : {}),
  };
}

/**
 * ⟨S²⟩ of the final vectors and the milliseconds it took: known already (the spin filter, or
 * the device polish over the device direct σ's tables), else from the operator's own
 * `spinSquared` (the device direct σ: the host vectors uploaded in float32, one pass), else on
 * the host from the determinant strings (the reference, float64).
 */
async function spinOfRoots<V>(built: CiBuilt<V>, space: DeterminantSpace, r: CiSolved, vectors: Float64Array[], notes: string[]): Promise<{ s2: number[]; spinMs: number }> {
  if (r.knownS2) return { s2: r.knownS2.slice(0, vectors.length), spinMs: r.spinMs ?? 0 };
  const t = performance.now();
  let dev: number[] | undefined;
  try {
    dev = built.h.spinSquared ? await built.h.spinSquared(vectors) : undefined;
  } catch (e) {
    // the energies are final: a failed device ⟨S²⟩ (e.g. a lost device) falls back to the host reference
    notes.push(`⟨S²⟩ on the device failed (${e instanceof Error ? e.message : String(e)}): computed on the host`);
  }
  if (dev) {
    notes.push(`⟨S²⟩ on the device from the direct σ's tables (the host vectors uploaded in float32; df64 sums): ${((performance.now() - t) / 1000).toFixed(3)} s`);
    return { s2: dev, spinMs: performance.now() - t };
  }
  return { s2: spinSquaredExpectations(space, vectors), spinMs: performance.now() - t };
}
