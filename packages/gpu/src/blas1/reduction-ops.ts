/**
 * The reductions and combines of {@link Blas1}: dots, fused multi-dots, y = β·y + Σ c_j·x_j and
 * its fused forms with a norm, dots or a normalisation. Split from ops.ts (no logic change);
 * import {@link Blas1} from ./ops.
 * @module
 */
import { signature } from '../kernels/wgsl/index';
import type { GpuBuf } from '../memory/buffers';
import { Uniforms } from '../memory/recorder';
import { Blas1Base, IMM1, type Operand } from './elementwise-ops';
import { combineBindings, combineDotsWgsl, combineNormBindings, combineNormWgsl, combineWgsl, MULTIDOT2_BINDINGS, MULTIDOT2_SLOTS, multiDot1Bindings, multiDot1Wgsl, multiDot2Wgsl, NORMALIZE_BINDINGS, normalizeWgsl } from './fused-shaders';
import { loopsSuffix } from './loops';
import { DOT_CHUNK, DOT_STAGE1_BINDINGS, DOT_STAGE2_BINDINGS, dotStage1Wgsl, dotStage2Wgsl, WG } from './shaders';

/** The dots and combines of {@link Blas1} (its middle class; not used on its own). */
export class Blas1Reductions extends Blas1Base {
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
   * partials with the new y (`combineDotsWgsl`); vectors before it go through
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
    const name = `combine-dots${G}${loopsSuffix(this.loops)}`;
    const p = this.cached(name) ?? this.pipe(name, () => combineDotsWgsl(G, this.loops), () => signature(combineNormBindings(G)));
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
   * and one stage-2 dispatch per `MULTIDOT2_SLOTS` vectors; the same orders as
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
    const name = `multidot1-${G}${loopsSuffix(this.loops)}`;
    const p1 = this.cached(name) ?? this.pipe(name, () => multiDot1Wgsl(G, this.loops), () => signature(multiDot1Bindings(G)));
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
