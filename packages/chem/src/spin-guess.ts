/**
 * Spin-adapted start vectors for Davidson: instead of single determinants (which mix every spin
 * their open shells allow), combinations of the determinants of one spatial configuration that
 * are eigenfunctions of S² with the wanted S — the configuration-state-function idea, obtained by
 * diagonalising S² in the configuration's few determinants. With time reversal (./direct) or
 * without, Davidson then starts inside the wanted multiplicity rather than being pushed there by a
 * penalty term.
 *
 * Determinants are |D⟩ = Π a†_α Π a†_β |0⟩ (alpha creators first), as in ./hamiltonian/spin.ts.
 * @module
 */
import { InvalidParameterError, type LinearOperator } from '@gpusparse/formats';
import { type EigenResult, lowestIndices } from '@gpusparse/solvers';
import { countBelow, popcount32 } from './determinants/bits';
import type { DeterminantSpace } from './determinants/space';
import { stringIndex } from './determinants/strings';
import { pairHashGet } from './determinants/pair-hash';
import { symmetricEigenDense } from './dense-eigen';
import type { HalfSpaceOperator } from './direct/operator';

/** One start vector as its non-zero entries (determinant index in the space, value); unit norm. */
export type SparseGuess = { index: number; value: number }[];

/** Open shells above this count are skipped (C(12, 6) = 924 determinants per configuration). */
export const MAX_OPEN = 12;

const bit = (lo: number, hi: number, p: number) => (p < 32 ? (lo >>> p) & 1 : (hi >>> (p - 32)) & 1);
const setBit = (w: [number, number], p: number) => {
  if (p < 32) w[0] = (w[0] | (1 << p)) >>> 0;
  else w[1] = (w[1] | (1 << (p - 32))) >>> 0;
};

/** The determinants of one configuration: α/β strings as (lo, hi) pairs, all spin distributions over the open shells. */
function configurationStrings(dLo: number, dHi: number, open: number[], nAlphaOpen: number): [number, number, number, number][] {
  const out: [number, number, number, number][] = [];
  const m = open.length;
  for (let mask = 0; mask < 1 << m; mask++) {
    if (popcount32(mask) !== nAlphaOpen) continue;
    const a: [number, number] = [dLo, dHi];
    const b: [number, number] = [dLo, dHi];
    for (let x = 0; x < m; x++) setBit((mask >>> x) & 1 ? a : b, open[x]!);
    out.push([a[0], a[1], b[0], b[1]]);
  }
  return out;
}

/** S² over the determinants `dets` of one configuration (dense, row-major; S² projected onto `dets` when they are not all of it). */
export function configurationS2(dets: [number, number, number, number][], open: number[], nalpha: number, nbeta: number): Float64Array {
  const n = dets.length;
  const s2 = new Float64Array(n * n);
  const sz = (nalpha - nbeta) / 2;
  const key = new Map<string, number>();
  for (let i = 0; i < n; i++) key.set(dets[i]!.join(','), i);
  for (let i = 0; i < n; i++) {
    const [alo, ahi, blo, bhi] = dets[i]!;
    let betaOnly = 0;
    for (const p of open) if (bit(blo, bhi, p) && !bit(alo, ahi, p)) betaOnly++;
    s2[i * n + i] = sz * sz + sz + betaOnly;
    // S₋S₊: β-only p → α, then α-only q → β (q ≠ p): D' = a†_qβ a_qα a†_pα a_pβ D
    for (const p of open) {
      if (!bit(blo, bhi, p) || bit(alo, ahi, p)) continue;
      for (const q of open) {
        if (q === p || !bit(alo, ahi, q) || bit(blo, bhi, q)) continue;
        let e = countBelow(blo, bhi, p) + countBelow(alo, ahi, p);
        const a1: [number, number] = [alo, ahi];
        setBit(a1, p);
        e += countBelow(a1[0], a1[1], q);
        const a2: [number, number] = q < 32 ? [(a1[0] & ~(1 << q)) >>> 0, a1[1]] : [a1[0], (a1[1] & ~(1 << (q - 32))) >>> 0];
        const b1: [number, number] = p < 32 ? [(blo & ~(1 << p)) >>> 0, bhi] : [blo, (bhi & ~(1 << (p - 32))) >>> 0];
        e += countBelow(b1[0], b1[1], q);
        setBit(b1, q);
        const j = key.get([a2[0], a2[1], b1[0], b1[1]].join(','));
        if (j !== undefined) s2[j * n + i] += e & 1 ? -1 : 1;
      }
    }
  }
  return s2;
}

/**
 * (α index, β index) → determinant index, or −1. FCI and CAS spaces list their determinants by
 * α string with ascending β strings: then by binary search in the α string's block (no hash of
 * the whole space, which costs seconds at 10^7 determinants); otherwise the space's hash.
 */
function determinantLookup(space: DeterminantSpace): (ia: number, ib: number) => number {
  const { detAlpha, detBeta, size } = space;
  let sorted = true;
  for (let k = 1; k < size && sorted; k++) {
    const da = detAlpha[k]! - detAlpha[k - 1]!;
    sorted = da > 0 || (da === 0 && detBeta[k]! > detBeta[k - 1]!);
  }
  if (!sorted) return (ia, ib) => pairHashGet(space.detHash, ia, ib);
  const start = new Int32Array(space.alpha.count + 1).fill(-1);
  for (let k = size - 1; k >= 0; k--) start[detAlpha[k]!] = k;
  start[space.alpha.count] = size;
  for (let i = space.alpha.count - 1; i >= 0; i--) if (start[i]! < 0) start[i] = start[i + 1]!;
  return (ia, ib) => {
    let lo = start[ia]!;
    let hi = start[ia + 1]! - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const b = detBeta[mid]!;
      if (b === ib) return mid;
      if (b < ib) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  };
}

/** Open shells (α xor β) and doubly occupied (α and β) bits of determinant `d`. */
export function shells(space: DeterminantSpace, d: number): { oLo: number; oHi: number; dLo: number; dHi: number; k: number } {
  const ia = space.detAlpha[d]!;
  const ib = space.detBeta[d]!;
  const alo = space.alpha.lo[ia]!;
  const ahi = space.alpha.hi[ia]!;
  const blo = space.beta.lo[ib]!;
  const bhi = space.beta.hi[ib]!;
  const oLo = (alo ^ blo) >>> 0;
  const oHi = (ahi ^ bhi) >>> 0;
  return { oLo, oHi, dLo: (alo & blo) >>> 0, dHi: (ahi & bhi) >>> 0, k: popcount32(oLo) + popcount32(oHi) };
}

/**
 * Up to `k` unit start vectors of multiplicity `multiplicity` (2S + 1), from the configurations
 * of the determinants of lowest `diagonal` (diag H) upwards: each configuration's S² eigenvectors
 * of eigenvalue S(S + 1). Configurations with determinants outside the space (truncated spaces)
 * or more than 12 open shells are skipped; when fewer than `k` spin-adapted vectors are found,
 * the lowest remaining single determinants fill up. Cost: O(size) to find the candidates (a sort
 * when k > 8), O(n_det³) per configuration.
 * @example const g = spinAdaptedGuess(space, diag, 2, 1); // two singlet combinations
 */
export function spinAdaptedGuess(space: DeterminantSpace, diagonal: Float64Array, k: number, multiplicity: number): SparseGuess[] {
  const ms2 = space.nalpha - space.nbeta;
  if (!Number.isInteger(multiplicity) || multiplicity < 1 || Math.abs(ms2) > multiplicity - 1 || (multiplicity - 1 - ms2) % 2 !== 0) {
    throw new InvalidParameterError('multiplicity', `2S+1 with S ≥ |M_S| = ${Math.abs(ms2) / 2} and the parity of MS2=${ms2}`, multiplicity);
  }
  if (diagonal.length !== space.size) throw new InvalidParameterError('diagonal', `${space.size} entries (the space size)`, diagonal.length);
  const target = ((multiplicity - 1) / 2) * ((multiplicity + 1) / 2);
  const candidates = lowestIndices(diagonal, Math.min(space.size, Math.max(64, 8 * k)));
  const seen = new Set<string>();
  const used = new Set<number>();
  const out: SparseGuess[] = [];
  const lookup = determinantLookup(space);
  for (const c of candidates) {
    if (out.length >= k) break;
    const { dLo, dHi, oLo, oHi } = shells(space, c);
    const cfg = `${dLo},${dHi},${oLo},${oHi}`;
    if (seen.has(cfg)) continue;
    seen.add(cfg);
    const open: number[] = [];
    for (let p = 0; p < space.norb; p++) if (bit(oLo, oHi, p)) open.push(p);
    if (open.length > MAX_OPEN) continue;
    const dets = configurationStrings(dLo, dHi, open, space.nalpha - popcount32(dLo) - popcount32(dHi));
    const index = dets.map(([a0, a1, b0, b1]) => {
      const x = stringIndex(space.alpha, a0, a1);
      const y = stringIndex(space.beta, b0, b1);
      return x < 0 || y < 0 ? -1 : lookup(x, y);
    });
    if (index.some((i) => i < 0)) continue; // part of the configuration is outside the space
    const eig = symmetricEigenDense(configurationS2(dets, open, space.nalpha, space.nbeta), dets.length);
    for (let r = 0; r < dets.length && out.length < k; r++) {
      if (Math.abs(eig.values[r]! - target) > 1e-8) continue;
      const v = eig.vectors[r]!;
      out.push(index.map((i, x) => ({ index: i, value: v[x]! })).filter((e) => e.value !== 0));
      for (const i of index) used.add(i);
    }
  }
  for (const c of candidates) {
    if (out.length >= k) break;
    if (!used.has(c)) out.push([{ index: c, value: 1 }]);
  }
  return out;
}

/** What {@link solveSpinFiltered} needs besides the first solve's result. */
export interface SpinFilterOptions {
  /** H on the half space of the parity (./direct/operator.ts) and the space's determinants. */
  half: HalfSpaceOperator;
  space: DeterminantSpace;
  multiplicity: number;
  nroots: number;
  /** Davidson over `op` from `starts` (the caller's options otherwise). */
  solve: (op: LinearOperator<Float64Array>, starts: Float64Array[]) => Promise<EigenResult<Float64Array>>;
  /** Further start vectors (half coordinates) to replace the roots shifted out, taken in order. */
  spare: Float64Array[];
  /** Rounds of deflation at most (default 4). */
  rounds?: number;
}

/**
 * Time reversal keeps S = 0, 2, 4, … (or 1, 3, …) together: a quintet can come out among the
 * lowest singlets. Checks ⟨S²⟩ of the first solve's roots; while a root of another spin sits
 * among the lowest `nroots` of the wanted one, shifts it out of the way (H + shift·|q⟩⟨q|, q an
 * eigenvector to the solver's tolerance) and solves again from the roots of the right spin.
 * Returns the roots of the wanted spin first (values, vectors in half coordinates, their ⟨S²⟩)
 * and the iterations and products of every round. Costs nothing beyond one ⟨S²⟩ pass when the first
 * solve is right.
 */
export async function solveSpinFiltered(first: EigenResult<Float64Array>, o: SpinFilterOptions): Promise<EigenResult<Float64Array> & { deflated: number; s2: number[] }> {
  const target = ((o.multiplicity - 1) / 2) * ((o.multiplicity + 1) / 2);
  const d = o.half.diagonal();
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of d) {
    lo = Math.min(lo, x);
    hi = Math.max(hi, x);
  }
  const shift = 2 * (hi - lo) + 1; // above the whole spectrum's width
  const wrong: Float64Array[] = [];
  let res = first;
  let iterations = first.iterations;
  let matvecs = first.stats.matvecs;
  for (let round = 0; ; round++) {
    // from the direct σ's tables (no separate spin tables: ≈ 0.08 s less at 6·10^4 determinants)
    const s2 = o.half.spinSquared(res.vectors);
    const good: number[] = [];
    const bad: number[] = [];
    for (let r = 0; r < res.values.length && good.length < o.nroots; r++) (Math.abs(s2[r]! - target) < 1e-3 ? good : bad).push(r);
    const order = [...good, ...res.values.map((_, r) => r).filter((r) => !good.includes(r))];
    const sorted = { ...res, values: order.map((r) => res.values[r]!), vectors: order.map((r) => res.vectors[r]!), residualNorms: order.map((r) => res.residualNorms[r]!) };
    if (bad.length === 0 || round >= (o.rounds ?? 4)) return { ...sorted, iterations, stats: { ...res.stats, matvecs }, deflated: wrong.length, s2: order.map((r) => s2[r]!) };
    for (const r of bad) wrong.push(spinPure(o.half, res.vectors[r]!, s2[r]!));
    const base = o.half;
    const op: LinearOperator<Float64Array> = {
      rows: base.rows,
      cols: base.cols,
      label: `${base.label} with ${wrong.length} state(s) of another spin shifted up`,
      apply(x, y) {
        base.apply(x, y);
        for (const q of wrong) {
          let c = 0;
          for (let i = 0; i < x.length; i++) c += q[i]! * x[i]!;
          c *= shift;
          for (let i = 0; i < y.length; i++) y[i]! += c * q[i]!;
        }
      },
      applyScaled(alpha, x, beta, y) {
        const t = new Float64Array(y.length);
        this.apply(x, t);
        for (let i = 0; i < y.length; i++) y[i] = alpha * t[i]! + beta * y[i]!;
      },
    };
    const starts = res.vectors.filter((_, r) => !bad.includes(r));
    while (starts.length < res.vectors.length) starts.push(o.spare.shift() ?? o.half.compress(o.half.expand(Float64Array.from(d, (_, i) => Math.sin(7 * i + starts.length)))));
    res = await o.solve(op, starts);
    iterations += res.iterations;
    matvecs += res.stats.matvecs;
  }
}

/**
 * A state of another spin to shift out, projected onto its nearest spin S (from its ⟨S²⟩) and
 * normalised: then the shift H + shift·|q⟩⟨q| leaves the wanted spin's block of H exactly as it
 * was, however loosely q converged (a Davidson stopped by the energy bound leaves ‖r‖ ≈ 1e-5,
 * whose other-spin part, times the shift, would otherwise move the wanted energies). Keeps q as
 * it is when the projection leaves (almost) nothing.
 */
function spinPure(half: HalfSpaceOperator, v: Float64Array, s2: number): Float64Array {
  const spin = Math.max(0, Math.round((Math.sqrt(1 + 4 * Math.max(0, s2)) - 1) / 2));
  const q = Float64Array.from(v);
  half.spinProject(q, 2 * spin + 1);
  let nq = 0;
  for (let i = 0; i < q.length; i++) nq += q[i]! * q[i]!;
  nq = Math.sqrt(nq);
  if (!(nq > 0.5)) return v;
  for (let i = 0; i < q.length; i++) q[i]! /= nq;
  return q;
}
