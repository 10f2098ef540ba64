/**
 * BLAS-1 on the device: element-wise kernels, deterministic dot / norm2 into device scalar
 * slots, and scalar arithmetic on slots. Every function only records work (no wait).
 * @module
 */
import type { GpuContext } from '../device/context';
import type { PipelineEntry } from '../device/pipelines';
import { signature } from '../kernels/wgsl/index';
import type { GpuBuf } from '../memory/buffers';
import { Uniforms } from '../memory/recorder';
import { CG_UPDATE_BINDINGS, cgUpdateWgsl, combineBindings, combineDotsWgsl, combineNormBindings, combineNormWgsl, combineWgsl, fusedGroup, MULTIDOT2_BINDINGS, MULTIDOT2_SLOTS, multiDot1Bindings, multiDot1Wgsl, multiDot2Wgsl, NORMALIZE_BINDINGS, normalizeWgsl } from './fused-shaders';
import { CG_DIRECTION_BINDINGS, cgDirectionWgsl } from './cg-shaders';
import { ScalarPool } from './scalar-pool';
import {
  DOT_CHUNK,
  DOT_STAGE1_BINDINGS,
  DOT_STAGE2_BINDINGS,
  dotStage1Wgsl,
  dotStage2Wgsl,
  ELEMENTWISE,
  elementwiseWgsl,
  SCALAR_BINDINGS,
  SCALAR_OPS,
  scalarWgsl,
  WG,
} from './shaders';

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
const IMM0: Operand = Object.freeze(imm(0));
const IMM1: Operand = Object.freeze(imm(1));

/** BLAS-1 state of one context: scalar slots and the reduction scratch. */
export class Blas1 {
  readonly scalars: ScalarPool;
  /** Vectors per fused combine / multiDot dispatch on this device ({@link fusedGroup}). */
  readonly group: number;
  private partial: GpuBuf;
  /**
   * Binding arrays by length, reused for every dispatch: the recorder reads them synchronously
   * (bind-group lookup, use-after-dispose checks) and keeps none, so no array is made per
   * dispatch (and none is resized: V8 shrinks an array's store when its length drops).
   */
  private readonly byLength: GpuBuf[][] = [];

  private constructor(readonly ctx: GpuContext) {
    this.scalars = new ScalarPool(ctx);
    // multiDot stage 1 keeps one float per vector and invocation in workgroup memory
    this.group = Math.max(1, Math.min(fusedGroup(ctx.limits.maxStorageBuffersPerShaderStage), Math.floor(ctx.limits.maxComputeWorkgroupStorageSize / (4 * WG))));
    this.partial = ctx.buffers.acquire(4096 * 4, undefined, 'dot-partials');
  }

  private static readonly byCtx = new WeakMap<GpuContext, Blas1>();
  /** The BLAS-1 state of `ctx` (created once). */
  static of(ctx: GpuContext): Blas1 {
    let b = Blas1.byCtx.get(ctx);
    if (!b) Blas1.byCtx.set(ctx, (b = new Blas1(ctx)));
    return b;
  }

  /** Pipelines by name, so that a dispatch neither builds the key nor the binding signature again. */
  private readonly pipes = new Map<string, PipelineEntry>();
  private pipesEvictions = 0;

  /** The pipeline of `name` when cached and no compile failed since (no closure made: the hot paths' fast path). */
  private cached(name: string): PipelineEntry | undefined {
    return this.pipesEvictions === this.ctx.pipelines.evictions ? this.pipes.get(name) : undefined;
  }

  private pipe(name: string, wgsl: () => string, bindings: () => string): PipelineEntry {
    if (this.pipesEvictions !== this.ctx.pipelines.evictions) {
      this.pipes.clear(); // a compile failed somewhere: ask the context again (it recompiles and reports)
      this.pipesEvictions = this.ctx.pipelines.evictions;
    }
    let p = this.pipes.get(name);
    if (!p) this.pipes.set(name, (p = this.ctx.pipelines.get({ key: `blas1:${name}`, label: `blas1-${name}`, bindings: bindings(), wgsl })));
    return p;
  }

  /** The reused binding array of length k ({@link Blas1.byLength}); its entries are the caller's to set. */
  private fixed(k: number): GpuBuf[] {
    let a = this.byLength[k];
    if (!a) this.byLength[k] = a = new Array<GpuBuf>(k).fill(this.scalars.buf);
    return a;
  }

  /** The bindings r0, r1, … (up to six, in order) in a reused array. O(1), no allocation. */
  private bind(r0: GpuBuf, r1?: GpuBuf, r2?: GpuBuf, r3?: GpuBuf, r4?: GpuBuf, r5?: GpuBuf): GpuBuf[] {
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
    const u = Uniforms.take();
    u.u[0] = n;
    u.i[1] = a.num;
    u.i[2] = a.den;
    u.f[3] = a.k;
    u.i[4] = b.num;
    u.i[5] = b.den;
    u.f[6] = b.k;
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

  private ensurePartial(count: number): void {
    if (this.partial.bytes >= count * 4) return;
    this.ctx.recorder.flush();
    this.partial.dispose();
    this.partial = this.ctx.buffers.acquire(count * 4, undefined, 'dot-partials');
  }

  /**
   * {@link Blas1.combineNorm} followed by v = (k/‖y‖)·y, with s[slot] = ‖y‖: the normalising pass
   * completes the norm itself (every workgroup sums the stage-1 partials in dot stage 2's order,
   * the same bits), so it takes one dispatch where dot stage 2 and an axpby take two. v distinct
   * from y and the xs; n ≥ 1.
   * @example b1.combineNormalize([h0], [v0], imm(-1), w, n, slot, v1, -1); // v1 = −w'/‖w'‖
   */
  combineNormalize(coeffs: readonly Operand[], xs: readonly GpuBuf[], beta: Operand, y: GpuBuf, n: number, slot: number, v: GpuBuf, k: number): void {
    const groups = this.combineNormStage1(coeffs, xs, beta, y, n);
    const p = this.cached('normalize') ?? this.pipe('normalize', normalizeWgsl, () => signature(NORMALIZE_BINDINGS));
    const u = Uniforms.take();
    u.u[0] = n;
    u.u[1] = groups;
    u.u[2] = groups; // partials of the norm
    u.u[3] = 0;
    u.u[4] = slot;
    u.f[5] = k;
    const refs = this.bind(this.scalars.buf, this.partial, y, v);
    this.ctx.recorder.dispatch(p, refs, u, groups);
  }

  /** The combine of the leading vectors and the combine-norm pass (partials of ‖y‖² at 0); returns their count. */
  private combineNormStage1(coeffs: readonly Operand[], xs: readonly GpuBuf[], beta: Operand, y: GpuBuf, n: number): number {
    const G = Math.max(1, this.group - 1);
    const lead = Math.max(0, xs.length - G);
    if (lead > 0) this.combine(coeffs.slice(0, lead), xs.slice(0, lead), beta, y, n);
    const b = lead > 0 ? IMM1 : beta;
    const m = xs.length - lead;
    const groups = Math.ceil(n / DOT_CHUNK);
    this.ensurePartial(Math.max(1, groups));
    const p1 = this.cached(`combine-norm${G}`) ?? this.pipe(`combine-norm${G}`, () => combineNormWgsl(G), () => signature(combineNormBindings(G)));
    const refs = this.fixed(G + 3);
    refs[0] = this.scalars.buf;
    const u = combineUniforms(coeffs, xs, b, lead, m, G, n, refs);
    refs[G + 1] = y;
    refs[G + 2] = this.partial;
    u.u[5 + 3 * G] = groups;
    u.u[6 + 3 * G] = 0;
    this.ctx.recorder.dispatch(p1, refs, u, groups);
    return groups;
  }

  /**
   * s[slot_j] = xs[j]·y for each j (sqrt of it when `sqrt`): two dispatches per product, all
   * stage-1 passes first, then the stage-2 passes. O(k·n) reads.
   */
  dots(xs: readonly GpuBuf[], y: GpuBuf, n: number, slots: readonly number[], sqrt = false): void {
    const groups = Math.ceil(n / DOT_CHUNK);
    this.ensurePartial(Math.max(1, groups * xs.length));
    const p1 = this.cached('dot1') ?? this.pipe('dot1', dotStage1Wgsl, () => signature(DOT_STAGE1_BINDINGS));
    const p2 = this.cached('dot2') ?? this.pipe('dot2', dotStage2Wgsl, () => signature(DOT_STAGE2_BINDINGS));
    for (let j = 0; j < xs.length; j++) {
      const u = Uniforms.take();
      u.u[0] = n;
      u.u[1] = groups;
      u.u[2] = j * groups;
      const refs = this.bind(xs[j]!, y, this.partial);
      this.ctx.recorder.dispatch(p1, refs, u, groups);
    }
    for (let j = 0; j < xs.length; j++) {
      const u = Uniforms.take();
      u.u[0] = groups;
      u.u[1] = slots[j]!;
      u.u[2] = sqrt ? 1 : 0;
      u.u[3] = j * groups;
      this.ctx.recorder.dispatch(p2, this.bind(this.partial, this.scalars.buf), u, 1);
    }
  }

  /**
   * y = β·y + Σ_j c_j·x_j (β = 0 ignores y, even NaN): one dispatch per group of up to
   * {@link Blas1.group} vectors, summing j ascending in each invocation (deterministic); groups after
   * the first use β = 1. An x aliasing y falls back to one axpby per vector (same result as the
   * sequential updates). O(k·n) reads, ⌈k/G⌉ dispatches for k ≥ 1 vectors (none for k = 0).
   * @example b1.combine([imm(2), h], [v0, v1], imm(0), w, n); // w = 2·v0 + h·v1
   */
  combine(coeffs: readonly Operand[], xs: readonly GpuBuf[], beta: Operand, y: GpuBuf, n: number): void {
    if (aliases(xs, y)) {
      // y = c0·x0 + beta·y, then y = cj·xj + y
      for (let j = 0; j < xs.length; j++) this.axpby(coeffs[j]!, xs[j]!, j === 0 ? beta : IMM1, y, n);
      return;
    }
    const G = this.group;
    const p = this.cached(`combine${G}`) ?? this.pipe(`combine${G}`, () => combineWgsl(G), () => signature(combineBindings(G)));
    for (let first = 0; first < xs.length; first += G) {
      const m = Math.min(G, xs.length - first);
      const b = first === 0 ? beta : IMM1;
      const refs = this.fixed(G + 2);
      refs[0] = this.scalars.buf;
      const u = combineUniforms(coeffs, xs, b, first, m, G, n, refs);
      refs[G + 1] = y;
      this.ctx.recorder.dispatch(p, refs, u, Math.ceil(n / WG));
    }
  }

  /**
   * y = β·y + Σ_j c_j·x_j, then s[slot] = ‖y‖: the last group of up to {@link Blas1.group} − 1
   * vectors (one binding goes to the partials) is combined in the same pass that squares and
   * sums y, then dot stage 2 takes the square root; vectors before it go through
   * {@link Blas1.combine}. One dispatch fewer and one read of y less than combine + norm2.
   * No x may alias y; at least one vector. O(k·n).
   * @example b1.combineNorm([h0, h1], [v0, v1], imm(-1), w, n, slot); // w = v0·h0 + v1·h1 − w, s = ‖w‖
   */
  combineNorm(coeffs: readonly Operand[], xs: readonly GpuBuf[], beta: Operand, y: GpuBuf, n: number, slot: number): void {
    const groups = this.combineNormStage1(coeffs, xs, beta, y, n);
    const p2 = this.cached('dot2') ?? this.pipe('dot2', dotStage2Wgsl, () => signature(DOT_STAGE2_BINDINGS));
    const u2 = Uniforms.take();
    u2.u[0] = groups;
    u2.u[1] = slot;
    u2.u[2] = 1; // sqrt
    u2.u[3] = 0;
    this.ctx.recorder.dispatch(p2, this.bind(this.partial, this.scalars.buf), u2, 1);
  }

  /**
   * y = β·y + Σ_j c_j·x_j, then s[slot_j] = xs[j]·y_new for every j: the last group of up to
   * {@link Blas1.group} − 1 vectors is combined in the pass that also forms their stage-1 dot
   * partials with the new y ({@link combineDotsWgsl}); vectors before it go through
   * {@link Blas1.combine} first and multi-dot stage 1 after; then the stage-2 dispatches of
   * {@link Blas1.multiDots}. The same bits as combine followed by multiDots, one dispatch and
   * one read of up to G − 1 vectors fewer (those two where the split would not save a dispatch:
   * 14, 27, 28 vectors at G = 14). No x may alias y; at least one vector. O(k·n).
   * @example b1.combineDots([h0, h1], [q0, q1], imm(-1), w, n, [s0, s1]); // w ← Q·h − w, s = Qᵀ·w
   */
  combineDots(coeffs: readonly Operand[], xs: readonly GpuBuf[], beta: Operand, y: GpuBuf, n: number, slots: readonly number[]): void {
    const groups = Math.ceil(n / DOT_CHUNK);
    this.ensurePartial(Math.max(1, groups * xs.length)); // before anything reads the buffer
    const G = Math.max(1, this.group - 1);
    const lead = Math.max(0, xs.length - G);
    if (2 * Math.ceil(lead / this.group) + 1 >= 2 * Math.ceil(xs.length / this.group)) {
      // the leading vectors' combine and dots would take as many dispatches (14, 27, 28 vectors at G = 14)
      this.combine(coeffs, xs, beta, y, n);
      this.multiDots(xs, y, n, slots);
      return;
    }
    if (lead > 0) this.combine(coeffs.slice(0, lead), xs.slice(0, lead), beta, y, n);
    const m = xs.length - lead;
    const p = this.cached(`combine-dots${G}`) ?? this.pipe(`combine-dots${G}`, () => combineDotsWgsl(G), () => signature(combineNormBindings(G)));
    const refs = this.fixed(G + 3);
    refs[0] = this.scalars.buf;
    const u = combineUniforms(coeffs, xs, lead > 0 ? IMM1 : beta, lead, m, G, n, refs);
    refs[G + 1] = y;
    refs[G + 2] = this.partial;
    u.u[5 + 3 * G] = groups;
    u.u[6 + 3 * G] = lead * groups; // partials of vector lead + j at (lead + j)·groups
    this.ctx.recorder.dispatch(p, refs, u, groups);
    if (lead > 0) this.multiDotStage1(xs.slice(0, lead), y, n, 0);
    this.multiDotStage2(xs.length, groups, slots, false);
  }

  /**
   * s[slot_j] = xs[j]·y for each j (sqrt of it when `sqrt`), fused: per group of up to
   * {@link Blas1.group} vectors one stage-1 dispatch (each workgroup reads its chunk of y once),
   * and one stage-2 dispatch per {@link MULTIDOT2_SLOTS} vectors; the same orders as
   * {@link Blas1.dots}, so a single vector gives the same bits. O(k·n) reads,
   * ⌈k/G⌉ + ⌈k/60⌉ dispatches.
   * @example b1.multiDots([v0, v1], w, n, [s0, s1]);
   */
  multiDots(xs: readonly GpuBuf[], y: GpuBuf, n: number, slots: readonly number[], sqrt = false): void {
    const groups = Math.ceil(n / DOT_CHUNK);
    this.ensurePartial(Math.max(1, groups * xs.length));
    this.multiDotStage1(xs, y, n, 0);
    this.multiDotStage2(xs.length, groups, slots, sqrt);
  }

  /** Multi-dot stage 1 of xs against y, partials of vector j at (base + j)·groups. */
  private multiDotStage1(xs: readonly GpuBuf[], y: GpuBuf, n: number, base: number): void {
    const groups = Math.ceil(n / DOT_CHUNK);
    const G = this.group;
    const p1 = this.cached(`multidot1-${G}`) ?? this.pipe(`multidot1-${G}`, () => multiDot1Wgsl(G), () => signature(multiDot1Bindings(G)));
    for (let first = 0; first < xs.length; first += G) {
      const m = Math.min(G, xs.length - first);
      const u = Uniforms.take();
      u.u[0] = n;
      u.u[1] = groups;
      u.u[2] = (base + first) * groups;
      u.u[3] = m;
      const refs = this.fixed(G + 2);
      refs[0] = y;
      for (let j = 0; j < G; j++) refs[1 + j] = xs[first + Math.min(j, m - 1)]!;
      refs[G + 1] = this.partial;
      this.ctx.recorder.dispatch(p1, refs, u, groups);
    }
  }

  /** Multi-dot stage 2: up to S vectors per dispatch (the partials of all groups lie in vector order). */
  private multiDotStage2(count: number, groups: number, slots: readonly number[], sqrt: boolean): void {
    const S = MULTIDOT2_SLOTS;
    const p2 = this.cached(`multidot2-${S}`) ?? this.pipe(`multidot2-${S}`, () => multiDot2Wgsl(S), () => signature(MULTIDOT2_BINDINGS));
    for (let first = 0; first < count; first += S) {
      const m = Math.min(S, count - first);
      const u = Uniforms.take();
      u.u[0] = groups;
      u.u[1] = first * groups;
      u.u[2] = sqrt ? 1 : 0;
      u.u[3] = m;
      for (let j = 0; j < m; j++) u.u[4 + j] = slots[first + j]!;
      this.ctx.recorder.dispatch(p2, this.bind(this.partial, this.scalars.buf), u, m);
    }
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
   * ends in the direction pass ({@link cgDirectionWgsl}), so a whole unpreconditioned CG iteration
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

  /** s[out] = op(A, B) on the device (one single-invocation dispatch). */
  scalarOp(op: keyof typeof SCALAR_OPS, a: Operand, b: Operand, out: number): void {
    const p = this.cached('scalar') ?? this.pipe('scalar', scalarWgsl, () => signature(SCALAR_BINDINGS));
    const u = Uniforms.take();
    u.u[0] = SCALAR_OPS[op];
    u.i[1] = a.num;
    u.i[2] = a.den;
    u.f[3] = a.k;
    u.i[4] = b.num;
    u.i[5] = b.den;
    u.f[6] = b.k;
    u.u[7] = out;
    this.ctx.recorder.dispatch(p, this.bind(this.scalars.buf), u, 1);
  }
}

/** Whether some x is y itself. O(k), no closure. */
function aliases(xs: readonly GpuBuf[], y: GpuBuf): boolean {
  for (let j = 0; j < xs.length; j++) if (xs[j]!.id === y.id) return true;
  return false;
}

/**
 * Uniforms of a combine-type pass over xs[first … first + m) (G binding slots): n, m, β, then
 * (num, den, k) per coefficient (0 past m); sets the G vector bindings refs[1 … G] (unused
 * slots bind the last one: any readable buffer). The caller sets the head and tail bindings.
 */
function combineUniforms(coeffs: readonly Operand[], xs: readonly GpuBuf[], beta: Operand, first: number, m: number, G: number, n: number, refs: GpuBuf[]): Uniforms {
  const u = Uniforms.take();
  u.u[0] = n;
  u.u[1] = m;
  u.i[2] = beta.num;
  u.i[3] = beta.den;
  u.f[4] = beta.k;
  for (let j = 0; j < G; j++) {
    if (j < m) {
      const c = coeffs[first + j]!;
      u.i[5 + 3 * j] = c.num;
      u.i[6 + 3 * j] = c.den;
      u.f[7 + 3 * j] = c.k;
    } else {
      u.i[5 + 3 * j] = -1; // imm(0)
      u.i[6 + 3 * j] = -1;
    }
    refs[1 + j] = xs[first + Math.min(j, m - 1)]!;
  }
  return u;
}
