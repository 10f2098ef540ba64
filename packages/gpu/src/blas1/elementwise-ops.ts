/**
 * The base of {@link Blas1}: the context's scalar slots and dot-partials scratch, its pipeline
 * cache and reused binding arrays, the element-wise kernels and the scalar kernel. Split from
 * ops.ts (no logic change); import {@link Blas1} from ./ops.
 * @module
 */
import type { GpuContext } from '../device/context';
import type { PipelineEntry } from '../device/pipelines';
import { signature } from '../kernels/wgsl/index';
import type { GpuBuf } from '../memory/buffers';
import { Uniforms } from '../memory/recorder';
import { fusedGroup } from './fused-shaders';
import { type ColumnLoops, columnLoops } from './loops';
import { ScalarPool } from './scalar-pool';
import { ELEMENTWISE, elementwiseWgsl, SCALAR_BINDINGS, SCALAR_OPS, scalarWgsl, WG } from './shaders';

/**
 * A scalar operand read by a fused kernel: k · s[num] / s[den] (num / den = -1: absent).
 * CG's α = ρ / (p·q) is {num: ρ, den: pq, k: 1}; −α is the same with k = −1.
 */
export interface Operand {
  readonly num: number;
  readonly den: number;
  readonly k: number;
}

/** An immediate operand (no slot read). */
export const imm = (k: number): Operand => ({ num: -1, den: -1, k });

/** The immediates 0 and 1, made once: the hot paths' defaults allocate no operand per dispatch. */
export const IMM0: Operand = Object.freeze(imm(0));
export const IMM1: Operand = Object.freeze(imm(1));

/** BLAS-1 state of one context: scalar slots and the reduction scratch (the base of {@link Blas1}). */
export class Blas1Base {
  readonly scalars: ScalarPool;
  /** Vectors per fused combine / multiDot dispatch on this device ({@link fusedGroup}). */
  readonly group: number;
  /** Loop shape of the fused multi-dot trees (./loops: by adapter). */
  protected readonly loops: ColumnLoops;
  protected partial: GpuBuf;
  /**
   * Binding arrays by length, reused for every dispatch: the recorder reads them synchronously
   * (bind-group lookup, use-after-dispose checks) and keeps none, so no array is made per
   * dispatch (and none is resized: V8 shrinks an array's store when its length drops).
   */
  private readonly byLength: GpuBuf[][] = [];

  protected constructor(readonly ctx: GpuContext) {
    this.scalars = new ScalarPool(ctx);
    // multiDot stage 1 keeps one float per vector and invocation in workgroup memory
    this.group = Math.max(1, Math.min(fusedGroup(ctx.limits.maxStorageBuffersPerShaderStage), Math.floor(ctx.limits.maxComputeWorkgroupStorageSize / (4 * WG))));
    this.partial = ctx.buffers.acquire(4096 * 4, undefined, 'dot-partials');
    this.loops = columnLoops(ctx);
  }

  /** Pipelines by name, so that a dispatch neither builds the key nor the binding signature again. */
  private readonly pipes = new Map<string, PipelineEntry>();
  private pipesEvictions = 0;

  /** The pipeline of `name` when cached and no compile failed since (no closure made: the hot paths' fast path). */
  protected cached(name: string): PipelineEntry | undefined {
    return this.pipesEvictions === this.ctx.pipelines.evictions ? this.pipes.get(name) : undefined;
  }

  protected pipe(name: string, wgsl: () => string, bindings: () => string): PipelineEntry {
    if (this.pipesEvictions !== this.ctx.pipelines.evictions) {
      this.pipes.clear(); // a compile failed somewhere: ask the context again (it recompiles and reports)
      this.pipesEvictions = this.ctx.pipelines.evictions;
    }
    let p = this.pipes.get(name);
    if (!p) this.pipes.set(name, (p = this.ctx.pipelines.get({ key: `blas1:${name}`, label: `blas1-${name}`, bindings: bindings(), wgsl })));
    return p;
  }

  /** The reused binding array of length k (the private `byLength` cache); its entries are the caller's to set. */
  protected fixed(k: number): GpuBuf[] {
    let a = this.byLength[k];
    if (!a) this.byLength[k] = a = new Array<GpuBuf>(k).fill(this.scalars.buf);
    return a;
  }

  /** The bindings r0, r1, … (up to six, in order) in a reused array. O(1), no allocation. */
  protected bind(r0: GpuBuf, r1?: GpuBuf, r2?: GpuBuf, r3?: GpuBuf, r4?: GpuBuf, r5?: GpuBuf): GpuBuf[] {
    const k = r5 ? 6 : r4 ? 5 : r3 ? 4 : r2 ? 3 : r1 ? 2 : 1;
    const a = this.fixed(k);
    a[0] = r0;
    if (r1) a[1] = r1;
    if (r2) a[2] = r2;
    if (r3) a[3] = r3;
    if (r4) a[4] = r4;
    if (r5) a[5] = r5;
    return a;
  }

  /** An element-wise kernel over the scalar slots and the buffers r1 (, r2, r3). */
  private ew(name: string, n: number, a: Operand, b: Operand, r1: GpuBuf, r2?: GpuBuf, r3?: GpuBuf): void {
    const p = this.cached(name) ?? this.pipe(name, () => elementwiseWgsl(name), () => signature(ELEMENTWISE[name]!.bindings));
    const refs = this.bind(this.scalars.buf, r1, r2, r3);
    const u = packOperands(n, a, b);
    this.ctx.recorder.dispatch(p, refs, u, Math.ceil(n / WG));
  }

  /** y[0..n) = a. O(n). */
  fill(y: GpuBuf, n: number, a: Operand): void {
    this.ew('fill', n, a, IMM0, y);
  }

  /** y[0..n) = x[0..n). O(n). */
  copy(x: GpuBuf, y: GpuBuf, n: number): void {
    if (x.id !== y.id) this.ew('copy', n, IMM0, IMM0, x, y);
  }

  /** y = a·x + b·y (b = 0 ignores y; x may alias y). O(n), one dispatch. */
  axpby(a: Operand, x: GpuBuf, b: Operand, y: GpuBuf, n: number): void {
    if (x.id === y.id) this.ew('axpbySelf', n, a, b, y);
    else this.ew('axpby', n, a, b, x, y);
  }

  /** y = a·y. O(n), one dispatch. */
  scale(a: Operand, y: GpuBuf, n: number): void {
    this.ew('axpbySelf', n, a, IMM0, y);
  }

  /** z = x ∘ y (z may alias x or y). O(n), one dispatch. */
  multiply(x: GpuBuf, y: GpuBuf, z: GpuBuf, n: number): void {
    if (z.id === x.id && z.id === y.id) this.ew('square', n, IMM0, IMM0, z);
    else if (z.id === x.id) this.ew('mulInto', n, IMM0, IMM0, y, z);
    else if (z.id === y.id) this.ew('mulInto', n, IMM0, IMM0, x, z);
    else this.ew('mul', n, IMM0, IMM0, x, y, z);
  }

  /** t = r / (d − sigma), |d − sigma| clamped below at `clamp` (sign kept); t distinct from r and d. O(n). */
  shiftedDivide(r: GpuBuf, d: GpuBuf, sigma: number, clamp: number, t: GpuBuf, n: number): void {
    this.ew('shiftDiv', n, imm(sigma), imm(clamp), r, d, t);
  }

  protected ensurePartial(count: number): void {
    if (this.partial.bytes >= count * 4) return;
    this.ctx.recorder.flush();
    this.partial.dispose();
    this.partial = this.ctx.buffers.acquire(count * 4, undefined, 'dot-partials');
  }

  /** s[out] = op(A, B) on the device (one single-invocation dispatch). */
  scalarOp(op: keyof typeof SCALAR_OPS, a: Operand, b: Operand, out: number): void {
    const p = this.cached('scalar') ?? this.pipe('scalar', scalarWgsl, () => signature(SCALAR_BINDINGS));
    const u = packOperands(SCALAR_OPS[op], a, b);
    u.u[7] = out;
    this.ctx.recorder.dispatch(p, this.bind(this.scalars.buf), u, 1);
  }
}

/** Uniform slots [head, a.num, a.den, a.k, b.num, b.den, b.k]: an element-wise or scalar kernel's two operands. */
function packOperands(head: number, a: Operand, b: Operand): ReturnType<typeof Uniforms.take> {
  const u = Uniforms.take();
  u.u[0] = head;
  u.i[1] = a.num;
  u.i[2] = a.den;
  u.f[3] = a.k;
  u.i[4] = b.num;
  u.i[5] = b.den;
  u.f[6] = b.k;
  return u;
}
