/**
 * CSR kernel for long rows (CI Hamiltonians: ~10^3 entries per row), aimed at memory bandwidth:
 * the quad-padded arrays of csr-vec4 ({@link uploadQuad}; u32 or 16-bit packed columns, f32
 * values or 16-bit value-table indices), `lanes` invocations per row, and each invocation keeps
 * `unroll` quads in flight: the column words and values of quads q, q + lanes, …,
 * q + (unroll − 1)·lanes are loaded first, then their 4·unroll x gathers, then the products go to
 * `unroll` separate accumulators (no dependence between the quads of one step). csr-vec4 has one
 * quad in flight per invocation; on the H100 it moved 30–45 % of copy bandwidth on CI rows,
 * where a stencil kernel rose from 17 % to 40 % by keeping several independent loads in flight.
 *
 * lanes = 256 gives the whole workgroup to one row (rows of thousands of entries); the lane
 * group's sums are combined by {@link groupSum} (subgroupAdd / shuffles / workgroup memory, from
 * the device's subgroup size). Only the row's last quad can hold pads: the unrolled and single
 * steps stop before it and the one invocation that owns it adds it masked (0·Inf never enters).
 * @module
 */
import type { CsrMatrix } from '@gpusparse/formats';
import type { GpuCaps } from '../../device/context';
import type { SpmvKernel } from '../types';
import { csrVectorsFit } from '../csr/csr-device';
import { encodeQuad, type QuadDeviceMatrix, quadPipelineSpec, quadPrecheck, uploadQuadKernel } from '../csr4/quad-device';
import { groupSumMode } from '../wgsl/group';
import { QUAD_KEEP, QUAD_ROW_TAIL, quadColsLoad, quadGather, quadRowHead, quadValues } from '../wgsl/quad';

/** Parameters of {@link csrLongKernel}. */
export type CsrLongParams = { lanes: number; unroll: number; pack: number; interleave: number; stage: number; workgroupSize: number };

const LANES = [4, 8, 16, 32, 64, 128, 256];
const UNROLL = [1, 2, 3, 4, 6, 8];
const STAGE = [0, 2048, 4096, 6144, 8192, 10240];

/** Workgroup-memory bytes of the kernel: the staged x prefix plus the reduction's array (at most one float per invocation). */
const sharedBytes = (p: CsrLongParams): number => 4 * p.stage + 4 * p.workgroupSize;

/**
 * The staged x prefix (seed 001's Reference region: the first determinants, which most rows of a
 * CI Hamiltonian touch): x[0 … stage) copied to workgroup memory once per workgroup, and `gx(c)`
 * reading it there below `stage`, from x above.
 */
function stageText(stage: number, workgroupSize: number): { decls: string; prologue: string; read: (c: string) => string } {
  if (stage === 0) return { decls: '', prologue: '', read: (c) => `x[${c}]` };
  return {
    decls: `var<workgroup> xs: array<f32, ${stage}>;
fn gx(c: u32) -> f32 {
  if (c < ${stage}u) { return xs[c]; }
  return x[c];
}`,
    prologue: `let nstage = min(${stage}u, arrayLength(&x));
  for (var i = lid; i < nstage; i += ${workgroupSize}u) { xs[i] = x[i]; }
  workgroupBarrier();`,
    read: (c) => `gx(${c})`,
  };
}

/** One unrolled step: every load of `n` quads at q + i·lanes, then the gathers, then the sums. */
function unrolledStep(pack: number, n: number, lanes: number, read: (c: string) => string): string {
  const ix = Array.from({ length: n }, (_, i) => i);
  const at = (i: number) => (i === 0 ? 'q' : `q + ${i * lanes}u`);
  return [
    ...ix.map((i) => quadColsLoad(`${i}`, at(i))),
    ...ix.map((i) => quadValues(pack, `${i}`, at(i))),
    ...ix.map((i) => quadGather(pack, `${i}`, read)),
    ...ix.map((i) => `a${i} = fma(v${i}, x${i}, a${i});`),
  ].join('\n      ');
}

/** WGSL of the kernel for `p` on a device with `caps`. */
function longWgsl(p: CsrLongParams, caps: GpuCaps): string {
  const { lanes, unroll: n } = p;
  const accs = Array.from({ length: n }, (_, i) => `a${i}`);
  // pairwise sum of the accumulators: a fixed order, so results repeat on one device
  let tree = accs;
  while (tree.length > 1) tree = Array.from({ length: Math.ceil(tree.length / 2) }, (_, i) => (tree[2 * i + 1] ? `(${tree[2 * i]} + ${tree[2 * i + 1]})` : tree[2 * i]!));
  const st = stageText(p.stage, p.workgroupSize);
  return `${quadRowHead(p.pack, lanes, p.workgroupSize, caps, st)}
    let has = q1 > q0;
    let qe = select(q0, q1 - 1u, has); // the last quad: the only one that may hold pads
    ${accs.map((a) => `var ${a} = vec4<f32>(0.0);`).join(' ')}
    var q = q0 + lane;
    for (; q + ${(n - 1) * lanes}u < qe; q += ${n * lanes}u) {
      ${unrolledStep(p.pack, n, lanes, st.read)}
    }
    for (; q < qe; q += ${lanes}u) {
      ${unrolledStep(p.pack, 1, lanes, st.read)}
    }
    if (has && q == qe) {
      ${QUAD_KEEP}
      ${quadColsLoad('L', 'q')}
      ${quadValues(p.pack, 'L', 'q')}
      ${quadGather(p.pack, 'L', st.read)}
      a0 = a0 + select(vec4<f32>(0.0), vL * xL, keep);
    }
    let acc = ${tree[0]};
    s = (acc.x + acc.y) + (acc.z + acc.w);
  }
${QUAD_ROW_TAIL}`;
}

/** Why `p.stage` does not fit the device's workgroup memory. */
function stageMessage(p: CsrLongParams, max: number): string {
  return `csr-long: stage ${p.stage} needs ${sharedBytes(p)} bytes of workgroup memory, the device has ${max}: use a smaller stage`;
}

/**
 * Long-row CSR SpMV: lanes per row over quad-padded rows, `unroll` independent quads in flight
 * per invocation. Cost per apply: one dispatch per binding block; 8 (pack 1: 6, pack 2: 4) bytes
 * per padded entry + 4 (8) per row of matrix traffic plus the x gathers; padding ≤ 3 entries per
 * row; host padding O(rows + nnz) at upload (the same arrays as csr-vec4).
 * @example const h = csrLongKernel.upload(ctx, a, { lanes: 16, unroll: 4, pack: 1 });
 */
export const csrLongKernel: SpmvKernel<CsrMatrix, CsrLongParams, QuadDeviceMatrix> = {
  id: 'csr-long',
  format: 'csr',
  title: 'CSR long rows: quad-padded rows, lanes per row, each invocation loading `unroll` independent quads (vec4 values, 32- or 16-bit columns) before their gathers, subgroup reduction',
  params: {
    lanes: { description: 'invocations per row (4..256, a power of two; 256 = the whole workgroup on one row)', values: [16, 8, 32, 64, 256] },
    unroll: { description: 'quads each invocation loads before using them (1..8; separate accumulators)', values: [4, 2, 8] },
    pack: {
      description: '0: f32 values, u32 columns (8 bytes per entry); 1: 16-bit column offsets from each row’s smallest column (6 bytes; rows spanning < 65 536 columns); 2: also 16-bit value-table indices (4 bytes; ≤ 65 536 distinct values)',
      values: [0, 1, 2],
    },
    interleave: {
      description: '0: each lane’s quad holds 4 consecutive entries of the row; 1: in each full block of 4·lanes entries lane l’s quad holds entries l, l + lanes, l + 2·lanes, l + 3·lanes, so one gather instruction of the lane group reads x at consecutive entries (sorted columns: fewer cache lines per gather); an upload layout, same shader',
      values: [0, 1],
    },
    stage: {
      description: 'x entries 0 … stage − 1 staged in workgroup memory once per workgroup and gathered from there (seed 001’s Reference region: the first determinants, touched by most rows); 0: none; 2048–10240 in steps of 2048 (the device’s workgroup memory must hold 4·stage + 4·workgroupSize bytes)',
      values: [0, 4096],
    },
    workgroupSize: { description: 'invocations per workgroup', values: [256] },
  },
  defaults: { lanes: 16, unroll: 4, pack: 0, interleave: 0, stage: 0, workgroupSize: 256 },
  supports: (m, limits, p) => (p && sharedBytes(p) > limits.maxComputeWorkgroupStorageSize ? stageMessage(p, limits.maxComputeWorkgroupStorageSize) : csrVectorsFit(m, limits.maxStorageBufferBindingSize)),
  precheck: (a, limits, p) => (sharedBytes(p) > limits.maxComputeWorkgroupStorageSize ? stageMessage(p, limits.maxComputeWorkgroupStorageSize) : quadPrecheck(a, limits, p.pack)),
  wgsl(p, caps) {
    if (!LANES.includes(p.lanes) || p.workgroupSize % p.lanes !== 0) throw new RangeError(`csr-long: lanes expected one of ${LANES.join(', ')} dividing ${p.workgroupSize}, got ${p.lanes}`);
    if (!UNROLL.includes(p.unroll)) throw new RangeError(`csr-long: unroll expected one of ${UNROLL.join(', ')}, got ${p.unroll}`);
    if (![0, 1, 2].includes(p.pack)) throw new RangeError(`csr-long: pack expected 0, 1 or 2, got ${p.pack}`);
    if (![0, 1].includes(p.interleave)) throw new RangeError(`csr-long: interleave expected 0 or 1, got ${p.interleave}`);
    if (!STAGE.includes(p.stage)) throw new RangeError(`csr-long: stage expected one of ${STAGE.join(', ')}, got ${p.stage}`);
    return longWgsl(p, caps);
  },
  pipelineSpec(p, caps) {
    return quadPipelineSpec(`${this.id}(lanes=${p.lanes},unroll=${p.unroll},pack=${p.pack},stage=${p.stage},${groupSumMode(p.lanes, caps)})`, this.wgsl(p, caps), p.pack);
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const spec = this.pipelineSpec!(p, ctx.caps);
    return uploadQuadKernel(ctx, this.id, spec.label, spec.wgsl(), m, p, opts);
  },
  encode: (ctx, h, x, y, scale) => encodeQuad(ctx, h, x, y, scale),
};
