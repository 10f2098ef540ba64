/**
 * The direct σ on the GPU as a `LinearOperator<GpuVector>`: y = H·x in float32 without storing
 * H, for FCI and CAS spaces (the host's string tables, ../tables.ts, packed once by
 * ./tables.ts; one gather kernel, ./sigma.kernel.ts). Vectors are in the space's determinant
 * order; when the direct layout differs, two permutation gathers wrap the kernel.
 * @module
 */
import { DimensionMismatchError, InvalidParameterError, type LinearOperator, ResourceLimitError } from '@gpusparse/formats';
import { Blas1, type Df64Blas, type Df64Vector, type GpuBuf, type GpuContext, type GpuVector, signature, imm, Uniforms, uploadF32, uploadU32 } from '@gpusparse/gpu';
import type { DeterminantSpace } from '../../determinants/space';
import type { Fcidump } from '../../fcidump/types';
import { directContext, type DirectContext, type DirectLayout } from '../tables';
import { Df64DirectSigma, type SharedSigmaTables } from './operator-df64';
import { GATHER_BINDINGS, gatherWgsl, SIGMA_BINDINGS, sigmaWgsl, sigmaWorkgroupBytes } from './sigma.kernel';
import { DeviceParity, projectSpace, type SpaceParity, spaceParity } from './parity';
import { GpuSpinSquare, occupationWords, type SpinSquareInput } from './spin-square';
import { packSigmaTables } from './tables';

/** The device direct operator: float32 products, its float64 diagonal, device bytes, dispose. */
export interface GpuDirectSigmaOperator extends LinearOperator<GpuVector> {
  readonly ctx: GpuContext;
  diagonal(): Float64Array;
  /** Device bytes held: tables, integrals, and (permuted layouts) the permutation and two scratch vectors. */
  readonly deviceBytes: number;
  /** Host milliseconds to build and upload the tables. */
  readonly buildMs: number;
  /**
   * The same σ in df64 on the same device (the polish's space), sharing these tables; it adds
   * 8·norb⁴ + 4·(same-spin records) bytes (and 16 per determinant when the layout is permuted).
   * Dispose it before this operator.
   */
  df64(d: Df64Blas): Df64DirectSigma;
  /**
   * ⟨x|S²|x⟩ / ⟨x|x⟩ of each vector (float32 or df64, in the space's order) on the device, from
   * these tables (./spin-square.ts): one pass and one readback for all. Throws
   * InvalidParameterError where {@link spinOnDevice} is false.
   */
  spinSquared(vs: readonly (GpuVector | Df64Vector)[]): Promise<number[]>;
  /** Whether the ⟨S²⟩ kernel's workgroup arrays (α row, norb² pair map) fit this device. */
  readonly spinOnDevice: boolean;
  /** Compile the ⟨S²⟩ kernel for float32 or df64 (`df`) vectors ahead of time, without blocking; never rejects. */
  prewarmSpin(df: boolean): Promise<void>;
  /**
   * With `parity` (MS2 = 0): s = (−1)^S of the states it keeps; the operator is then
   * P H P + (1 − P) D (1 − P) (./parity.ts), as the host direct σ with time reversal.
   */
  readonly parity?: 1 | -1;
  /** With `parity`: v ← P v for a host vector in the space's order (start vectors). */
  project?(v: Float64Array): void;
  dispose(): void;
}

interface Permutation {
  /** toDirect[j] = space index of direct position j; toSpace[k] = direct position of space index k. */
  toDirect: GpuBuf;
  toSpace: GpuBuf;
  xp: GpuBuf;
  yp: GpuBuf;
}

function uploadPermutation(ctx: GpuContext, layout: DirectLayout): Permutation | undefined {
  const perm = layout.perm;
  if (!perm) return undefined;
  const inv = new Uint32Array(perm.length);
  for (let k = 0; k < perm.length; k++) inv[perm[k]!] = k;
  return {
    toDirect: uploadU32(ctx, inv, 'direct-perm-inv'),
    toSpace: uploadU32(ctx, perm, 'direct-perm'),
    xp: ctx.buffers.acquire(4 * Math.max(1, perm.length), undefined, 'direct-xp'),
    yp: ctx.buffers.acquire(4 * Math.max(1, perm.length), undefined, 'direct-yp'),
  };
}

class GpuDirectSigma implements GpuDirectSigmaOperator {
  readonly rows: number;
  readonly cols: number;
  readonly label: string;
  readonly deviceBytes: number;
  private readonly bufs: { work: GpuBuf; info: GpuBuf; rep: GpuBuf; hrec: GpuBuf; eri: GpuBuf };
  private readonly uni: SharedSigmaTables['uni'];
  private readonly perm: Permutation | undefined;
  private tmp: GpuBuf | undefined;
  /** float64 values the df64 operator needs (same-spin records, integrals). */
  private readonly f64: { sameSpin: Float64Array; eri: Float64Array };
  private readonly spin: GpuSpinSquare;
  private readonly par: { sp: SpaceParity; swap: GpuBuf; dev: DeviceParity } | undefined;
  readonly parity?: 1 | -1;
  readonly project?: (v: Float64Array) => void;

  constructor(
    readonly ctx: GpuContext,
    dctx: DirectContext,
    orbsym: ArrayLike<number>,
    layout: DirectLayout,
    private readonly diag: Float64Array,
    readonly buildMs: number,
    stage: boolean,
    spin: Omit<SpinSquareInput, 'norb' | 'nA'>,
    sp?: SpaceParity,
  ) {
    const n = layout.size;
    this.rows = n;
    this.cols = n;
    const wgLimit = ctx.limits.maxComputeWorkgroupStorageSize;
    // df64 needs 8 more bytes per replacement record pair and per staged entry: check the larger
    const wgBytes = sigmaWorkgroupBytes(dctx.mA);
    if (wgBytes > wgLimit) {
      throw new ResourceLimitError(`device direct σ: ${dctx.mA} α replacements per string in workgroup memory`, wgBytes, wgLimit, 'use the host direct σ (--backend cpu)');
    }
    if (4 * n > ctx.limits.maxStorageBufferBindingSize) {
      throw new ResourceLimitError('device direct σ: a CI vector in one storage binding', 4 * n, ctx.limits.maxStorageBufferBindingSize, 'use point-group symmetry (irrep) or the host direct σ (--backend cpu)');
    }
    const t = packSigmaTables(dctx, orbsym, ctx.limits.maxStorageBufferBindingSize, stage ? wgLimit : 0);
    this.bufs = {
      work: uploadU32(ctx, t.work, 'direct-work'),
      info: uploadU32(ctx, t.info, 'direct-info'),
      rep: uploadU32(ctx, t.rep, 'direct-rep'),
      hrec: uploadU32(ctx, t.hrec, 'direct-hrec'),
      eri: uploadF32(ctx, t.eri, 'direct-eri'),
    };
    this.uni = { groups: t.groups, mA: dctx.mA, mB: dctx.mB, betaInfo: t.betaInfo, betaRep: t.betaRep, kmax: t.kmax, pairsAt: t.pairsAt, pstartAt: t.pstartAt };
    this.perm = uploadPermutation(ctx, layout);
    const sameSpin = new Float64Array(dctx.hAValue.length + dctx.hBValue.length);
    sameSpin.set(dctx.hAValue);
    sameSpin.set(dctx.hBValue, dctx.hAValue.length);
    this.f64 = { sameSpin, eri: dctx.eri };
    const permBytes = this.perm ? 16 * n : 0;
    if (sp) {
      const swap = uploadU32(ctx, sp.swap, 'direct-parity-swap');
      this.par = { sp, swap, dev: new DeviceParity(ctx, swap, sp.parity, n, diag) };
      this.parity = sp.parity;
      this.project = (v: Float64Array) => projectSpace(sp, v);
    }
    const parBytes = this.par ? this.par.swap.bytes + this.par.dev.bytes : 0;
    this.deviceBytes = Object.values(this.bufs).reduce((s, b) => s + b.bytes, 0) + permBytes + parBytes;
    this.spin = new GpuSpinSquare(ctx, this.shared(), { ...spin, norb: dctx.norb, nA: dctx.nA });
    this.label = `direct-sigma-gpu(f32, mA=${dctx.mA}, mB=${dctx.mB}, ${t.pairIrreps ? 'pairs by irrep' : 'one pair group'}${t.kmax > 0 ? `, integrals staged (${t.kmax})` : ''}${this.perm ? ', permuted' : ''}${sp ? `, spin parity ${sp.parity > 0 ? 'even' : 'odd'} S` : ''})`;
  }

  private sigmaPipe() {
    const { mA, kmax } = this.uni;
    return this.ctx.pipelines.get({ key: `chem-direct-sigma:${mA}:${kmax}`, label: `direct-sigma(mA=${mA}, kmax=${kmax})`, bindings: signature(SIGMA_BINDINGS), wgsl: () => sigmaWgsl(mA, kmax) });
  }

  private sigma(x: GpuBuf, y: GpuBuf, alpha: number, beta: number): void {
    const u = new Uniforms();
    const s = this.uni;
    u.u[0] = s.groups;
    u.u[1] = s.mA;
    u.u[2] = s.mB;
    u.u[3] = s.betaInfo;
    u.u[4] = s.betaRep;
    u.u[5] = beta === 0 ? 1 : 0;
    u.f[6] = alpha;
    u.f[7] = beta;
    u.u[8] = s.pairsAt;
    u.u[9] = s.pstartAt;
    const b = this.bufs;
    this.ctx.recorder.dispatch(this.sigmaPipe(), [b.work, b.info, b.rep, b.hrec, b.eri, x, y], u, s.groups);
  }

  private gather(idx: GpuBuf, src: GpuBuf, dst: GpuBuf, alpha: number, beta: number): void {
    const p = this.ctx.pipelines.get({ key: 'chem-direct-gather', label: 'direct-gather', bindings: signature(GATHER_BINDINGS), wgsl: gatherWgsl });
    const u = new Uniforms();
    u.u[0] = this.rows;
    u.u[1] = beta === 0 ? 1 : 0;
    u.f[2] = alpha;
    u.f[3] = beta;
    this.ctx.recorder.dispatch(p, [idx, src, dst], u, Math.ceil(this.rows / 256));
  }

  apply(x: GpuVector, y: GpuVector): void {
    this.applyScaled(1, x, 0, y);
  }

  /** y = α·H·x + β·y (β = 0: y's old content ignored); x may alias y. Records only. */
  applyScaled(alpha: number, x: GpuVector, beta: number, y: GpuVector): void {
    if (x.n !== this.cols) throw new DimensionMismatchError(`${this.label} x`, this.cols, x.n);
    if (y.n !== this.rows) throw new DimensionMismatchError(`${this.label} y`, this.rows, y.n);
    if (this.rows === 0) return;
    if (this.par) {
      // P H P + (1 − P) D (1 − P): σ of P x into scratch (distinct buffers), then the combination into y
      this.par.dev.apply((a, b) => this.plain(a, b), x.buf, alpha, beta, y.buf);
      return;
    }
    if (this.perm) {
      this.plainScaled(x.buf, y.buf, alpha, beta);
      return;
    }
    if (x.buf.id !== y.buf.id) {
      this.sigma(x.buf, y.buf, alpha, beta);
      return;
    }
    // in place (x is y): σ into scratch, then y = α·t + β·y
    this.tmp ??= this.ctx.buffers.acquire(4 * this.rows, undefined, 'direct-scratch');
    this.sigma(x.buf, this.tmp, 1, 0);
    Blas1.of(this.ctx).axpby(imm(alpha), this.tmp, imm(beta), y.buf, this.rows);
  }

  /** y = H·x for distinct buffers (through the layout permutation where there is one). */
  private plain(x: GpuBuf, y: GpuBuf): void {
    if (this.perm) this.plainScaled(x, y, 1, 0);
    else this.sigma(x, y, 1, 0);
  }

  private plainScaled(x: GpuBuf, y: GpuBuf, alpha: number, beta: number): void {
    const p = this.perm!;
    this.gather(p.toDirect, x, p.xp, 1, 0);
    this.sigma(p.xp, p.yp, 1, 0);
    this.gather(p.toSpace, p.yp, y, alpha, beta);
  }

  diagonal(): Float64Array {
    return this.diag;
  }

  private shared(): SharedSigmaTables {
    const b = this.bufs;
    const perm = this.perm ? { toDirect: this.perm.toDirect, toSpace: this.perm.toSpace } : undefined;
    const parity = this.par ? { parity: this.par.sp.parity, swap: this.par.swap } : undefined;
    return { rows: this.rows, work: b.work, info: b.info, rep: b.rep, hrec: b.hrec, uni: this.uni, perm, parity, ...this.f64 };
  }

  df64(d: Df64Blas): Df64DirectSigma {
    if (d.ctx !== this.ctx) throw new InvalidParameterError('df64 blas', 'the df64 BLAS of the operator’s own GPU context', 'another context');
    return new Df64DirectSigma(d, this.shared(), this.diag);
  }

  spinSquared(vs: readonly (GpuVector | Df64Vector)[]): Promise<number[]> {
    return this.spin.expectations(vs);
  }

  get spinOnDevice(): boolean {
    return this.spin.fits;
  }

  prewarmSpin(df: boolean): Promise<void> {
    return this.spin.prewarm(df);
  }

  dispose(): void {
    for (const b of Object.values(this.bufs)) b.dispose();
    if (this.perm) for (const b of Object.values(this.perm)) b.dispose();
    this.tmp?.dispose();
    this.spin.dispose();
    this.par?.swap.dispose();
    this.par?.dev.dispose();
  }
}

/**
 * The direct σ of `space` over `fd` on the device of `ctx`, float32. Throws NotSupportedError
 * for spaces that are not FCI or CAS blocks (../tables.ts) and ResourceLimitError where a table
 * or a vector exceeds one storage binding. `stageIntegrals` (default false): stage each α
 * string's integral block in workgroup memory where it fits (false: read the integrals'
 * buffer; tests compare both). Off by default because on an H100 (2026-11-25, N2 6-31G
 * CAS(10e,16o) D2h) the Davidson ran 25 iterations in 5.1 s with the staged kernel against
 * 1.6 s without it (the staged block cuts occupancy); on lavapipe staging was 2× faster. Cost per product: O(size · (conn_α + conn_β +
 * mA·mB/n_irreps)) float32 multiply–adds on the device; memory: the string tables (a few
 * words per string and replacement), the integrals (4·norb⁴ bytes), no H.
 * @example
 * const op = gpuDirectSigmaOperator(ctx, fd, space);
 * op.apply(x, y); // GpuVector in, GpuVector out
 */
export function gpuDirectSigmaOperator(ctx: GpuContext, fd: Fcidump, space: DeterminantSpace, options: { stageIntegrals?: boolean; parity?: 1 | -1 } = {}): GpuDirectSigmaOperator {
  const t0 = performance.now();
  const { ctx: dctx, layout, diagonal } = directContext(fd, space);
  const spin = { sz: (space.nalpha - space.nbeta) / 2, occ: occupationWords(dctx, space) };
  const par = options.parity;
  if (par !== undefined && par !== 1 && par !== -1) throw new InvalidParameterError('parity', '1 (S = 0, 2, …) or −1 (S = 1, 3, …)', par);
  const sp = par === undefined ? undefined : spaceParity(space, dctx, layout, par); // NotSupportedError unless MS2 = 0
  return new GpuDirectSigma(ctx, dctx, fd.orbsym, layout, diagonal, performance.now() - t0, options.stageIntegrals === true, spin, sp);
}
