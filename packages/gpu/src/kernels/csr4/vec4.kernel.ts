/**
 * CSR vec4 kernel for long rows (CI Hamiltonians of ~10^3 entries per row, uniform random rows
 * of tens): rows padded to quads at upload ({@link uploadQuad}), `lanes` invocations per row,
 * each loading a quad of values as one vec4<f32> and its four columns as one vec4<u32> — or,
 * with `pack` = 1, as one vec2<u32> of four 16-bit offsets from the row's smallest column (6
 * instead of 8 bytes per entry, for matrices whose rows span < 2^16 columns, e.g. every CI
 * Hamiltonian of ≤ 65 536 determinants and every stencil); `pack` = 2 also replaces the values
 * by 16-bit indices into the matrix's table of distinct values (CSR-VI's value indexing: 4 bytes
 * per entry, for matrices of ≤ 65 536 distinct values, e.g. CI Hamiltonians, whose entries are a
 * few thousand integral combinations). Four independent x gathers per
 * load; the lane group's partial sums are combined by the widest reduction the device has
 * ({@link groupSum}: subgroupAdd, shuffles, or workgroup memory).
 *
 * No float atomics: lane 0 of a row's group alone stores y[r]; the pad entries of a row's last
 * quad are masked to 0 before they are added (their column is one of the row's own).
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuCaps } from '../../device/context';
import type { SpmvKernel } from '../types';
import { groupSum, groupSumMode, groupSumNeedsSubgroups } from '../wgsl/group';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, signature } from '../wgsl/index';
import { laneRow } from '../wgsl/lanes';
import { csrVectorsFit } from '../csr/csr-device';
import { distinctValuesFit16, encodeQuad, QUAD_MASK, type QuadDeviceMatrix, quadBindings, rowSpansFit16, uploadQuad } from './quad-device';

/** Parameters of {@link csrVec4Kernel}. */
export type CsrVec4Params = { lanes: number; pack: number; workgroupSize: number };

const LANES = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/** The x gathers of one quad `q` of the current row (u32 or 16-bit packed columns). */
function gather(pack: number): string {
  if (pack === 0) return `let c = cols[q];
      let xv = vec4<f32>(x[c.x], x[c.y], x[c.z], x[c.w]);`;
  return `let c = cols[q];
      let xv = vec4<f32>(x[b + (c.x & 0xffffu)], x[b + (c.x >> 16u)], x[b + (c.y & 0xffffu)], x[b + (c.y >> 16u)]);`;
}

/** The values of quad `q` (f32, or 16-bit indices into the value table). */
function quadValues(pack: number): string {
  if (pack !== 2) return 'let v = vals[q];';
  return `let vi = vals[q];
      let v = vec4<f32>(vtab[vi.x & 0xffffu], vtab[vi.x >> 16u], vtab[vi.y & 0xffffu], vtab[vi.y >> 16u]);`;
}

/** WGSL of the kernel: `lanes` per row, vec4 loads, pad mask on the row's last quad. */
function vec4Wgsl(p: CsrVec4Params, caps: GpuCaps): string {
  const { lanes, workgroupSize: wg } = p;
  const mode = groupSumMode(lanes, caps);
  return `${preamble(SPMV_UNIFORMS, quadBindings(p.pack), { subgroups: groupSumNeedsSubgroups(mode) })}
${SPMV_STORE}
${groupSum('red', lanes, wg, caps)}
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  ${laneRow(lanes, wg)}
  let r = row;
  var s = 0.0;
  if (r < u.rows) {
    let q0 = rowq[r] & ${QUAD_MASK}u;
    let e = rowq[r + 1u];
    let q1 = e & ${QUAD_MASK}u;
    let keep = vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(4u - (e >> 30u));
    ${p.pack >= 1 ? 'let b = rbase[r];' : ''}
    var acc = vec4<f32>(0.0);
    for (var q = q0 + lane; q < q1; q += ${lanes}u) {
      ${gather(p.pack)}
      ${quadValues(p.pack)}
      var prod = v * xv;
      if (q + 1u == q1) { prod = select(vec4<f32>(0.0), prod, keep); }
      acc = acc + prod;
    }
    s = (acc.x + acc.y) + (acc.z + acc.w);
  }
  let t = red_group(lid, s);
  if (r < u.rows && lane == 0u) { store_y(r, t); }
}`;
}

/**
 * Lanes-per-row CSR SpMV over quad-padded rows with vector loads. Cost per apply: one
 * dispatch per binding block; 8 (pack 1: 6, pack 2: 4) bytes per padded entry + 4 (8) per row of
 * matrix traffic plus the x gathers; padding ≤ 3 entries per row.
 * @example const h = csrVec4Kernel.upload(ctx, a, { lanes: 32, pack: 1 });
 */
export const csrVec4Kernel: SpmvKernel<CsrMatrix, CsrVec4Params, QuadDeviceMatrix> = {
  id: 'csr-vec4',
  format: 'csr',
  title: 'CSR vec4: rows padded to quads, lanes per row with vec4 value/column loads (optionally 16-bit columns) and subgroup reduction',
  params: {
    lanes: { description: 'invocations per row (power of two 1..256; a row of n entries gives each lane ⌈n/4/lanes⌉ quads)', values: [8, 1, 2, 4, 16, 32, 64] },
    pack: {
      description: '0: f32 values and u32 columns (8 bytes per entry); 1: 16-bit column offsets from each row’s smallest column (6 bytes; rows must span < 65 536 columns); 2: 16-bit column offsets and 16-bit indices into the table of distinct values (4 bytes; also ≤ 65 536 distinct values)',
      values: [0, 1, 2],
    },
    workgroupSize: { description: 'invocations per workgroup', values: [256] },
  },
  defaults: { lanes: 8, pack: 0, workgroupSize: 256 },
  supports: (m, limits) => csrVectorsFit(m, limits.maxStorageBufferBindingSize),
  precheck(a, limits, p) {
    const fit = csrVectorsFit(a, limits.maxStorageBufferBindingSize);
    if (fit !== true || p.pack === 0) return fit;
    const span = rowSpansFit16(a);
    return span !== true || p.pack !== 2 ? span : distinctValuesFit16(a);
  },
  wgsl(p, caps) {
    if (!LANES.includes(p.lanes) || p.workgroupSize % p.lanes !== 0) throw new RangeError(`csr-vec4: lanes expected one of ${LANES.join(', ')} dividing ${p.workgroupSize}, got ${p.lanes}`);
    if (![0, 1, 2].includes(p.pack)) throw new RangeError(`csr-vec4: pack expected 0, 1 or 2, got ${p.pack}`);
    return vec4Wgsl(p, caps);
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const text = this.wgsl(p, ctx.caps);
    const label = `${this.id}(lanes=${p.lanes},pack=${p.pack},${groupSumMode(p.lanes, ctx.caps)})`;
    const pipe = ctx.pipelines.get({ key: text, label, bindings: signature(quadBindings(p.pack)), wgsl: () => text });
    const rowsPerGroup = p.workgroupSize / p.lanes;
    return uploadQuad(ctx, this.id, m, p.pack, pipe, (rows) => Math.ceil(rows / rowsPerGroup), opts);
  },
  encode: (ctx, h, x, y, scale) => encodeQuad(ctx, h, x, y, scale),
};
