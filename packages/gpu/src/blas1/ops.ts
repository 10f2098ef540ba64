/**
 * BLAS-1 on the device: element-wise kernels, deterministic dot / norm2 into device scalar
 * slots, and scalar arithmetic on slots. Every function only records work (no wait). The
 * pipeline cache, element-wise and scalar kernels live in ./elementwise-ops, the dots and
 * combines in ./reduction-ops; this file keeps CG's fused steps and the per-context instance.
 * @module
 */
import type { GpuContext } from '../device/context';
import { signature } from '../kernels/wgsl/index';
import type { GpuBuf } from '../memory/buffers';
import { Uniforms } from '../memory/recorder';
import { CG_DIRECTION_BINDINGS, cgDirectionWgsl } from './cg-shaders';
import type { Operand } from './elementwise-ops';
import { CG_UPDATE_BINDINGS, cgUpdateWgsl } from './fused-shaders';
import { Blas1Reductions } from './reduction-ops';
import { DOT_CHUNK, DOT_STAGE1_BINDINGS, DOT_STAGE2_BINDINGS, dotStage1Wgsl, dotStage2Wgsl } from './shaders';

export { imm, type Operand } from './elementwise-ops';

/** BLAS-1 state of one context: scalar slots and the reduction scratch. */
export class Blas1 extends Blas1Reductions {
  private constructor(ctx: GpuContext) {
    super(ctx);
  }

  private static readonly byCtx = new WeakMap<GpuContext, Blas1>();
  /** The BLAS-1 state of `ctx` (created once). */
  static of(ctx: GpuContext): Blas1 {
    let b = Blas1.byCtx.get(ctx);
    if (!b) Blas1.byCtx.set(ctx, (b = new Blas1(ctx)));
    return b;
  }

  /**
   * CG's update x += a·p, r −= a·q and s[slot] = ⟨r, r⟩ of the updated r: two dispatches (the
   * fused update with dot stage 1, then dot stage 2) where axpby, axpby and dot take four.
   * p, q, x, r distinct. O(n): reads p, q, x, r once, writes x, r.
   * @example b1.cgUpdate({ num: rho, den: pq, k: 1 }, p, q, x, r, n, slot);
   */
  cgUpdate(a: Operand, p: GpuBuf, q: GpuBuf, x: GpuBuf, r: GpuBuf, n: number, slot: number): void {
    this.ensurePartial(2 * Math.max(1, Math.ceil(n / DOT_CHUNK)));
    this.cgFused(a, p, q, x, r, n, slot, -1);
  }

  /**
   * A whole CG step after the product q = A·p: s[pqSlot] = ⟨p, q⟩, α = rho / ⟨p, q⟩,
   * x += α·p, r −= α·q, s[rrSlot] = ⟨r, r⟩ — three dispatches (dot stage 1, the fused update
   * that also completes ⟨p, q⟩ in every workgroup, dot stage 2) where dot, axpby, axpby and dot
   * take six. The same arithmetic as those (⟨p, q⟩ in dot stage 2's order, α as the scalar
   * kernel's division). p, q, x, r distinct. O(n).
   * @example b1.cgStep({ num: rho, den: -1, k: 1 }, p, q, x, r, n, pqSlot, rrSlot);
   */
  cgStep(rho: Operand, p: GpuBuf, q: GpuBuf, x: GpuBuf, r: GpuBuf, n: number, pqSlot: number, rrSlot: number): void {
    const groups = Math.ceil(n / DOT_CHUNK);
    this.ensurePartial(2 * Math.max(1, groups)); // before dot stage 1: the buffer must not change between the two
    const p1 = this.cached('dot1') ?? this.pipe('dot1', dotStage1Wgsl, () => signature(DOT_STAGE1_BINDINGS));
    const u = Uniforms.take();
    u.u[0] = n;
    u.u[1] = groups;
    u.u[2] = 0;
    const refs = this.bind(p, q, this.partial);
    this.ctx.recorder.dispatch(p1, refs, u, groups);
    this.cgFused(rho, p, q, x, r, n, rrSlot, pqSlot);
  }

  /**
   * {@link Blas1.cgStep} followed by p = r + β·p with β = s[rrSlot] / rho: the ⟨r, r⟩ reduction
   * ends in the direction pass (`cgDirectionWgsl`), so a whole unpreconditioned CG iteration
   * after the product takes three dispatches, the bits of cgStep + div + axpby. p, q, x, r distinct.
   * @example b1.cgIteration({ num: rho, den: -1, k: 1 }, p, q, x, r, n, pqSlot, rrSlot);
   */
  cgIteration(rho: Operand, p: GpuBuf, q: GpuBuf, x: GpuBuf, r: GpuBuf, n: number, pqSlot: number, rrSlot: number): void {
    const groups = Math.ceil(n / DOT_CHUNK);
    this.cgStep(rho, p, q, x, r, n, pqSlot, -1);
    const u = Uniforms.take();
    u.u[0] = n;
    u.u[1] = groups;
    u.u[2] = groups; // the ⟨r, r⟩ partials follow the ⟨p, q⟩ ones
    u.u[3] = groups;
    u.u[4] = rrSlot;
    u.i[5] = rho.num;
    u.i[6] = rho.den;
    u.f[7] = rho.k;
    const pd = this.cached('cg-direction') ?? this.pipe('cg-direction', cgDirectionWgsl, () => signature(CG_DIRECTION_BINDINGS));
    const refs = this.bind(this.scalars.buf, this.partial, r, p);
    this.ctx.recorder.dispatch(pd, refs, u, groups);
  }

  /** The fused update (α = a, or a / ⟨p, q⟩ from partials [0, groups) when pqSlot ≥ 0) and ⟨r, r⟩ stage 2 (none when slot < 0). */
  private cgFused(a: Operand, p: GpuBuf, q: GpuBuf, x: GpuBuf, r: GpuBuf, n: number, slot: number, pqSlot: number): void {
    const groups = Math.ceil(n / DOT_CHUNK);
    const p1 = this.cached('cg-update') ?? this.pipe('cg-update', cgUpdateWgsl, () => signature(CG_UPDATE_BINDINGS));
    const p2 = this.cached('dot2') ?? this.pipe('dot2', dotStage2Wgsl, () => signature(DOT_STAGE2_BINDINGS));
    const u = Uniforms.take();
    u.u[0] = n;
    u.u[1] = groups;
    u.u[2] = groups; // ⟨r, r⟩ partials after the ⟨p, q⟩ ones
    u.i[3] = a.num;
    u.i[4] = a.den;
    u.f[5] = a.k;
    u.u[6] = pqSlot >= 0 ? 1 : 0;
    u.u[7] = 0;
    u.u[8] = Math.max(0, pqSlot);
    const refs = this.bind(this.scalars.buf, p, q, x, r, this.partial);
    this.ctx.recorder.dispatch(p1, refs, u, groups);
    if (slot < 0) return;
    const u2 = Uniforms.take();
    u2.u[0] = groups;
    u2.u[1] = slot;
    u2.u[2] = 0;
    u2.u[3] = groups;
    this.ctx.recorder.dispatch(p2, this.bind(this.partial, this.scalars.buf), u2, 1);
  }
}
