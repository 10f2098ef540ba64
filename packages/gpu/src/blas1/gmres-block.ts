/**
 * The basis of a GMRES(m) cycle in one device buffer (issue 15), for the one-pass classical
 * Gram–Schmidt Arnoldi step: column j at j·n, so that a step is four dispatches whatever the basis
 * size — dots, reduce, combine with the norm's partials, normalize (the WGSL of
 * ./lanczos-shaders) — where the per-vector bindings (multiDot + combineNormalize) take five up to
 * 13 vectors and up to eight past them (14 storage bindings per dispatch). The projections and the
 * norm of each step go to a history row; the rows of a cycle, and the restart residual's norm of
 * the cycle before, are read back in one readback; no device scalar slot is taken per step.
 *
 * Signs: the combine forms w' = Q·h − w = −(w − Q·h), and the next vector is w'/‖w'‖, so the
 * stored basis vector is the negated Arnoldi vector and the Hessenberg entry below the diagonal
 * is −‖w'‖ in the stored basis (the caller's least-squares problem is posed in it); the start
 * vector made by {@link GmresBlock.start} is −r/‖r‖, so the right-hand side is −‖r‖·e₁.
 *
 * Costs: the block adds capacity·n·4 device bytes (the basis vectors stay, as the operator's
 * inputs); a step reads the j + 1 columns twice and w three times, writes w, the next vector and
 * its column.
 * @module
 */
import { GpuSparseError, InvalidParameterError } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { PipelineEntry } from '../device/pipelines';
import { signature } from '../kernels/wgsl/index';
import type { GpuBuf } from '../memory/buffers';
import { readRanges } from '../memory/readback';
import { Uniforms } from '../memory/recorder';
import type { GpuVector } from '../vector-space';
import {
  LANCZOS_COMBINE_BINDINGS,
  LANCZOS_DOTS_BINDINGS,
  LANCZOS_MAX_COLUMNS,
  LANCZOS_NORMALIZE_BINDINGS,
  LANCZOS_REDUCE_BINDINGS,
  lanczosCombineWgsl,
  lanczosDotsWgsl,
  lanczosNormalizeWgsl,
  lanczosReduceWgsl,
} from './lanczos-shaders';
import { type ColumnLoops, columnLoops, loopsSuffix } from './loops';
import { DOT_CHUNK } from './shaders';

/** What one readback of a {@link GmresBlock} gives. */
export interface GmresBlockRows {
  /** Per step read: [h_0 … h_j (stored basis), ‖w'‖]. */
  steps: number[][];
  /** ‖r‖ of the last {@link GmresBlock.start}, when asked for. */
  start?: number;
}

/**
 * A device block of `capacity` basis columns of length n with a history of `capacity` step rows
 * and one start row. Made by GpuVectorSpace.gmresBlock; used by the solvers' krylov/gmres.
 * @example
 * const blk = space.gmresBlock(n, 31)!;
 * blk.start(r, v0);            // v0 = −r/‖r‖ (column 0), ‖r‖ into the start row; r is negated
 * blk.step(1, w, v1, 0);       // w ⟂ column 0, v1 = −w'/… (column 1), row 0 = [h0, ‖w'‖]
 * const { steps, start } = await blk.read([0], true);
 */
export class GmresBlock {
  private readonly q: GpuBuf;
  private readonly hist: GpuBuf;
  private readonly partial: GpuBuf;
  private readonly groups: number;
  /** Row width of the history: h (capacity), ‖w'‖. */
  private readonly width: number;
  private disposed = false;
  private readonly pipes = new Map<string, PipelineEntry>();
  /** Loop shape of the dots and combine kernels (./loops: by adapter). */
  private readonly loops: ColumnLoops;

  private constructor(
    private readonly ctx: GpuContext,
    readonly n: number,
    readonly capacity: number,
  ) {
    this.groups = Math.max(1, Math.ceil(n / DOT_CHUNK));
    this.width = capacity + 1;
    this.q = ctx.buffers.acquire(capacity * n * 4, undefined, 'gmres-block');
    this.hist = ctx.buffers.acquire((capacity + 1) * this.width * 4, undefined, 'gmres-history');
    this.partial = ctx.buffers.acquire(capacity * this.groups * 4, undefined, 'gmres-partials');
    this.loops = columnLoops(ctx);
  }

  /** A block, or undefined where it would not fit one storage binding or the counts are out of range (the solver keeps its per-vector path). */
  static create(ctx: GpuContext, n: number, capacity: number): GmresBlock | undefined {
    if (!(Number.isInteger(n) && n >= 1 && Number.isInteger(capacity) && capacity >= 2 && capacity <= LANCZOS_MAX_COLUMNS)) return undefined;
    const lim = ctx.deviceLimits;
    if (capacity * n * 4 > Math.min(lim.maxStorageBufferBindingSize, lim.maxBufferSize)) return undefined;
    return new GmresBlock(ctx, n, capacity);
  }

  private pipe(name: string, wgsl: () => string, bindings: Parameters<typeof signature>[0]): PipelineEntry {
    let p = this.pipes.get(name);
    // the same keys as the Lanczos block's pipelines: the same WGSL, compiled once per context
    if (!p) this.pipes.set(name, (p = this.ctx.pipelines.get({ key: `blas1:lanczos-${name}`, label: `blas1-lanczos-${name}`, bindings: signature(bindings), wgsl })));
    return p;
  }

  private live(where: string): void {
    if (this.disposed) throw new GpuSparseError(`GmresBlock.${where}: expected a live block, got one already disposed`);
  }

  private vec(where: string, v: GpuVector): void {
    if (v.n !== this.n) throw new InvalidParameterError(`GmresBlock.${where}`, `a vector of length ${this.n}`, `length ${v.n}`);
  }

  /**
   * Start a cycle from the residual r: v0 = −r/‖r‖ into v0 and column 0, ‖r‖ into the start row.
   * r is left negated. Two dispatches, no wait.
   */
  start(r: GpuVector, v0: GpuVector): void {
    this.live('start');
    this.vec('start r', r);
    this.vec('start v0', v0);
    this.combineNorm(0, r, 0);
    this.normalize(r, v0, 0, this.capacity * this.width + this.capacity);
  }

  /** Column 0 := v0 (a copy command: the caller made v0 = r/‖r‖ itself, ‖r‖ known on the host). */
  setStart(v0: GpuVector): void {
    this.live('setStart');
    this.vec('setStart v0', v0);
    this.ctx.recorder.copy(v0.buf, 0, this.q, 0, this.n * 4);
  }

  /**
   * One Arnoldi step against columns [0, m): h = Qᵀ·w into row `row`, w ← Q·h − w,
   * ‖w‖ into the row, next = w/‖w‖ (also column m). Four dispatches, no wait. w and next are
   * distinct vectors of length n, neither a column's source.
   */
  step(m: number, w: GpuVector, next: GpuVector, row: number): void {
    this.live('step');
    if (!(Number.isInteger(m) && m >= 1 && m < this.capacity && Number.isInteger(row) && row >= 0 && row < this.capacity)) {
      throw new InvalidParameterError('GmresBlock.step columns, row', `1 ≤ columns < ${this.capacity}, 0 ≤ row < ${this.capacity}`, `${m} columns, row ${row}`);
    }
    this.vec('step w', w);
    this.vec('step next', next);
    const at = row * this.width;
    const u = Uniforms.take();
    u.u[0] = this.n;
    u.u[1] = m;
    u.u[2] = this.groups;
    u.u[3] = 0;
    this.ctx.recorder.dispatch(this.pipe(`dots${loopsSuffix(this.loops)}`, () => lanczosDotsWgsl(this.loops), LANCZOS_DOTS_BINDINGS), [this.q, w.buf, this.partial], u, this.groups);
    const r = Uniforms.take();
    r.u[0] = this.groups;
    r.u[1] = m;
    r.u[2] = 0;
    r.u[3] = at;
    this.ctx.recorder.dispatch(this.pipe('reduce', lanczosReduceWgsl, LANCZOS_REDUCE_BINDINGS), [this.partial, this.hist], r, m);
    this.combineNorm(m, w, at);
    this.normalize(w, next, m, at + this.capacity);
  }

  /** w ← Σ_{j<m} hist[coef + j]·Q_j − w and the partials of ‖w‖². */
  private combineNorm(m: number, w: GpuVector, coef: number): void {
    const u = Uniforms.take();
    u.u[0] = this.n;
    u.u[1] = m;
    u.u[2] = this.groups;
    u.u[3] = 0;
    u.u[4] = coef;
    u.u[5] = 1;
    this.ctx.recorder.dispatch(this.pipe(`combine${loopsSuffix(this.loops)}`, () => lanczosCombineWgsl(this.loops), LANCZOS_COMBINE_BINDINGS), [this.q, w.buf, this.partial, this.hist], u, this.groups);
  }

  /** β = √Σ partials into hist[dst], v = w/β into v and column `col`. */
  private normalize(w: GpuVector, v: GpuVector, col: number, dst: number): void {
    const u = Uniforms.take();
    u.u[0] = this.n;
    u.u[1] = this.groups;
    u.u[2] = this.groups;
    u.u[3] = 0;
    u.u[4] = dst;
    u.u[5] = col;
    this.ctx.recorder.dispatch(this.pipe('normalize', lanczosNormalizeWgsl, LANCZOS_NORMALIZE_BINDINGS), [this.partial, w.buf, v.buf, this.q, this.hist], u, this.groups);
  }

  /**
   * Rows of the given steps (step row r has r + 1 projections: the basis size of that step) and,
   * with `withStart`, the start row's ‖r‖, in one readback. Values as float32 read them.
   */
  async read(rows: readonly number[], withStart: boolean): Promise<GmresBlockRows> {
    this.live('read');
    if (rows.length === 0 && !withStart) return { steps: [] };
    const first = rows.length ? Math.min(...rows) : this.capacity;
    const last = withStart ? this.capacity : Math.max(...rows);
    const [bytes] = await readRanges(this.ctx, [{ buf: this.hist, offset: first * this.width * 4, bytes: (last - first + 1) * this.width * 4 }]);
    const f = new Float32Array(bytes!);
    const steps = rows.map((r) => {
      const at = (r - first) * this.width;
      return [...f.subarray(at, at + r + 1), f[at + this.capacity]!];
    });
    const out: GmresBlockRows = { steps };
    if (withStart) out.start = f[(this.capacity - first) * this.width + this.capacity]!;
    return out;
  }

  /** Return the buffers to the pool (idempotent). */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.q.dispose();
    this.hist.dispose();
    this.partial.dispose();
  }
}
