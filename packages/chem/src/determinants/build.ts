/**
 * From an FCIDUMP and a space specification (FCI, truncated CI, CAS) to the effective
 * integrals and the determinant space.
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { chooseActiveSpace, freezeOrbitals, occupationsByEnergy, orbitalEnergies } from '../fcidump/active-space';
import { assertIrrepRestrictable } from '../fcidump/symmetry-check';
import type { Fcidump } from '../fcidump/types';
import { MAX_ORBITALS } from './bits';
import { type DeterminantSpace, fciSpace, orderByExcitation, type ReferenceDeterminant, truncatedSpace } from './space';

/** Which determinants: full CI, truncated CI by excitation level, or a CAS. */
export type SpaceSpec =
  | 'fci'
  | { kind: 'fci' }
  | { kind: 'cisd' | 'ci'; level?: number }
  | { kind: 'cas'; electrons: number; orbitals: number; core?: number[]; active?: number[] };

/** Options of {@link buildCiSpace}. */
export interface BuildSpaceOptions {
  /** 2·S_z (default: the file's MS2). */
  ms2?: number;
  /** Keep only determinants of this irrep (Molpro 1..8), or 'isym' for the file's ISYM. */
  irrep?: number | 'isym';
  /** Reference determinant (default: aufbau by orbital energy, see orbitalEnergies). */
  reference?: ReferenceDeterminant;
  /**
   * Put determinants of excitation level ≤ referenceLevel (from the reference) first: the
   * Reference region of seed 001. Truncated CI spaces are always level-ordered.
   */
  referenceLevel?: number;
}

/** The effective integrals (CAS-reduced when asked) and the space over them. */
export interface CiSpace {
  fcidump: Fcidump;
  space: DeterminantSpace;
  reference: ReferenceDeterminant;
}

/** The aufbau determinant of `fd` for 2·S_z = ms2 (orbitals filled by orbital energy). */
export function aufbauReference(fd: Fcidump, ms2: number): ReferenceDeterminant {
  const occ = occupationsByEnergy(orbitalEnergies(fd), fd.nelec, ms2);
  const alpha: number[] = [];
  const beta: number[] = [];
  for (let p = 0; p < fd.norb; p++) {
    if (occ[p]! >= 1) alpha.push(p);
    if (occ[p]! === 2) beta.push(p);
  }
  // ms2 > 0: singly occupied orbitals are alpha; ms2 < 0: swap
  return ms2 >= 0 ? { alpha, beta } : { alpha: beta, beta: alpha };
}

/** A space resolved from its specification but not built: effective integrals, counts, kind. */
export interface PreparedSpace {
  fcidump: Fcidump;
  nalpha: number;
  nbeta: number;
  irrep: number | undefined;
  kind: 'fci' | 'cas' | 'ci';
  /** Excitation level for truncated CI. */
  level?: number;
  reference: ReferenceDeterminant;
}

/**
 * Determinants are one 64-bit string per spin: more orbitals in the space were refused only
 * when the space was built, after the run had been sized (--dry-run said it fits), as
 * "parameter norb: expected an integer in 1..64" — naming neither the file's NORB nor a way out.
 */
function assertOrbitalsFit(fileNorb: number, norb: number, kind: string): void {
  if (norb <= MAX_ORBITALS) return;
  throw new InvalidParameterError(
    'space',
    `at most ${MAX_ORBITALS} orbitals in the determinant space (one ${MAX_ORBITALS}-bit string per spin)`,
    `${kind === 'cas' ? `an active space of ${norb} orbitals` : `${kind.toUpperCase()} over all ${norb} orbitals of the FCIDUMP (NORB=${fileNorb})`}: choose an active space of at most ${MAX_ORBITALS} orbitals ({ kind: 'cas', electrons, orbitals }; CLI --space cas:N,M)`,
  );
}

/**
 * Resolve `spec` for `fd0` (CAS reduction, electron counts, irrep, reference, level) without
 * building the determinants, so that the space can be sized first (../memory-estimate.ts).
 * Cost O(norb⁴) for a CAS, O(norb) otherwise.
 */
export function prepareCiSpace(fd0: Fcidump, spec: SpaceSpec, options: BuildSpaceOptions = {}): PreparedSpace {
  const ms2 = options.ms2 ?? fd0.ms2;
  if (!Number.isInteger(ms2) || Math.abs(ms2) > fd0.nelec || (fd0.nelec + ms2) % 2 !== 0) {
    throw new InvalidParameterError('ms2', `an integer with |ms2| ≤ ${fd0.nelec} and the parity of NELEC`, ms2);
  }
  const kind = typeof spec === 'string' ? spec : spec.kind;
  // space: 'cas' (a string, no sizes) fell through to the FCI branch and ran FCI, silently
  if ((spec as unknown) === 'cas') throw new InvalidParameterError('space', "{ kind: 'cas', electrons, orbitals } (a CAS needs its sizes)", "'cas'");
  let fd = fd0;
  if (typeof spec === 'object' && spec.kind === 'cas') {
    fd = freezeOrbitals(fd0, chooseActiveSpace(fd0, spec.electrons, spec.orbitals, { ...(spec.core ? { core: spec.core } : {}), ...(spec.active ? { active: spec.active } : {}) }));
  }
  assertOrbitalsFit(fd0.norb, fd.norb, kind);
  const irrep = options.irrep === 'isym' ? fd.isym : options.irrep;
  // the file's integrals (before any core folding): a forbidden one there is a wrong label
  if (irrep !== undefined) assertIrrepRestrictable(fd0, irrep);
  const nalpha = (fd.nelec + ms2) / 2;
  const nbeta = (fd.nelec - ms2) / 2;
  if (nalpha > fd.norb || nbeta > fd.norb) throw new InvalidParameterError('ms2', `at most ${fd.norb} electrons per spin`, `${nalpha}α, ${nbeta}β`);
  const reference = options.reference ?? aufbauReference(fd, ms2);
  if (reference.alpha.length !== nalpha || reference.beta.length !== nbeta) {
    throw new InvalidParameterError('reference', `${nalpha} alpha and ${nbeta} beta orbitals`, JSON.stringify(reference));
  }
  if (kind === 'fci' || kind === 'cas') return { fcidump: fd, nalpha, nbeta, irrep, kind, reference };
  if (kind === 'cisd' || kind === 'ci') {
    const s = spec as { level?: number };
    const level = s.level ?? (kind === 'cisd' ? 2 : undefined);
    if (level === undefined) throw new InvalidParameterError('space.level', "an excitation level for kind 'ci'", undefined);
    return { fcidump: fd, nalpha, nbeta, irrep, kind: 'ci', level, reference };
  }
  throw new InvalidParameterError('space', "'fci', { kind: 'cisd' | 'ci', level } or { kind: 'cas', electrons, orbitals }", JSON.stringify(spec));
}

/**
 * Build the determinant space of `spec` for `fd` (or of a space already prepared by
 * {@link prepareCiSpace}). Cost O(size) (plus O(norb⁴) for a CAS).
 * @throws InvalidParameterError for a spec that is none of 'fci', { kind: 'cisd' | 'ci', level },
 *   { kind: 'cas', electrons, orbitals }, or that leaves no determinant (an irrep with no state)
 * @example
 * const { fcidump, space } = buildCiSpace(fd, { kind: 'cisd' }, { irrep: 'isym' });
 */
export function buildCiSpace(fd0: Fcidump, spec: SpaceSpec, options: BuildSpaceOptions = {}, prepared?: PreparedSpace): CiSpace {
  const { fcidump: fd, nalpha, nbeta, irrep, kind, level, reference } = prepared ?? prepareCiSpace(fd0, spec, options);
  const spaceOpts = irrep === undefined ? {} : { irrep, orbsym: fd.orbsym };
  let space: DeterminantSpace;
  if (kind === 'fci' || kind === 'cas') {
    space = fciSpace(fd.norb, nalpha, nbeta, spaceOpts);
    if (options.referenceLevel !== undefined) space = orderByExcitation(space, reference, options.referenceLevel);
  } else {
    space = truncatedSpace(fd.norb, level!, reference, { ...spaceOpts, ...(options.referenceLevel !== undefined ? { referenceLevel: options.referenceLevel } : {}) });
  }
  if (space.size === 0) throw new InvalidParameterError('space', 'at least one determinant', `an empty space (${space.label})${irrepHint(fd.orbsym, irrep)}`);
  return { fcidump: fd, space, reference };
}

/**
 * Why an irrep block can be empty: the irreps that products of the file's orbitals reach (the
 * XOR closure of ORBSYM − 1) — an irrep outside them is not in the point group the file uses.
 */
function irrepHint(orbsym: Int32Array, irrep: number | undefined): string {
  if (irrep === undefined) return '';
  const reach = new Set([0]);
  for (const s of new Set(orbsym)) for (const g of [...reach]) reach.add(g ^ (s - 1));
  const names = [...reach].sort((x, y) => x - y).map((g) => g + 1);
  const where = `ORBSYM's orbitals (irreps ${[...new Set(orbsym)].sort((x, y) => x - y).join(', ')}) make determinants of irreps ${names.join(', ')} only`;
  return reach.has(irrep - 1) ? `: irrep ${irrep} has no determinant with these electrons; ${where}` : `: irrep ${irrep} is not in the point group of the file — ${where}`;
}
