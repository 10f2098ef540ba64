/**
 * The parts of {@link reliableCg} that are data: its input, hooks and outcome, the float32 work
 * vectors it owns, and the records of a check whose readback is under way.
 * @module
 */
import type { LinearOperator, VectorSpace } from '@gpusparse/formats';
import type { StopReason } from '../common/result';
import type { OuterState } from './host-refinement';

/** What {@link reliableCg} needs from the refinement driver. */
export interface ReliableCgInput<V, S> {
  space: VectorSpace<V, S>;
  op: LinearOperator<V>;
  preconditioner?: LinearOperator<V>;
  state: OuterState<V>;
  /** Stop when ‖b − A·x‖ ≤ tol (extended precision). */
  tol: number;
  /** ‖b − A·x₀‖ (‖b‖ when x₀ = 0). */
  rn0: number;
  /** Replace the residual when the recursive one fell by this factor since the last replacement. */
  delta: number;
  /** Iterations between readbacks of the recursive residual. */
  checkEvery: number;
  /**
   * Iterations recorded after a check before its readback is awaited (default 0: wait at once).
   * With k > 0 the check is asynchronous: the GPU runs the next k iterations while the scalar
   * comes back, and the whole iteration (the search direction included) is one fused pass.
   * A stop or replacement then comes up to k iterations late (harmless extra CG iterations).
   */
  checkLag?: number;
  /** Most CG iterations between two replacements. */
  maxSegment: number;
  /** Most replacements. */
  maxReplacements: number;
  signal?: AbortSignal;
}

/** One segment between replacements, and the driver's hooks. */
export interface ReliableCgHooks {
  /** After each replacement: its true residual and the segment's iterations; false stops. */
  // biome-ignore lint/suspicious/noConfusingVoidType: callbacks that return nothing must be accepted
  onReplacement(info: { replacement: number; residual: number; iterations: number; reason: StopReason; estimate: number }): boolean | void | Promise<boolean | void>;
  /** Counted float32 products / preconditioner applies / readbacks. */
  count(kind: 'matvec' | 'precond' | 'readback', n?: number): void;
}

/** Outcome of {@link reliableCg}. */
export interface ReliableCgOutcome {
  reason: StopReason;
  rn: number;
  detail?: string;
  iterations: number;
  replacements: number;
}

/** The float32 work vectors and the recurrence's scalars of one reliable-update CG solve. */
export class Work<V, S> {
  readonly r: V;
  readonly z: V;
  readonly p: V;
  readonly q: V;
  /** Float32 correction since the last replacement, in units of the current scale. */
  readonly xc: V;
  /**
   * Copies of xc taken when a check's readback starts; `safe` is the one whose check came back
   * clean (−1: none since the last clear, xc was 0 there) — what a replacement uses after a
   * breakdown. Two, so that the next check's copy never overwrites the verified one.
   */
  readonly snaps: [V, V];
  safe = -1;
  rho: S | undefined;

  constructor(
    readonly space: VectorSpace<V, S>,
    n: number,
    hasM: boolean,
  ) {
    this.r = space.create(n);
    this.z = hasM ? space.create(n) : this.r;
    this.p = space.create(n);
    this.q = space.create(n);
    this.xc = space.create(n);
    this.snaps = [space.create(n), space.create(n)];
  }

  setRho(s: S): void {
    if (this.rho !== undefined) this.space.release(this.rho);
    this.rho = s;
  }

  dispose(): void {
    const s = this.space;
    if (this.rho !== undefined) s.release(this.rho);
    for (const v of [this.r, this.p, this.q, this.xc, ...this.snaps]) s.release(v);
    if (this.z !== this.r) s.release(this.z);
  }
}

/** Denominators of the iterations since the last check (aliases owned here). */
export interface Watched<S> {
  name: string;
  k: number;
  s: S;
}

/** A check whose readback is under way. */
export interface Pending<S> {
  /** Iteration of the check, and the iteration at which its readback is awaited. */
  k: number;
  evalAt: number;
  /** Snapshot of xc taken with it. */
  snap: number;
  read: Promise<number[]>;
  norm: S;
  list: Watched<S>[];
}

/** What a check's readback said. */
export interface CheckResult {
  bad: boolean;
  rel: number;
  name: string;
  value: number;
  k: number;
}
