/**
 * Self-contained steps of the CI driver (./ci.ts): the dense eigensolve of a small space, the
 * float64 Jacobi–Davidson polish on the host after a float32 solve, and the float64 energies and
 * residuals of the final vectors.
 * @module
 */
import { type CsrMatrix, csrSpmv, HostVectorSpace, InvalidParameterError, type LinearOperator, type VectorSpace } from '@gpusparse/formats';
import { davidsonWith, type EigenIterationInfo, type EigenResult, fastCorrector } from '@gpusparse/solvers';
import { boundTarget, ciJudge, polishCorrection } from './ci-polish';
import { symmetricEigenDense } from './dense-eigen';
import type { DirectSigmaOperator, HalfSpaceOperator } from './direct/operator';

/**
 * The lowest `nroots` eigenpairs of H by a dense symmetric eigensolve (H: n × n CSR arrays); with
 * the spin penalty matrix P = (S² − S(S+1))² the lowest `nroots` of H + `penalty`·P whose
 * ⟨P⟩ is 0 — the states of the wanted spin, every one of them, however high (session 12: the
 * lowest of the penalised H took a triplet for the 17th singlet of H4 once the spectrum spread
 * past the penalty, and states of other spins when nroots passed their count). Cost O(n³) time,
 * 8·n² bytes; the driver allows n ≤ 4000.
 * @throws InvalidParameterError ('nroots') when the space holds fewer states of that spin
 * @example const { values, vectors } = denseCiSolve(h, h.rows, undefined, 0, 2);
 */
export function denseCiSolve(h: Pick<CsrMatrix, 'rowPtr' | 'colIdx' | 'values'>, n: number, pm: CsrMatrix | undefined, penalty: number, nroots: number): { values: number[]; vectors: Float64Array[] } {
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let k = h.rowPtr[i]!; k < h.rowPtr[i + 1]!; k++) a[i * n + h.colIdx[k]!]! += h.values[k]!;
  if (pm) {
    // H + λ(S² − S(S+1))²
    for (let i = 0; i < n; i++) for (let k = pm.rowPtr[i]!; k < pm.rowPtr[i + 1]!; k++) a[i * n + pm.colIdx[k]!]! += penalty * pm.values[k]!;
  }
  const eig = symmetricEigenDense(a, n);
  if (!pm) return { values: Array.from(eig.values.subarray(0, nroots)), vectors: eig.vectors.slice(0, nroots) };
  // ⟨v|P|v⟩ is 0 on the wanted spin and ≥ 4 on any other (S² values differ by ≥ 2)
  const keep: number[] = [];
  const pv = new Float64Array(n);
  for (let j = 0; j < n && keep.length < nroots; j++) {
    const v = eig.vectors[j]!;
    csrSpmv(pm, v, pv);
    let q = 0;
    for (let i = 0; i < n; i++) q += v[i]! * pv[i]!;
    if (q < 1e-3) keep.push(j);
  }
  if (keep.length < nroots) throw new InvalidParameterError('nroots', `at most ${keep.length}: the states of the wanted spin multiplicity in this space`, nroots);
  return { values: keep.map((j) => eig.values[j]!), vectors: keep.map((j) => eig.vectors[j]!) };
}

/**
 * Normalises each vector in place and returns E = ⟨c|H|c⟩ + ecore and ‖Hc − Ec‖ in float64.
 * With `eigenvalues` (no spin penalty) the solver's eigenvalue is reported instead of the
 * quotient (more accurate; they agree to ‖r‖²). Cost: one product per vector — on the half space
 * when `h` is a time-reversal direct operator (see {@link halfSpaceEnergy}: the same numbers at
 * half the σ work).
 * @example const { energies, residualNorms } = float64Energies(hHost, vectors, values, fd.ecore);
 */
export function float64Energies(h: LinearOperator<Float64Array>, vectors: Float64Array[], eigenvalues: readonly number[] | undefined, ecore: number): { energies: number[]; residualNorms: number[] } {
  const energies: number[] = [];
  const residualNorms: number[] = [];
  const tr = h as Partial<Pick<DirectSigmaOperator, 'half' | 'diagonal'>>;
  for (let r = 0; r < vectors.length; r++) {
    const c = vectors[r]!;
    let nrm = 0;
    for (let i = 0; i < c.length; i++) nrm += c[i]! * c[i]!;
    nrm = Math.sqrt(nrm);
    for (let i = 0; i < c.length; i++) c[i]! /= nrm;
    const { e, res } = tr.half && tr.diagonal ? halfSpaceEnergy(tr.half, tr.diagonal(), c) : fullSpaceEnergy(h, c);
    energies.push((eigenvalues ? eigenvalues[r]! : e) + ecore);
    residualNorms.push(res);
  }
  return { energies, residualNorms };
}

/** ⟨c|H|c⟩ and ‖Hc − ⟨c|H|c⟩c‖ for a normalised c: one product over the whole space. */
function fullSpaceEnergy(h: LinearOperator<Float64Array>, c: Float64Array): { e: number; res: number } {
  const hc = new Float64Array(c.length);
  h.apply(c, hc);
  let e = 0;
  for (let i = 0; i < c.length; i++) e += c[i]! * hc[i]!;
  let res2 = 0;
  for (let i = 0; i < c.length; i++) res2 += (hc[i]! - e * c[i]!) ** 2;
  return { e, res: Math.sqrt(res2) };
}

/**
 * The same quotient and residual for a time-reversal direct operator A = P H P + (1 − P) D (1 − P)
 * (./direct/time-reversal.ts; P = Q Qᵀ, D = diag H, which commutes with the α↔β swap): split
 * c = Q u + w (u = Qᵀ c, w = (1 − P) c, the other parity, rounding-sized for the solver's vectors);
 * then A c = Q (Qᵀ H Q u) + D w with the two parts orthogonal, so ⟨c|A|c⟩ = u·v + w·D w and
 * ‖A c − E c‖² = ‖v − E u‖² + ‖(D − E) w‖², v = Qᵀ H Q u: one product on the half space.
 */
function halfSpaceEnergy(half: HalfSpaceOperator, d: Float64Array, c: Float64Array): { e: number; res: number } {
  const u = half.compress(c);
  const qu = half.expand(u);
  const v = new Float64Array(u.length);
  half.apply(u, v);
  let e = 0;
  for (let k = 0; k < u.length; k++) e += u[k]! * v[k]!;
  for (let i = 0; i < c.length; i++) {
    const w = c[i]! - qu[i]!;
    e += w * d[i]! * w;
  }
  let res2 = 0;
  for (let k = 0; k < u.length; k++) res2 += (v[k]! - e * u[k]!) ** 2;
  for (let i = 0; i < c.length; i++) res2 += ((d[i]! - e) * (c[i]! - qu[i]!)) ** 2;
  return { e, res: Math.sqrt(res2) };
}

/** What {@link hostJdPolish} needs besides the operators. */
export interface HostPolishInput {
  /** Davidson's block size (roots + guard roots) and the roots that hold the verdict. */
  kSolve: number;
  nroots: number;
  diagonal: Float64Array;
  /** Starting vectors on the host (the float32 solve's Ritz vectors). */
  fastVectors: Float64Array[];
  tol: number;
  /** Accept roots by the certified bound (./ci-polish ciJudge) as well as by the residual. */
  byBound: boolean;
  maxIterations: number;
  onIteration?: (info: EigenIterationInfo) => unknown;
  signal?: AbortSignal;
}

/**
 * Jacobi–Davidson polish: float64 residuals on the host (`hostOp`), correction equations solved
 * by GMRES with the float32 operator `fastOp` on `fastSpace`, so the host does a few products
 * instead of a whole Davidson run at the diagonal preconditioner's rate (docs/guides/precision.md).
 * Returns the Davidson result, the corrector's statistics (disposed) and the judge (for its report).
 * @example const { polish } = await hostJdPolish(hostOp, gpuOp, gpuSpace, input);
 */
export async function hostJdPolish<V, S>(hostOp: LinearOperator<Float64Array>, fastOp: LinearOperator<V>, fastSpace: VectorSpace<V, S>, o: HostPolishInput) {
  const judge = ciJudge(o.tol, o.nroots, 2 ** -53, o.byBound); // accept 'bound': as the device polish, float64 rounding
  const jd = fastCorrector(fastOp, fastSpace, { ...polishCorrection(o.tol, o.nroots, o.diagonal), ...(o.byBound ? { targetResidualOf: boundTarget(o.tol, o.nroots) } : {}) });
  const polish: EigenResult<Float64Array> = await davidsonWith(new HostVectorSpace(), hostOp, {
    ...(o.byBound ? { acceptRoots: judge.accept } : {}),
    k: o.kSolve,
    nConverge: o.nroots,
    diagonal: o.diagonal,
    initialVectors: o.fastVectors,
    corrector: jd.corrector,
    residualTol: o.tol,
    maxIterations: o.maxIterations,
    maxSubspace: Math.min(hostOp.rows, 4 * o.kSolve + 8),
    name: 'jd-davidson',
    recomputeResiduals: false, // the driver recomputes them from the normalised vectors
    ...(o.onIteration ? { onIteration: o.onIteration } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
  });
  jd.dispose();
  return { polish, jd, judge };
}
