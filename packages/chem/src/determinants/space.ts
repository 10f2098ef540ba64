/**
 * Determinant spaces: pairs (alpha string, beta string) with a hash from the pair of string
 * indices to the determinant index. Full CI, truncated CI by excitation level from a
 * reference, explicit lists; point-group filtering (D2h and subgroups, Molpro numbering,
 * irrep product = XOR of (irrep − 1)); reordering so that the Reference region (low
 * excitation levels) comes first (seed 001 §4).
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { MAX_ORBITALS, stringFromOrbitals } from './bits';
import { buildPairHash, type PairHash } from './pair-hash';
import { allStrings, excitationLevel, makeStringList, SpaceTooLargeError, type StringList, stringIrreps, stringsUpToLevel } from './strings';

/** A set of Slater determinants |alpha string; beta string⟩ with fixed electron counts. */
export interface DeterminantSpace {
  readonly norb: number;
  readonly nalpha: number;
  readonly nbeta: number;
  readonly alpha: StringList;
  readonly beta: StringList;
  /** Alpha string index of each determinant. */
  readonly detAlpha: Int32Array;
  /** Beta string index of each determinant. */
  readonly detBeta: Int32Array;
  /** Hash (alpha index, beta index) → determinant index (built on first access). */
  readonly detHash: PairHash;
  readonly size: number;
  /** The first `referenceSize` determinants form the Reference region (0 when not ordered). */
  readonly referenceSize: number;
  /** Excitation level of each determinant from `reference` (when a reference is set). */
  readonly excitation?: Int32Array;
  /** Reference determinant as orbital lists, when the space was built from one. */
  readonly reference?: { readonly alpha: readonly number[]; readonly beta: readonly number[] };
  /** Human description, e.g. 'FCI(8o; 4α,4β; irrep 1)'. */
  readonly label: string;
}

/** Largest space accepted (int32 CSR column indices). */
const MAX_DETERMINANTS = 2 ** 31 - 1;

function checkCounts(norb: number, nalpha: number, nbeta: number): void {
  if (!Number.isInteger(norb) || norb < 1 || norb > MAX_ORBITALS) throw new InvalidParameterError('norb', `an integer in 1..${MAX_ORBITALS}`, norb);
  if (!Number.isInteger(nalpha) || nalpha < 0 || nalpha > norb) throw new InvalidParameterError('nalpha', `an integer in 0..${norb}`, nalpha);
  if (!Number.isInteger(nbeta) || nbeta < 0 || nbeta > norb) throw new InvalidParameterError('nbeta', `an integer in 0..${norb}`, nbeta);
}

function checkIrrep(irrep: number | undefined, orbsym: Int32Array | undefined, norb: number): void {
  if (irrep === undefined) return;
  if (!Number.isInteger(irrep) || irrep < 1 || irrep > 8) throw new InvalidParameterError('irrep', 'a Molpro irrep number 1..8', irrep);
  if (!orbsym || orbsym.length !== norb) throw new InvalidParameterError('orbsym', `ORBSYM with ${norb} entries for irrep filtering`, orbsym?.length);
  // an entry outside 1..8 would index past the irrep tables (a TypeError deep in the build)
  for (let i = 0; i < norb; i++) {
    const g = orbsym[i]!;
    if (!(g >= 1 && g <= 8)) throw new InvalidParameterError(`orbsym[${i}]`, 'a Molpro irrep number 1..8', g);
  }
}

/** Options shared by the space builders. */
export interface SpaceOptions {
  /** Orbital irreps (Molpro 1..8), needed for `irrep`. */
  orbsym?: Int32Array;
  /** Keep only determinants of this irrep (Molpro numbering); all when undefined. */
  irrep?: number;
}

function finish(
  norb: number,
  nalpha: number,
  nbeta: number,
  alpha: StringList,
  beta: StringList,
  da: number[] | Int32Array,
  db: number[] | Int32Array,
  label: string,
  extra: Partial<Pick<DeterminantSpace, 'referenceSize' | 'excitation' | 'reference'>> = {},
): DeterminantSpace {
  if (da.length > MAX_DETERMINANTS) throw new SpaceTooLargeError(`space: expected at most ${MAX_DETERMINANTS} determinants, got ${da.length}`);
  const detAlpha = da instanceof Int32Array ? da : Int32Array.from(da);
  const detBeta = db instanceof Int32Array ? db : Int32Array.from(db);
  // built on first use: the string-driven assembly (FCI, CAS) never probes it, and at 4·10^7
  // determinants it costs seconds and 1.6 GB
  let hash: PairHash | undefined;
  return {
    norb,
    nalpha,
    nbeta,
    alpha,
    beta,
    detAlpha,
    detBeta,
    get detHash(): PairHash {
      hash ??= buildPairHash(detAlpha, detBeta, detAlpha.length);
      return hash;
    },
    size: detAlpha.length,
    referenceSize: extra.referenceSize ?? 0,
    ...(extra.excitation ? { excitation: extra.excitation } : {}),
    ...(extra.reference ? { reference: extra.reference } : {}),
    label,
  };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * Full CI: every alpha string × every beta string (of the irrep, when given), alpha-major.
 * Cost O(size).
 * @example
 * fciSpace(4, 2, 2).size; // 36
 */
export function fciSpace(norb: number, nalpha: number, nbeta: number, options: SpaceOptions = {}): DeterminantSpace {
  checkCounts(norb, nalpha, nbeta);
  checkIrrep(options.irrep, options.orbsym, norb);
  const a = allStrings(range(norb), nalpha);
  const b = allStrings(range(norb), nbeta);
  const alpha = makeStringList(a.lo, a.hi, nalpha);
  const beta = makeStringList(b.lo, b.hi, nbeta);
  const da: number[] = [];
  const db: number[] = [];
  if (options.irrep === undefined) {
    const total = alpha.count * beta.count;
    if (total > MAX_DETERMINANTS) throw new SpaceTooLargeError(`FCI space: expected at most ${MAX_DETERMINANTS} determinants, got ${total}`);
    const outA = new Int32Array(total);
    const outB = new Int32Array(total);
    for (let i = 0, k = 0; i < alpha.count; i++) {
      for (let j = 0; j < beta.count; j++, k++) {
        outA[k] = i;
        outB[k] = j;
      }
    }
    return finish(norb, nalpha, nbeta, alpha, beta, outA, outB, `FCI(${norb}o; ${nalpha}α,${nbeta}β)`);
  }
  const ga = stringIrreps(a.lo, a.hi, options.orbsym!);
  const gb = stringIrreps(b.lo, b.hi, options.orbsym!);
  const byIrrep: number[][] = Array.from({ length: 8 }, () => []);
  for (let j = 0; j < beta.count; j++) byIrrep[gb[j]!]!.push(j);
  const target = options.irrep - 1;
  for (let i = 0; i < alpha.count; i++) {
    for (const j of byIrrep[ga[i]! ^ target]!) {
      da.push(i);
      db.push(j);
    }
  }
  return finish(norb, nalpha, nbeta, alpha, beta, da, db, `FCI(${norb}o; ${nalpha}α,${nbeta}β; irrep ${options.irrep})`);
}

/** A reference determinant as 0-based occupied orbital lists. */
export interface ReferenceDeterminant {
  alpha: readonly number[];
  beta: readonly number[];
}

/**
 * Truncated CI: determinants at most `level` excitations (α + β) away from `reference`
 * (CIS = 1, CISD = 2, CISDT = 3, ...), ordered by excitation level, so that the
 * low levels (the Reference region of seed 001) come first. Cost O(size).
 * @example
 * truncatedSpace(4, 2, 2, 2, { reference: { alpha: [0, 1], beta: [0, 1] } }).size; // CISD
 */
export function truncatedSpace(
  norb: number,
  level: number,
  reference: ReferenceDeterminant,
  options: SpaceOptions & { referenceLevel?: number } = {},
): DeterminantSpace {
  const nalpha = reference.alpha.length;
  const nbeta = reference.beta.length;
  checkCounts(norb, nalpha, nbeta);
  checkIrrep(options.irrep, options.orbsym, norb);
  if (!Number.isInteger(level) || level < 0) throw new InvalidParameterError('level', 'a non-negative integer excitation level', level);
  const virtA = range(norb).filter((p) => !reference.alpha.includes(p));
  const virtB = range(norb).filter((p) => !reference.beta.includes(p));
  if (virtA.length !== norb - nalpha || virtB.length !== norb - nbeta) {
    throw new InvalidParameterError('reference', 'distinct orbitals in 0..norb-1', JSON.stringify(reference));
  }
  const a = stringsUpToLevel([...reference.alpha], virtA, level);
  const b = stringsUpToLevel([...reference.beta], virtB, level);
  const alpha = makeStringList(a.lo, a.hi, nalpha);
  const beta = makeStringList(b.lo, b.hi, nbeta);
  const ga = options.irrep === undefined ? undefined : stringIrreps(a.lo, a.hi, options.orbsym!);
  const gb = options.irrep === undefined ? undefined : stringIrreps(b.lo, b.hi, options.orbsym!);
  const target = (options.irrep ?? 1) - 1;
  const da: number[] = [];
  const db: number[] = [];
  const ex: number[] = [];
  // beta strings come level-major: bStart[e]..bStart[e+1] have level e
  const bStart = new Int32Array(level + 2);
  for (let j = 0; j < beta.count; j++) bStart[b.level[j]! + 1]!++;
  for (let e = 0; e <= level; e++) bStart[e + 1]! += bStart[e]!;
  // level-major: total level e = eα + eβ
  for (let e = 0; e <= level; e++) {
    for (let i = 0; i < alpha.count; i++) {
      const ea = a.level[i]!;
      if (ea > e) continue;
      for (let j = bStart[e - ea]!; j < bStart[e - ea + 1]!; j++) {
        if (ga && (ga[i]! ^ gb![j]!) !== target) continue;
        da.push(i);
        db.push(j);
        ex.push(e);
      }
    }
  }
  const refLevel = options.referenceLevel ?? -1;
  let referenceSize = 0;
  while (referenceSize < ex.length && ex[referenceSize]! <= refLevel) referenceSize++;
  const name = ['CI0', 'CIS', 'CISD', 'CISDT', 'CISDTQ'][level] ?? `CI(level ${level})`;
  return finish(norb, nalpha, nbeta, alpha, beta, da, db, `${name}(${norb}o; ${nalpha}α,${nbeta}β${options.irrep ? `; irrep ${options.irrep}` : ''})`, {
    referenceSize,
    excitation: Int32Array.from(ex),
    reference: { alpha: [...reference.alpha], beta: [...reference.beta] },
  });
}

/**
 * A space from an explicit list of determinants (0-based occupied orbitals per spin).
 * Throws on duplicates or inconsistent electron counts. Cost O(size).
 * @example
 * spaceFromDeterminants(3, [{ alpha: [0], beta: [0] }, { alpha: [1], beta: [1] }]);
 */
export function spaceFromDeterminants(norb: number, dets: readonly ReferenceDeterminant[]): DeterminantSpace {
  if (dets.length === 0) throw new InvalidParameterError('dets', 'at least one determinant', 0);
  const nalpha = dets[0]!.alpha.length;
  const nbeta = dets[0]!.beta.length;
  checkCounts(norb, nalpha, nbeta);
  const aKeys = new Map<string, number>();
  const bKeys = new Map<string, number>();
  const aLo: number[] = [];
  const aHi: number[] = [];
  const bLo: number[] = [];
  const bHi: number[] = [];
  const da: number[] = [];
  const db: number[] = [];
  const idx = (orbs: readonly number[], n: number, keys: Map<string, number>, lo: number[], hi: number[], what: string) => {
    if (orbs.length !== n || new Set(orbs).size !== n || orbs.some((p) => p >= norb)) {
      throw new InvalidParameterError(what, `${n} distinct orbitals in 0..${norb - 1}`, JSON.stringify(orbs));
    }
    const [l, h] = stringFromOrbitals(orbs);
    const key = `${l},${h}`;
    let i = keys.get(key);
    if (i === undefined) {
      i = lo.length;
      keys.set(key, i);
      lo.push(l);
      hi.push(h);
    }
    return i;
  };
  const seen = new Map<string, number>();
  for (let k = 0; k < dets.length; k++) {
    const ia = idx(dets[k]!.alpha, nalpha, aKeys, aLo, aHi, `dets[${k}].alpha`);
    const ib = idx(dets[k]!.beta, nbeta, bKeys, bLo, bHi, `dets[${k}].beta`);
    const key = `${ia},${ib}`;
    const prev = seen.get(key);
    if (prev !== undefined) throw new InvalidParameterError(`dets[${k}]`, `a determinant not already listed`, `a repeat of dets[${prev}]`);
    seen.set(key, k);
    da.push(ia);
    db.push(ib);
  }
  const alpha = makeStringList(Uint32Array.from(aLo), Uint32Array.from(aHi), nalpha);
  const beta = makeStringList(Uint32Array.from(bLo), Uint32Array.from(bHi), nbeta);
  return finish(norb, nalpha, nbeta, alpha, beta, da, db, `explicit(${dets.length} dets)`);
}

/**
 * Reorder a space by excitation level from `reference` (stable), so that the determinants of
 * levels ≤ referenceLevel come first and form the Reference region (seed 001 §4: the dense
 * left block of the CI matrix). Cost O(size · 1) plus the hash rebuild.
 * @example
 * const ordered = orderByExcitation(fciSpace(8, 4, 4), ref, 2); // ordered.referenceSize > 0
 */
export function orderByExcitation(space: DeterminantSpace, reference: ReferenceDeterminant, referenceLevel: number): DeterminantSpace {
  const [raLo, raHi] = stringFromOrbitals(reference.alpha);
  const [rbLo, rbHi] = stringFromOrbitals(reference.beta);
  const n = space.size;
  const level = new Int32Array(n);
  let maxLevel = 0;
  for (let k = 0; k < n; k++) {
    const ia = space.detAlpha[k]!;
    const ib = space.detBeta[k]!;
    level[k] =
      excitationLevel(space.alpha.lo[ia]!, space.alpha.hi[ia]!, raLo, raHi) + excitationLevel(space.beta.lo[ib]!, space.beta.hi[ib]!, rbLo, rbHi);
    if (level[k]! > maxLevel) maxLevel = level[k]!;
  }
  // counting sort by level (stable)
  const start = new Int32Array(maxLevel + 2);
  for (let k = 0; k < n; k++) start[level[k]! + 1]!++;
  for (let e = 0; e <= maxLevel; e++) start[e + 1]! += start[e]!;
  const referenceSize = referenceLevel < 0 ? 0 : start[Math.min(referenceLevel, maxLevel) + 1]!;
  const da = new Int32Array(n);
  const db = new Int32Array(n);
  const ex = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    const p = start[level[k]!]!++;
    da[p] = space.detAlpha[k]!;
    db[p] = space.detBeta[k]!;
    ex[p] = level[k]!;
  }
  return finish(space.norb, space.nalpha, space.nbeta, space.alpha, space.beta, da, db, `${space.label} ordered by excitation (reference ≤ ${referenceLevel})`, {
    referenceSize,
    excitation: ex,
    reference: { alpha: [...reference.alpha], beta: [...reference.beta] },
  });
}
