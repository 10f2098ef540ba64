/**
 * The device direct σ in df64 as a `LinearOperator<Df64Vector>` (the CI driver's polish space
 * on WebGPU): shares the float32 operator's string tables on the device and adds the (hi, lo)
 * integrals (8·norb⁴ bytes) and the lo parts of the same-spin values (4 bytes per record).
 * @module
 */
import { DimensionMismatchError, GpuSparseError, type LinearOperator } from '@gpusparse/formats';
import { type Df64Blas, type Df64Vector, type GpuBuf, signature, Uniforms, uploadF32 } from '@gpusparse/gpu';
import { DeviceParity } from './parity';
import { GATHER_DF64_BINDINGS, gatherDf64Wgsl, SIGMA_DF64_BINDINGS, sigmaDf64Wgsl } from './sigma-df64.kernel';

/** The float32 operator's device tables and layout, shared with the df64 operator. */
export interface SharedSigmaTables {
  rows: number;
  work: GpuBuf;
  info: GpuBuf;
  rep: GpuBuf;
  hrec: GpuBuf;
  uni: { groups: number; mA: number; mB: number; betaInfo: number; betaRep: number; kmax: number; pairsAt: number; pstartAt: number };
  /** Permutation gathers (space order ↔ direct layout), when the layout is not the space's. */
  perm: { toDirect: GpuBuf; toSpace: GpuBuf } | undefined;
  /** The MS2 = 0 spin parity and its swap indices (space order), when the operator keeps one (./parity.ts). */
  parity: { parity: 1 | -1; swap: GpuBuf } | undefined;
  /** float64 same-spin values in `hrec` order, and the integrals (norb⁴). */
  sameSpin: Float64Array;
  eri: Float64Array;
}

const pair = (v: number): [number, number] => {
  const hi = Math.fround(v);
  return [hi, Math.fround(v - hi)];
};

/** df64 y = α·H·x + β·y by the direct σ (x and y distinct). */
export class Df64DirectSigma implements LinearOperator<Df64Vector> {
  readonly rows: number;
  readonly cols: number;
  readonly label: string;
  /** Device bytes this operator added (integrals, lo parts, permutation scratch). */
  readonly deviceBytes: number;
  private readonly hlo: GpuBuf;
  private readonly eri: GpuBuf;
  private readonly scratch: { xp: GpuBuf; yp: GpuBuf } | undefined;
  private readonly par: DeviceParity | undefined;
  /** With a spin parity: s = (−1)^S (the same P H P + (1 − P) D (1 − P) as the float32 operator). */
  readonly parity?: 1 | -1;

  constructor(
    readonly d: Df64Blas,
    private readonly t: SharedSigmaTables,
    private readonly diag: Float64Array,
  ) {
    this.rows = t.rows;
    this.cols = t.rows;
    const ctx = d.ctx;
    const lo = new Float32Array(Math.max(1, t.sameSpin.length));
    for (let e = 0; e < t.sameSpin.length; e++) lo[e] = pair(t.sameSpin[e]!)[1];
    const eri = new Float32Array(2 * t.eri.length);
    for (let k = 0; k < t.eri.length; k++) [eri[2 * k], eri[2 * k + 1]] = pair(t.eri[k]!);
    this.hlo = uploadF32(ctx, lo, 'direct-df64-hlo');
    this.eri = uploadF32(ctx, eri, 'direct-df64-eri');
    this.scratch = t.perm ? { xp: ctx.buffers.acquire(8 * Math.max(1, t.rows), undefined, 'direct-df64-xp'), yp: ctx.buffers.acquire(8 * Math.max(1, t.rows), undefined, 'direct-df64-yp') } : undefined;
    if (t.parity) {
      this.par = new DeviceParity(ctx, t.parity.swap, t.parity.parity, t.rows, diag, d);
      this.parity = t.parity.parity;
    }
    this.deviceBytes = this.hlo.bytes + this.eri.bytes + (this.scratch ? 16 * t.rows : 0) + (this.par?.bytes ?? 0);
    this.label = `direct-sigma-gpu(df64, mA=${t.uni.mA}, mB=${t.uni.mB}${t.parity ? `, spin parity ${t.parity.parity > 0 ? 'even' : 'odd'} S` : ''})`;
  }

  diagonal(): Float64Array {
    return this.diag;
  }

  apply(x: Df64Vector, y: Df64Vector): void {
    this.applyScaled(1, x, 0, y);
  }

  /** y = α·H·x + β·y in df64 (β = 0: y's old content ignored); x and y must be distinct. Records only. */
  applyScaled(alpha: number, x: Df64Vector, beta: number, y: Df64Vector): void {
    if (x.n !== this.cols) throw new DimensionMismatchError(`${this.label} x`, this.cols, x.n);
    if (y.n !== this.rows) throw new DimensionMismatchError(`${this.label} y`, this.rows, y.n);
    if (x.buf.id === y.buf.id) throw new GpuSparseError(`${this.label}: expected y distinct from x, got an alias`);
    if (this.rows === 0) return;
    if (this.par) {
      this.par.apply((a, b) => this.plain(a, b, 1, 0), x.buf, alpha, beta, y.buf);
      return;
    }
    this.plain(x.buf, y.buf, alpha, beta);
  }

  /** y = α·H·x + β·y for distinct buffers, through the layout permutation where there is one. */
  private plain(x: GpuBuf, y: GpuBuf, alpha: number, beta: number): void {
    const p = this.t.perm;
    const s = this.scratch;
    if (p && s) {
      this.gather(p.toDirect, x, s.xp, 1, 0);
      this.sigma(s.xp, s.yp, 1, 0);
      this.gather(p.toSpace, s.yp, y, alpha, beta);
      return;
    }
    this.sigma(x, y, alpha, beta);
  }

  private sigma(x: GpuBuf, y: GpuBuf, alpha: number, beta: number): void {
    const { uni: s, work, info, rep, hrec } = this.t;
    const pipe = this.d.pipe(`chem-direct-sigma:${s.mA}:${s.kmax}`, () => sigmaDf64Wgsl(s.mA, this.d.mode, s.kmax), signature(SIGMA_DF64_BINDINGS));
    const u = new Uniforms();
    u.u[0] = s.groups;
    u.u[1] = s.mA;
    u.u[2] = s.mB;
    u.u[3] = s.betaInfo;
    u.u[4] = s.betaRep;
    u.u[5] = beta === 0 ? 1 : 0;
    u.u[6] = 0; // the df64 library's run-time zero
    [u.f[7], u.f[8]] = pair(alpha);
    [u.f[9], u.f[10]] = pair(beta);
    u.u[11] = s.pairsAt;
    u.u[12] = s.pstartAt;
    this.d.ctx.recorder.dispatch(pipe, [work, info, rep, hrec, this.hlo, this.eri, x, y], u, s.groups);
  }

  private gather(idx: GpuBuf, src: GpuBuf, dst: GpuBuf, alpha: number, beta: number): void {
    const pipe = this.d.pipe('chem-direct-gather', () => gatherDf64Wgsl(this.d.mode), signature(GATHER_DF64_BINDINGS));
    const u = new Uniforms();
    u.u[0] = this.rows;
    u.u[1] = beta === 0 ? 1 : 0;
    u.u[2] = 0;
    [u.f[3], u.f[4]] = pair(alpha);
    [u.f[5], u.f[6]] = pair(beta);
    this.d.ctx.recorder.dispatch(pipe, [idx, src, dst], u, Math.ceil(this.rows / 256));
  }

  /** Return the buffers this operator added (the shared tables stay with the float32 operator). */
  dispose(): void {
    this.hlo.dispose();
    this.eri.dispose();
    this.scratch?.xp.dispose();
    this.scratch?.yp.dispose();
    this.par?.dispose();
  }
}
