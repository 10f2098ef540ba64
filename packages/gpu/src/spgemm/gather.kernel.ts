/**
 * The numeric kernel of the planned diagonal SpGEMM (HM and CDM): one invocation per entry of
 * C, a gather over the (A diagonal, B diagonal) pairs that feed the entry's C diagonal — no
 * atomics, one writer per entry, pairs summed in ascending A offset (deterministic).
 *
 * One dispatch covers the C diagonals of one C buffer ("jobs"). Workgroup w takes job w mod jobs
 * and position block ⌊w / jobs⌋: workgroups that run together cover the same positions of
 * neighbouring C diagonals, so the A and B diagonals they share are read from cache, not DRAM.
 * Operands may be split over several buffers: the kernel binds up to SA buffers of A and SB of B
 * and picks one with a switch on the pair's slot (uniform over the workgroup: no divergence).
 *
 * Table (u32, one array for the whole plan; bases in the uniforms):
 * - job: (C start in its buffer, C length, kC, first pair word, pair count)
 * - pair: (A slot | B slot << 8, A base, kA, B base) with
 *   HM: a_ij at A base + i, b_jl at B base + j (bases = start + min(k, 0));
 *   CDM: A_kA[t] at A base + t, B_kB[(t + kA) mod n] at B base + that.
 * Mode 0 writes C, mode 1 adds to it (only when the operands needed more slots than one
 * dispatch binds, so a C diagonal is summed over several dispatches).
 * @module
 */
import { entryArgs, preamble, type WgslBinding } from '../kernels/wgsl/index';

/** What changes the shader text (and so the pipeline). */
export interface GatherShape {
  readonly format: 'hm' | 'cdm';
  /** A buffers bound per dispatch (1…). */
  readonly sa: number;
  /** B buffers bound per dispatch (1…). */
  readonly sb: number;
  /** Invocations per workgroup (= C entries per workgroup). */
  readonly wg: number;
}

/** Words of one job and one pair in the table. */
export const JOB_WORDS = 5;
export const PAIR_WORDS = 4;

/** Bindings in order: table, A slots, B slots, C. */
export function gatherBindings(s: GatherShape): WgslBinding[] {
  const out: WgslBinding[] = [{ name: 'tab', type: 'array<u32>', access: 'r' }];
  for (let q = 0; q < s.sa; q++) out.push({ name: `a${q}`, type: 'array<f32>', access: 'r' });
  for (let q = 0; q < s.sb; q++) out.push({ name: `b${q}`, type: 'array<f32>', access: 'r' });
  out.push({ name: 'cval', type: 'array<f32>', access: 'w' });
  return out;
}

/** `fn r<x>(slot, i) -> f32` reading buffer slot of operand x. */
function reader(x: 'a' | 'b', slots: number): string {
  if (slots === 1) return `fn r${x}(s: u32, i: u32) -> f32 { return ${x}0[i]; }`;
  const cases = Array.from({ length: slots - 1 }, (_, q) => `case ${q}u: { return ${x}${q}[i]; }`).join(' ');
  return `fn r${x}(s: u32, i: u32) -> f32 { switch s { ${cases} default: { return ${x}${slots - 1}[i]; } } }`;
}

/** The loop body adding one pair's product into s (HM or CDM index rule). */
function pairBody(format: 'hm' | 'cdm'): string {
  if (format === 'hm') {
    return `
    let ka = bitcast<i32>(tab[pw + 2u]);
    let j = i + ka;
    // c_il += a_ij·b_jl when column j of A (row j of B) exists
    if (j >= 0 && j < inner) {
      s = s + ra(sl & 255u, u32(bitcast<i32>(tab[pw + 1u]) + i)) * rb(sl >> 8u, u32(bitcast<i32>(tab[pw + 3u]) + j));
    }`;
  }
  return `
    var jj = p + tab[pw + 2u];
    if (jj >= u.extent) { jj = jj - u.extent; }
    // C_kC[t] += A_kA[t]·B_kB[(t + kA) mod n]
    s = s + ra(sl & 255u, tab[pw + 1u] + p) * rb(sl >> 8u, tab[pw + 3u] + jj);`;
}

/**
 * The gather shader for `shape`. Uniforms: jobs, job base word, workgroups, extent (HM: inner
 * dimension; CDM: n), mode (0 write, 1 add).
 * @example gatherWgsl({ format: 'hm', sa: 1, sb: 1, wg: 256 })
 */
export function gatherWgsl(shape: GatherShape): string {
  const uniforms = [['jobs', 'u32'], ['jbase', 'u32'], ['groups', 'u32'], ['extent', 'u32'], ['mode', 'u32']] as const;
  const rowOf = shape.format === 'hm' ? `  // entry p of diagonal kC is c_il with i = p (kC ≥ 0) or p − kC (kC < 0)
  let i = select(i32(p), i32(p) - kc, kc < 0);
  let inner = i32(u.extent);` : '';
  return `${preamble(uniforms, gatherBindings(shape))}
${reader('a', shape.sa)}
${reader('b', shape.sb)}
@compute @workgroup_size(${shape.wg})
fn main(${entryArgs()}) {
  let w = wg_linear(wid, nwg);
  if (w >= u.groups) { return; }
  let e = u.jbase + ${JOB_WORDS}u * (w % u.jobs);
  let p = (w / u.jobs) * ${shape.wg}u + lid;
  if (p >= tab[e + 1u]) { return; }
  let kc = bitcast<i32>(tab[e + 2u]);
${rowOf}
  var s = 0.0;
  let first = tab[e + 3u];
  let last = first + ${PAIR_WORDS}u * tab[e + 4u];
  for (var pw = first; pw < last; pw += ${PAIR_WORDS}u) {
    let sl = tab[pw];${pairBody(shape.format)}
  }
  let at = tab[e] + p;
  if (u.mode == 0u) { cval[at] = s; } else { cval[at] = cval[at] + s; }
}`;
}
