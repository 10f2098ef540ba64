/**
 * Tuning inside the solve: instead of timing the short-listed kernels on throw-away products,
 * the operator runs the first products of the caller's solve on them in turn (A B C A B C …,
 * each product timed by GPU timestamps around its own compute pass, no wait), then reads the
 * timestamps back without blocking the solve and switches to the fastest. Every product is
 * useful work: each candidate was verified against the float64 reference before the solve, so
 * the products differ only by float32 rounding (summation order). What tuning costs the solve
 * is the extra time of the slower candidates' products, plus their verification and upload.
 *
 * Used by `tunedOperator(…, { inSolve: true })` when the device has timestamp queries.
 * @module
 */
import { type CsrMatrix, GpuSparseError, type VerifiedKernelSource } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import { GpuValidationError } from '../device/errors';
import { Blas1, imm } from '../blas1/ops';
import type { GpuBuf } from '../memory/buffers';
import { GUARD_WORDS, guardVerdict, recordGuard } from './in-solve-guard';
import type { AnySpmvKernel, DeviceMatrix } from '../kernels/types';
import { readRanges } from '../memory/readback';
import { GpuOperator } from '../operator';
import { GpuVector } from '../vector-space';
import type { Trial, TuningReport } from './report';
import { medianOf } from './types';

/** One verified candidate on the device. */
export interface InSolveCandidate {
  readonly kernel: AnySpmvKernel;
  readonly handle: DeviceMatrix;
  readonly params: Record<string, number>;
  readonly trial: Trial;
}

/** Options of {@link InSolveOperator}. */
export interface InSolveOptions {
  /** Products per candidate during the solve (default 3; the first of each is a warm-up when there are 3 or more). */
  readonly rounds?: number;
  /** Called once with the winner when the operator has switched (the tuner caches it). */
  readonly onDecided?: (winner: Trial) => void;
  /**
   * Called when the winner is dropped after the decision ({@link InSolveOperator.fallBackToVerified}),
   * with the verified candidate's trial when it was timed: the tuner caches that one instead (or
   * forgets the entry), so the next tuning of this matrix does not pick the dropped kernel again.
   */
  readonly onFellBack?: (verified: Trial | undefined) => void;
}

const QUERY_RESOLVE = 0x200;
const COPY_SRC = 0x04;

/**
 * A GPU operator that runs its first `rounds × candidates` products on the candidates in turn,
 * timed by GPU timestamps, and then every product on the fastest. It is the first candidate's
 * operator (transpose, diagonal, df64 residual come from it); `decided` resolves once it has
 * switched. Cost: no wait and no extra product; one timestamp pair per tuning product and one
 * non-blocking readback after the last.
 * @example
 * const op = await tunedOperator(ctx, a, { inSolve: true }); // then solve with op
 * await op.decided; op.activeLabel // the winner
 */
export class InSolveOperator extends GpuOperator implements VerifiedKernelSource<GpuVector> {
  private readonly others: GpuOperator[];
  private readonly rounds: number;
  private readonly total: number;
  private issued = 0;
  private active = 0;
  /** Switches to a candidate other than the first so far. */
  private switches = 0;
  private disposed = false;
  /** Indices (into `others`) of the operators not yet freed. */
  private readonly alive = new Set<number>();
  /** Candidates (indices into `candidates`) whose product threw during the solve: never run again. */
  private readonly failed = new Set<number>();
  private querySet: GPUQuerySet | undefined;
  /** The product check ({@link recordGuard}): the verified product of a tuning product, and the flags of every tuning product. */
  private guardVec: GpuVector | undefined;
  private guardFlags: GpuBuf | undefined;
  private resolveDecided!: () => void;
  /** Resolves when the timestamps are read and the operator runs the winner. */
  readonly decided: Promise<void>;

  constructor(
    ctx: GpuContext,
    private readonly candidates: readonly InSolveCandidate[],
    a: CsrMatrix,
    private readonly report: TuningReport,
    private readonly opts: InSolveOptions = {},
  ) {
    const first = candidates[0]!;
    super(ctx, first.kernel, first.handle, first.params, a);
    this.others = candidates.slice(1).map((c) => new GpuOperator(ctx, c.kernel, c.handle, c.params, a));
    for (let i = 0; i < this.others.length; i++) this.alive.add(i);
    this.rounds = Math.max(1, opts.rounds ?? 3);
    this.total = candidates.length > 1 && ctx.caps.timestampQuery ? this.rounds * candidates.length : 0;
    this.decided = new Promise((resolve) => {
      this.resolveDecided = resolve;
    });
    // in its own error scopes: a failure is attributed to it (out of memory: ResourceLimitError)
    if (this.total > 0) this.querySet = ctx.scoped(`timestamp query set (${2 * this.total} queries)`, () => ctx.device.createQuerySet({ type: 'timestamp', count: 2 * this.total }), { bytes: 16 * this.total });
    else this.resolveDecided();
  }

  /** The label of the kernel the products run on now. */
  get activeLabel(): string {
    return this.active === 0 ? this.label : this.others[this.active - 1]!.label;
  }

  /** y = A·x. */
  override apply(x: GpuVector, y: GpuVector): void {
    this.product(1, x, 0, y);
  }

  /** y = alpha·A·x + beta·y. */
  override applyScaled(alpha: number, x: GpuVector, beta: number, y: GpuVector): void {
    this.product(alpha, x, beta, y);
  }

  /**
   * True when the products run on a candidate other than the first (verified) one: the tuning
   * switched to it. Its tuning products agreed with the verified kernel's, but a fault that shows
   * only for some x or after a driver hiccup would not have; solvers recompute the residual with
   * {@link InSolveOperator.applyVerified} before a 'converged' verdict. False once the first
   * candidate itself has failed (nothing left to check against).
   */
  runsUnverified(): boolean {
    return !this.disposed && this.active !== 0 && !this.failed.has(0);
  }

  /**
   * Switches to a candidate other than the first so far; undefined when there is nothing to check
   * against (the first candidate failed, or the operator was disposed), as for {@link runsUnverified}.
   */
  get unverifiedSwitches(): number | undefined {
    return this.disposed || this.failed.has(0) ? undefined : this.switches;
  }

  /** The first candidate's label: the kernel every product is checked against. */
  get verifiedLabel(): string {
    return this.label;
  }

  /** y = A·x on the first (verified) candidate, whatever runs the products now. */
  applyVerified(x: GpuVector, y: GpuVector): void {
    super.applyScaled(1, x, 0, y);
  }

  /**
   * The switched-to candidate disagreed with the verified kernel after the decision (`why`):
   * it is retired, its buffers freed, and every later product runs on the first candidate. The
   * tuning cache then holds the verified kernel (or nothing) for this matrix, not the dropped one.
   */
  fallBackToVerified(why: string): void {
    const w = this.active;
    if (w === 0 || this.disposed) return;
    this.retire(w, `in-solve tuning: candidate ${this.labelOf(w)}, chosen by the tuning, ${why}; every later product runs on the verified kernel ${this.label}`);
    this.active = 0;
    if (this.alive.delete(w - 1)) this.others[w - 1]!.dispose();
    const t0 = this.candidates[0]!.trial;
    this.report.winner = t0.ms !== undefined ? { kernel: t0.kernel, params: { ...t0.params }, ms: t0.ms, loMs: t0.loMs, hiMs: t0.hiMs, gflops: t0.gflops } : undefined;
    if (this.report.decision) this.report.decision.note += `; ${this.labelOf(w)} was dropped after the decision (its products disagreed with the verified kernel's)`;
    // the cache still names the dropped kernel: a cache hit is checked with one product only, which
    // a kernel that goes wrong for some x passes, so the next solve would run it again
    this.opts.onFellBack?.(t0.ms !== undefined ? t0 : undefined);
  }

  private on(i: number, alpha: number, x: GpuVector, beta: number, y: GpuVector): void {
    if (i === 0) super.applyScaled(alpha, x, beta, y);
    else this.others[i - 1]!.applyScaled(alpha, x, beta, y);
  }

  private product(alpha: number, x: GpuVector, beta: number, y: GpuVector): void {
    if (this.issued >= this.total || !this.querySet) {
      // until the decision lands the first candidate runs: it may be one that failed
      if (this.failed.size === 0) this.on(this.active, alpha, x, beta, y);
      else this.tryOn(this.active, this.issued, alpha, x, beta, y);
      return;
    }
    const k = this.issued;
    const rec = this.ctx.recorder;
    // errors of earlier GPU work surface here as themselves, not as this candidate's failure
    this.ctx.check();
    const guarded = this.verified(k % this.candidates.length, alpha, x, beta, y);
    rec.computePass({ timestampWrites: { querySet: this.querySet, beginningOfPassWriteIndex: 2 * k, endOfPassWriteIndex: 2 * k + 1 } });
    try {
      this.tryOn(k % this.candidates.length, k, alpha, x, beta, y);
    } finally {
      rec.endPass();
    }
    if (guarded) recordGuard(this.ctx, this.guardVec!.buf, y.buf, this.guardFlags!, GUARD_WORDS * k, this.rows);
    this.issued++;
    if (this.issued === this.total) this.collect();
  }

  /**
   * Before tuning product k on candidate c ≠ 0: the same product on the first (verified)
   * candidate into scratch, for {@link recordGuard} to check and replace y with after the timed
   * pass. False (no check) for the first candidate itself, or when it has failed or throws here
   * (it is then retired like any candidate, and the product goes unchecked).
   */
  private verified(c: number, alpha: number, x: GpuVector, beta: number, y: GpuVector): boolean {
    if (c === 0 || this.failed.has(0)) return false;
    try {
      this.ensureGuard();
    } catch (e) {
      // no room for the check: no candidate runs unchecked — the verified kernel takes every product
      const why = `in-solve tuning: the product check's scratch (${4 * this.rows} bytes) could not be had (${(e as Error)?.message ?? String(e)}); tuning stopped, the verified kernel ${this.label} runs`;
      for (let i = 1; i < this.candidates.length; i++) if (!this.failed.has(i)) this.retire(i, why);
      return false;
    }
    try {
      const s = this.guardVec!;
      // s = α·A·x + β·y on the verified kernel (y copied first when β reads it; x may alias y)
      if (beta !== 0) Blas1.of(this.ctx).copy(y.buf, s.buf, this.rows);
      super.applyScaled(alpha, x, beta, s);
      return true;
    } catch (e) {
      this.retire(0, `in-solve tuning: candidate ${this.label} threw while checking another candidate's product: ${(e as Error)?.message ?? String(e)}`);
      return false;
    }
  }

  private ensureGuard(): void {
    if (!this.guardFlags) {
      this.guardFlags = this.ctx.buffers.acquire(4 * GUARD_WORDS * this.total, undefined, 'in-solve-guard-flags');
      Blas1.of(this.ctx).fill(this.guardFlags, GUARD_WORDS * this.total, imm(0));
    }
    this.guardVec ??= new GpuVector(this.ctx.buffers.acquire(4 * this.rows, undefined, 'in-solve-guard'), this.rows);
  }

  /**
   * One tuning product on candidate `i`; when its encode throws (a pipeline that cannot be
   * created, a buffer that does not fit, a kernel bug), the candidate is retired and the product
   * is redone on the first candidate still standing — but only when the failed attempt cannot
   * have touched y in a way the redo does not overwrite (no dispatch recorded, or β = 0 and y is
   * not x). Otherwise, or when no candidate is left, the solve stops with a named error.
   */
  private tryOn(i: number, k: number, alpha: number, x: GpuVector, beta: number, y: GpuVector): void {
    let last: unknown;
    for (let c: number | undefined = i; c !== undefined; c = this.standing()) {
      if (this.failed.has(c)) continue;
      const before = this.ctx.recorder.dispatches;
      try {
        this.on(c, alpha, x, beta, y);
        return;
      } catch (e) {
        const what = `in-solve tuning: candidate ${this.labelOf(c)} threw on product ${k + 1} of the solve`;
        const partial = this.ctx.recorder.dispatches !== before && (beta !== 0 || x.buf.id === y.buf.id);
        last = e;
        this.retire(c, `${what}: ${(e as Error)?.message ?? String(e)}`);
        if (partial) throw named(e, `${what} after recording part of y = αAx + βy with β = ${beta} (cannot be redone)`);
      }
    }
    // the last failure as it came when it is one of gpusparse's (out of memory: ResourceLimitError,
    // exit 5), else a bug (GpuValidationError, exit 70); every candidate's error is in the report
    const all = `in-solve tuning: expected at least one candidate that runs, got all ${this.candidates.length} failing (${this.candidates.map((c) => c.trial.error).join('; ')})`;
    this.report.warnings.push(all);
    throw named(last, all);
  }

  /** Mark candidate `i` failed in the report; it is never run again. */
  private retire(i: number, error: string): void {
    this.failed.add(i);
    const t = this.candidates[i]!.trial;
    t.status = 'error';
    t.error = error;
    this.report.failed++;
    this.report.warnings.push(`${error}; it is dropped and the product redone on another verified candidate`);
  }

  /** The first candidate that has not failed, if any. */
  private standing(): number | undefined {
    for (let i = 0; i < this.candidates.length; i++) if (!this.failed.has(i)) return i;
    return undefined;
  }

  private labelOf(i: number): string {
    return i === 0 ? this.label : this.others[i - 1]!.label;
  }

  /** Resolve the timestamps and read them back without blocking; then decide. */
  private collect(): void {
    const qs = this.querySet!;
    const bytes = 16 * this.total;
    const buf = this.ctx.buffers.acquire(bytes, QUERY_RESOLVE | COPY_SRC, 'in-solve-timestamps');
    this.ctx.recorder.commandEncoder().resolveQuerySet(qs, 0, 2 * this.total, buf.buffer, 0);
    const flags = this.guardFlags;
    const ranges = [{ buf, offset: 0, bytes }, ...(flags ? [{ buf: flags, offset: 0, bytes: 4 * GUARD_WORDS * this.total }] : [])];
    readRanges(this.ctx, ranges)
      .then(([data, words]) => this.decide(new BigUint64Array(data!), words ? new Uint32Array(words) : undefined))
      .catch((e: unknown) => {
        this.report.warnings.push(`in-solve tuning: the timestamps could not be read (${(e as Error).message}); the first candidate that did not fail stays`);
        if (this.failed.has(this.active) && !this.disposed) this.setActive(this.standing() ?? this.active);
      })
      .finally(() => {
        buf.dispose();
        this.freeGuard();
        qs.destroy();
        this.querySet = undefined;
        this.resolveDecided();
      });
  }

  /** Per candidate: samples, median (the first product of each dropped as warm-up when 3 or more), the winner, the report. */
  private decide(t: BigUint64Array, words: Uint32Array | undefined): void {
    if (this.disposed) return;
    const n = this.candidates.length;
    if (words) this.judge(words);
    const samples: number[][] = this.candidates.map(() => []);
    for (let k = 0; k < this.total; k++) samples[k % n]!.push(Number(t[2 * k + 1]! - t[2 * k]!) / 1e6);
    // the first product of each dropped as warm-up (3 or more); then, as in the rounds before the
    // solve, a NaN, infinite or negative time (end before begin: a counter that wrapped or was
    // reset) is a failed measurement, never a sample — a negative one would win
    const kept = samples.map((s) => (s.length >= 3 ? s.slice(1) : s).filter((v) => Number.isFinite(v) && v >= 0));
    const med = kept.map((s) => (s.length > 0 ? medianOf(s) : Number.NaN));
    const bad = med.flatMap((m, i) => (Number.isNaN(m) && !this.failed.has(i) ? [this.labelOf(i)] : []));
    if (bad.length > 0) this.report.warnings.push(`in-solve tuning: expected non-negative finite GPU timestamps, got none usable for ${bad.join(', ')}; not timed, not chosen`);
    // a failed candidate's slots timed the redo on another one: it takes no part in the decision
    const order = med.map((m, i) => [m, i] as const).filter(([m, i]) => !this.failed.has(i) && !Number.isNaN(m)).sort((p, q) => p[0] - q[0]);
    if (order.length === 0) {
      // nothing measured: no winner; the first candidate still standing keeps the products
      this.setActive(this.standing() ?? this.active);
      return;
    }
    for (const [m, i] of order) {
      const k = kept[i]!;
      Object.assign(this.candidates[i]!.trial, { status: 'timed', ms: m, loMs: Math.min(...k), hiMs: Math.max(...k), samples: k, gflops: (2 * this.report.nnz) / (m * 1e6), reason: 'timed in the solve' });
    }
    this.switchTo(order[0]![1], order[1]?.[1]);
  }

  /** Retire every candidate whose checked tuning products disagreed with the verified kernel's (the solve got the verified ones). */
  private judge(words: Uint32Array): void {
    const n = this.candidates.length;
    for (let k = 0; k < this.total; k++) {
      const c = k % n;
      if (c === 0 || this.failed.has(c)) continue;
      const v = guardVerdict(words, GUARD_WORDS * k);
      if (v) this.retire(c, `in-solve tuning: candidate ${this.labelOf(c)} gave a wrong product ${k + 1} of the solve (${v})`);
    }
  }

  private freeGuard(): void {
    this.guardVec?.buf.dispose();
    this.guardFlags?.dispose();
    this.guardVec = undefined;
    this.guardFlags = undefined;
  }

  /** Products run on candidate `w` from now on (a switch away from the verified one is counted). */
  private setActive(w: number): void {
    if (w !== 0 && w !== this.active) this.switches++;
    this.active = w;
  }

  private switchTo(w: number, r: number | undefined): void {
    this.setActive(w);
    // the first candidate backs this operator (transpose, diagonal, df64): only the others are freed
    for (const i of [...this.alive]) {
      if (i + 1 === w) continue;
      this.others[i]!.dispose();
      this.alive.delete(i);
    }
    const win = this.candidates[w]!.trial;
    const run = r !== undefined ? this.candidates[r]!.trial : undefined;
    const overlap = run !== undefined && win.hiMs! >= run.loMs!;
    const label = (t: Trial) => `${t.kernel}(${Object.entries(t.params).map(([k, v]) => `${k}=${v}`).join(',')})`;
    this.report.winner = { kernel: win.kernel, params: { ...win.params }, ms: win.ms!, loMs: win.loMs, hiMs: win.hiMs, gflops: win.gflops };
    this.report.timed = this.candidates.length - this.failed.size;
    this.report.decision = {
      rounds: this.rounds,
      uncertain: overlap,
      note: `in-solve: ${this.candidates.length} verified candidates${this.failed.size ? ` (${this.failed.size} failed)` : ''} ran ${this.total} products of the solve in turn; ${label(win)} ${win.ms!.toPrecision(3)} ms${run ? ` vs ${label(run)} ${run.ms!.toPrecision(3)} ms${overlap ? ' (spreads overlap: either is sound)' : ''}` : ''}`,
      runnerUp: run ? { kernel: run.kernel, params: { ...run.params }, ms: run.ms!, loMs: run.loMs!, hiMs: run.hiMs! } : undefined,
    };
    this.opts.onDecided?.(win);
  }

  /** Return every candidate's buffers. */
  override dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    // a query set still waiting for its readback is destroyed by the readback's own cleanup; one
    // still referenced by recorded passes is submitted first (destroying it under an unsubmitted
    // pass made the next submit fail validation)
    if (this.issued < this.total && this.querySet) {
      this.ctx.recorder.flush();
      this.querySet.destroy();
    }
    for (const i of this.alive) this.others[i]!.dispose();
    this.alive.clear();
    // buffers still read by the timestamps' readback are freed by its cleanup
    if (this.issued < this.total) this.freeGuard();
    super.dispose();
    if (this.issued < this.total) this.resolveDecided(); // never switched: nothing to wait for
  }
}

/** A named error for a candidate's failure: gpusparse's own errors as they are, anything else as a bug (GpuValidationError, exit 70). */
function named(e: unknown, what: string): Error {
  if (e instanceof GpuSparseError || e instanceof GpuValidationError) return e;
  return new GpuValidationError(what, 'encode', (e as Error)?.message ?? String(e));
}
