/**
 * Do the integrals respect the orbital symmetry labels (ORBSYM)? An irrep restriction keeps
 * only determinants of one irrep and so drops every coupling between irreps: right when the
 * labels are right (those couplings are zero by symmetry), silently wrong when a file carries a
 * symmetry-forbidden integral (a mislabelled orbital, labels from another geometry). This finds
 * the largest such integral so the run can refuse instead of answering for a different H.
 * @module
 */
import { FcidumpError } from './errors';
import type { Fcidump } from './types';

/**
 * Symmetry-forbidden integrals up to this size are read as rounding noise and ignored: real
 * files carry up to ≈ 1e-11 (block2's Cr2 CAS); dropping a coupling of size t moves an energy by
 * about t²/gap, far below any tolerance at 1e-8.
 */
export const SYMMETRY_NOISE = 1e-8;

/** The largest symmetry-forbidden integral of a file: its 1-based indices and value. */
export interface SymmetryBreaking {
  /** 'h' for h_pq, 'eri' for (pq|rs); 1-based orbital indices as in the file. */
  kind: 'h' | 'eri';
  orbitals: number[];
  value: number;
  /** How many stored integrals (every permutation counted) exceed the noise level. */
  count: number;
}

const seen = new WeakMap<Fcidump, SymmetryBreaking | null>();

/**
 * The largest integral above {@link SYMMETRY_NOISE} whose orbitals' irreps do not multiply to
 * the totally symmetric one (Molpro numbering: product = XOR of irrep − 1), or undefined.
 * Cost O(norb⁴) once per Fcidump (cached); nothing when every orbital has one irrep.
 * @example
 * symmetryBreaking(fd); // { kind: 'h', orbitals: [3, 1], value: 0.1, count: 2 } or undefined
 */
export function symmetryBreaking(fd: Fcidump): SymmetryBreaking | undefined {
  const cached = seen.get(fd);
  if (cached !== undefined) return cached ?? undefined;
  const n = fd.norb;
  const g = Array.from(fd.orbsym, (s) => s - 1);
  let worst: SymmetryBreaking | null = null;
  let count = 0;
  const note = (kind: 'h' | 'eri', orbitals: number[], value: number): void => {
    count++;
    if (!worst || Math.abs(value) > Math.abs(worst.value)) worst = { kind, orbitals: orbitals.map((p) => p + 1), value, count: 0 };
  };
  if (g.some((s) => s !== g[0])) {
    for (let p = 0; p < n; p++) {
      for (let q = 0; q < n; q++) {
        const v = fd.h1[p * n + q]!;
        if (g[p] !== g[q] && Math.abs(v) > SYMMETRY_NOISE) note('h', [p, q], v);
      }
    }
    for (let p = 0; p < n; p++) {
      for (let q = 0; q < n; q++) {
        const gpq = g[p]! ^ g[q]!;
        for (let r = 0; r < n; r++) {
          const base = ((p * n + q) * n + r) * n;
          for (let s = 0; s < n; s++) {
            const v = fd.eri[base + s]!;
            if ((gpq ^ g[r]! ^ g[s]!) !== 0 && Math.abs(v) > SYMMETRY_NOISE) note('eri', [p, q, r, s], v);
          }
        }
      }
    }
  }
  const found = worst === null ? null : { ...(worst as SymmetryBreaking), count };
  seen.set(fd, found);
  return found ?? undefined;
}

/**
 * Throw FcidumpError when an irrep restriction would drop a symmetry-forbidden integral of `fd`
 * (see {@link symmetryBreaking}); `irrep` names the restriction in the message.
 */
export function assertIrrepRestrictable(fd: Fcidump, irrep: number): void {
  const b = symmetryBreaking(fd);
  if (!b) return;
  const name = b.kind === 'h' ? `h(${b.orbitals.join(',')})` : `(${b.orbitals.slice(0, 2).join(' ')}|${b.orbitals.slice(2).join(' ')})`;
  const irreps = b.orbitals.map((p) => fd.orbsym[p - 1]).join(', ');
  throw new FcidumpError(
    fd.file,
    undefined,
    `integrals that respect ORBSYM for a run restricted to irrep ${irrep} (it drops every coupling between irreps; |value| ≤ ${SYMMETRY_NOISE} is taken as noise)`,
    `${name} = ${b.value} between orbitals of irreps ${irreps} (${b.count} such stored integral(s)): the ORBSYM labels do not match the integrals — fix ORBSYM, or run without an irrep restriction (--irrep)`,
  );
}
