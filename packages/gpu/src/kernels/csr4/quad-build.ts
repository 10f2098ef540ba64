/**
 * The quad-padded CSR layout of csr-vec4 / csr-long (`quad-device.ts`) built on the device from
 * the CSR arrays already there (issue 16): the tuner uploads the matrix once as CSR, and on the
 * H100 the host re-layout of every csr-vec4 / csr-long trial cost 35–150 ms at 0.6–4.7·10^6
 * non-zeros (session 8, bench/RESULTS.md) — more than its product-time gain returns at 10^3
 * products, so the admission refused the kernel that was the exhaustive best on 10 of 21
 * matrices. Here the host does only the O(rows) quad pointers (with each row's pad count in
 * the top two bits, as `quadPointers` and the host pack write them) and one dispatch scatters
 * the entries: one invocation per row copies its `len` values and columns to its quads and
 * fills the pad slots with value 0 and the row's last column.
 *
 * The result is word for word the host upload of `pack` 0 without interleaving (the f32 values
 * were rounded once, at the CSR upload, as the host pack rounds them). Only that mode, and only
 * a matrix whose CSR arrays and padded quads each fit one binding: the other cases keep the
 * host path.
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../../device/context';
import type { PipelineSpec } from '../../device/pipelines';
import type { GpuBuf } from '../../memory/buffers';
import { Uniforms } from '../../memory/recorder';
import { uploadU32 } from '../../memory/upload';
import type { CsrBlockPlan, SharedCsrUpload } from '../csr/csr-device';
import { entryArgs, preamble, signature, type WgslBinding } from '../wgsl/index';

/** Invocations per workgroup of the build. */
const QUAD_BUILD_WG = 256;

const BINDINGS: readonly WgslBinding[] = [
  { name: 'row_ptr', type: 'array<u32>', access: 'r' },
  { name: 'col_idx', type: 'array<u32>', access: 'r' },
  { name: 'values', type: 'array<f32>', access: 'r' },
  { name: 'rowq', type: 'array<u32>', access: 'r' },
  { name: 'qvals', type: 'array<f32>', access: 'w' },
  { name: 'qcols', type: 'array<u32>', access: 'w' },
];

/** Row r's entries to quads rowq[r] … rowq[r + 1] (masked), pads: value 0, the row's last column. */
function quadBuildWgsl(): string {
  return `${preamble([['rows', 'u32']], BINDINGS)}
@compute @workgroup_size(${QUAD_BUILD_WG})
fn main(${entryArgs()}) {
  let r = wg_linear(wid, nwg) * ${QUAD_BUILD_WG}u + lid;
  if (r >= u.rows) { return; }
  let s = row_ptr[r];
  let len = row_ptr[r + 1u] - s;
  let e0 = 4u * (rowq[r] & 0x3fffffffu);
  let e1 = 4u * (rowq[r + 1u] & 0x3fffffffu);
  var pad = 0u;
  if (len > 0u) { pad = col_idx[s + len - 1u]; }
  for (var e = e0; e < e1; e++) {
    let j = e - e0;
    if (j < len) {
      qvals[e] = values[s + j];
      qcols[e] = col_idx[s + j];
    } else {
      qvals[e] = 0.0;
      qcols[e] = pad;
    }
  }
}`;
}

const SPEC: PipelineSpec = (() => {
  const text = quadBuildWgsl();
  return { key: text, label: 'quad-build', bindings: signature(BINDINGS), wgsl: () => text };
})();

/** The build's pipeline (for PipelineCache.prewarm). */
export const quadBuildSpec = (): PipelineSpec => SPEC;

/**
 * The block-local quad pointers of a one-block layout: word r + 1 is the end quad of row r with
 * the row's pad count ((4 − len mod 4) mod 4, non-empty rows) in the top two bits; word 0 is 0.
 * O(rows).
 */
export function quadRowWords(a: CsrMatrix, q: Int32Array): Uint32Array {
  const w = new Uint32Array(a.rows + 1);
  for (let r = 0; r < a.rows; r++) {
    const len = a.rowPtr[r + 1]! - a.rowPtr[r]!;
    w[r + 1] = (q[r + 1]! | (len > 0 ? ((4 - (len % 4)) % 4) << 30 : 0)) >>> 0;
  }
  return w;
}

/**
 * Whether the quads of `a` (`plan`: its quad-aligned split) can be built on the device from
 * `shared`: its arrays are `a`'s, in one block, the layout is one block too, and it holds at
 * least one quad. O(1).
 */
export function quadBuildApplies(shared: SharedCsrUpload | undefined, a: CsrMatrix, plan: readonly CsrBlockPlan[]): shared is SharedCsrUpload {
  return shared !== undefined && shared.blocks.length === 1 && shared.isSourceOf(a) && plan.length === 1 && plan[0]!.k1 > plan[0]!.k0;
}

/** The device arrays of a one-block quad layout built from `shared` (recorded, not waited for). */
export interface BuiltQuads {
  readonly rowQuad: GpuBuf;
  readonly values: GpuBuf;
  readonly cols: GpuBuf;
}

/** The quads built from one shared CSR upload, and how many device matrices hold them. */
interface HeldQuads {
  readonly quads: BuiltQuads;
  holders: number;
}

/**
 * The quads built from each shared CSR upload while some device matrix holds them: csr-vec4 and
 * csr-long (every lanes / unroll / stage variant, pack 0, not interleaved) read the same layout,
 * so the tuner builds it once per matrix — on the session-10 H100 run both kernels built it, 62 +
 * 56 ms on the first matrix of the process. Weak keys: an upload dropped drops its entry.
 */
const held = new WeakMap<SharedCsrUpload, HeldQuads>();

/** A hold on the quads of one shared CSR upload: `release` once (the last frees the buffers). */
export interface QuadsHold {
  readonly quads: BuiltQuads;
  /** True when this call built them (false: another kernel's upload had, and still holds them). */
  readonly fresh: boolean;
  release(): void;
}

/**
 * The pack-0, non-interleaved quads of `a` from `shared`, built once and shared by every quad
 * kernel's upload while one holds them (reference-counted; see {@link buildQuadsOnDevice}). The
 * layout depends on the matrix only (quad pointers `q`, computed by the caller), never on the
 * kernel's parameters. O(1) when held, else as {@link buildQuadsOnDevice}.
 * @example const h = holdQuadsOnDevice(ctx, shared, a, quadPointers(a)); … h.release();
 */
export function holdQuadsOnDevice(ctx: GpuContext, shared: SharedCsrUpload, a: CsrMatrix, q: Int32Array): QuadsHold {
  let h = held.get(shared);
  const fresh = h === undefined;
  if (!h) held.set(shared, (h = { quads: buildQuadsOnDevice(ctx, shared, a, q, 'quads'), holders: 0 }));
  h.holders++;
  const entry = h;
  let released = false;
  return {
    quads: entry.quads,
    fresh,
    release() {
      if (released) return;
      released = true;
      if (--entry.holders > 0) return;
      if (held.get(shared) === entry) held.delete(shared);
      for (const b of [entry.quads.rowQuad, entry.quads.values, entry.quads.cols]) b.dispose();
    },
  };
}

/**
 * Build the pack-0, non-interleaved quad layout of `a` (quad pointers `q`) from its shared CSR
 * arrays: one O(rows) host pass, an upload of 4·(rows + 1) bytes, one dispatch. Check
 * {@link quadBuildApplies} first; {@link holdQuadsOnDevice} shares the result between kernels.
 * Cost on the device: one read of the CSR arrays, one write of 32 bytes per quad.
 * @example const b = buildQuadsOnDevice(ctx, shared, a, quadPointers(a), 'csr-vec4');
 */
export function buildQuadsOnDevice(ctx: GpuContext, shared: SharedCsrUpload, a: CsrMatrix, q: Int32Array, kernelId: string): BuiltQuads {
  const nq = q[a.rows]!;
  const src = shared.blocks[0]!;
  const rowQuad = uploadU32(ctx, quadRowWords(a, q), `${kernelId}-rowquad`);
  const values = ctx.buffers.acquire(16 * nq, undefined, `${kernelId}-values`);
  const cols = ctx.buffers.acquire(16 * nq, undefined, `${kernelId}-cols`);
  try {
    const u = new Uniforms();
    u.u[0] = a.rows;
    ctx.recorder.dispatch(ctx.pipelines.get(SPEC), [src.rowPtr, src.colIdx, src.values, rowQuad, values, cols], u, Math.ceil(a.rows / QUAD_BUILD_WG));
  } catch (e) {
    for (const b of [rowQuad, values, cols]) b.dispose();
    throw e;
  }
  // the CSR arrays are read by a dispatch still to run: held until the queue has done it, so
  // that a release by their owner cannot hand them to a pool user who writes them first
  shared.retain();
  ctx.recorder.flush();
  const done = () => shared.release();
  ctx.device.queue.onSubmittedWorkDone().then(done, done);
  return { rowQuad, values, cols };
}
