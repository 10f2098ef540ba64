/**
 * MS2 = 0 spin parity of the device direct σ: the operator P H P + (1 − P) D (1 − P) of the host
 * direct σ's time reversal (../time-reversal.ts), P = (1 + s·T)/2 with T the α↔β swap and
 * s = (−1)^S, D = diag(H). On the chosen parity it is H; the other parity sees only D, so a
 * Davidson started from projected (spin-adapted) vectors finds states of that spin parity without
 * the penalty term. Unlike the host (which computes half of σ), the device σ runs on the whole
 * vector: the swap costs two extra O(n) passes per product, not half of the σ work.
 * The swap pairs come from the host's `timeReversalPairs` (direct layout), mapped once to the
 * space's determinant order, which is the order of the device operator's vectors.
 * @module
 */
import { GpuSparseError, InvalidParameterError } from '@gpusparse/formats';
import type { Df64Blas, GpuBuf, GpuContext } from '@gpusparse/gpu';
import { signature, Uniforms, uploadF32 } from '@gpusparse/gpu';
import type { DeterminantSpace } from '../../determinants/space';
import type { DirectContext, DirectLayout } from '../tables';
import { timeReversalPairs } from '../time-reversal';
import { combineBindings, combineWgsl, projectBindings, projectWgsl } from './parity.kernel';

/** The swap of one spin parity in the space's determinant order. */
export interface SpaceParity {
  /** s = (−1)^S: +1 keeps S = 0, 2, … (singlets, quintets), −1 keeps S = 1, 3, … (triplets). */
  parity: 1 | -1;
  /** swap[k] = space index of the determinant (J, I) when k is (I, J); swap[k] = k on the diagonal. */
  swap: Uint32Array;
}

/**
 * The parity of a multiplicity 2S + 1 at MS2 = 0: +1 for even S, −1 for odd S.
 * @throws InvalidParameterError unless an integer ≥ 1 (odd: MS2 = 0 needs an integer S)
 */
export function parityOfMultiplicity(multiplicity: number): 1 | -1 {
  if (!(Number.isInteger(multiplicity) && multiplicity >= 1 && multiplicity % 2 === 1)) {
    throw new InvalidParameterError('multiplicity', 'an odd integer 2S + 1 ≥ 1 (MS2 = 0 has integer S)', multiplicity);
  }
  return ((multiplicity - 1) / 2) % 2 === 0 ? 1 : -1;
}

/**
 * The swap of `space` (MS2 = 0, one string list for both spins; NotSupportedError otherwise) in
 * its own order, from the host pairs in the direct layout of `dctx`. O(size).
 * @example const sp = spaceParity(space, dctx, layout, -1); // triplets
 */
export function spaceParity(space: DeterminantSpace, dctx: DirectContext, layout: DirectLayout, parity: 1 | -1): SpaceParity {
  const tr = timeReversalPairs(space, dctx, parity);
  const n = space.size;
  const byPos = new Int32Array(n).fill(-1); // partner's direct position, per direct position
  for (let k = 0; k < tr.lower.length; k++) {
    byPos[tr.lower[k]!] = tr.upper[k]!;
    byPos[tr.upper[k]!] = tr.lower[k]!;
  }
  for (const p of tr.diagonal) byPos[p] = p;
  const perm = layout.perm;
  const inv = perm ? new Int32Array(n) : undefined; // space index at a direct position
  if (perm) for (let k = 0; k < n; k++) inv![perm[k]!] = k;
  const swap = new Uint32Array(n);
  for (let k = 0; k < n; k++) {
    const q = byPos[perm ? perm[k]! : k]!;
    if (q < 0) throw new GpuSparseError(`device direct σ parity: determinant ${k} of ${space.label} has no α↔β partner (expected every (I, J) with its (J, I)): a bug in the pair tables`);
    swap[k] = inv ? inv[q]! : q;
  }
  return { parity, swap };
}

/**
 * v ← P v on the host (space order): (v + s·T v)/2, the start vectors' projection. O(size).
 * @example projectSpace(sp, v);
 */
export function projectSpace(sp: SpaceParity, v: Float64Array): void {
  const { swap, parity: s } = sp;
  for (let k = 0; k < swap.length; k++) {
    const j = swap[k]!;
    if (j > k) {
      const a = 0.5 * (v[k]! + s * v[j]!);
      v[k] = a;
      v[j] = s * a;
    } else if (j === k && s < 0) v[k] = 0;
  }
}

/** Device buffers of the parity: the swap (shared by the float32 and df64 operators) and scratch of one precision. */
export class DeviceParity {
  private readonly xs: GpuBuf;
  private readonly w: GpuBuf;
  private readonly ys: GpuBuf;
  private readonly d: GpuBuf;
  /** Device bytes this holds (scratch and diagonal; the swap is counted by its owner). */
  readonly bytes: number;

  /**
   * `swap`: the uploaded swap indices; `diag`: D = diag(H) in the space's order; `df`: the df64
   * BLAS for df64 vectors (8 B per entry), else float32 (4 B).
   */
  constructor(
    private readonly ctx: GpuContext,
    private readonly swap: GpuBuf,
    readonly parity: 1 | -1,
    private readonly n: number,
    diag: Float64Array,
    private readonly df?: Df64Blas,
  ) {
    const w = df ? 8 : 4;
    const bytes = w * Math.max(1, n);
    this.xs = ctx.buffers.acquire(bytes, undefined, 'direct-parity-xs');
    this.w = ctx.buffers.acquire(bytes, undefined, 'direct-parity-w');
    this.ys = ctx.buffers.acquire(bytes, undefined, 'direct-parity-ys');
    const dv = df ? new Float32Array(2 * n) : Float32Array.from(diag);
    if (df) {
      for (let k = 0; k < n; k++) {
        const hi = Math.fround(diag[k]!);
        dv[2 * k] = hi;
        dv[2 * k + 1] = Math.fround(diag[k]! - hi);
      }
    }
    this.d = uploadF32(ctx, dv, 'direct-parity-d');
    this.bytes = 4 * bytes;
  }

  /**
   * y = α·(P H P + (1 − P) D (1 − P)) x + β·y, with `sigma(a, b)` recording b = H·a (plain σ,
   * a and b distinct buffers of this precision). x may alias y. Records only.
   */
  apply(sigma: (a: GpuBuf, b: GpuBuf) => void, x: GpuBuf, alpha: number, beta: number, y: GpuBuf): void {
    const groups = Math.ceil(this.n / 256);
    const df = this.df !== undefined;
    const u = new Uniforms();
    u.u[0] = this.n;
    u.f[1] = this.parity;
    u.u[2] = 0; // df64's run-time zero
    this.ctx.recorder.dispatch(this.pipe('project', df), [this.swap, x, this.xs, this.w], u, groups);
    sigma(this.xs, this.ys);
    const v = new Uniforms();
    v.u[0] = this.n;
    v.u[1] = beta === 0 ? 1 : 0;
    v.u[2] = 0;
    v.f[3] = this.parity;
    if (df) {
      [v.f[4], v.f[5]] = split(alpha);
      [v.f[6], v.f[7]] = split(beta);
    } else {
      v.f[4] = alpha;
      v.f[5] = beta;
    }
    this.ctx.recorder.dispatch(this.pipe('combine', df), [this.swap, this.ys, this.w, this.d, y], v, groups);
  }

  private pipe(kind: 'project' | 'combine', df: boolean) {
    const bindings = signature(kind === 'project' ? projectBindings(df) : combineBindings(df));
    const wgsl = kind === 'project' ? projectWgsl : combineWgsl;
    if (this.df) return this.df.pipe(`chem-direct-parity-${kind}`, () => wgsl(true, this.df!.mode), bindings);
    return this.ctx.pipelines.get({ key: `chem-direct-parity-${kind}`, label: `direct-parity-${kind}`, bindings, wgsl: () => wgsl(false) });
  }

  dispose(): void {
    this.xs.dispose();
    this.w.dispose();
    this.ys.dispose();
    this.d.dispose();
  }
}

function split(v: number): [number, number] {
  const hi = Math.fround(v);
  return [hi, Math.fround(v - hi)];
}
