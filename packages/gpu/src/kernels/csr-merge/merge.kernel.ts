/**
 * Merge-path CSR kernel for irregular (power-law) rows (issue 20), after Merrill & Garland's
 * merge-based CSR SpMV: every workgroup takes about the same number of items (entries + row
 * ends), so that a row of 20 000 entries next to rows of 2 costs no workgroup more than the
 * others. Why: on the H100 (session 11, steady clock) the best kernel on the bench set's power-law
 * matrix (2·10^6 rows, 2…20 000 entries per row) was csr-adaptive at 0.91× cuSPARSE; csr-adaptive
 * gives a row longer than its block one workgroup that walks it with one load chain per
 * invocation (78 dependent steps for 20 000 entries), and its short-row blocks hold ≤ 1 024
 * entries, one entry in flight per invocation per step.
 *
 * The plan (merge-plan.ts) cuts the rows into tiles of ≤ perThread·W items ending on row ends, and
 * long-row units (rows of ≥ perThread·W / 2 entries) dispatched first. A tile stages its products
 * (perThread coalesced loads in flight per invocation) and row ends in workgroup memory; each
 * invocation finds its perThread items by a merge-path search and sums them; the invocations'
 * trailing partial sums meet in a segmented block scan. A long-row unit is reduced by the whole
 * workgroup with up to 8 loads in flight per invocation. Rows longer than chunkTiles·perThread·W
 * entries are cut into units whose partial sums a second dispatch adds in a fixed order.
 * No float atomics; each row is stored once per dispatch.
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuLimits } from '../../device/context';
import type { PipelineEntry, PipelineSpec } from '../../device/pipelines';
import type { GpuBuf } from '../../memory/buffers';
import { blockUniforms, type CsrDeviceMatrix, csrVectorsFit, uploadCsr } from '../csr/csr-device';
import type { SpmvKernel, SpmvScale } from '../types';
import { signature } from '../wgsl/index';
import { blockScanUsesSubgroups } from '../wgsl/scan';
import { mergeTable, planMerge } from './merge-plan';
import { FIXUP_BINDINGS, MERGE_BINDINGS, mergeFixupWgsl, mergeMainWgsl, mergeWorkgroupBytes, tileRows } from './merge-wgsl';

/** Parameters of {@link csrMergeKernel}. */
export type CsrMergeParams = { perThread: number; workgroupSize: number; chunkTiles: number; unrolled: number; scan: number };

/** What one binding block adds to the shared CSR arrays: the plan's counts and the carry slots. */
interface MergeBlock {
  readonly units: number;
  readonly tiles: number;
  readonly segments: number;
  readonly tileOffset: number;
  readonly fixOffset: number;
  readonly carries: GpuBuf;
}

/** A CSR matrix on the device for csr-merge: the CSR handle plus each block's plan counts and carry slots. */
export interface MergeDeviceMatrix extends CsrDeviceMatrix {
  readonly merge: readonly MergeBlock[];
  readonly fixup: PipelineEntry;
}

const PER_THREAD = [4, 8, 12, 16];
const UNROLLED_DOC =
  '1: the merge-path search and the items of an invocation written out step by step (no loop: with robustness on Tint gives every loop an iteration guard, bench/RESULTS.md session 11); 0: loops';
const SCAN_DOC =
  'carries between a tile’s invocations: 0 the workgroup-memory segmented scan (2·log2 W barriers); 1 a subgroup segmented scan (2 barriers; where subgroups are usable — contiguous, one size — else 0’s)';
const WORKGROUP = [128, 256];

/** The fix-up pass's pipeline (one for every variant). */
function fixupSpec(): PipelineSpec {
  const text = mergeFixupWgsl();
  return { key: text, label: 'csr-merge-fixup', bindings: signature(FIXUP_BINDINGS), wgsl: () => text };
}

/** True, or why `p` cannot run on a device with `limits` (declared values, workgroup memory). */
function checkParams(p: CsrMergeParams, limits?: GpuLimits): true | string {
  if (!PER_THREAD.includes(p.perThread)) return `perThread expected one of ${PER_THREAD.join(', ')}, got ${p.perThread}`;
  if (!WORKGROUP.includes(p.workgroupSize)) return `workgroupSize expected one of ${WORKGROUP.join(', ')}, got ${p.workgroupSize}`;
  if (!(Number.isInteger(p.chunkTiles) && p.chunkTiles >= 1)) return `chunkTiles expected an integer ≥ 1, got ${p.chunkTiles}`;
  if (p.unrolled !== 0 && p.unrolled !== 1) return `unrolled expected 0 or 1, got ${p.unrolled}`;
  if (p.scan !== 0 && p.scan !== 1) return `scan expected 0 or 1, got ${p.scan}`;
  const need = mergeWorkgroupBytes(p.perThread, p.workgroupSize);
  if (limits && need > limits.maxComputeWorkgroupStorageSize) return `perThread ${p.perThread} × workgroupSize ${p.workgroupSize} needs ${need} bytes of workgroup memory, more than the device's ${limits.maxComputeWorkgroupStorageSize}`;
  return true;
}

/** Record y = alpha·A·x + beta·y: per binding block the main pass, then the fix-up pass when a row was cut. */
function encodeMerge(ctx: Parameters<SpmvKernel['encode']>[0], h: MergeDeviceMatrix, x: GpuBuf, y: GpuBuf, scale: SpmvScale = { alpha: 1, beta: 0 }): void {
  h.parts.forEach((p, i) => {
    const m = h.merge[i]!;
    const u = blockUniforms(p, scale, m.units);
    u.u[6] = m.tiles;
    u.u[7] = m.tileOffset;
    u.u[8] = m.fixOffset;
    ctx.recorder.dispatch(h.pipeline, [p.rowPtr, p.colIdx, p.values, x, y, p.extra!, m.carries], u, m.units + m.tiles);
    if (m.segments === 0) return;
    const f = blockUniforms(p, scale, m.segments);
    f.u[6] = m.tiles;
    f.u[7] = m.tileOffset;
    f.u[8] = m.fixOffset;
    ctx.recorder.dispatch(h.fixup, [m.carries, p.extra!, y], f, m.segments);
  });
}

/**
 * Merge-path CSR SpMV. Cost per apply: one dispatch per binding block (two when a row is longer
 * than chunkTiles·perThread·workgroupSize entries), about (rows + nnz) / (perThread·workgroupSize)
 * workgroups; matrix traffic 8·nnz + 4·rows (the shared CSR arrays, no conversion) plus the plan
 * table (2 words per tile, 4 per long row); host planning O(rows) at upload.
 * @example const h = csrMergeKernel.upload(ctx, a, { perThread: 4, workgroupSize: 128 });
 */
export const csrMergeKernel: SpmvKernel<CsrMatrix, CsrMergeParams, MergeDeviceMatrix> = {
  id: 'csr-merge',
  format: 'csr',
  title: 'CSR merge-path (Merrill & Garland): equal items (entries + row ends) per invocation in row-aligned tiles, long rows first as whole-workgroup units, rows past a cap cut into units summed by an ordered fix-up pass',
  params: {
    perThread: { description: 'merge items per invocation in a tile (tile = perThread·workgroupSize items; also the loads in flight of a long-row unit, at most 8)', values: PER_THREAD },
    workgroupSize: { description: 'invocations per workgroup (128 or 256)', values: WORKGROUP },
    unrolled: { description: UNROLLED_DOC, values: [1, 0] },
    scan: { description: SCAN_DOC, values: [0, 1] },
    chunkTiles: { description: 'longest row one workgroup reduces, in tiles of perThread·workgroupSize entries; longer rows are cut into units of that many entries whose partial sums a second dispatch adds (1: every row longer than a tile is cut)', values: [16, 1] },
  },
  // the H100's best on the bench power law (session 12: 0.210 ms, cuSPARSE 0.230–0.248 ms)
  defaults: { perThread: 4, workgroupSize: 128, chunkTiles: 16, unrolled: 1, scan: 0 },
  supports(m, limits, params) {
    const ok = checkParams({ ...this.defaults, ...params }, limits);
    return ok === true ? csrVectorsFit(m, limits.maxStorageBufferBindingSize) : `csr-merge: ${ok}`;
  },
  wgsl(p, caps) {
    const ok = checkParams(p);
    if (ok !== true) throw new RangeError(`csr-merge: ${ok}`);
    return mergeMainWgsl(p.perThread, p.workgroupSize, p.unrolled === 1, p.scan === 1 && blockScanUsesSubgroups(caps));
  },
  pipelineSpec(p, caps) {
    const text = this.wgsl(p, caps);
    return { key: text, label: `${this.id}(perThread=${p.perThread},wg=${p.workgroupSize},unrolled=${p.unrolled},scan=${p.scan})`, bindings: signature(MERGE_BINDINGS), wgsl: () => text };
  },
  // the fix-up pass: compiled by every upload (a plan may cut a row), ahead of time by the tuner
  uploadSpecs: () => [fixupSpec()],
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    const fixup = ctx.pipelines.get(fixupSpec());
    const items = p.perThread * p.workgroupSize;
    const shape = { tileItems: items, tileRows: tileRows(p.perThread, p.workgroupSize), longMin: items / 2, chunkMax: p.chunkTiles * items };
    const plans: { units: number; tiles: number; segments: number; tileOffset: number; fixOffset: number; slots: number }[] = [];
    const h = uploadCsr(
      ctx,
      this.id,
      m,
      pipe,
      (rp, rows) => {
        const plan = planMerge(rp, rows, shape);
        const t = mergeTable(plan);
        const counts = { units: plan.units.length / 4, tiles: plan.tiles.length / 2, segments: plan.segments.length / 3 };
        plans.push({ ...counts, tileOffset: t.tileOffset, fixOffset: t.fixOffset, slots: plan.slots });
        return { groups: counts.units + counts.tiles, count: counts.units, extra: t.table };
      },
      opts,
    );
    const merge: MergeBlock[] = [];
    try {
      for (const q of plans) merge.push({ ...q, carries: ctx.buffers.acquire(Math.max(1, q.slots) * 4, undefined, `${this.id}-carries`) });
    } catch (e) {
      for (const b of merge) b.carries.dispose();
      h.dispose();
      throw e;
    }
    const carryBytes = merge.reduce((s, b) => s + b.carries.bytes, 0);
    return {
      ...h,
      deviceBytes: h.deviceBytes + carryBytes,
      merge,
      fixup,
      dispose() {
        for (const b of merge) b.carries.dispose();
        h.dispose();
      },
    };
  },
  encode: (ctx, h, x, y, scale) => encodeMerge(ctx, h, x, y, scale),
};
