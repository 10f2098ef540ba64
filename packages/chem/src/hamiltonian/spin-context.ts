/**
 * The flat inputs of the S² kernels for a determinant space ({@link spinContext}): per-string
 * move tables of both spins, the cheapest determinant lookup, and the beta moves grouped by
 * orbital pair and beta class for the alpha-string pair kernel. Split from ./spin.ts (no logic
 * change).
 * @module
 */
import { testBit } from '../determinants/bits';
import type { DeterminantSpace } from '../determinants/space';
import { type StringList, stringIndex } from '../determinants/strings';
import type { SpinContext, SpinStrings } from './spin-kernel';
import { applySingle } from './tables';

/** Largest dense (alpha, beta) → determinant table: 2^27 entries (512 MiB of int32). */
const MAX_PAIR_TABLE = 2 ** 27;

/**
 * One spin's move table (or none when it would hold more than `limit` entries: the kernels
 * then probe the string hash).
 */
function spinStrings(list: StringList, norb: number, limit: number): SpinStrings {
  const nel = list.electrons;
  const nvirt = norb - nel;
  const count = list.count;
  const base = { count, nel, nvirt, lo: list.lo, hi: list.hi, hashMask: list.hash.mask, hashLo: list.hash.keyLo, hashHi: list.hash.keyHi, hashVals: list.hash.vals };
  const entries = count * nel * nvirt;
  if (entries > limit) return { ...base, occ: new Int32Array(0), virt: new Int32Array(0), move: new Int32Array(0) };
  const occ = new Int32Array(count * nel);
  const virt = new Int32Array(count * nvirt);
  const move = new Int32Array(entries);
  for (let s = 0, w = 0; s < count; s++) {
    const lo = list.lo[s]!;
    const hi = list.hi[s]!;
    let no = 0;
    let nv = 0;
    for (let x = 0; x < norb; x++) {
      if (testBit(lo, hi, x)) occ[s * nel + no++] = x;
      else virt[s * nvirt + nv++] = x;
    }
    for (let x = 0; x < nel; x++) {
      const from = occ[s * nel + x]!;
      for (let v = 0; v < nvirt; v++, w++) {
        const [, nlo, nhi] = applySingle(lo, hi, from, virt[s * nvirt + v]!);
        move[w] = stringIndex(list, nlo, nhi);
      }
    }
  }
  return { ...base, occ, virt, move };
}

/** Most beta classes for the pair kernel (pair lists hold norb² offsets per class). */
const MAX_CLASSES = 64;

/**
 * Beta classes of `space` (see SpinContext.classes), or undefined when the beta strings of
 * two alpha strings overlap without being equal (e.g. truncated CI). Cost O(n_α·n_β).
 */
function betaClasses(
  space: DeterminantSpace,
  lookup: number,
  pairIndex: Int32Array,
): { count: number; ofAlpha: Int32Array; ofBeta: Int32Array; off: Int32Array; members: Int32Array } | undefined {
  const nA = space.alpha.count;
  const nB = space.beta.count;
  const ofAlpha = new Int32Array(nA);
  const ofBeta = new Int32Array(nB);
  if (lookup === 0) {
    return { count: 1, ofAlpha, ofBeta, off: Int32Array.of(0, nB), members: Int32Array.from({ length: nB }, (_, b) => b) };
  }
  ofAlpha.fill(-1);
  ofBeta.fill(-1);
  const sizes: number[] = [];
  for (let a = 0; a < nA; a++) {
    let c = -1;
    let fresh = false;
    let count = 0;
    for (let b = 0; b < nB; b++) {
      if (pairIndex[a * nB + b]! < 0) continue;
      count++;
      if (c < 0) {
        c = ofBeta[b]!;
        fresh = c < 0;
        if (fresh) {
          c = sizes.length;
          if (c >= MAX_CLASSES) return undefined;
          sizes.push(0);
        }
      }
      if (fresh) {
        if (ofBeta[b] !== -1) return undefined;
        ofBeta[b] = c;
        sizes[c]!++;
      } else if (ofBeta[b] !== c) return undefined;
    }
    if (c >= 0 && count !== sizes[c]) return undefined;
    ofAlpha[a] = c;
  }
  const off = new Int32Array(sizes.length + 1);
  for (let c = 0; c < sizes.length; c++) off[c + 1] = off[c]! + sizes[c]!;
  const members = new Int32Array(off[sizes.length]!);
  const fill = off.slice(0, sizes.length);
  for (let b = 0; b < nB; b++) if (ofBeta[b]! >= 0) members[fill[ofBeta[b]!]!++] = b;
  return { count: sizes.length, ofAlpha, ofBeta, off, members };
}

/** Options of {@link spinContext}: each `false` turns a fast path off (tests, benchmarks). */
export interface SpinContextOptions {
  /** Per-string move tables (default: when small enough); false: string hash probes. */
  moveTables?: boolean;
  /** Determinant lookup: 'auto' (default) or 'hash' (no arithmetic, no dense table). */
  lookup?: 'auto' | 'hash';
  /** The alpha-string pair kernel where the space has beta classes (default true). */
  pairs?: boolean;
}

/**
 * Flat inputs of the S² kernels for `space` (exported for tests and benchmarks): move tables
 * of both spins (when each holds at most 8 entries per determinant + 2^16), the cheapest
 * determinant lookup (arithmetic for alpha-major full products, a dense table when it holds
 * at most 16 entries per determinant, else the hash), and where each alpha string pairs with
 * a whole class of beta strings (FCI, CAS, by irrep) the beta moves grouped by orbital pair
 * and class. Cost O(strings · nel · nvirt + n_α·n_β).
 * @example
 * const ctx = spinContext(fciSpace(6, 3, 3)); // ctx.lookup === 0, pair lists present
 */
export function spinContext(space: DeterminantSpace, options: SpinContextOptions = {}): SpinContext {
  const n = space.norb;
  const sz = (space.nalpha - space.nbeta) / 2;
  const limit = options.moveTables === false ? -1 : 8 * space.size + 65536;
  const alpha = spinStrings(space.alpha, n, limit);
  const beta = space.beta === space.alpha ? alpha : spinStrings(space.beta, n, limit);
  const nA = space.alpha.count;
  const nB = space.beta.count;
  const cells = nA * nB;
  let lookup = 2;
  let pairIndex = new Int32Array(0);
  if (options.lookup !== 'hash') {
    if (cells === space.size) {
      lookup = 0;
      for (let k = 0; k < space.size && lookup === 0; k++) if (space.detAlpha[k]! * nB + space.detBeta[k]! !== k) lookup = 1;
    } else lookup = 1;
    if (lookup === 1 && (cells > MAX_PAIR_TABLE || cells > 16 * space.size + 65536)) lookup = 2;
  }
  if (lookup === 1) {
    pairIndex = new Int32Array(cells).fill(-1);
    for (let k = 0; k < space.size; k++) pairIndex[space.detAlpha[k]! * nB + space.detBeta[k]!] = k;
  }
  const classes = options.pairs !== false && lookup !== 2 && alpha.move.length > 0 && beta.move.length > 0 ? betaClasses(space, lookup, pairIndex) : undefined;
  const nC = classes?.count ?? 0;
  // beta moves p → q (p < q) grouped by (p, q) and class
  const { pairOff, pairB, pairT, pairS } = classes ? betaPairLists(beta, n, nB, classes) : { pairOff: new Int32Array(0), pairB: new Int32Array(0), pairT: new Int32Array(0), pairS: new Int32Array(0) };
  return {
    norb: n,
    szTerm: sz * sz + sz,
    size: space.size,
    detAlpha: space.detAlpha,
    detBeta: space.detBeta,
    alpha,
    beta,
    lookup,
    nBeta: nB,
    pairIndex,
    // the determinant hash only for hash lookups (the space builds it on first use)
    hashMask: lookup === 2 ? space.detHash.mask : 0,
    hashLo: lookup === 2 ? space.detHash.keyLo : new Uint32Array(0),
    hashHi: lookup === 2 ? space.detHash.keyHi : new Uint32Array(0),
    hashVals: lookup === 2 ? space.detHash.vals : new Int32Array(0),
    classes: nC,
    alphaClass: classes?.ofAlpha ?? new Int32Array(0),
    classOff: classes?.off ?? new Int32Array(0),
    classBeta: classes?.members ?? new Int32Array(0),
    pairOff,
    pairB,
    pairT,
    pairS,
  };
}

/** The beta moves p → q (p < q) of `beta` grouped by (p, q) and beta class: the pair lists of {@link SpinContext}. Cost O(n_β · nel · nvirt). */
function betaPairLists(beta: SpinStrings, n: number, nB: number, classes: { count: number; ofBeta: Int32Array }): { pairOff: Int32Array; pairB: Int32Array; pairT: Int32Array; pairS: Int32Array } {
  const nC = classes.count;
  const bNel = beta.nel;
  const bNv = beta.nvirt;
  const keys = n * n * nC;
  const pairOff = new Int32Array(keys + 1);
  const each = (visit: (key: number, b: number, tb: number, parity: number) => void) => {
    for (let b = 0; b < nB; b++) {
      const c = classes.ofBeta[b]!;
      if (c < 0) continue;
      for (let y = 0; y < bNel; y++) {
        const p = beta.occ[b * bNel + y]!;
        for (let w = 0; w < bNv; w++) {
          const q = beta.virt[b * bNv + w]!;
          if (q < p) continue;
          const tb = beta.move[(b * bNel + y) * bNv + w]!;
          if (tb >= 0) visit((p * n + q) * nC + c, b, tb, (y + q - w) & 1); // #(b below p) + #(b below q)
        }
      }
    }
  };
  each((key) => pairOff[key + 1]!++);
  for (let i = 0; i < keys; i++) pairOff[i + 1]! += pairOff[i]!;
  const total = pairOff[keys]!;
  const pairB = new Int32Array(total);
  const pairT = new Int32Array(total);
  const pairS = new Int32Array(total);
  const fill = pairOff.slice(0, keys);
  each((key, b, tb, parity) => {
    const e = fill[key]!++;
    pairB[e] = b;
    pairT[e] = tb;
    pairS[e] = parity;
  });
  return { pairOff, pairB, pairT, pairS };
}
