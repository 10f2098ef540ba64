/**
 * Determinant spaces counted and sampled without being built: per spin, the strings are
 * grouped by excitation level from the reference (one group for FCI) and by irrep, counted
 * by a dynamic programme over the orbitals, and drawn uniformly by walking the same table.
 * O(norb · electrons · 8) per spin, so a space of 10^10 determinants is sized in microseconds
 * (../memory-estimate.ts refuses it before anything is allocated).
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import type { ReferenceDeterminant } from './space';

/**
 * Subsets of `orbs` by size and irrep (0-based D2h XOR numbering): counts and uniform draws.
 * `ways[i][e][g]` = subsets of orbs[i..] with e members and irrep product g.
 */
export class SubsetCounter {
  private readonly ways: Float64Array;
  private readonly m: number;

  constructor(
    readonly orbs: readonly number[],
    private readonly irr: readonly number[],
    readonly kmax: number,
  ) {
    this.m = orbs.length;
    const k1 = kmax + 1;
    this.ways = new Float64Array((this.m + 1) * k1 * 8);
    this.ways[this.m * k1 * 8] = 1;
    for (let i = this.m - 1; i >= 0; i--) {
      const gi = irr[orbs[i]!]!;
      for (let e = 0; e <= kmax; e++) {
        for (let g = 0; g < 8; g++) {
          let w = this.ways[((i + 1) * k1 + e) * 8 + g]!;
          if (e > 0) w += this.ways[((i + 1) * k1 + e - 1) * 8 + (g ^ gi)]!;
          this.ways[(i * k1 + e) * 8 + g] = w;
        }
      }
    }
  }

  /** Subsets of size k with irrep g (0 when k > kmax). */
  count(k: number, g: number): number {
    if (k < 0 || k > this.kmax) return 0;
    return this.ways[k * 8 + g]!;
  }

  /** A uniform draw among the subsets of size k and irrep g (count(k, g) must be > 0). */
  sample(k: number, g: number, rand: () => number): number[] {
    const out: number[] = [];
    const k1 = this.kmax + 1;
    let e = k;
    let h = g;
    for (let i = 0; i < this.m && e > 0; i++) {
      const total = this.ways[(i * k1 + e) * 8 + h]!;
      const gi = this.irr[this.orbs[i]!]!;
      const take = this.ways[((i + 1) * k1 + e - 1) * 8 + (h ^ gi)]!;
      if (rand() * total < take) {
        out.push(this.orbs[i]!);
        e--;
        h ^= gi;
      }
    }
    return out;
  }
}

/** The strings of one spin: per excitation level, the count per irrep, and a sampler. */
export interface SpinStringCounts {
  /** counts[e][g]: strings of excitation level e (always 0 for FCI) and irrep g. */
  readonly counts: Float64Array[];
  readonly total: number;
  /** Occupied orbitals of a uniform draw among the strings of level e and irrep g. */
  sample(e: number, g: number, rand: () => number): number[];
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** All strings of `nel` electrons in `norb` orbitals (level 0 only). */
export function fciStrings(norb: number, nel: number, irr: readonly number[]): SpinStringCounts {
  const c = new SubsetCounter(range(norb), irr, nel);
  const counts = [Float64Array.from(range(8), (g) => c.count(nel, g))];
  return { counts, total: counts[0]!.reduce((a, b) => a + b, 0), sample: (_e, g, rand) => c.sample(nel, g, rand) };
}

/** Strings at most `level` excitations from `ref` (holes in ref, particles outside), by level. */
export function truncatedStrings(norb: number, ref: readonly number[], level: number, irr: readonly number[]): SpinStringCounts {
  const virt = range(norb).filter((p) => !ref.includes(p));
  const maxE = Math.min(level, ref.length, virt.length);
  const holes = new SubsetCounter(ref, irr, maxE);
  const parts = new SubsetCounter(virt, irr, maxE);
  let gRef = 0;
  for (const p of ref) gRef ^= irr[p]!;
  const counts: Float64Array[] = [];
  let total = 0;
  for (let e = 0; e <= maxE; e++) {
    const row = new Float64Array(8);
    for (let gh = 0; gh < 8; gh++) for (let gp = 0; gp < 8; gp++) row[gRef ^ gh ^ gp]! += holes.count(e, gh) * parts.count(e, gp);
    counts.push(row);
    total += row.reduce((a, b) => a + b, 0);
  }
  return {
    counts,
    total,
    sample(e, g, rand) {
      // pick the hole irrep gh weighted by holes(e, gh)·parts(e, g ^ gRef ^ gh), then each subset
      let r = rand() * counts[e]![g]!;
      let gh = 0;
      for (; gh < 7; gh++) {
        r -= holes.count(e, gh) * parts.count(e, g ^ gRef ^ gh);
        if (r < 0) break;
      }
      const gone = new Set(holes.sample(e, gh, rand));
      return [...ref.filter((p) => !gone.has(p)), ...parts.sample(e, g ^ gRef ^ gh, rand)].sort((a, b) => a - b);
    },
  };
}

/** What a space is, without its determinants: shape, symmetry and (for truncated CI) level. */
export interface SpaceShape {
  readonly norb: number;
  readonly nalpha: number;
  readonly nbeta: number;
  /** 0-based irrep of each orbital (all 0 when no irrep is selected). */
  readonly irreps: readonly number[];
  /** 0-based target irrep (0 when none is selected). */
  readonly target: number;
  /** Maximum total excitation level from `reference` (undefined: full CI). */
  readonly level?: number;
  readonly reference?: ReferenceDeterminant;
}

/** A counted space: exact determinant and string counts, and uniform determinant draws. */
export interface CountedSpace {
  readonly shape: SpaceShape;
  readonly determinants: number;
  readonly alpha: SpinStringCounts;
  readonly beta: SpinStringCounts;
  /** A uniform draw of a determinant of the space: occupied orbitals per spin. */
  sample(rand: () => number): { alpha: number[]; beta: number[] };
}

/**
 * Count the determinants of `shape` exactly (as float64: exact below 2^53) and prepare
 * uniform draws. Cost O(norb · electrons · 8 + levels² · 8).
 * @example
 * countSpace({ norb: 18, nalpha: 5, nbeta: 5, irreps: Array(18).fill(0), target: 0 }).determinants; // 73 410 624
 */
export function countSpace(shape: SpaceShape): CountedSpace {
  const { norb, nalpha, nbeta, irreps, level, reference } = shape;
  if (irreps.length !== norb) throw new InvalidParameterError('shape.irreps', `${norb} entries`, irreps.length);
  const truncated = level !== undefined;
  if (truncated && !reference) throw new InvalidParameterError('shape.reference', 'a reference determinant for a truncated space', undefined);
  const alpha = truncated ? truncatedStrings(norb, reference!.alpha, level, irreps) : fciStrings(norb, nalpha, irreps);
  const beta = truncated ? truncatedStrings(norb, reference!.beta, level, irreps) : fciStrings(norb, nbeta, irreps);
  // (ea, eb, g) cells with their determinant counts, for the weighted draw
  const cells: { ea: number; eb: number; g: number; w: number }[] = [];
  let determinants = 0;
  for (let ea = 0; ea < alpha.counts.length; ea++) {
    for (let eb = 0; eb < beta.counts.length; eb++) {
      if (truncated && ea + eb > level) continue;
      for (let g = 0; g < 8; g++) {
        const w = alpha.counts[ea]![g]! * beta.counts[eb]![g ^ shape.target]!;
        if (w > 0) {
          cells.push({ ea, eb, g, w });
          determinants += w;
        }
      }
    }
  }
  return {
    shape,
    determinants,
    alpha,
    beta,
    sample(rand) {
      let r = rand() * determinants;
      let c = cells[cells.length - 1]!;
      for (const x of cells) {
        r -= x.w;
        if (r < 0) {
          c = x;
          break;
        }
      }
      return { alpha: alpha.sample(c.ea, c.g, rand), beta: beta.sample(c.eb, c.g ^ shape.target, rand) };
    },
  };
}
