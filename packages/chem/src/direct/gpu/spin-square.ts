/**
 * ⟨S²⟩ of CI vectors on the device (./spin-square.kernel.ts) over the float32 direct σ's tables:
 * K vectors (float32 GpuVector or df64 Df64Vector, in the space's order) are copied side by side
 * into one buffer, one pass over the tables forms every root's partial sums per workgroup, and one
 * readback brings them to the host, which adds them in float64. Adds to the σ's device memory only
 * the strings' occupations (2 words per string, uploaded on first use) and, per call, the packed
 * vectors and the partial sums (16 bytes per root and workgroup).
 * @module
 */
import { DimensionMismatchError, InvalidParameterError } from '@gpusparse/formats';
import { Df64Vector, df64Mode, type GpuBuf, type GpuContext, GpuVector, type PipelineSpec, readRanges, signature, type TwoProdMode, Uniforms, uploadU32 } from '@gpusparse/gpu';
import type { DeterminantSpace } from '../../determinants/space';
import type { DirectContext } from '../tables';
import { SPIN_SQUARE_MAX_ROOTS, spinSquareBindings, spinSquareWgsl, spinSquareWorkgroupBytes } from './spin-square.kernel';

export { SPIN_SQUARE_MAX_ROOTS } from './spin-square.kernel';
import type { SharedSigmaTables } from './operator-df64';


/**
 * Occupation words of the direct layout's strings: per α string (lo, hi), then per β position
 * of the irrep-sorted β list (lo, hi). 2·(nA + nB) words.
 */
export function occupationWords(dctx: DirectContext, space: DeterminantSpace): Uint32Array {
  const out = new Uint32Array(2 * (dctx.nA + dctx.nB));
  for (let i = 0; i < dctx.nA; i++) {
    out[2 * i] = space.alpha.lo[i]!;
    out[2 * i + 1] = space.alpha.hi[i]!;
  }
  for (let q = 0; q < dctx.nB; q++) {
    const b = dctx.betaSorted[q]!;
    out[2 * (dctx.nA + q)] = space.beta.lo[b]!;
    out[2 * (dctx.nA + q) + 1] = space.beta.hi[b]!;
  }
  return out;
}

/** What the evaluator needs besides the σ's shared tables. */
export interface SpinSquareInput {
  norb: number;
  nA: number;
  /** (nα − nβ)/2. */
  sz: number;
  occ: Uint32Array;
}

/** ⟨S²⟩ on the device over the shared σ tables `t` (see the module comment). */
export class GpuSpinSquare {
  private occBuf: GpuBuf | undefined;

  constructor(
    private readonly ctx: GpuContext,
    private readonly t: SharedSigmaTables,
    private readonly s: SpinSquareInput,
  ) {}

  /** Whether the kernel's workgroup arrays (α row, norb² pair map, reduction) fit the device. */
  get fits(): boolean {
    return spinSquareWorkgroupBytes(this.t.uni.mA, this.s.norb) <= this.ctx.limits.maxComputeWorkgroupStorageSize;
  }

  /**
   * ⟨x|S²|x⟩ / ⟨x|x⟩ per vector (NaN for a zero vector), all vectors of one kind (GpuVector or
   * Df64Vector) and length. One readback for all.
   * @throws InvalidParameterError when the workgroup arrays do not fit ({@link fits}) or the kinds are mixed
   */
  async expectations(vs: readonly (GpuVector | Df64Vector)[]): Promise<number[]> {
    if (vs.length === 0) return [];
    const n = this.t.rows;
    const df = vs[0] instanceof Df64Vector;
    for (const v of vs) {
      if (v instanceof Df64Vector !== df || !(v instanceof Df64Vector || v instanceof GpuVector)) throw new InvalidParameterError('spinSquared vectors', 'all GpuVector or all Df64Vector', v?.constructor?.name ?? typeof v);
      if (v.n !== n) throw new DimensionMismatchError('spinSquared vector', n, v.n);
    }
    if (!this.fits) throw new InvalidParameterError('device ⟨S²⟩', `workgroup arrays within ${this.ctx.limits.maxComputeWorkgroupStorageSize} bytes`, spinSquareWorkgroupBytes(this.t.uni.mA, this.s.norb));
    if (n === 0 || this.t.uni.groups === 0) return vs.map(() => Number.NaN);
    // the partial sums in one storage binding (16 B per root and workgroup): else in parts, one readback each
    const fitRoots = Math.max(1, Math.floor(this.ctx.limits.maxStorageBufferBindingSize / (16 * this.t.uni.groups)));
    if (vs.length > fitRoots) {
      const out: number[] = [];
      for (let r = 0; r < vs.length; r += fitRoots) out.push(...(await this.expectations(vs.slice(r, r + fitRoots))));
      return out;
    }
    const elem = df ? 8 : 4;
    // roots per pass: the kernel's private arrays, and the packed vectors in one storage binding
    const perBinding = Math.max(1, Math.floor(this.ctx.limits.maxStorageBufferBindingSize / (elem * n)));
    const k = Math.min(SPIN_SQUARE_MAX_ROOTS, perBinding, vs.length);
    this.occBuf ??= uploadU32(this.ctx, this.s.occ, 'direct-spin-occ');
    // the device's exact TwoProd (its df64 self-test); on a device that fails the test the sums are only
    // float32-accurate (≈ 1e-7 of S(S+1)), still far below the gap of 2 between spin labels
    const mode = (await df64Mode(this.ctx)) ?? 'dekker';
    const groups = this.t.uni.groups;
    const part = this.ctx.buffers.acquire(16 * groups * vs.length, undefined, 'direct-spin-part');
    const packed = this.ctx.buffers.acquire(elem * n * k, undefined, 'direct-spin-x');
    try {
      for (let r0 = 0; r0 < vs.length; r0 += k) {
        const batch = vs.slice(r0, r0 + k);
        batch.forEach((v, r) => {
          this.ctx.recorder.copy(v.buf, 0, packed, r * elem * n, elem * n);
        });
        this.dispatch(packed, part, batch.length, df, 2 * groups * r0, mode);
      }
      const [bytes] = await readRanges(this.ctx, [{ buf: part, offset: 0, bytes: 16 * groups * vs.length }]);
      return this.finish(new Float32Array(bytes!), vs.length, k);
    } finally {
      part.dispose();
      packed.dispose();
    }
  }

  /** The kernel's pipeline for float32 or df64 vectors under the device's TwoProd form. */
  private spec(df: boolean, mode: TwoProdMode): PipelineSpec {
    const { mA } = this.t.uni;
    const norb = this.s.norb;
    return { key: `chem-direct-spin2:${mA}:${norb}:${df ? 'df' : 'f'}:${mode}`, label: `direct-spin-square(mA=${mA}, norb=${norb})`, bindings: signature(spinSquareBindings(df)), wgsl: () => spinSquareWgsl(mA, norb, df, mode) };
  }

  /**
   * Compile the kernel for float32 (`df` false) or df64 vectors ahead of time, without blocking
   * (while the float32 Davidson runs), so that the final ⟨S²⟩ compiles nothing. Never rejects.
   */
  prewarm(df: boolean): Promise<void> {
    if (!this.fits) return Promise.resolve();
    return df64Mode(this.ctx).then((m) => this.ctx.pipelines.prewarm([this.spec(df, m ?? 'dekker')]), () => undefined);
  }

  private dispatch(packed: GpuBuf, part: GpuBuf, k: number, df: boolean, partAt: number, mode: TwoProdMode): void {
    const { uni, perm, work, info, rep } = this.t;
    const { mA } = uni;
    const pipe = this.ctx.pipelines.get(this.spec(df, mode));
    const u = new Uniforms();
    u.u[0] = uni.groups;
    u.u[1] = uni.mB;
    u.u[2] = uni.betaInfo;
    u.u[3] = uni.betaRep;
    u.u[4] = 2 * this.s.nA;
    u.u[5] = this.t.rows;
    u.u[6] = perm ? 1 : 0;
    u.u[7] = uni.kmax > 0 ? 1 : 0;
    u.u[8] = uni.pairsAt;
    u.u[9] = uni.pstartAt;
    u.u[10] = 0;
    u.u[11] = mA;
    u.u[12] = partAt;
    u.u[13] = k;
    const idx = perm ? perm.toDirect : work; // any buffer when the layout is the space's (never read)
    this.ctx.recorder.dispatch(pipe, [work, info, rep, this.occBuf!, packed, idx, part], u, uni.groups);
  }

  /** Releases the occupation words (the σ's tables are the operator's). */
  dispose(): void {
    this.occBuf?.dispose();
    this.occBuf = undefined;
  }

  /** Adds the workgroups' df64 pairs in float64 per root: S_z² + S_z + Σ c·(S₋S₊ c) / Σ c². */
  private finish(p: Float32Array, nroots: number, k: number): number[] {
    const groups = this.t.uni.groups;
    const { sz } = this.s;
    const out: number[] = [];
    for (let r = 0; r < nroots; r++) {
      const b0 = Math.floor(r / k) * k;
      const kb = Math.min(k, nroots - b0);
      const base = 4 * groups * b0;
      let norm = 0;
      let num = 0;
      for (let w = 0; w < groups; w++) {
        const at = base + 4 * (w * kb + (r - b0));
        norm += p[at]! + p[at + 1]!;
        num += p[at + 2]! + p[at + 3]!;
      }
      const s2 = norm === 0 ? Number.NaN : sz * sz + sz + num / norm;
      // ⟨S²⟩ ≥ 0: just below zero is the cancellation of the two S₋S₊ terms, shown as 0 (as on the host)
      out.push(s2 < 0 && s2 > -1e-10 ? 0 : s2);
    }
    return out;
  }
}
