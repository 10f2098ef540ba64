/**
 * How many states of one spin multiplicity a determinant space holds, so that the CI driver can
 * refuse `nroots` above it before any solve (session 13: Davidson asked for more roots of a spin
 * than exist returned states of other spins, named only in `notes`).
 *
 * S² keeps the spatial configuration (doubly occupied set D, open set O of k orbitals), so its
 * eigenstates split by configuration. A configuration whose C(k, k_α) determinants are all in the
 * space holds f(k, S) = C(k, k/2 − S) − C(k, k/2 − S − 1) states of spin S (the branching
 * diagram). One with determinants missing (a truncated space from an open-shell reference) holds
 * as many as its block of S² projected onto the present determinants has eigenvalues S(S + 1) —
 * the driver's own measure (its penalty matrix and ⟨S²⟩ are the projected S²).
 * @module
 */
import type { DeterminantSpace } from './determinants/space';
import { symmetricEigenDense } from './dense-eigen';
import { configurationS2, MAX_OPEN, shells } from './spin-guess';

/** The count and whether it is exact (false: an upper bound, from incomplete configurations of more than 12 open shells). */
export interface SpinStateCount {
  count: number;
  exact: boolean;
}

function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return Math.round(r);
}

/** f(k, S): states of spin S = (multiplicity − 1)/2 from k open shells (0 when 2S > k or the parity differs). */
export function branchingCount(k: number, multiplicity: number): number {
  const twoS = multiplicity - 1;
  if (twoS > k || (k - twoS) % 2 !== 0) return 0;
  const a = (k - twoS) / 2;
  return binomial(k, a) - binomial(k, a - 1);
}

/**
 * States of multiplicity `multiplicity` in `space`. `complete`: every configuration of the space
 * has all its determinants (FCI and CAS spaces, with or without an irrep filter; truncated CI from
 * a closed-shell reference) — then O(size) popcounts; otherwise the determinants are grouped by
 * configuration (a map over the space) and each incomplete configuration's projected S² is
 * diagonalised (O(p³), p its present determinants).
 * @example spinStateCount(fciSpace(4, 2, 2), 1, true).count; // 20 (H4 STO-6G: 20 singlets)
 */
export function spinStateCount(space: DeterminantSpace, multiplicity: number, complete: boolean): SpinStateCount {
  const ms2 = space.nalpha - space.nbeta;
  if (complete) {
    const perK = new Float64Array(2 * space.norb + 1);
    for (let d = 0; d < space.size; d++) perK[shells(space, d).k]!++;
    let count = 0;
    perK.forEach((n, k) => {
      if (n > 0) count += (n / binomial(k, (k + ms2) / 2)) * branchingCount(k, multiplicity);
    });
    return { count: Math.round(count), exact: true };
  }
  const groups = new Map<string, number[]>();
  for (let d = 0; d < space.size; d++) {
    const s = shells(space, d);
    const key = `${s.dLo},${s.dHi},${s.oLo},${s.oHi}`;
    const g = groups.get(key);
    if (g) g.push(d);
    else groups.set(key, [d]);
  }
  let count = 0;
  let exact = true;
  for (const dets of groups.values()) {
    const s = shells(space, dets[0]!);
    const full = binomial(s.k, (s.k + ms2) / 2);
    const f = branchingCount(s.k, multiplicity);
    if (dets.length === full || f === 0) count += f;
    else if (s.k > MAX_OPEN) {
      count += Math.min(f, dets.length);
      exact = false;
    } else count += projectedCount(space, dets, s.oLo, s.oHi, multiplicity);
  }
  return { count, exact };
}

/** Eigenvalues S(S + 1) of S² projected onto the present determinants `dets` of one configuration. */
function projectedCount(space: DeterminantSpace, dets: number[], oLo: number, oHi: number, multiplicity: number): number {
  const open: number[] = [];
  for (let p = 0; p < space.norb; p++) if ((p < 32 ? (oLo >>> p) & 1 : (oHi >>> (p - 32)) & 1) === 1) open.push(p);
  const strings = dets.map((d): [number, number, number, number] => {
    const ia = space.detAlpha[d]!;
    const ib = space.detBeta[d]!;
    return [space.alpha.lo[ia]!, space.alpha.hi[ia]!, space.beta.lo[ib]!, space.beta.hi[ib]!];
  });
  const target = ((multiplicity - 1) / 2) * ((multiplicity + 1) / 2);
  const eig = symmetricEigenDense(configurationS2(strings, open, space.nalpha, space.nbeta), strings.length);
  let n = 0;
  for (const v of eig.values) if (Math.abs(v - target) <= 1e-8 * Math.max(1, target)) n++;
  return n;
}
