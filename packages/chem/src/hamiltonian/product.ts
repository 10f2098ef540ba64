/**
 * Inputs of the string-driven kernel (./product-kernel.ts): a dense (alpha, beta) → index
 * table instead of the determinant hash, and per-string connection lists sorted by target
 * string (identity, singles, same-spin doubles; and identity + singles alone, per pair class),
 * screened by the integrals (./screening.ts) so that replacements whose elements are sums of
 * exact zeros are never walked.
 * @module
 */
import type { DeterminantSpace } from '../determinants/space';
import type { KernelContext, KernelSpin } from './kernel';
import type { ProductContext, ProductSpin } from './product-kernel';
import { integralScreen } from './screening';

/** Largest dense table accepted: 2^27 entries (512 MiB of int32). */
const MAX_TABLE = 2 ** 27;

/** Identity-and-singles lists of one spin, one per (string, pair class). */
interface ClassLists {
  lOff: Int32Array;
  lMax: Int32Array;
  lTarget: Int32Array;
  lRef: Int32Array;
  lPair: Int32Array;
  lSign: Float64Array;
}

/**
 * Writes, for one string at a time, the identity and its singles (given in target order) into
 * one list per pair class: class 0 the identity alone, class c ≥ 1 the identity and the
 * singles whose pair is in class c (singles of class 0 pair with nothing and are left out).
 */
function classListWriter(s: KernelSpin, count: number, norb: number, cls: Int32Array, ncls: number): { lists: ClassLists; write: (str: number, t: Int32Array, e: Int32Array, m: number) => void } {
  let classed = 0;
  for (let e = 0; e < s.sTarget.length; e++) if (cls[s.sTo[e]! * norb + s.sFrom[e]!]! > 0) classed++;
  const total = count * ncls + classed;
  const lists: ClassLists = {
    lOff: new Int32Array(count * ncls + 1),
    lMax: new Int32Array(count),
    lTarget: new Int32Array(total),
    lRef: new Int32Array(total),
    lPair: new Int32Array(total),
    lSign: new Float64Array(total),
  };
  const { lOff, lMax, lTarget, lRef, lPair, lSign } = lists;
  const fill = new Int32Array(ncls);
  const write = (str: number, t: Int32Array, e: Int32Array, m: number) => {
    fill.fill(1);
    for (let j = 0; j < m; j++) if (e[j]! >= 0) fill[cls[s.sTo[e[j]!]! * norb + s.sFrom[e[j]!]!]!]!++;
    const base = str * ncls;
    for (let c = 0; c < ncls; c++) {
      const len = c === 0 ? 1 : fill[c]!;
      lOff[base + c + 1] = lOff[base + c]! + len;
      if (len > lMax[str]!) lMax[str] = len;
      fill[c] = lOff[base + c]!;
    }
    for (let j = 0; j < m; j++) {
      const ref = e[j]!;
      const pair = ref < 0 ? -1 : s.sTo[ref]! * norb + s.sFrom[ref]!;
      const own = pair < 0 ? 0 : cls[pair]!;
      if (pair >= 0 && own === 0) continue;
      const last = pair < 0 ? ncls - 1 : own;
      for (let c = own; c <= last; c++) {
        const at = fill[c]!++;
        lTarget[at] = t[j]!;
        lPair[at] = pair;
        lSign[at] = ref < 0 ? 0 : s.sSign[ref]!;
        lRef[at] = ref;
      }
    }
  };
  return { lists, write };
}

/**
 * Connection lists of one spin. A single p → q enters the full list (walked for the other
 * spin's identity, and as the alpha part of alpha-beta doubles) only when `walk[qp]` is set.
 * The identity-and-singles lists (walked as the beta part inside an alpha single) come per
 * pair class (`cls`, ./screening.ts), each sorted by target string. What is left out gives
 * exact zeros only.
 */
function connections(s: KernelSpin, count: number, norb: number, walk: Int32Array, cls: Int32Array, ncls: number): ProductSpin {
  const cOff = new Int32Array(count + 1);
  const cSingles = new Int32Array(count);
  const total = count + s.sTarget.length + s.dTarget.length;
  const cTarget = new Int32Array(total);
  const cKind = new Int32Array(total);
  const cRef = new Int32Array(total);
  const { lists, write } = classListWriter(s, count, norb, cls, ncls);
  let w = 0;
  // per string: keys target·2^21 + position, sorted numerically (targets are distinct)
  const SHIFT = 2097152;
  let keys = new Float64Array(256);
  let lt = new Int32Array(256);
  let le = new Int32Array(256);
  for (let str = 0; str < count; str++) {
    const s0 = s.sOff[str]!;
    const ns = s.sOff[str + 1]! - s0;
    const d0 = s.dOff[str]!;
    const m = 1 + ns + s.dOff[str + 1]! - d0;
    if (m > SHIFT) throw new RangeError(`string ${str}: ${m} connections exceed ${SHIFT}`);
    if (m > keys.length) {
      keys = new Float64Array(2 * m);
      lt = new Int32Array(2 * m);
      le = new Int32Array(2 * m);
    }
    keys[0] = str * SHIFT;
    for (let k = 0; k < ns; k++) keys[1 + k] = s.sTarget[s0 + k]! * SHIFT + 1 + k;
    for (let k = 1 + ns; k < m; k++) keys[k] = s.dTarget[d0 + k - 1 - ns]! * SHIFT + k;
    const order = keys.subarray(0, m).sort();
    let nl = 0;
    for (let j = 0; j < m; j++) {
      const t = Math.floor(order[j]! / SHIFT);
      const k = order[j]! - t * SHIFT;
      const kind = k === 0 ? 0 : k <= ns ? 1 : 2;
      const e = kind === 0 ? -1 : kind === 1 ? s0 + k - 1 : d0 + k - 1 - ns;
      if (kind !== 2) {
        lt[nl] = t;
        le[nl++] = e;
      }
      if (kind === 1 && !walk[s.sTo[e]! * norb + s.sFrom[e]!]) continue;
      cTarget[w] = t;
      cKind[w] = kind;
      cRef[w++] = e;
      if (kind === 1) cSingles[str]!++;
    }
    cOff[str + 1] = w;
    write(str, lt, le, nl);
  }
  return { ...s, cOff, cSingles, cTarget: cTarget.slice(0, w), cKind: cKind.slice(0, w), cRef: cRef.slice(0, w), ...lists };
}

/**
 * Non-zero J = (ii|jj) per i (jIdx[jOff[i]..jOff[i+1]), ascending j) for the diagonal's
 * Σ_{i∈α, j∈β} J_ij; jSparse = 1 when at most half of J is non-zero (the kernel then walks
 * these lists instead of all nα·nβ pairs).
 */
function coulombLists(jmat: Float64Array, n: number, screen: boolean): { jOff: Int32Array; jIdx: Int32Array; jSparse: number } {
  const jOff = new Int32Array(n + 1);
  const idx: number[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) if (jmat[i * n + j] !== 0) idx.push(j);
    jOff[i + 1] = idx.length;
  }
  return { jOff, jIdx: Int32Array.from(idx), jSparse: screen && 2 * idx.length <= n * n ? 1 : 0 };
}

/**
 * The string-driven kernel's context from the reference kernel's, or undefined when the
 * dense (alpha, beta) table would exceed 2^27 entries or 16 entries per determinant (e.g.
 * truncated CI over many strings: the hash kernel is used then). Cost O(n_α·n_β + size +
 * Σ connections·log).
 * @example
 * const pctx = productContext(kernelContext(fd, space), space);
 */
export function productContext(ctx: KernelContext, space: DeterminantSpace, options: { screen?: boolean } = {}): ProductContext | undefined {
  const nA = space.alpha.count;
  const nB = space.beta.count;
  const cells = nA * nB;
  if (cells > MAX_TABLE || cells > 16 * space.size + 65536) return undefined;
  const da = space.detAlpha;
  const db = space.detBeta;
  const size = space.size;
  // a full alpha-major product (FCI, CAS) needs no table: index = a·nB + b
  let full = size === cells ? 1 : 0;
  for (let i = 0; i < size && full === 1; i++) if (da[i]! * nB + db[i]! !== i) full = 0;
  const pairIndex = full === 1 ? new Int32Array(0) : new Int32Array(cells).fill(-1);
  let monotone = 1;
  if (full === 0) {
    let prev = -1;
    for (let i = 0; i < size; i++) {
      const cell = da[i]! * nB + db[i]!;
      pairIndex[cell] = i;
      if (cell <= prev) monotone = 0;
      prev = cell;
    }
  }
  const n = ctx.norb;
  // at most one class per 4 singles of a beta string: the class lists then take at most
  // 5 more int32 per single than one list per string (the memory estimate's slack)
  const singles = space.nbeta * (n - space.nbeta);
  const sc = options.screen === false ? undefined : integralScreen(n, ctx.h1, ctx.eri, 1 + Math.max(1, Math.min(32, Math.floor(singles / 4))));
  // unscreened: every pair walked, one class (all singles in one list per string)
  const all = new Int32Array(n * n).fill(1);
  const walk = sc ? Int32Array.from(sc.single, (v, qp) => v | (sc.classes.alpha[qp]! > 0 ? 1 : 0)) : all;
  const ncls = sc ? sc.classes.count : 2;
  const aClass = sc ? sc.classes.alpha : all;
  const bClass = sc ? sc.classes.beta : all;
  const alpha = connections(ctx.alpha, nA, n, walk, bClass, ncls);
  const beta = ctx.beta === ctx.alpha ? alpha : connections(ctx.beta, nB, n, walk, bClass, ncls);
  return {
    ...coulombLists(ctx.jmat, n, sc !== undefined),
    coulomb: sc ? sc.coulomb : all,
    pairClass: aClass,
    nClass: ncls,
    betaLo: space.beta.lo,
    betaHi: space.beta.hi,
    norb: ctx.norb,
    eri: ctx.eri,
    jmat: ctx.jmat,
    detAlpha: ctx.detAlpha,
    detBeta: ctx.detBeta,
    nBeta: nB,
    pairIndex,
    full,
    monotone,
    dropTolerance: ctx.dropTolerance,
    alpha,
    beta,
  };
}
