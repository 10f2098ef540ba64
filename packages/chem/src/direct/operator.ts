/**
 * The direct σ as a `LinearOperator<Float64Array>`: y = H·x without storing H, for FCI and CAS
 * spaces (./tables.ts, ./kernel.ts), on the calling thread or on worker threads over blocks of
 * α strings (./threads.ts). Davidson runs on it unchanged; the CI driver takes it through
 * {@link directHamiltonian}.
 * @module
 */
import { DimensionMismatchError, HostOperator, InvalidParameterError, type LinearOperator } from '@gpusparse/formats';
import type { DeterminantSpace } from '../determinants/space';
import type { Fcidump } from '../fcidump/types';
import { loadSigmaInput, sigmaRows, sigmaScratch, wasmSigmaScratch } from './kernel';
import { scatterLayout, scatterModuleBytes } from './scatter.kernel';
import { halfSpaceBlock } from './pspace';
import { directConfigurations, directSpinSquared, directSpinSquaredApply } from './spin-square';
import { directContext, type DirectContext, type DirectLayout } from './tables';
import { sigmaThreadPool, type SigmaThreadPool } from './threads';
import { compressHalf, expandHalf, type HalfScratch, halfProduct, halfScratch, projectParity, type TimeReversalPairs, timeReversalPairs, timeReversedProduct } from './time-reversal';

/** Options of {@link directSigmaOperator}. */
export interface DirectSigmaOptions {
  /** Worker threads over α-string blocks (default 1: the calling thread); 'auto': every core (at most 16). */
  threads?: number | 'auto';
  /**
   * MS2 = 0 only: keep the states of even spin (S = 0, 2, …: 'even') or odd spin (S = 1, 3, …:
   * 'odd') through the α↔β swap symmetry, computing half of σ (./time-reversal.ts). The operator
   * is then P·H·P + (1 − P)·diag(H)·(1 − P): start an eigensolver from vectors projected by
   * `project()` (ciEnergies does), so that the other parity never enters the search space.
   */
  timeReversal?: 'even' | 'odd';
  /**
   * The multiplicity 2S + 1 the caller targets: at MS2 = 0 without `timeReversal`, picks the
   * parity (−1)^S ('even' for singlets, quintets; 'odd' for triplets); ignored at MS2 ≠ 0. The
   * CI driver then needs no spin penalty (CiOptions.spin).
   */
  multiplicity?: number;
  /**
   * The α–β scatter, the hottest loop: 'wasm' (default; f64x2 SIMD, ./scatter.kernel.ts, falls
   * back to 'js' where WebAssembly SIMD is unavailable) or 'js'. Both give bit-identical σ.
   */
  kernel?: 'wasm' | 'js';
}

/** The direct operator: a float64 host operator with its diagonal, its memory and a dispose. */
export interface DirectSigmaOperator extends LinearOperator<Float64Array> {
  diagonal(): Float64Array;
  /** Threads that compute σ (1: the calling thread). */
  readonly threads: number;
  /** Bytes held: strings, replacement lists, same-spin rows, scratch, shared vectors, diagonal (integrals not counted). */
  readonly bytes: number;
  /** The scatter kernel in use ('js' where wasm was asked for but is unavailable). */
  readonly kernel: 'wasm' | 'js';
  /** Stops the worker threads (no-op on one thread). */
  dispose(): void;
  /** With time reversal: v ← P v, the projection onto the chosen spin parity (start vectors). */
  project?(v: Float64Array): void;
  /** With time reversal: the parity s = (−1)^S of the states it keeps (+1: S = 0, 2, …; −1: S = 1, 3, …). */
  readonly parity?: 1 | -1;
  /** With time reversal: the same H on the half space of the parity (./time-reversal.ts), for an eigensolver. */
  readonly half?: HalfSpaceOperator;
}

/**
 * H restricted to one spin parity in the half-space coordinates (Qᵀ H Q, Q an isometry): the
 * same eigenvalues as H on that parity, vectors of about half the length. Davidson runs on it
 * unchanged; `expand` gives the full vector of an eigenvector.
 */
export interface HalfSpaceOperator extends LinearOperator<Float64Array> {
  /** diag(Qᵀ H Q): diag(H) at (I, J) plus s·⟨(I, J)|H|(J, I)⟩ (the preconditioner's diagonal). */
  diagonal(): Float64Array;
  /** Q u: the full vector in the space's determinant order. */
  expand(u: Float64Array): Float64Array;
  /** Qᵀ x for x in the space's order (projects onto the parity). */
  compress(x: Float64Array): Float64Array;
  /**
   * The dense block of Qᵀ H Q over the half coordinates `idx` (row-major, idx.length²), by
   * Slater–Condon rules (./pspace.ts): the P space of Davidson's preconditioner.
   */
  block(idx: Int32Array): Float64Array;
  /** ⟨S²⟩ of half-space vectors (./spin-square.ts: the σ tables' replacement lists, O(size·mA)). */
  spinSquared(us: readonly Float64Array[]): number[];
  /**
   * Configuration ids of the half coordinates (same doubly and singly occupied orbitals): a
   * preconditioner constant on each, with a P space made of whole ones, commutes with S².
   */
  configurations(): Int32Array;
  /**
   * u ← its part of spin S = (multiplicity − 1)/2: the other spins of the parity up to the
   * largest the electrons allow are projected out (one S² product each, O(size·mA)).
   */
  spinProject(u: Float64Array, multiplicity: number): void;
}

function contextBytes(ctx: DirectContext): number {
  let total = 0;
  for (const v of Object.values(ctx)) if (ArrayBuffer.isView(v) && v !== ctx.eri) total += v.byteLength;
  return total;
}

async function threadCount(t: number | 'auto' | undefined): Promise<number> {
  if (t === undefined) return 1;
  if (t === 'auto') {
    try {
      const os = await import('node:os');
      return Math.min(16, typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length);
    } catch {
      return 1;
    }
  }
  if (!Number.isInteger(t) || t < 1 || t > 256) throw new InvalidParameterError('threads', "an integer in 1..256 or 'auto'", t);
  return t;
}

/** x in the space's order → the direct layout (and back for y). */
function permuted(layout: DirectLayout, run: (x: Float64Array, y: Float64Array) => void, n: number): (x: Float64Array, y: Float64Array) => void {
  const perm = layout.perm;
  if (!perm) return run;
  // allocated on the first product: with time reversal, Davidson runs on the half space and the
  // whole operator may serve only the final residuals (16 B per determinant held for nothing)
  let xp: Float64Array | undefined;
  let yp: Float64Array | undefined;
  return (x, y) => {
    xp ??= new Float64Array(n);
    yp ??= new Float64Array(n);
    for (let k = 0; k < n; k++) xp[perm[k]!] = x[k]!;
    run(xp, yp);
    for (let k = 0; k < n; k++) y[k] = yp[perm[k]!]!;
  };
}

/**
 * What the other spin parity sees, in the direct layout: diag(H). Davidson's diagonal
 * preconditioner then maps the other parity's part of a residual back onto itself (factor 1), so
 * rounding never grows it from start vectors projected by `project()` (the CI driver projects
 * them); a constant shift instead multiplies it by (shift − θ)/(D − θ) per iteration, which
 * measured 5× more iterations (H8, 3 roots: 144 vs 41).
 */
function otherParity(diagonal: Float64Array, layout: DirectLayout): Float64Array {
  const out = new Float64Array(diagonal.length);
  for (let k = 0; k < diagonal.length; k++) out[layout.perm ? layout.perm[k]! : k] = diagonal[k]!;
  return out;
}

/**
 * σ = H·c for `space` over the integrals of `fd` (the effective, CAS-reduced FCIDUMP when the
 * space is a CAS), without storing H. Throws NotSupportedError for spaces that are not FCI or
 * CAS blocks. Cost per product: O(size · (conn_α + conn_β + mA·mB/n_irreps)) float64 work;
 * memory: the string tables (bytes) and, threaded, two shared vectors of `size` doubles.
 * @example
 * const op = await directSigmaOperator(fd, space, { threads: 2 });
 * op.apply(c, sigma);
 * op.dispose();
 */
export async function directSigmaOperator(fd: Fcidump, space: DeterminantSpace, options: DirectSigmaOptions = {}): Promise<DirectSigmaOperator> {
  const { ctx: full, layout, diagonal } = directContext(fd, space);
  const n = space.size;
  const m = options.multiplicity;
  if (m !== undefined && !(Number.isInteger(m) && m >= 1)) throw new InvalidParameterError('multiplicity', 'an integer 2S + 1 ≥ 1', m);
  const byM = m !== undefined && m % 2 === 1 && space.nalpha === space.nbeta ? (((m - 1) / 2) % 2 === 0 ? 'even' : 'odd') : undefined;
  const tro = options.timeReversal ?? byM;
  if (tro !== undefined && tro !== 'even' && tro !== 'odd') throw new InvalidParameterError('timeReversal', "'even' or 'odd'", tro);
  const tr = tro === undefined ? undefined : timeReversalPairs(space, full, tro === 'even' ? 1 : -1);
  const ctx: DirectContext = tr ? { ...full, rowCompute: tr.rowCompute } : full;
  const nthreads = Math.min(await threadCount(options.threads), Math.max(1, ctx.nA));
  const kernel = options.kernel ?? 'wasm';
  if (kernel !== 'wasm' && kernel !== 'js') throw new InvalidParameterError('kernel', "'wasm' or 'js'", kernel);
  const bytesW = kernel === 'wasm' ? scatterModuleBytes(ctx) : undefined;
  const wasm = bytesW ? { bytes: bytesW, mem: scatterLayout(ctx) } : undefined;
  // per thread: the JS scratch, or the whole wasm memory (scratch and β records)
  const perThread = wasm ? 65536 * scatterLayout(ctx).pages : 8 * (sigmaScratch(ctx).x.length + sigmaScratch(ctx).k.length);
  let pool: SigmaThreadPool | undefined;
  if (nthreads > 1) pool = await sigmaThreadPool(ctx, n, nthreads, wasm);
  let run: (x: Float64Array, y: Float64Array) => void;
  let extra = 0;
  if (pool) {
    const p = pool;
    run = (x, y) => p.run(x, y);
    extra = 16 * n + p.threads * perThread;
  } else {
    const scratch = wasm ? wasmSigmaScratch(ctx, wasm.bytes, wasm.mem) : sigmaScratch(ctx);
    run = (x, y) => {
      loadSigmaInput(scratch, x);
      sigmaRows(ctx, x, y, 0, ctx.nA, scratch);
    };
    extra = perThread;
  }
  // one diag(H) in the direct layout and one pair of scratch vectors serve the whole and the half operator
  const other = tr ? otherParity(diagonal, layout) : undefined;
  const scratch = tr ? halfScratch(n) : undefined;
  const product = permuted(layout, tr ? timeReversedProduct(tr, n, other!, run, scratch) : run, n);
  const label = `direct-sigma(${pool ? `${pool.threads} threads` : '1 thread'}${tro ? `, time reversal: ${tro} S` : ''})`;
  const half = tr
    ? halfSpaceOperator(tr, layout, n, run, other!, scratch!, `${label} on the half space`, {
        block: (idx, d) => halfSpaceBlock(fd, space, full, tr, idx, d),
        spin: () => directSpinSquared(full, space),
        s2apply: () => directSpinSquaredApply(full, space),
        configurations: () => directConfigurations(full, space),
        smax: Math.min(space.nalpha + space.nbeta, 2 * space.norb - space.nalpha - space.nbeta) / 2,
      })
    : undefined;
  const host = HostOperator.fromFunction(n, n, product, label);
  // diagonal 8n; a layout permutation 4n + its two product vectors 16n (made on the first whole product);
  // time reversal: its pairs and half-space maps (4 B each, coupling 8 B), diag(H) of the other parity 8n, the shared scratch 16n
  const trBytes = tr ? 4 * (tr.lower.length + tr.upper.length + tr.diagonal.length + tr.half.length + tr.mirror.length) + 8 * tr.coupling.length + 24 * n : 0;
  const bytes = contextBytes(ctx) + extra + 8 * n + (layout.perm ? 20 * n : 0) + trBytes;
  return {
    rows: n,
    cols: n,
    label,
    threads: pool?.threads ?? 1,
    kernel: wasm ? 'wasm' : 'js',
    bytes,
    apply(x, y) {
      if (x.length !== n) throw new DimensionMismatchError(`${label} apply x`, n, x.length);
      host.apply(x, y);
    },
    applyScaled: (alpha, x, beta, y) => host.applyScaled(alpha, x, beta, y),
    diagonal: () => diagonal,
    dispose: () => pool?.dispose(),
    ...(tr ? { project: (v: Float64Array) => projectParity(tr, layout, v), parity: tr.parity } : {}),
    ...(half ? { half } : {}),
  };
}

/** The half-space operator of `tr` over the kernel `run` (direct layout); `diag`: diag(H) in the direct layout. */
function halfSpaceOperator(
  tr: TimeReversalPairs,
  layout: DirectLayout,
  n: number,
  run: (x: Float64Array, y: Float64Array) => void,
  diag: Float64Array,
  scratch: HalfScratch,
  label: string,
  extra: {
    block: (idx: Int32Array, d: Float64Array) => Float64Array;
    spin: () => (x: Float64Array) => number;
    s2apply: () => (x: Float64Array, y: Float64Array) => void;
    configurations: () => Int32Array;
    smax: number;
  },
): HalfSpaceOperator {
  const m = tr.half.length;
  const host = HostOperator.fromFunction(m, m, halfProduct(tr, n, run, scratch), label);
  const d = Float64Array.from(tr.half, (p, k) => diag[p]! + tr.parity * tr.coupling[k]!);
  const perm = layout.perm;
  let s2: ((x: Float64Array) => number) | undefined;
  let cfg: Int32Array | undefined;
  return {
    rows: m,
    cols: m,
    label,
    apply(x, y) {
      if (x.length !== m) throw new DimensionMismatchError(`${label} apply x`, m, x.length);
      host.apply(x, y);
    },
    applyScaled: (alpha, x, beta, y) => host.applyScaled(alpha, x, beta, y),
    diagonal: () => d,
    block(idx) {
      for (const k of idx) if (!(Number.isInteger(k) && k >= 0 && k < m)) throw new InvalidParameterError(`${label} block idx`, `half coordinates in 0..${m - 1}`, k);
      return extra.block(idx, d);
    },
    spinSquared(us) {
      s2 ??= extra.spin();
      const f = s2;
      const x = new Float64Array(n);
      return us.map((u) => {
        if (u.length !== m) throw new DimensionMismatchError(`${label} spinSquared u`, m, u.length);
        expandHalf(tr, u, x);
        return f(x);
      });
    },
    configurations() {
      if (!cfg) {
        const byPos = extra.configurations();
        cfg = Int32Array.from(tr.half, (p) => byPos[p]!);
      }
      return cfg;
    },
    spinProject(u, multiplicity) {
      if (u.length !== m) throw new DimensionMismatchError(`${label} spinProject u`, m, u.length);
      projectSpinHalf(tr, n, extra, u, multiplicity);
    },
    expand(u) {
      if (u.length !== m) throw new DimensionMismatchError(`${label} expand u`, m, u.length);
      const x = new Float64Array(n);
      expandHalf(tr, u, x);
      return perm ? Float64Array.from(perm, (p) => x[p]!) : x;
    },
    compress(x) {
      if (x.length !== n) throw new DimensionMismatchError(`${label} compress x`, n, x.length);
      let xd = x;
      if (perm) {
        xd = new Float64Array(n);
        for (let k = 0; k < n; k++) xd[perm[k]!] = x[k]!;
      }
      const u = new Float64Array(m);
      compressHalf(tr, xd, u);
      return u;
    },
  };
}

/**
 * The spinProject of {@link halfSpaceOperator}: u (half coordinates) ← its component of
 * multiplicity 2S+1, by the product over the other S' of the parity of
 * (S² − S'(S'+1)) / (S(S+1) − S'(S'+1)) on the expanded vector. Cost one S² product per S'.
 */
function projectSpinHalf(tr: TimeReversalPairs, n: number, extra: { s2apply: () => (x: Float64Array, y: Float64Array) => void; smax: number }, u: Float64Array, multiplicity: number): void {
  const S = (multiplicity - 1) / 2;
  if (!(Number.isInteger(multiplicity) && multiplicity >= 1)) throw new InvalidParameterError('multiplicity', 'an integer 2S + 1 ≥ 1', multiplicity);
  const apply = extra.s2apply();
  let x = new Float64Array(n);
  let y = new Float64Array(n);
  expandHalf(tr, u, x);
  // (S² − S'(S'+1)) / (S(S+1) − S'(S'+1)) for every other S' of the parity: S' = S ± 2, ± 4, …
  for (let o = S % 2; o <= extra.smax; o += 2) {
    if (o === S) continue;
    const lo = o * (o + 1);
    const den = S * (S + 1) - lo;
    apply(x, y);
    for (let i = 0; i < n; i++) y[i] = (y[i]! - lo * x[i]!) / den;
    [x, y] = [y, x];
  }
  compressHalf(tr, x, u);
}
