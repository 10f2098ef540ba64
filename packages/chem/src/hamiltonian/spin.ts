/**
 * Total spin S² = S_z² + S_z + S₋S₊ in a determinant space, exactly from the determinant
 * expansion, and the spin-penalty operator H + λ(S² − S(S+1))² that selects one multiplicity.
 * Determinants are |D⟩ = Π a†_α Π a†_β |0⟩ (alpha creators first), as in the Hamiltonian.
 * @module
 */
import {
  type CsrMatrix,
  csrFromTriplets,
  csrSpmv,
  InvalidParameterError,
  type LinearOperator,
} from '@gpusparse/formats';
import { testBit } from '../determinants/bits';
import type { DeterminantSpace } from '../determinants/space';
import { type StringList, stringIndex } from '../determinants/strings';
import { type SpinContext, type SpinStrings, spinPairsKernel, spinRowsKernel } from './spin-kernel';
import { runSpinOnWorkers } from './spin-worker';
import { applySingle } from './tables';

export type { SpinContext, SpinStrings } from './spin-kernel';
export { spinPairsKernel, spinRowsKernel } from './spin-kernel';

/**
 * S² as a sparse symmetric matrix over `space`. Diagonal: S_z² + S_z + #(β-only orbitals);
 * off-diagonal: S₋S₊ moves one β-only orbital p to α and one α-only orbital q to β,
 * D' = a†_qβ a_qα a†_pα a_pβ D, with the fermionic sign. Determinants outside the space are
 * dropped (exact when the space is closed under spin flips, e.g. FCI, CAS, or truncated CI
 * from a closed-shell reference). Cost O(size · n_open²).
 * @example
 * const s2 = spinSquaredMatrix(fciSpace(2, 1, 1)); // [[1,0,0,0],[0,1,1,0],...] in some order
 */
export function spinSquaredMatrix(space: DeterminantSpace): CsrMatrix {
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  spinRowsKernel(
    spinContext(space),
    [],
    0,
    space.size,
    (k, d) => {
      ri.push(k);
      ci.push(k);
      v.push(d);
    },
    (k, t, sign) => {
      ri.push(t);
      ci.push(k);
      v.push(sign);
    },
  );
  return csrFromTriplets(space.size, space.size, ri, ci, v);
}

/**
 * ⟨c|S²|c⟩ / ⟨c|c⟩ for several host CI vectors at once, without building S² (the matrix of a
 * 10^7-determinant space would hold ~10^8 entries). Same terms and conventions as
 * {@link spinSquaredMatrix}. FCI and CAS spaces (also of one irrep, also reordered) go by
 * alpha string with the vector read row by row; other spaces by determinant. Cost O(size · n_open²) table reads
 * (hash probes only where a table would be too large), one pass, on the calling thread; see
 * {@link spinSquaredExpectationsParallel} for worker threads.
 * @example
 * spinSquaredExpectations(space, [c0, c1]); // [0, 2] for a singlet and a triplet
 */
export function spinSquaredExpectations(space: DeterminantSpace, vectors: readonly Float64Array[]): number[] {
  checkVectors(space, vectors, 'spinSquaredExpectations');
  const ctx = spinContext(space);
  const sums = ctx.pairOff.length > 0 ? spinPairsKernel(ctx, vectors, 0, ctx.alpha.count) : spinRowsKernel(ctx, vectors, 0, space.size);
  return ratios(sums, vectors.length);
}

/** Options of {@link spinSquaredExpectationsParallel}. */
export interface SpinExpectationOptions {
  /**
   * Worker threads besides the main thread: 0 runs on the main thread; 'auto' (default)
   * uses availableParallelism − 1 workers (at most 15) from 2·10^6 determinants in FCI and
   * CAS spaces (~0.05 s per 10^6 on one thread) or 5·10^5 in other spaces, none below.
   */
  workers?: number | 'auto';
}

/**
 * {@link spinSquaredExpectations} on worker threads (shared memory; the main thread computes
 * too). Same terms; the partial sums are added in a fixed order, so the result does not
 * depend on scheduling, and differs from the synchronous one by rounding only. Falls back to
 * the main thread where worker threads are unavailable. Cost as the synchronous version over
 * workers + 1 threads, plus one copy of the vectors into shared memory.
 * @example
 * const [s2] = await spinSquaredExpectationsParallel(space, [c], { workers: 8 });
 */
export async function spinSquaredExpectationsParallel(
  space: DeterminantSpace,
  vectors: readonly Float64Array[],
  options: SpinExpectationOptions = {},
): Promise<number[]> {
  checkVectors(space, vectors, 'spinSquaredExpectationsParallel');
  const asked = options.workers ?? 'auto';
  if (asked !== 'auto' && !(Number.isInteger(asked) && asked >= 0)) {
    throw new InvalidParameterError('spinSquaredExpectationsParallel workers', "a non-negative integer or 'auto'", asked);
  }
  const ctx = spinContext(space);
  const pairs = ctx.pairOff.length > 0;
  const items = pairs ? ctx.alpha.count : space.size;
  // worker start-up and the shared copies cost ~0.1 s: worth it from ~0.3 s of kernel time
  const want = asked === 'auto' ? (space.size >= (pairs ? 2_000_000 : 500_000) ? await availableWorkers() : 0) : asked;
  if (want > 0 && items > 1) {
    const nchunks = Math.min(items, (want + 1) * 16);
    const chunks: [number, number][] = [];
    for (let c = 0; c < nchunks; c++) chunks.push([Math.floor((c * items) / nchunks), Math.floor(((c + 1) * items) / nchunks)]);
    const sums = await runSpinOnWorkers(ctx, vectors, pairs ? 'pairs' : 'rows', chunks, Math.min(want, nchunks));
    if (sums) return ratios(sums, vectors.length);
  }
  return ratios(pairs ? spinPairsKernel(ctx, vectors, 0, items) : spinRowsKernel(ctx, vectors, 0, items), vectors.length);
}

function checkVectors(space: DeterminantSpace, vectors: readonly Float64Array[], where: string): void {
  vectors.forEach((c, r) => {
    if (c.length !== space.size) throw new InvalidParameterError(`${where} vectors[${r}].length`, String(space.size), c.length);
  });
}

/**
 * [num_r..., den_r...] → num_r / den_r, at least 0: S² is positive semidefinite, and a singlet's
 * cancelling terms can round to −1e-17 (printed as "-0.0000").
 */
function ratios(sums: Float64Array, count: number): number[] {
  return Array.from({ length: count }, (_, r) => Math.max(0, sums[r]! / sums[count + r]!));
}

/** availableParallelism − 1, at most 15 (0 where node:os is missing). */
async function availableWorkers(): Promise<number> {
  try {
    const os = await import('node:os');
    const p = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
    return Math.max(0, Math.min(p - 1, 15));
  } catch {
    return 0;
  }
}

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
  let pairOff = new Int32Array(0);
  let pairB = new Int32Array(0);
  let pairT = new Int32Array(0);
  let pairS = new Int32Array(0);
  if (classes) {
    const bNel = beta.nel;
    const bNv = beta.nvirt;
    const keys = n * n * nC;
    pairOff = new Int32Array(keys + 1);
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
    pairB = new Int32Array(total);
    pairT = new Int32Array(total);
    pairS = new Int32Array(total);
    const fill = pairOff.slice(0, keys);
    each((key, b, tb, parity) => {
      const e = fill[key]!++;
      pairB[e] = b;
      pairT[e] = tb;
      pairS[e] = parity;
    });
  }
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

/**
 * ⟨c|S²|c⟩ / ⟨c|c⟩ for a host CI vector. Cost one sparse product.
 * @example
 * expectationValue(spinSquaredMatrix(space), c); // ≈ 2 for a triplet
 */
export function expectationValue(m: CsrMatrix, c: Float64Array): number {
  const y = csrSpmv(m, c);
  let num = 0;
  let den = 0;
  for (let i = 0; i < c.length; i++) {
    num += c[i]! * y[i]!;
    den += c[i]! * c[i]!;
  }
  return num / den;
}

/**
 * P = (S² − S(S+1))² as a sparse matrix: zero on states of multiplicity 2S+1, positive on all
 * others (a linear shift would push lower multiplicities down). Cost O(Σ_i Σ_{k∈row i} len_k).
 * @example
 * const p = spinPenaltyMatrix(spinSquaredMatrix(space), 1); // singlets have P = 0
 */
export function spinPenaltyMatrix(s2: CsrMatrix, multiplicity: number): CsrMatrix {
  if (!Number.isInteger(multiplicity) || multiplicity < 1) throw new InvalidParameterError('spin.multiplicity', 'an integer ≥ 1 (2S+1)', multiplicity);
  const s = (multiplicity - 1) / 2;
  const shift = s * (s + 1);
  const n = s2.rows;
  // M = S² − shift·I, then P = M·M (row i: Σ_k M_ik · row k of M)
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  const acc = new Float64Array(n);
  const mark = new Int32Array(n).fill(-1);
  const cols: number[] = [];
  const m = (i: number, k: number, x: number) => (i === k ? x - shift : x);
  for (let i = 0; i < n; i++) {
    cols.length = 0;
    let hasDiag = false;
    for (let a = s2.rowPtr[i]!; a < s2.rowPtr[i + 1]!; a++) if (s2.colIdx[a] === i) hasDiag = true;
    const rowI: [number, number][] = [];
    for (let a = s2.rowPtr[i]!; a < s2.rowPtr[i + 1]!; a++) rowI.push([s2.colIdx[a]!, m(i, s2.colIdx[a]!, s2.values[a]!)]);
    if (!hasDiag) rowI.push([i, -shift]);
    for (const [k, mik] of rowI) {
      let kHasDiag = false;
      for (let b = s2.rowPtr[k]!; b < s2.rowPtr[k + 1]!; b++) {
        const j = s2.colIdx[b]!;
        if (j === k) kHasDiag = true;
        if (mark[j] !== i) {
          mark[j] = i;
          acc[j] = 0;
          cols.push(j);
        }
        acc[j]! += mik * m(k, j, s2.values[b]!);
      }
      if (!kHasDiag) {
        if (mark[k] !== i) {
          mark[k] = i;
          acc[k] = 0;
          cols.push(k);
        }
        acc[k]! += mik * -shift;
      }
    }
    for (const j of cols) {
      if (acc[j] === 0) continue;
      ri.push(i);
      ci.push(j);
      v.push(acc[j]!);
    }
  }
  return csrFromTriplets(n, n, ri, ci, v);
}

/**
 * The operator H + λ·P with P = (S² − S(S+1))² ({@link spinPenaltyMatrix}): states of the
 * wanted multiplicity keep their energy, every other state moves up by λ(S'(S'+1) − S(S+1))².
 * Cost per apply: one H product and one P product on the backend.
 * @example
 * const op = new SpinPenaltyOperator(h, p, 0.5, diagH, diagP); // H + 0.5·P
 */
export class SpinPenaltyOperator<V> implements LinearOperator<V> {
  readonly rows: number;
  readonly cols: number;
  readonly label: string;
  constructor(
    private readonly h: LinearOperator<V>,
    private readonly p: LinearOperator<V>,
    private readonly lambda: number,
    private readonly hDiagonal: Float64Array,
    private readonly pDiagonal: Float64Array,
  ) {
    if (!(Number.isFinite(lambda) && lambda > 0)) throw new InvalidParameterError('spin.penalty', 'a finite λ > 0', lambda);
    this.rows = h.rows;
    this.cols = h.cols;
    this.label = `${h.label ?? 'H'} + ${lambda}·(S² − S(S+1))²`;
  }
  apply(x: V, y: V): void {
    this.h.apply(x, y); // y = H·x
    this.p.applyScaled(this.lambda, x, 1, y); // y = y + λ·P·x
  }
  applyScaled(alpha: number, x: V, beta: number, y: V): void {
    this.h.applyScaled(alpha, x, beta, y); // y = α·H·x + β·y
    this.p.applyScaled(alpha * this.lambda, x, 1, y); // y = y + αλ·P·x
  }
  diagonal(): Float64Array {
    const out = new Float64Array(this.hDiagonal.length);
    for (let i = 0; i < out.length; i++) out[i] = this.hDiagonal[i]! + this.lambda * this.pDiagonal[i]!;
    return out;
  }
}
