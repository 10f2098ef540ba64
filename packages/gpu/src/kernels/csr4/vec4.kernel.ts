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
import { groupSumMode } from '../wgsl/group';
import { QUAD_KEEP, QUAD_ROW_TAIL, quadColsLoad, quadGather, quadRowHead, quadValues } from '../wgsl/quad';
import { csrVectorsFit } from '../csr/csr-device';
import { encodeQuad, type QuadDeviceMatrix, quadPipelineSpec, quadPrecheck, uploadQuadKernel } from './quad-device';

/** Parameters of {@link csrVec4Kernel}. */
export type CsrVec4Params = { lanes: number; pack: number; workgroupSize: number };

const LANES = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/** WGSL of the kernel: `lanes` per row, vec4 loads, pad mask on the row's last quad. */
function vec4Wgsl(p: CsrVec4Params, caps: GpuCaps): string {
  return `${quadRowHead(p.pack, p.lanes, p.workgroupSize, caps)}
    ${QUAD_KEEP}
    var acc = vec4<f32>(0.0);
    for (var q = q0 + lane; q < q1; q += ${p.lanes}u) {
      ${quadColsLoad('0', 'q')}
      ${quadGather(p.pack, '0')}
      ${quadValues(p.pack, '0', 'q')}
      var prod = v0 * x0;
      if (q + 1u == q1) { prod = select(vec4<f32>(0.0), prod, keep); }
      acc = acc + prod;
    }
    s = (acc.x + acc.y) + (acc.z + acc.w);
  }
${QUAD_ROW_TAIL}`;
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
  precheck: (a, limits, p) => quadPrecheck(a, limits, p.pack),
  wgsl(p, caps) {
    if (!LANES.includes(p.lanes) || p.workgroupSize % p.lanes !== 0) throw new RangeError(`csr-vec4: lanes expected one of ${LANES.join(', ')} dividing ${p.workgroupSize}, got ${p.lanes}`);
    if (![0, 1, 2].includes(p.pack)) throw new RangeError(`csr-vec4: pack expected 0, 1 or 2, got ${p.pack}`);
    return vec4Wgsl(p, caps);
  },
  pipelineSpec(p, caps) {
    return quadPipelineSpec(`${this.id}(lanes=${p.lanes},pack=${p.pack},${groupSumMode(p.lanes, caps)})`, this.wgsl(p, caps), p.pack);
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const spec = this.pipelineSpec!(p, ctx.caps);
    return uploadQuadKernel(ctx, this.id, spec.label, spec.wgsl(), m, p, opts);
  },
  encode: (ctx, h, x, y, scale) => encodeQuad(ctx, h, x, y, scale),
};
