/**
 * How the AXT kernels avoid float atomics (the CUDA listings 4, 6, 9, 11 atomicAdd into y; WGSL
 * has no float atomics): the product pass writes each partial sum — one per tile (AXTUH1), per
 * tile column (AXTUH), per partition head (AXTCH1, AXTCH) — into a partials buffer `part` at a
 * position fixed by the layout, never into y. A second, small pass then gives each row one
 * owner invocation that adds that row's partials in storage order and stores
 * y[i] = α·Σ + β·y[i]. No two invocations ever write the same word; the sum order is fixed, so
 * results are deterministic run to run.
 *
 * The row's partials are found through a row pointer `ptr` (rows + 1) over partial positions,
 * derived on upload from rwp[] (uncompact) or hdr[] (compacted), which also validates them:
 * - AXTUH1: part[t] per tile, ptr[i] = first tile of row i (G = 1: the row sums part[ptr[i] ..
 *   ptr[i+1]));
 * - AXTUH: part[c] per tile column, likewise;
 * - AXTCH1 / AXTCH: part[k] at the compacted entry index k of each partition head, ptr = the CSR
 *   row pointer; row i's heads are its first entry k0 and every group start (multiple of
 *   G = BS or TH) in (k0, k1), so the row sums part[k0] + Σ part[j·G].
 * @module
 */
import { axtComSlot, axtHdrOffset, axtHdrRow, InvalidMatrixError } from '@gpusparse/formats';
import type { GpuContext } from '../../device/context';
import type { PipelineEntry, PipelineSpec } from '../../device/pipelines';
import type { GpuBuf } from '../../memory/buffers';
import { Uniforms } from '../../memory/recorder';
import { uploadU32 } from '../../memory/upload';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, signature, type WgslBinding } from '../wgsl/index';
import { AX_WG } from './ax-device';

/**
 * Row pointer over the units (tiles or tile columns) of an uncompact layout: `unitRow[u]` is the
 * row of unit u, `used(u)` whether it holds an entry (used units form a prefix; the rest are the
 * all-padding columns at the end of AXTUH's last tile). Cost O(rows + units).
 * @throws InvalidMatrixError when rows decrease, a row is out of range, or a used unit follows an unused one
 */
export function uncRowPointer(rows: number, unitRow: Int32Array, units: number, used: (u: number) => boolean, where: string): Uint32Array {
  const ptr = new Uint32Array(rows + 1);
  let last = 0;
  let end = units;
  for (let u = 0; u < units; u++) {
    if (!used(u)) {
      end = Math.min(end, u);
      continue;
    }
    if (u > end) throw new InvalidMatrixError(where, `unit ${u} holds entries after the empty unit ${end}`);
    const r = unitRow[u]!;
    if (!(r >= last && r < rows)) throw new InvalidMatrixError(where, `rwp[${u}] = ${r}: expected a row in [${last}, ${rows})`);
    last = r;
    ptr[r + 1]!++;
  }
  for (let i = 0; i < rows; i++) ptr[i + 1]! += ptr[i]!;
  return ptr;
}

/**
 * The CSR row pointer of a compacted layout, by walking its partitions (k = compacted entry
 * index, G = BS or TH): a head is due at every group start and after every partition; each
 * head's row must not decrease and its offset must stay inside its group and the nnz entries.
 * Every other non-zero hdr word must keep its offset inside its group too (the AXTCH1 kernel
 * reads scan[i + offset] in workgroup memory). Cost O(rows + slots).
 * @throws InvalidMatrixError naming the slot and row
 */
export function comRowPointer(m: { rows: number; nnz: number; thw: number; th: number; hdr: Uint32Array; offsetBits: number }, group: number, where: string): Uint32Array {
  const { rows, nnz, thw, th, hdr, offsetBits } = m;
  const ptr = new Uint32Array(rows + 1);
  if (nnz > hdr.length) throw new InvalidMatrixError(where, `nnz ${nnz} exceeds the ${hdr.length} slots of hdr[]`);
  // every slot in entry order k: s = axtComSlot(k) stepped as (c, f) = (⌊k/TH⌋, k mod TH), no division per entry
  const mask = 2 ** offsetBits - 1;
  let c = 0;
  let f = 0;
  let q = 0; // k mod group
  for (let k = 0; k < hdr.length; k++) {
    let s = k;
    if (th !== 1) {
      const t = Math.floor(c / thw);
      s = (t * th + f) * thw + (c - t * thw);
      if (++f === th) {
        f = 0;
        c++;
      }
    }
    const h = hdr[s]!;
    if (h !== 0 && q + ((h & mask) >>> 0) >= group) {
      throw new InvalidMatrixError(where, `slot ${s}: hdr offset ${axtHdrOffset(h, offsetBits)} runs past its group of ${group}`);
    }
    if (++q === group) q = 0;
  }
  let last = 0;
  let k = 0;
  while (k < nnz) {
    const s = axtComSlot(k, thw, th);
    const h = hdr[s]!;
    const q = k % group;
    const r = axtHdrRow(h, offsetBits);
    const o = axtHdrOffset(h, offsetBits);
    if (q !== 0 && h === 0) throw new InvalidMatrixError(where, `slot ${s} (entry ${k}): expected a partition head (hdr ≠ 0), got 0`);
    if (!(r >= last && r < rows) || (q !== 0 && k > 0 && r === last)) {
      throw new InvalidMatrixError(where, `slot ${s} (entry ${k}): row ${r} out of order after row ${last} (of ${rows})`);
    }
    if (k + o >= nnz) throw new InvalidMatrixError(where, `row ${r}, slot ${s}: offset ${o} runs past the ${nnz} entries`);
    last = r;
    ptr[r + 1]! += o + 1;
    k += o + 1;
  }
  for (let i = 0; i < rows; i++) ptr[i + 1]! += ptr[i]!;
  return ptr;
}

/** The rows a chunk's combine dispatch owns, and its local row pointer. */
export interface RowRange {
  readonly rowStart: number;
  readonly rows: number;
  /** The first row began in an earlier chunk: accumulate into y (β = 1). */
  readonly cont: boolean;
  /** ptr[rowStart .. rowStart + rows] clamped to [g0, g1) and rebased to g0. */
  readonly localPtr: Uint32Array;
}

/**
 * Split the rows over chunks whose partial positions are [g0_j, g1_j) (consecutive, g0_0 = 0):
 * a row belongs to every chunk its partials meet (the later ones accumulate); an empty row
 * to the chunk holding its position (the last chunk for rows after the last entry), so each
 * row is stored exactly once per chunk it meets, in chunk order. Cost O(rows + chunks).
 * @example chunkRowRanges(Uint32Array.of(0, 3, 3, 8), [[0, 4], [4, 8]]) // rows [0, 3) cont=false; [2, 3) cont=true
 */
export function chunkRowRanges(ptr: Uint32Array, ranges: readonly (readonly [number, number])[]): RowRange[] {
  const rows = ptr.length - 1;
  const out: RowRange[] = [];
  let r0 = 0;
  ranges.forEach(([g0, g1], j) => {
    if (j > 0) while (r0 < rows && ptr[r0 + 1]! <= g0 && ptr[r0]! < g0) r0++;
    let r1 = r0;
    const last = j === ranges.length - 1;
    while (r1 < rows && (last || ptr[r1]! < g1)) r1++;
    const localPtr = new Uint32Array(r1 - r0 + 1);
    for (let i = r0; i <= r1; i++) localPtr[i - r0] = Math.min(Math.max(ptr[i]!, g0), g1) - g0;
    out.push({ rowStart: r0, rows: r1 - r0, cont: r0 < rows && ptr[r0]! < g0, localPtr });
  });
  return out;
}

const COMBINE_BINDINGS: readonly WgslBinding[] = [
  { name: 'ptr', type: 'array<u32>', access: 'r' },
  { name: 'part', type: 'array<f32>', access: 'r' },
  { name: 'y', type: 'array<f32>', access: 'w' },
];

/** The combine pipeline (one invocation per row; the group length G arrives in `u.count`). */
export function combinePipeline(ctx: GpuContext): PipelineEntry {
  return ctx.pipelines.get(combineSpec());
}

/** The combine's pipeline spec (for PipelineCache.prewarm). */
export function combineSpec(): PipelineSpec {
  const text = `${preamble(SPMV_UNIFORMS, COMBINE_BINDINGS)}
${SPMV_STORE}
@compute @workgroup_size(${AX_WG})
fn main(${entryArgs()}) {
  let i = wg_linear(wid, nwg) * ${AX_WG}u + lid;
  if (i >= u.rows) { return; }
  let k0 = ptr[i];
  let k1 = ptr[i + 1u];
  var s = 0.0;
  if (k0 < k1) {
    // the row's first partial, then one at each later group start: part[k0] + Σ part[j·G]
    s = part[k0];
    for (var j = (k0 / u.count + 1u) * u.count; j < k1; j += u.count) { s = s + part[j]; }
  }
  store_y(i, s);
}`;
  return { key: text, label: 'axt-combine', bindings: signature(COMBINE_BINDINGS), wgsl: () => text };
}

/** One chunk's combine state on the device. */
export interface CombinePart extends RowRange {
  readonly ptr: GpuBuf;
  /** The chunk's partials (written by the product pass). */
  readonly part: GpuBuf;
}

/** Upload a chunk's row pointer and allocate its `partials` partial sums. */
export function uploadCombine(ctx: GpuContext, rr: RowRange, partials: number, label: string): CombinePart {
  return { ...rr, ptr: uploadU32(ctx, rr.localPtr, `${label}-ptr`), part: ctx.buffers.acquire(Math.max(1, partials) * 4, undefined, `${label}-part`) };
}

/** Record the combine of one chunk: y[rowStart + i] = α·Σ partials + β·y (β = 1 when continued). */
export function encodeCombine(ctx: GpuContext, pipe: PipelineEntry, c: CombinePart, group: number, y: GpuBuf, alpha: number, beta: number): void {
  const u = new Uniforms();
  u.u[0] = c.rows;
  u.u[1] = c.rowStart;
  u.u[2] = c.cont ? 1 : 0;
  u.f[3] = alpha;
  u.f[4] = beta;
  u.u[5] = group;
  ctx.recorder.dispatch(pipe, [c.ptr, c.part, y], u, Math.ceil(c.rows / AX_WG));
}
