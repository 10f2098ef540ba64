/**
 * The basis of a Lanczos run in one device buffer (issue 15): a copy of the columns [L Q] at
 * column j·n, kept in step with the solver's vectors by identity (a column is copied, without a
 * dispatch, when the solver's vector there is a different object from the one last copied or
 * written), so that a whole CGS2 step is six dispatches for any basis size
 * (./lanczos-shaders), where per-vector bindings need two more per 14 vectors past the first 13.
 * The step's projections and ‖w‖ go to a history buffer, one row per step of a batch, read back
 * in one readback; no device scalar slot is taken per step.
 *
 * Costs: the block doubles the device bytes of the basis (capacity·n·4 bytes); each step reads
 * the m columns three times (dots, two combines) and writes one.
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
import { writeData } from '../memory/upload';
import {
  LANCZOS_COMBINE_BINDINGS,
  LANCZOS_GEMM_MAX_COLUMNS,
  LANCZOS_DOTS_BINDINGS,
  LANCZOS_MAX_COLUMNS,
  LANCZOS_NORMALIZE_BINDINGS,
  LANCZOS_REDUCE_BINDINGS,
  lanczosCombineWgsl,
  lanczosDotsWgsl,
  lanczosGemmBindings,
  lanczosGemmWgsl,
  lanczosNormalizeWgsl,
  lanczosReduceWgsl,
} from './lanczos-shaders';
import { type ColumnLoops, columnLoops, loopsSuffix } from './loops';
import { DOT_CHUNK, WG } from './shaders';

/** Most history rows (steps between two readbacks) of a block. */
export const LANCZOS_MAX_ROWS = 4096;

/**
 * A device basis block of `capacity` columns of length n and a history of `rows` steps. Made by
 * GpuVectorSpace.lanczosBlock; used by the solvers' eigen/lanczos-step through its three methods.
 * @example
 * const b = space.lanczosBlock(n, 21, 8)!;
 * b.step(basis, w, next, 0); // w ⟂ basis twice, next = w/‖w‖ (also column basis.length)
 * const [row] = await b.read([basis.length]); // [h1…, h2…, ‖w‖]
 */
export class LanczosBlock {
  private readonly q: GpuBuf;
  private readonly hist: GpuBuf;
  private readonly partial: GpuBuf;
  /** Coefficients of {@link LanczosBlock.combineColumns} (capacity² floats). */
  private readonly coef: GpuBuf;
  private readonly groups: number;
  /** Outputs per combineColumns dispatch (storage bindings besides the block and the coefficients). */
  private readonly outputs: number;
  /** Row width of the history: h1 (capacity), h2 (capacity), β. */
  private readonly width: number;
  /** The vector object each column was last filled from (identity; undefined: unknown). */
  private readonly cols: (GpuVector | undefined)[];
  private disposed = false;
  /** Loop shape of the dots and combine kernels (./loops: by adapter). */
  private readonly loops: ColumnLoops;

  private constructor(
    private readonly ctx: GpuContext,
    readonly n: number,
    readonly capacity: number,
    readonly rows: number,
  ) {
    this.groups = Math.max(1, Math.ceil(n / DOT_CHUNK));
    this.width = 2 * capacity + 1;
    this.q = ctx.buffers.acquire(capacity * n * 4, undefined, 'lanczos-block');
    this.hist = ctx.buffers.acquire(rows * this.width * 4, undefined, 'lanczos-history');
    this.partial = ctx.buffers.acquire(capacity * this.groups * 4, undefined, 'lanczos-partials');
    this.coef = ctx.buffers.acquire(capacity * capacity * 4, undefined, 'lanczos-coefficients');
    this.outputs = Math.max(1, Math.min(12, ctx.limits.maxStorageBuffersPerShaderStage - 2));
    this.cols = new Array<GpuVector | undefined>(capacity).fill(undefined);
    this.loops = columnLoops(ctx);
  }

  /**
   * A block, or undefined where it does not fit one storage binding (the solver then keeps its
   * per-vector path) or the counts are out of range.
   */
  static create(ctx: GpuContext, n: number, capacity: number, rows: number): LanczosBlock | undefined {
    if (!(Number.isInteger(n) && n >= 1 && Number.isInteger(capacity) && capacity >= 2 && capacity <= LANCZOS_MAX_COLUMNS)) return undefined;
    if (!(Number.isInteger(rows) && rows >= 1 && rows <= LANCZOS_MAX_ROWS)) return undefined;
    const lim = ctx.deviceLimits;
    if (capacity * n * 4 > Math.min(lim.maxStorageBufferBindingSize, lim.maxBufferSize)) return undefined;
    return new LanczosBlock(ctx, n, capacity, rows);
  }

  private readonly pipes = new Map<string, PipelineEntry>();
  private pipe(name: string, wgsl: () => string, bindings: Parameters<typeof signature>[0]): PipelineEntry {
    let p = this.pipes.get(name);
    if (!p) this.pipes.set(name, (p = this.ctx.pipelines.get({ key: `blas1:lanczos-${name}`, label: `blas1-lanczos-${name}`, bindings: signature(bindings), wgsl })));
    return p;
  }

  /** Column j := v unless it already holds v (a copy command, no dispatch). */
  private sync(basis: readonly GpuVector[]): void {
    basis.forEach((v, j) => {
      if (this.cols[j] === v) return;
      this.ctx.recorder.copy(v.buf, 0, this.q, j * this.n * 4, this.n * 4);
      this.cols[j] = v;
    });
  }

  /**
   * One CGS2 step of history row `row`: w ← (I − QQᵀ)²·w against the m = basis.length columns,
   * h1, h2 and β = ‖w‖ into the row, next = w/β (also column m). Six dispatches, no wait.
   * w and next are distinct vectors of length n, neither in the basis.
   */
  step(basis: readonly GpuVector[], w: GpuVector, next: GpuVector, row: number): void {
    const m = basis.length;
    if (this.disposed) throw new GpuSparseError('LanczosBlock.step: expected a live block, got one already disposed');
    if (m < 1 || m + 1 > this.capacity || row < 0 || row >= this.rows || w.n !== this.n || next.n !== this.n) {
      throw new InvalidParameterError('LanczosBlock.step basis, row, w, next', `1 ≤ columns < ${this.capacity}, row < ${this.rows}, vectors of length ${this.n}`, `${m} columns, row ${row}, lengths ${w.n} and ${next.n}`);
    }
    this.sync(basis);
    const rec = this.ctx.recorder;
    const G = this.groups;
    const at = row * this.width;
    const dots = this.pipe(`dots${loopsSuffix(this.loops)}`, () => lanczosDotsWgsl(this.loops), LANCZOS_DOTS_BINDINGS);
    const combine = this.pipe(`combine${loopsSuffix(this.loops)}`, () => lanczosCombineWgsl(this.loops), LANCZOS_COMBINE_BINDINGS);
    let u = Uniforms.take();
    u.u[0] = this.n;
    u.u[1] = m;
    u.u[2] = G;
    u.u[3] = 0;
    rec.dispatch(dots, [this.q, w.buf, this.partial], u, G);
    this.reduce(m, at); // h1
    u = this.combineUniforms(m, at, 0);
    rec.dispatch(combine, [this.q, w.buf, this.partial, this.hist], u, G);
    this.reduce(m, at + this.capacity); // h2
    u = this.combineUniforms(m, at + this.capacity, 1);
    rec.dispatch(combine, [this.q, w.buf, this.partial, this.hist], u, G);
    const norm = this.pipe('normalize', lanczosNormalizeWgsl, LANCZOS_NORMALIZE_BINDINGS);
    u = Uniforms.take();
    u.u[0] = this.n;
    u.u[1] = G;
    u.u[2] = G;
    u.u[3] = 0;
    u.u[4] = at + 2 * this.capacity;
    u.u[5] = m;
    rec.dispatch(norm, [this.partial, w.buf, next.buf, this.q, this.hist], u, G);
    this.cols[m] = next;
  }

  private combineUniforms(m: number, coef: number, mode: 0 | 1): Uniforms {
    const u = Uniforms.take();
    u.u[0] = this.n;
    u.u[1] = m;
    u.u[2] = this.groups;
    u.u[3] = 0;
    u.u[4] = coef;
    u.u[5] = mode;
    return u;
  }

  /** Stage 2 of m column dots: hist[dst + j]. */
  private reduce(m: number, dst: number): void {
    const p = this.pipe('reduce', lanczosReduceWgsl, LANCZOS_REDUCE_BINDINGS);
    const u = Uniforms.take();
    u.u[0] = this.groups;
    u.u[1] = m;
    u.u[2] = 0;
    u.u[3] = dst;
    this.ctx.recorder.dispatch(p, [this.partial, this.hist], u, m);
  }

  /**
   * New vectors y_t = Σ_j coeffs[t][j]·basis[j] (every coefficient row as long; basis[j] for
   * j < that length) from the block's copy of the basis: one dispatch per group of up to 12
   * outputs, each reading the columns once, where a combine per output reads them all again.
   * Undefined (nothing recorded) unless those basis vectors are the block's columns c0 … c0 + m − 1
   * (by identity), m ≤ 64 and there are at most `capacity` rows; the caller then combines per
   * vector. `make(n)` gives each output vector (its contents are overwritten).
   * @example const ys = block.combineColumns(q, [s0, s1], (n) => space.createUninitialized(n));
   */
  combineColumns(basis: readonly GpuVector[], coeffs: readonly (readonly number[])[], make: (n: number) => GpuVector): GpuVector[] | undefined {
    const m = coeffs[0]?.length ?? 0;
    if (this.disposed || m < 1 || m > LANCZOS_GEMM_MAX_COLUMNS || m > basis.length || coeffs.length > this.capacity) return undefined;
    if (coeffs.some((c) => c.length !== m)) return undefined;
    const c0 = this.cols.indexOf(basis[0]);
    if (c0 < 0 || c0 + m > this.capacity) return undefined;
    for (let j = 0; j < m; j++) if (this.cols[c0 + j] !== basis[j]) return undefined;
    const flat = new Float32Array(coeffs.length * m);
    coeffs.forEach((c, t) => { flat.set(c, t * m); });
    writeData(this.ctx, this.coef, flat); // (flushes first: earlier dispatches read the old coefficients)
    const ys = coeffs.map(() => make(this.n));
    const R = this.outputs;
    for (let first = 0; first < ys.length; first += R) {
      // one pipeline per output count: a writable binding may not repeat a buffer
      const r = Math.min(R, ys.length - first);
      const p = this.pipe(`gemm${r}`, () => lanczosGemmWgsl(r), lanczosGemmBindings(r));
      const u = Uniforms.take();
      u.u[0] = this.n;
      u.u[1] = m;
      u.u[2] = c0;
      u.u[3] = r;
      u.u[4] = first * m;
      const refs: GpuBuf[] = [this.q, this.coef];
      for (let t = 0; t < r; t++) refs.push(ys[first + t]!.buf);
      this.ctx.recorder.dispatch(p, refs, u, Math.ceil(this.n / WG));
    }
    return ys;
  }

  /**
   * Rows 0 … widths.length − 1 of the history in one readback: row r as [h1 (widths[r]),
   * h2 (widths[r]), β], widths[r] the basis size of that step.
   */
  async read(widths: readonly number[]): Promise<number[][]> {
    if (widths.length === 0) return [];
    const [bytes] = await readRanges(this.ctx, [{ buf: this.hist, offset: 0, bytes: widths.length * this.width * 4 }]);
    const f = new Float32Array(bytes!);
    return widths.map((m, r) => {
      const at = r * this.width;
      return [...f.subarray(at, at + m), ...f.subarray(at + this.capacity, at + this.capacity + m), f[at + 2 * this.capacity]!];
    });
  }

  /**
   * Submit what is recorded (Lanczos's record-ahead: the steps recorded during a readback go to
   * the GPU before the host waits, instead of the last part of them waiting for the next batch).
   */
  submit(): void {
    if (!this.disposed) this.ctx.recorder.flush();
  }

  /** Return the buffers to the pool (idempotent). */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.q.dispose();
    this.hist.dispose();
    this.partial.dispose();
    this.coef.dispose();
    this.cols.fill(undefined);
  }
}
