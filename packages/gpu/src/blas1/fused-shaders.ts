/**
 * WGSL of the fused multi-vector BLAS-1 kernels used by Krylov orthogonalisation:
 * `combine` (y = β·y + Σ_j c_j·x_j over up to {@link FUSED_G} vectors per dispatch) and the
 * two stages of `multiDot` (up to {@link FUSED_G} dot products sharing one read of y).
 * Both use the same per-invocation and tree orders as the single-vector kernels of
 * `shaders.ts`, so a one-vector multiDot equals dot bit for bit.
 * @module
 */
import { entryArgs, preamble, SCALAR_OPERAND, type WgslBinding, workgroupSum } from '../kernels/wgsl/index';
import type { ColumnLoops } from './loops';
import { DOT_CHUNK, DOT_ITEMS, elementKernelWgsl, f32arr, everyGroupShare, groupRowSum, WG } from './shaders';

/**
 * Vectors per fused dispatch within WebGPU's default limit of 8 storage buffers per stage
 * (combine: scalars + G x's + y; multiDot stage 1: y + G x's + partials).
 */
export const FUSED_G = 6;

/** Largest group: 5 + 3·G uniform words of combine must fit the 64-word block. */
export const FUSED_G_MAX = 14;

/**
 * Vectors per fused dispatch on a device with `maxStorageBuffers` storage buffers per shader
 * stage: that minus the two other bindings, at most {@link FUSED_G_MAX} (NVIDIA through Dawn:
 * 16 → 14, so a 30-vector Gram–Schmidt pass takes 3 dispatches instead of 5).
 * @example fusedGroup(8) // 6
 */
export function fusedGroup(maxStorageBuffers: number): number {
  return Math.max(1, Math.min(FUSED_G_MAX, Math.floor(maxStorageBuffers) - 2));
}

const range = (n: number): number[] => Array.from({ length: n }, (_, j) => j);
const xBindings = (g: number) => range(g).map((j) => f32arr(`x${j}`, 'r'));

/** Combine uniforms: n, vector count m, β and one (num, den, k) operand per vector (g vectors). */
export function combineUniforms(g: number): [string, 'u32' | 'i32' | 'f32'][] {
  return [
    ['n', 'u32'],
    ['m', 'u32'],
    ['b_num', 'i32'],
    ['b_den', 'i32'],
    ['b_k', 'f32'],
    ...range(g).flatMap((j) => [
      [`c${j}_num`, 'i32'],
      [`c${j}_den`, 'i32'],
      [`c${j}_k`, 'f32'],
    ]),
  ] as [string, 'u32' | 'i32' | 'f32'][];
}

/** Combine bindings: scalar slots, x0…x(g−1) (unused ones bound to any readable buffer), y. */
export function combineBindings(g: number): WgslBinding[] {
  return [f32arr('sc', 'r'), ...xBindings(g), f32arr('y', 'w')];
}

/** y[i] = β·y[i] + Σ_{j<m} c_j·x_j[i], j ascending (β = 0 ignores y, even NaN); g vectors per dispatch. */
export function combineWgsl(g: number = FUSED_G): string {
  const terms = range(g)
    .map((j) => `  if (u.m > ${j}u) { acc = acc + operand(u.c${j}_num, u.c${j}_den, u.c${j}_k) * x${j}[i]; }`)
    .join('\n');
  const body = `let b = operand(u.b_num, u.b_den, u.b_k);
  var acc = 0.0;
  if (b != 0.0) { acc = b * y[i]; }
${terms}
  y[i] = acc;`;
  return elementKernelWgsl(combineUniforms(g), combineBindings(g), body);
}

/** Multi-dot stage 1 bindings: y, x0…x(g−1), partials. */
export function multiDot1Bindings(g: number): WgslBinding[] {
  return [f32arr('y', 'r'), ...xBindings(g), f32arr('partial', 'w')];
}

/**
 * The WGSL pieces of m ≤ g partial sums reduced side by side (multi-dot stage 1 and the fused
 * combine + dots): the per-invocation accumulators s0… (`decl`), and `reduce`: their store into
 * workgroup memory, the tree (one level for all of them per barrier) and the workgroup's
 * partials written at u.out + j·u.groups + g.
 */
function multiTreeParts(g: number, loops: ColumnLoops): { decl: string; reduce: string } {
  const lines = (f: (j: number) => string) => range(g).map(f).join('\n');
  const store = lines((j) => `  if (u.m > ${j}u) { red[${j * WG}u + lid] = s${j}; }`);
  // bounded (./loops): one loop over the m trees per level, the same additions (u.m ≤ g)
  const level =
    loops === 'unrolled'
      ? lines((j) => `      if (u.m > ${j}u) { red[${j * WG}u + lid] = red[${j * WG}u + lid] + red[${j * WG}u + lid + off]; }`)
      : `      for (var j = 0u; j < u.m; j++) { red[j * ${WG}u + lid] = red[j * ${WG}u + lid] + red[j * ${WG}u + lid + off]; }`;
  const write = lines((j) => `    if (u.m > ${j}u) { partial[u.out + ${j}u * u.groups + g] = red[${j * WG}u]; }`);
  return {
    decl: lines((j) => `  var s${j} = 0.0;`),
    reduce: `${store}
  workgroupBarrier();
  for (var off = ${WG / 2}u; off > 0u; off = off >> 1u) {
    if (lid < off) {
${level}
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
${write}
  }`,
  };
}

/**
 * partial[out + j·groups + g] = Σ over chunk g of x_j[i]·y[i] for j < m: each workgroup reads
 * its chunk of y once and of each x_j once; the same per-invocation order and the same tree as
 * dot stage 1, but the m trees run together (one barrier per level for all of them, in
 * 4·g·WG bytes of workgroup memory), where m trees one after the other cost m·9 barriers: on
 * lavapipe a 14-vector stage 1 took 11× a single dot's.
 */
export function multiDot1Wgsl(g: number = FUSED_G, loops: ColumnLoops = 'unrolled'): string {
  const { decl, reduce } = multiTreeParts(g, loops);
  const acc = range(g)
    .map((j) => `      if (u.m > ${j}u) { s${j} = s${j} + x${j}[i] * yi; }`)
    .join('\n');
  return `${preamble([['n', 'u32'], ['groups', 'u32'], ['out', 'u32'], ['m', 'u32']], multiDot1Bindings(g))}
var<workgroup> red: array<f32, ${g * WG}>;
@compute @workgroup_size(${WG})
fn main(${entryArgs()}) {
  let g = wg_linear(wid, nwg);
  if (g >= u.groups) { return; } // whole workgroup exits together: uniform
${decl}
  let base = g * ${DOT_CHUNK}u + lid;
  for (var k = 0u; k < ${DOT_ITEMS}u; k++) {
    let i = base + k * ${WG}u;
    if (i < u.n) {
      let yi = y[i];
${acc}
    }
  }
${reduce}
}`;
}

/** Multi-dot stage 2 uniforms: partials per vector, first partial, mode, m and g slots. */
export function multiDot2Uniforms(g: number): [string, 'u32' | 'i32' | 'f32'][] {
  return [['count', 'u32'], ['first', 'u32'], ['mode', 'u32'], ['m', 'u32'], ...range(g).map((j) => [`slot${j}`, 'u32'])] as [string, 'u32' | 'i32' | 'f32'][];
}

/**
 * Vectors one multi-dot stage-2 dispatch completes: its 256-byte uniform block holds four header
 * words and this many slot indices, so GMRES(30)'s up to 31 dots need one stage-2 dispatch
 * where groups of {@link fusedGroup} vectors (14 on the H100) needed up to three.
 */
export const MULTIDOT2_SLOTS = 60;

/** Multi-dot stage 2 bindings: partials, scalar slots. */
export const MULTIDOT2_BINDINGS: WgslBinding[] = [f32arr('partial', 'r'), f32arr('sc', 'w')];

/**
 * Workgroup j < m: sc[slot_j] = Σ partial[first + j·count …][0..count) (mode 1: sqrt), the
 * same stride-WG loop and tree as dot stage 2.
 */
export function multiDot2Wgsl(g: number = FUSED_G): string {
  const slots = range(g)
    .map((j) => `    case ${j}u: { slot = u.slot${j}; }`)
    .join('\n');
  return `${preamble(multiDot2Uniforms(g), MULTIDOT2_BINDINGS)}
${workgroupSum('red', WG)}
@compute @workgroup_size(${WG})
fn main(${entryArgs()}) {
${groupRowSum()}
  var slot = 0u;
  switch j {
${slots}
    default: { slot = u.slot0; }
  }
  if (lid == 0u) { sc[slot] = select(t, sqrt(t), u.mode == 1u); }
}`;
}

/** CG update bindings: scalar slots, p, q, x, r, partials. */
export const CG_UPDATE_BINDINGS: WgslBinding[] = [f32arr('sc', 'w'), f32arr('p', 'r'), f32arr('q', 'r'), f32arr('x', 'w'), f32arr('r', 'w'), f32arr('partial', 'w')];

/**
 * CG's update in one pass: x += α·p, r −= α·q (as axpby: a·x[i] + 1·y[i] with a = α and −α),
 * and partial[out + g] = Σ over chunk g of r_new[i]² in dot stage 1's order, so that dot
 * stage 2 completes ⟨r, r⟩. One read of p, q, x, r and one write of x, r per element, where the
 * unfused form (two axpby and a dot) reads r twice more and costs two dispatches more.
 * With `ownPq` (mode 1) α = A / ⟨p, q⟩ where A is the operand and ⟨p, q⟩ is summed by every
 * workgroup from dot stage 1's partials at `pq_first`, in dot stage 2's order (the same bits as
 * the dot, so no stage-2 dispatch); workgroup 0 stores it in slot `pq_slot`.
 */
export function cgUpdateWgsl(): string {
  return `${preamble(
    [
      ['n', 'u32'],
      ['groups', 'u32'],
      ['out', 'u32'],
      ['a_num', 'i32'],
      ['a_den', 'i32'],
      ['a_k', 'f32'],
      ['mode', 'u32'],
      ['pq_first', 'u32'],
      ['pq_slot', 'u32'],
    ],
    CG_UPDATE_BINDINGS,
  )}
${SCALAR_OPERAND}
${workgroupSum('red', WG)}
@compute @workgroup_size(${WG})
fn main(${entryArgs()}) {
  let g = wg_linear(wid, nwg);
  if (g >= u.groups) { return; } // whole workgroup exits together: uniform
  var a = operand(u.a_num, u.a_den, u.a_k);
  if (u.mode == 1u) {
    var ps = 0.0;
    for (var k = lid; k < u.groups; k += ${WG}u) { ps = ps + partial[u.pq_first + k]; }
    let pq = red_sum(lid, ps);
    if (g == 0u && lid == 0u) { sc[u.pq_slot] = pq; }
    a = a / pq;
  }
  let na = -a;
  var s = 0.0;
  let base = g * ${DOT_CHUNK}u + lid;
  for (var k = 0u; k < ${DOT_ITEMS}u; k++) {
    let i = base + k * ${WG}u;
    if (i < u.n) {
      x[i] = a * p[i] + 1.0 * x[i];
      let ri = na * q[i] + 1.0 * r[i];
      r[i] = ri;
      s = s + ri * ri;
    }
  }
  let t = red_sum(lid, s);
  if (lid == 0u) { partial[u.out + g] = t; }
}`;
}

/** Combine-and-norm bindings: scalar slots, x0…x(g−1), y, partials (one more than combine). */
export function combineNormBindings(g: number): WgslBinding[] {
  return [f32arr('sc', 'r'), ...xBindings(g), f32arr('y', 'w'), f32arr('partial', 'w')];
}

/**
 * The chunk loop shared by combine + norm and combine + dots: invocation lid of workgroup g
 * forms acc = b·y[i] + Σ_j c_j·x_j[i] (`terms`) for its DOT_ITEMS entries of chunk g, stores it
 * in y[i] and then runs `accumulate` (its reduction terms) on it.
 */
function combineChunkLoop(terms: string, accumulate: string): string {
  return `  let base = g * ${DOT_CHUNK}u + lid;
  for (var k = 0u; k < ${DOT_ITEMS}u; k++) {
    let i = base + k * ${WG}u;
    if (i < u.n) {
      var acc = 0.0;
      if (b != 0.0) { acc = b * y[i]; }
${terms}
      y[i] = acc;
${accumulate}
    }
  }`;
}

/**
 * y[i] = β·y[i] + Σ_{j<m} c_j·x_j[i] (as {@link combineWgsl}) and partial[out + g] = Σ over chunk
 * g of y_new[i]² in dot stage 1's order (8 elements per invocation, then the workgroup tree), so
 * that dot stage 2 completes ‖y‖: GMRES's w −= V·h and h_{j+1,j} = ‖w‖ in one pass over w.
 */
export function combineNormWgsl(g: number): string {
  const terms = range(g)
    .map((j) => `      if (u.m > ${j}u) { acc = acc + operand(u.c${j}_num, u.c${j}_den, u.c${j}_k) * x${j}[i]; }`)
    .join('\n');
  const uniforms = [...combineUniforms(g), ['groups', 'u32'], ['out', 'u32']] as [string, 'u32' | 'i32' | 'f32'][];
  return `${preamble(uniforms, combineNormBindings(g))}
${SCALAR_OPERAND}
${workgroupSum('red', WG)}
@compute @workgroup_size(${WG})
fn main(${entryArgs()}) {
  let g = wg_linear(wid, nwg);
  if (g >= u.groups) { return; } // whole workgroup exits together: uniform
  let b = operand(u.b_num, u.b_den, u.b_k);
  var s = 0.0;
${combineChunkLoop(terms, '      s = s + acc * acc;')}
  let t = red_sum(lid, s);
  if (lid == 0u) { partial[u.out + g] = t; }
}`;
}

/**
 * y[i] = β·y[i] + Σ_{j<m} c_j·x_j[i] (as {@link combineWgsl}), then partial[out + j·groups + g] =
 * Σ over chunk g of x_j[i]·y_new[i] for j < m (as {@link multiDot1Wgsl}: the same per-invocation
 * order and tree): the first Gram–Schmidt pass w ← Q·h − w and the second pass's Qᵀ·w in one
 * read of the x's, where combine and multi-dot stage 1 read them twice. Bindings as
 * {@link combineNormWgsl}.
 */
export function combineDotsWgsl(g: number, loops: ColumnLoops = 'unrolled'): string {
  // coefficients read once per invocation (the same values as combine's per-element reads)
  const coef = range(g)
    .map((j) => `  var c${j} = 0.0;\n  if (u.m > ${j}u) { c${j} = operand(u.c${j}_num, u.c${j}_den, u.c${j}_k); }`)
    .join('\n');
  const terms = range(g)
    .map((j) => `      if (u.m > ${j}u) { acc = acc + c${j} * x${j}[i]; }`)
    .join('\n');
  const { decl, reduce } = multiTreeParts(g, loops);
  const dots = range(g)
    .map((j) => `      if (u.m > ${j}u) { s${j} = s${j} + x${j}[i] * acc; }`)
    .join('\n');
  const uniforms = [...combineUniforms(g), ['groups', 'u32'], ['out', 'u32']] as [string, 'u32' | 'i32' | 'f32'][];
  return `${preamble(uniforms, combineNormBindings(g))}
${SCALAR_OPERAND}
var<workgroup> red: array<f32, ${g * WG}>;
@compute @workgroup_size(${WG})
fn main(${entryArgs()}) {
  let g = wg_linear(wid, nwg);
  if (g >= u.groups) { return; } // whole workgroup exits together: uniform
  let b = operand(u.b_num, u.b_den, u.b_k);
${coef}
${decl}
${combineChunkLoop(terms, dots)}
${reduce}
}`;
}

/** Normalise bindings: scalar slots, partials, y, v. */
export const NORMALIZE_BINDINGS: WgslBinding[] = [f32arr('sc', 'w'), f32arr('partial', 'r'), f32arr('y', 'r'), f32arr('v', 'w')];

/**
 * v[i] = (k / h)·y[i] with h = √(Σ partial[first …][0..count)): every workgroup sums the
 * partials of a norm's stage 1 in dot stage 2's order (the same bits as the stage-2 dispatch it
 * replaces, as in {@link cgUpdateWgsl}), and workgroup 0 stores h in `slot`. GMRES's
 * v_{j+1} = ±w/‖w‖ after combine-norm, one dispatch where dot stage 2 and an axpby take two.
 */
export function normalizeWgsl(): string {
  return `${preamble(
    [
      ['n', 'u32'],
      ['groups', 'u32'],
      ['count', 'u32'],
      ['first', 'u32'],
      ['slot', 'u32'],
      ['k', 'f32'],
    ],
    NORMALIZE_BINDINGS,
  )}
${workgroupSum('red', WG)}
@compute @workgroup_size(${WG})
fn main(${entryArgs()}) {
${everyGroupShare()}
  let h = sqrt(red_sum(lid, ps));
  if (g == 0u && lid == 0u) { sc[u.slot] = h; }
  var a = u.k;
  a = a / h;
  let base = g * ${DOT_CHUNK}u + lid;
  for (var k = 0u; k < ${DOT_ITEMS}u; k++) {
    let i = base + k * ${WG}u;
    if (i < u.n) { v[i] = a * y[i]; }
  }
}`;
}
