/**
 * DIA built on the device from the CSR arrays already there (issue 16): the tuner and the
 * operator no longer walk 10^7–10^8 non-zeros in JavaScript and send rows·ndiag padded float32
 * slots (370 MB for the 27-point stencil at 120³) over the bus; the host handles only the
 * O(ndiag) offsets and diagonal tables.
 *
 * 1. offsets: `mark` flags the occupied offsets j − i in a window of rows + cols − 1 words,
 *    `compact` lists them, the host reads back the count and the offsets, sorts them and
 *    refuses (the host conversion's own errors: too many diagonals, too many padded slots)
 *    before anything of rows·ndiag is allocated; or offsets the caller already has (the
 *    tuner's device statistics);
 * 2. `index` turns the window into a map offset → diagonal number d;
 * 3. per piece of the layout (`diagonalPlan`, the plan the host upload follows, splits over
 *    bindings included): the diagonal table is uploaded, a zeroed values buffer allocated and
 *    `scatter` writes each entry's float32 value to its slot.
 *
 * The result is word for word the `dia` / `dia-tiled` upload of `diaFromCsr(a, { valueType:
 * 'f32' })`: the same tables, the same float32 values (the CSR values were rounded to float32
 * once, at the CSR upload, as the host conversion rounds them), +0 in every fill slot.
 * @module
 */
import { type CsrMatrix, checkDiagonalCount, diagonalStats, InvalidMatrixError } from '@gpusparse/formats';
import type { GpuContext } from '../../device/context';
import type { GpuBuf } from '../../memory/buffers';
import { readRanges } from '../../memory/readback';
import { Uniforms } from '../../memory/recorder';
import { uploadU32 } from '../../memory/upload';
import { type SharedCsrUpload, uploadCsrArrays } from '../csr/csr-device';
import type { PipelineEntry, PipelineSpec } from '../../device/pipelines';
import type { EllDeviceMatrix } from '../ell/ell-device';
import type { AnySpmvKernel, MatrixShape, UploadOptions } from '../types';
import { signature, type WgslBinding } from '../wgsl/index';
import {
  COMPACT_BINDINGS,
  compactWgsl,
  DIA_BUILD_WG,
  INDEX_BINDINGS,
  indexWgsl,
  MARK_BINDINGS,
  markWgsl,
  SCATTER_BINDINGS,
  scatterWgsl,
} from './dia-build.kernel';
import { type DiagonalPiecePlan, diagonalPlan } from './diagonal-device';

/** The formats' limit on padded slots of one array (2²⁸, `checkSlots`): past it the conversion refuses. */
const DIA_MAX_SLOTS = 2 ** 28;
/** Offsets read back with the count in the first round trip (more take a second one). */
const FIRST_READ = 1024;

/** One piece of a device-built layout: its table (host copy, for the kernels' own uniforms) and its buffers [table, values]. */
export interface DiaDevicePiece {
  readonly rows: number;
  readonly rowBase: number;
  readonly count: number;
  readonly accumulate: boolean;
  readonly tab: Int32Array;
  readonly arrays: readonly [GpuBuf, GpuBuf];
}

/** The pieces of one layout on the device, shared by the handles that read them (reference-counted). */
export interface DiaDeviceLayout {
  readonly pieces: readonly DiaDevicePiece[];
  readonly deviceBytes: number;
  retain(): void;
  release(): void;
}

/**
 * A DIA matrix whose values live on the device: what the `dia` and `dia-tiled` uploads accept
 * beside a host `DiaMatrix` (their `supports` reads only the shape and the offsets).
 */
export interface DeviceDiaMatrix extends MatrixShape {
  readonly format: 'dia';
  readonly onDevice: true;
  readonly nnz: number;
  /** Offsets j − i of the occupied diagonals, ascending. */
  readonly offsets: Int32Array;
  /**
   * The layout for bindings of `cap` elements and at most `maxCount` diagonals per piece, built
   * on first request (recorded, no wait) and shared with later requests of the same plan;
   * retained for the caller, who releases it.
   */
  layout(cap: number, maxCount: number): DiaDeviceLayout;
  /** Drop this matrix's hold on the CSR arrays, the map and its layouts (handles keep theirs). Idempotent. */
  release(): void;
}

/** Whether `m` is a {@link DeviceDiaMatrix}. */
export const isDeviceDia = (m: unknown): m is DeviceDiaMatrix => (m as { onDevice?: unknown } | undefined)?.onDevice === true;

type Kind = 'mark' | 'compact' | 'index' | 'scatter';
const SOURCES: Record<Kind, { wgsl: () => string; bindings: readonly WgslBinding[] }> = {
  mark: { wgsl: markWgsl, bindings: MARK_BINDINGS },
  compact: { wgsl: compactWgsl, bindings: COMPACT_BINDINGS },
  index: { wgsl: indexWgsl, bindings: INDEX_BINDINGS },
  scatter: { wgsl: scatterWgsl, bindings: SCATTER_BINDINGS },
};

function buildSpec(kind: Kind): PipelineSpec {
  const text = SOURCES[kind].wgsl();
  return { key: text, label: `dia-build-${kind}`, bindings: signature(SOURCES[kind].bindings), wgsl: () => text };
}

/** The pipelines of the build (for PipelineCache.prewarm: the autotuner compiles them while the host prepares the CSR upload). */
export function diaBuildSpecs(): PipelineSpec[] {
  return (Object.keys(SOURCES) as Kind[]).map(buildSpec);
}

/** Record one build kernel over `n` invocations with uniform words `w` (in DIA_BUILD_UNIFORMS order). */
function dispatch(ctx: GpuContext, kind: Kind, refs: readonly GpuBuf[], n: number, w: readonly number[]): void {
  const pipe = ctx.pipelines.get(buildSpec(kind));
  const u = new Uniforms();
  u.u[0] = n;
  w.forEach((v, i) => {
    u.u[1 + i] = v;
  });
  ctx.recorder.dispatch(pipe, refs, u, Math.ceil(n / DIA_BUILD_WG));
}

/** A device buffer of `words` u32 (at least `min`), cleared to zero on the device (recorded). */
function cleared(ctx: GpuContext, words: number, label: string, min = 1): GpuBuf {
  const bytes = Math.max(min, words) * 4;
  const buf = ctx.buffers.acquire(bytes, undefined, label);
  if (bytes > 0) ctx.recorder.commandEncoder().clearBuffer(buf.buffer, 0, bytes);
  return buf;
}

/** Words of the offset window of a rows × cols matrix. */
const windowOf = (rows: number, cols: number): number => Math.max(0, rows + cols - 1);

/**
 * True, or why the device build does not apply to the CSR arrays of `shared` (then convert on
 * the host): the offset window must fit one storage binding. O(1).
 */
export function deviceDiaApplies(ctx: GpuContext, shape: MatrixShape): true | string {
  const words = windowOf(shape.rows, shape.cols);
  if (4 * words > ctx.limits.maxStorageBufferBindingSize) return `the diagonal window (rows + cols − 1 = ${words} words) exceeds one storage binding`;
  return true;
}

/**
 * The occupied diagonal offsets of the CSR arrays of `shared`, ascending, found on the device
 * (mark, compact); the host reads back the count and the offsets. Throws the host
 * conversion's errors when there are more than `maxDiagonals` or more than 2²⁸ padded slots,
 * before any DIA array exists. Returns the window buffer too (the map's storage).
 * Cost: one pass over the columns and one over the window on the device, one or two readbacks.
 */
export async function diagonalOffsetsOnDevice(ctx: GpuContext, shared: SharedCsrUpload, maxDiagonals: number): Promise<{ offsets: Int32Array; window: GpuBuf }> {
  const { rows, cols } = shared.source;
  const span = windowOf(rows, cols);
  const cap = Math.min(span, maxDiagonals, Math.floor(DIA_MAX_SLOTS / Math.max(1, rows)));
  const window = cleared(ctx, span, 'dia-build-window');
  const list = cleared(ctx, 1 + cap, 'dia-build-list');
  try {
    for (const b of shared.blocks) dispatch(ctx, 'mark', [b.rowPtr, b.colIdx, window], b.rows, [b.rowStart, rows, 0]);
    dispatch(ctx, 'compact', [window, list], span, [0, rows, 0, cap]);
    const [head] = await readRanges(ctx, [{ buf: list, offset: 0, bytes: 4 * (1 + Math.min(cap, FIRST_READ)) }]);
    const first = new Int32Array(head!);
    const count = first[0]!;
    checkDiagonalCount('dia', count, maxDiagonals, rows * count);
    let offsets = first.slice(1, 1 + count);
    if (count > FIRST_READ) {
      const [rest] = await readRanges(ctx, [{ buf: list, offset: 4 * (1 + FIRST_READ), bytes: 4 * (count - FIRST_READ) }]);
      offsets = Int32Array.from([...offsets, ...new Int32Array(rest!)]);
    }
    return { offsets: offsets.sort(), window };
  } catch (e) {
    window.dispose();
    throw e;
  } finally {
    list.dispose();
  }
}

/**
 * The DIA matrix of the CSR arrays of `shared` on the device, its offsets found there or given
 * (`offsets`, ascending: the tuner's device statistics already hold them). `shared` is retained
 * until {@link DeviceDiaMatrix.release}. Throws the host conversion's errors (too many
 * diagonals or padded slots) before allocating rows·ndiag slots.
 * Cost: as {@link diagonalOffsetsOnDevice} without given offsets; one dispatch over the diagonals.
 * @example const m = await deviceDiaFromCsr(ctx, shared); const l = m.layout(cap, Infinity); m.release();
 */
export async function deviceDiaFromCsr(ctx: GpuContext, shared: SharedCsrUpload, opts: { offsets?: Int32Array; maxDiagonals?: number } = {}): Promise<DeviceDiaMatrix> {
  const applies = deviceDiaApplies(ctx, shared.source);
  if (applies !== true) throw new RangeError(`deviceDiaFromCsr: ${applies}`);
  let m: DeviceDiaMatrix;
  if (opts.offsets) m = deviceDiaWithOffsets(ctx, shared, opts.offsets, opts.maxDiagonals ?? DIA_MAX_SLOTS);
  else {
    const { offsets, window } = await diagonalOffsetsOnDevice(ctx, shared, opts.maxDiagonals ?? DIA_MAX_SLOTS);
    m = deviceDiaWithOffsets(ctx, shared, offsets, Number.POSITIVE_INFINITY, window);
  }
  try {
    // an out-of-memory of the map or offsets is this call's (one round trip), not the first layout's
    await ctx.settle();
    ctx.check();
  } catch (e) {
    m.release();
    throw e;
  }
  return m;
}

/**
 * {@link deviceDiaFromCsr} with the offsets known (ascending, exactly the occupied ones): checks
 * the limits, records the map (into `window` when given), returns at once (no wait).
 */
export function deviceDiaWithOffsets(ctx: GpuContext, shared: SharedCsrUpload, offsets: Int32Array, maxDiagonals: number, window?: GpuBuf): DeviceDiaMatrix {
  const { rows, cols, nnz } = shared.source;
  refuseUnsorted(shared);
  const nd = offsets.length;
  let map = window;
  let offBuf: GpuBuf | undefined;
  try {
    checkDiagonalCount('dia', nd, maxDiagonals, rows * nd);
    map ??= ctx.buffers.acquire(Math.max(1, windowOf(rows, cols)) * 4, undefined, 'dia-build-map');
    offBuf = uploadU32(ctx, offsets, 'dia-build-offsets');
    dispatch(ctx, 'index', [offBuf, map], nd, [0, rows]);
  } catch (e) {
    map?.dispose();
    offBuf?.dispose();
    throw e;
  }
  shared.retain();
  const layouts = new Map<string, DiaDeviceLayout>();
  let released = false;
  const source = { ctx, shared, map, offsets };
  return {
    format: 'dia',
    onDevice: true,
    rows,
    cols,
    nnz,
    offsets,
    layout(cap, maxCount) {
      if (released) throw new RangeError('DeviceDiaMatrix.layout: expected a matrix not yet released, got a released one');
      const plan = [...diagonalPlan(rows, cols, offsets, (d) => d * rows, rows * nd, cap, maxCount)];
      // a whole-matrix plan is the same for every cap and maxCount that admit it
      const key = plan.length === 1 && plan[0]!.whole ? 'whole' : `${cap}:${maxCount}`;
      let l = layouts.get(key);
      if (!l) layouts.set(key, (l = buildLayout(source, plan)));
      l.retain();
      return l;
    },
    release() {
      if (released) return;
      released = true;
      for (const l of layouts.values()) l.release();
      layouts.clear();
      map!.dispose();
      offBuf!.dispose();
      shared.release();
    },
  };
}

/**
 * As the host conversion: refuse rows whose columns do not strictly increase. The scatter stores
 * each entry in its slot, so a repeated column would overwrite its twin (a race, not a sum) and
 * the product would be wrong without a word. The upload's validation found the place. O(1).
 */
function refuseUnsorted(shared: SharedCsrUpload): void {
  const u = shared.unsorted;
  if (!u) return;
  const what = u.col === u.prev ? 'a repeated column' : 'unsorted columns';
  throw new InvalidMatrixError(
    'diaFromCsr (device build)',
    `CSR colIdx[${u.entry}] = ${u.col} in row ${u.row} after column ${u.prev}: expected columns sorted and unique within a row, got ${what} (csrFromTriplets sorts and sums repeated entries; the CSR kernels take them as they are)`,
  );
}

/** What a layout build reads: the CSR arrays, the offset → diagonal map, the offsets. */
interface BuildSource {
  readonly ctx: GpuContext;
  readonly shared: SharedCsrUpload;
  readonly map: GpuBuf;
  readonly offsets: Int32Array;
}

/** Upload each piece's table, clear its values and record the scatter of its entries. Refs = 1. */
function buildLayout(src: BuildSource, plan: readonly DiagonalPiecePlan[]): DiaDeviceLayout {
  const { ctx } = src;
  const pieces: DiaDevicePiece[] = [];
  const temps: GpuBuf[] = [];
  const all = (): GpuBuf[] => [...pieces.flatMap((p) => p.arrays), ...temps];
  try {
    for (const p of plan) {
      const tab = uploadU32(ctx, p.tab, 'dia-tab');
      const vals = cleared(ctx, p.slots, 'dia-vals', 0); // the host upload's size, 0 included
      pieces.push({ rows: p.rows, rowBase: p.rowBase, count: p.count, accumulate: p.accumulate, tab: p.tab, arrays: [tab, vals] });
      if (p.count > 0) temps.push(scatterPiece(src, p, vals));
    }
  } catch (e) {
    for (const b of all()) b.dispose();
    throw e;
  }
  let refs = 1;
  return {
    pieces,
    deviceBytes: pieces.reduce((s, p) => s + p.arrays[0].bytes + p.arrays[1].bytes, 0),
    retain() {
      refs++;
    },
    release() {
      // the bases tables stay until the last holder: the scatter that reads them may not have run yet
      if (--refs === 0) for (const b of all()) b.dispose();
    },
  };
}

/**
 * Record the scatter of the entries of piece `p` (rows [rowBase, rowBase + rows), diagonals of
 * its table) into `vals`, over every CSR block holding some of its rows. Returns the bases
 * table it uploaded (slot of the piece's first row per diagonal d0 … d1 − 1; holes, diagonals
 * with no position in these rows, are never read).
 */
function scatterPiece(src: BuildSource, p: DiagonalPiecePlan, vals: GpuBuf): GpuBuf {
  const { ctx, shared, map } = src;
  const d0 = p.diags[0]!;
  const d1 = p.diags[p.count - 1]! + 1;
  const bases = new Int32Array(d1 - d0);
  for (let t = 0; t < p.count; t++) bases[p.diags[t]! - d0] = p.tab[4 * t + 1]!;
  const buf = uploadU32(ctx, bases, 'dia-build-bases');
  const r0 = p.rowBase;
  const r1 = r0 + p.rows;
  for (const b of shared.blocks) {
    const lo = Math.max(r0, b.rowStart);
    const hi = Math.min(r1, b.rowStart + b.rows);
    if (lo >= hi) continue;
    dispatch(ctx, 'scatter', [b.rowPtr, b.colIdx, b.values, map, buf, vals], hi - lo, [b.rowStart, shared.source.rows, lo - b.rowStart, 0, r0, d0, d1]);
  }
  return buf;
}

/**
 * The DIA matrix of host CSR `a` built on the device for one upload: the CSR arrays go up
 * once (float32 values: 12 bytes per non-zero instead of 4 per padded slot), the offsets come
 * from one host counting pass (the caller is synchronous), the values are scattered there.
 * Release it after the upload has taken its layout. Returns a sentence instead when the device
 * build does not apply (the caller then converts on the host).
 * Cost: O(nnz) host reads (offsets, CSR validation, float32 values), O(nnz) device work.
 * @throws InvalidMatrixError for unsorted or repeated columns in a row (as `diaFromCsr`)
 */
export function deviceDiaForUpload(ctx: GpuContext, a: CsrMatrix, maxDiagonals: number, opts: UploadOptions = {}): DeviceDiaMatrix | string {
  const applies = deviceDiaApplies(ctx, a);
  if (applies !== true) return applies;
  const { offsets } = diagonalStats(a);
  checkDiagonalCount('dia', offsets.length, maxDiagonals, a.rows * offsets.length); // before the CSR upload
  const shared = uploadCsrArrays(ctx, a, 'dia build', opts);
  try {
    return deviceDiaWithOffsets(ctx, shared, offsets, maxDiagonals);
  } finally {
    shared.release(); // the DIA matrix holds its own reference
  }
}

/**
 * A `dia` / `dia-tiled` handle on the layout of device matrix `m` for bindings of `cap`
 * elements and `maxCount` diagonals per piece (shared with other handles of the same plan; the
 * handle's dispose releases its hold). `tabs`: each piece's table on the host. O(pieces).
 */
export function deviceDiaHandle(m: DeviceDiaMatrix, kernelId: string, pipeline: PipelineEntry, cap: number, maxCount: number, rowsPerGroup: number): EllDeviceMatrix & { readonly tabs: readonly Int32Array[] } {
  const l = m.layout(cap, maxCount);
  const parts = l.pieces.map((p) => ({ rows: p.rows, rowBase: p.rowBase, count: p.count, accumulate: p.accumulate, groups: Math.ceil(p.rows / rowsPerGroup), arrays: p.arrays }));
  let held = true;
  return {
    kernelId,
    rows: m.rows,
    cols: m.cols,
    nnz: m.nnz,
    deviceBytes: l.deviceBytes,
    blocks: parts.length,
    parts,
    pipeline,
    tabs: l.pieces.map((p) => p.tab),
    dispose() {
      if (held) l.release();
      held = false;
    },
  };
}

/** Kernels whose upload takes a {@link DeviceDiaMatrix} (their layouts are built on the device). */
export const DEVICE_DIA_KERNELS: ReadonlySet<string> = new Set(['dia', 'dia-tiled']);

/**
 * For `gpuOperatorFromCsr`: the DIA matrix of `a` built on the device when `kernel` takes one
 * and the build applies, else undefined (convert on the host). The caller uploads it and then
 * releases it. Throws the host conversion's refusals.
 * @example const m = deviceDiaFor(ctx, diaTiledKernel, a, params); try { up(m ?? diaFromCsr(a)) } finally { m?.release() }
 */
export function deviceDiaFor(ctx: GpuContext, kernel: AnySpmvKernel, a: CsrMatrix, params: Record<string, number>, opts?: UploadOptions): DeviceDiaMatrix | undefined {
  if (!DEVICE_DIA_KERNELS.has(kernel.id)) return undefined;
  const m = deviceDiaForUpload(ctx, a, (kernel.formatParams?.(params).maxDiagonals as number | undefined) ?? DIA_MAX_SLOTS, opts);
  return typeof m === 'string' ? undefined : m;
}
