/**
 * The values of the WebGPU vector space: a float32 vector in a device buffer, a device scalar
 * (a ratio of two slots of the scalar buffer) and the finalization groups of scalars; and the
 * float32-range check every upload of a vector makes. Split from vector-space.ts (no logic change).
 * @module
 */
import { InvalidParameterError } from '@gpusparse/formats';
import type { Operand } from './blas1/ops';
import type { GpuBuf } from './memory/buffers';

/** A float32 vector on the device. */
export class GpuVector {
  constructor(
    readonly buf: GpuBuf,
    readonly n: number,
  ) {}
}

/**
 * A device scalar: value = k · s[num] / s[den] (num / den = -1: absent). Ratios and negations
 * of device scalars are kept in this form (no kernel), and fused kernels read them directly, so
 * CG's α = ρ / (p·q) and −α cost no dispatch. Slots are freed by `release()` or, for scalars
 * a solver forgets, once every scalar of its group (the {@link SCALAR_GROUP} made in a row by
 * one space) is garbage-collected (pending GPU reads of the slot are recorded earlier than any
 * later reuse, so the reuse is safe).
 */
export class GpuScalar {
  released = false;
  /** The group's record ({@link ScalarGroup}) and this scalar's place in it; set by the space. */
  group: ScalarGroup | undefined;
  member = -1;
  /** Keeps the group's finalization token alive while this scalar lives (see {@link GpuVectorSpace}). */
  token: object | undefined;
  constructor(
    readonly num: number,
    readonly den: number,
    readonly k: number,
  ) {}
  /** The operand a fused kernel reads. */
  get operand(): Operand {
    return { num: this.num, den: this.den, k: this.k };
  }
  /** True when no division is pending (num only). */
  get simple(): boolean {
    return this.den < 0;
  }
}

/**
 * Scalars per finalization group. A FinalizationRegistry registration cost ~2 µs of host time
 * per scalar on the H100 host (a Lanczos / GMRES CGS2 step makes ~3 scalars per dispatch: 6–7 µs
 * per dispatch of our own host time, as much as Dawn's dispatch), so the space registers one
 * token per group of this many scalars; the cost: a forgotten scalar's slots return only when
 * every scalar of its group is unreachable (at most SCALAR_GROUP − 1 forgotten slots pinned per
 * live scalar; scalars given back with release() return at once, as before).
 */
export const SCALAR_GROUP = 32;

/** The slots of a group of scalars: (num, den) per member, −1 once released. */
export interface ScalarGroup {
  readonly slots: Int32Array;
  count: number;
}

/** Smallest normal float32 (2^-126): the device may flush anything smaller to 0. */
const FLOAT32_MIN_NORMAL = 2 ** -126;

/**
 * Refuse a vector whose every non-zero lies below float32's normal range: on the device it would
 * be all zeros (subnormals flushed), and a solver would answer "b = 0, so x = 0" for a b that is
 * not 0 (b = 1e-39 was 'converged', x = 0). Single small entries beside normal ones are kept, as
 * float32 keeps them. O(n).
 * @throws InvalidParameterError naming `where`, the largest |value| and what to do
 * @example checkFloat32Range([1e-40, 0], 'b') // throws
 */
export function checkFloat32Range(values: ArrayLike<number>, where: string): void {
  let m = 0;
  for (let i = 0; i < values.length; i++) {
    const a = Math.abs(values[i]!);
    if (a >= FLOAT32_MIN_NORMAL || Number.isNaN(a)) return; // a normal entry (NaN, ∞: the solvers report non-finite)
    if (a > m) m = a;
  }
  if (m > 0) throw new InvalidParameterError(`${where} values`, "a vector with some |value| ≥ 1.2e-38 (float32's normal range; the device flushes smaller ones to 0)", `max |value| = ${m}: scale it by a power of two, or use refinedSolve (it scales b itself)`);
}
