/**
 * WGSL statements that read one quad (4 padded entries) of the quad-padded CSR of
 * `kernels/csr4/quad-device.ts`: its column word(s), its x gathers and its values, for each of the
 * three packings (0: u32 columns and f32 values; 1: 16-bit column offsets from the row base `b`;
 * 2: also 16-bit indices into the value table `vtab`). Split into three steps so that a kernel
 * can issue the column and value loads of several quads before any gather that depends on them.
 * Every statement declares `<prefix><suffix>` names, so several quads can share one scope.
 * @module
 */
import type { GpuCaps } from '../../device/context';
import { QUAD_MASK, quadBindings } from '../csr4/quad-device';
import { groupSum, groupSumMode, groupSumNeedsSubgroups } from './group';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS } from './index';
import { laneRow } from './lanes';

/** `let c<s> = cols[<q>];` — the quad's column word(s) (vec4<u32>, or vec2<u32> of 16-bit offsets). */
export function quadColsLoad(s: string, q: string): string {
  return `let c${s} = cols[${q}];`;
}

/**
 * `let x<s> = vec4<f32>(…)`: the four x gathers of the columns `c<s>` (needs `b` when `pack` ≥ 1).
 * `read` turns a column expression into the read of x at it (default `x[col]`).
 */
export function quadGather(pack: number, s: string, read: (col: string) => string = (col) => `x[${col}]`): string {
  const c = `c${s}`;
  const cols = pack === 0 ? [`${c}.x`, `${c}.y`, `${c}.z`, `${c}.w`] : [`b + (${c}.x & 0xffffu)`, `b + (${c}.x >> 16u)`, `b + (${c}.y & 0xffffu)`, `b + (${c}.y >> 16u)`];
  return `let x${s} = vec4<f32>(${cols.map(read).join(', ')});`;
}

/** `let v<s> = …`: the quad's four values (a vec4<f32> load, or two words of 16-bit table indices). */
export function quadValues(pack: number, s: string, q: string): string {
  if (pack !== 2) return `let v${s} = vals[${q}];`;
  return `let vi${s} = vals[${q}];
      let v${s} = vec4<f32>(vtab[vi${s}.x & 0xffffu], vtab[vi${s}.x >> 16u], vtab[vi${s}.y & 0xffffu], vtab[vi${s}.y >> 16u]);`;
}

/**
 * The head of a lanes-per-row kernel over quad-padded rows, up to the row's quad range: preamble
 * with the `pack` bindings, `store_y`, the group reduction `red_group` ({@link groupSum}), the
 * entry point, `lane` / `row` / `r`, `var s`, and inside `if (r < u.rows) {` the row's first quad
 * `q0`, end word `e` (pad count in its top two bits), end `q1` and (pack ≥ 1) base column `b`.
 * `extra.decls` goes before the entry point, `extra.prologue` after `lane` / `row` (uniform
 * control flow: a workgroup-memory fill and its barrier).
 * The caller writes the row's sum into `s`, closes the `if` and appends {@link QUAD_ROW_TAIL}.
 */
export function quadRowHead(pack: number, lanes: number, workgroupSize: number, caps: GpuCaps, extra: { decls?: string; prologue?: string } = {}): string {
  const mode = groupSumMode(lanes, caps);
  return `${preamble(SPMV_UNIFORMS, quadBindings(pack), { subgroups: groupSumNeedsSubgroups(mode) })}
${SPMV_STORE}
${groupSum('red', lanes, workgroupSize, caps)}
${extra.decls ?? ''}
@compute @workgroup_size(${workgroupSize})
fn main(${entryArgs()}) {
  ${laneRow(lanes, workgroupSize)}
  ${extra.prologue ?? ''}
  let r = row;
  var s = 0.0;
  if (r < u.rows) {
    let q0 = rowq[r] & ${QUAD_MASK}u;
    let e = rowq[r + 1u];
    let q1 = e & ${QUAD_MASK}u;
    ${pack >= 1 ? 'let b = rbase[r];' : ''}`;
}

/** The end of a {@link quadRowHead} kernel (after the caller closed its `if`): reduce `s`, lane 0 stores. */
export const QUAD_ROW_TAIL = `  let t = red_group(lid, s);
  if (r < u.rows && lane == 0u) { store_y(r, t); }
}`;

/** `keep`: which of the row's last quad's four entries are real (the pad count is `e >> 30`). */
export const QUAD_KEEP = 'let keep = vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(4u - (e >> 30u));';
