/**
 * The scalar half of the WebGPU vector space: scalar slots (allocation, finalization groups,
 * release), scalar arithmetic (kept in the k·s[num]/s[den] form where it can be, a dispatch
 * otherwise) and the readback of scalars, the space's synchronisation point.
 * {@link GpuVectorSpace} extends it with the vector operations. Split from vector-space.ts (no
 * logic change).
 * @module
 */
import type { ScalarLike } from '@gpusparse/formats';
import { Blas1, imm, type Operand } from './blas1/ops';
import type { GpuContext } from './device/context';
import { GpuScalar, GpuVector, SCALAR_GROUP, type ScalarGroup } from './gpu-values';
import { readRanges } from './memory/readback';

/**
 * The scalar slots, scalar arithmetic and scalar readback of {@link GpuVectorSpace} (its base
 * class; not used on its own).
 */
export class GpuScalarSpace {
  protected readonly b1: Blas1;
  /**
   * Slots of scalars that were garbage-collected without release() go back to the pool: one
   * registration per group of {@link SCALAR_GROUP} scalars (the target: a token object that only
   * the group's scalars reference; the held value: the group's slot record).
   */
  private readonly finalizer: FinalizationRegistry<ScalarGroup>;
  /** The group that new scalars join, and its token. */
  private group: ScalarGroup | undefined;
  private token: object | undefined;

  constructor(readonly ctx: GpuContext) {
    this.b1 = Blas1.of(ctx);
    const pool = this.b1.scalars;
    this.finalizer = new FinalizationRegistry((g) => {
      for (let i = 0; i < 2 * g.count; i++) pool.release(g.slots[i]!); // released members hold −1 (ignored)
    });
  }

  private track(s: GpuScalar): GpuScalar {
    let g = this.group;
    if (!g || g.count === SCALAR_GROUP) {
      g = this.group = { slots: new Int32Array(2 * SCALAR_GROUP).fill(-1), count: 0 };
      this.token = {};
      this.finalizer.register(this.token, g);
    }
    const m = g.count++;
    g.slots[2 * m] = s.num;
    g.slots[2 * m + 1] = s.den;
    s.group = g;
    s.member = m;
    s.token = this.token;
    return s;
  }

  protected op(s: ScalarLike<GpuScalar>): Operand {
    return typeof s === 'number' ? imm(s) : s; // a GpuScalar is its own operand (no object per use)
  }

  protected slot(): GpuScalar {
    return this.track(new GpuScalar(this.b1.scalars.alloc(), -1, 1));
  }

  private derived(num: number, den: number, k: number): GpuScalar {
    this.b1.scalars.retain(num);
    this.b1.scalars.retain(den);
    return this.track(new GpuScalar(num, den, k));
  }
  scalar(value: number): GpuScalar {
    const s = this.slot();
    this.b1.scalarOp('set', imm(value), imm(0), s.num);
    return s;
  }
  private eager(op: 'add' | 'sub' | 'mul' | 'div' | 'sqrt', a: ScalarLike<GpuScalar>, b: ScalarLike<GpuScalar>): GpuScalar {
    const s = this.slot();
    this.b1.scalarOp(op, this.op(a), this.op(b), s.num);
    return s;
  }
  div(a: ScalarLike<GpuScalar>, b: ScalarLike<GpuScalar>): GpuScalar {
    // a / b without a dispatch when the result stays of the form k·s[num]/s[den]
    if (typeof b === 'number') {
      if (typeof a === 'number') return this.scalar(a / b);
      if (b !== 0) return this.derived(a.num, a.den, a.k / b);
    } else if (b.simple && (typeof a === 'number' || a.simple)) {
      return typeof a === 'number' ? this.derived(-1, b.num, a / b.k) : this.derived(a.num, b.num, a.k / b.k);
    }
    return this.eager('div', a, b);
  }
  mul(a: ScalarLike<GpuScalar>, b: ScalarLike<GpuScalar>): GpuScalar {
    if (typeof a === 'number' && typeof b !== 'number') return this.derived(b.num, b.den, b.k * a);
    if (typeof b === 'number' && typeof a !== 'number') return this.derived(a.num, a.den, a.k * b);
    return this.eager('mul', a, b);
  }
  add(a: ScalarLike<GpuScalar>, b: ScalarLike<GpuScalar>): GpuScalar {
    return this.eager('add', a, b);
  }
  sub(a: ScalarLike<GpuScalar>, b: ScalarLike<GpuScalar>): GpuScalar {
    return this.eager('sub', a, b);
  }
  neg(a: ScalarLike<GpuScalar>): GpuScalar {
    return typeof a === 'number' ? this.scalar(-a) : this.derived(a.num, a.den, -a.k);
  }
  sqrt(a: ScalarLike<GpuScalar>): GpuScalar {
    return this.eager('sqrt', a, 0);
  }
  async read(s: ScalarLike<GpuScalar>): Promise<number> {
    return (await this.readMany([s]))[0]!;
  }
  async readMany(s: readonly ScalarLike<GpuScalar>[]): Promise<number[]> {
    const slots = [...new Set(s.flatMap((x) => (typeof x === 'number' ? [] : [x.num, x.den].filter((i) => i >= 0))))];
    if (!slots.length) await this.ctx.finish();
    const val = slots.length ? await this.readSlots(slots) : new Map<number, number>();
    return s.map((x) => {
      if (typeof x === 'number') return x;
      // the fused kernels' operand(): k·s[num], then / s[den], in float32
      let v = Math.fround(x.k);
      if (x.num >= 0) v = Math.fround(v * val.get(x.num)!);
      if (x.den >= 0) v = Math.fround(v / val.get(x.den)!);
      return v;
    });
  }
  /**
   * The values of scalar slots with one readback and one copy: the span from the lowest to the
   * highest slot (at most the 256 KiB slot buffer), where a copy per slot put hundreds of
   * 4-byte copy commands into every Hessenberg read of GMRES(30).
   */
  private async readSlots(slots: readonly number[]): Promise<Map<number, number>> {
    let lo = slots[0]!;
    let hi = lo;
    for (const i of slots) {
      lo = Math.min(lo, i);
      hi = Math.max(hi, i);
    }
    const [bytes] = await readRanges(this.ctx, [{ buf: this.b1.scalars.buf, offset: lo * 4, bytes: (hi - lo + 1) * 4 }]);
    const f = new Float32Array(bytes!);
    return new Map(slots.map((i) => [i, f[i - lo]!]));
  }

  /**
   * Submit what is recorded so far, no wait (not part of VectorSpace: a solver about to await a
   * readback started earlier calls it so that the GPU runs the iterations recorded since).
   */
  flush(): void {
    this.ctx.recorder.flush();
  }

  release(x: GpuVector | GpuScalar): void {
    if (x instanceof GpuVector) x.buf.dispose();
    else if (!x.released) {
      x.released = true;
      const g = x.group;
      if (g && x.member >= 0) g.slots[2 * x.member] = g.slots[2 * x.member + 1] = -1; // the finalizer must not release them again
      this.b1.scalars.release(x.num);
      this.b1.scalars.release(x.den);
    }
  }
}
