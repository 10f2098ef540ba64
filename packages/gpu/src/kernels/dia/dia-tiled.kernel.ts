/**
 * DIA kernel for banded and stencil matrices at the bandwidth limit (issue 20). Same device
 * layout as the `dia` kernel (diagonal-major padded slots, a table of offset, base and valid
 * row range per diagonal), read the way a memory-bound gather has to be read on a GPU:
 *
 * - a workgroup owns a tile of `rowsPerThread`·workgroupSize rows; invocation t handles rows
 *   t, t + W, t + 2W, … of the tile, so every load of values and of x stays coalesced
 *   (consecutive invocations, consecutive slots) while each invocation keeps
 *   rowsPerThread × 4 independent value loads and as many x loads in flight (the diagonal loop
 *   is unrolled by 4 in the shader text): the thread-per-row `dia` kernel had one load pair in
 *   flight per row and waited a full memory latency per diagonal;
 * - the diagonal table is staged once per workgroup in workgroup memory (at most
 *   {@link TILED_MAX_DIAGONALS} diagonals per piece; more become accumulating pieces), not
 *   re-read from storage per row and diagonal;
 * - a tile whose rows lie inside every diagonal's valid range (the *interior*, [ilo, ihi),
 *   computed on the host per piece) runs without any per-element range test; only the tiles at
 *   the ends of the matrix take the checked loop.
 *
 * Summation order per row: diagonals in ascending order, one product at a time, as in `dia`;
 * fill slots hold 0 and are multiplied like in `dia` (0·x). No float atomics: the invocation
 * that sums a row alone stores it; split pieces accumulate in later, ordered dispatches (β = 1).
 * @module
 */
import { type DiaMatrix, diaDefaultParams } from '@gpusparse/formats';
import type { GpuCaps } from '../../device/context';
import type { PipelineSpec } from '../../device/pipelines';
import { csrVectorsFit } from '../csr/csr-device';
import { bindingCapElems, type EllDeviceMatrix, encodeEll, uploadPieces } from '../ell/ell-device';
import type { SpmvKernel } from '../types';
import { entryArgs, preamble, SPMV_STORE, SPMV_UNIFORMS, signature } from '../wgsl/index';
import { type DeviceDiaMatrix, deviceDiaHandle, diaBuildSpecs, isDeviceDia } from './dia-build';
import { DIA_DEVICE_FORMAT, diaLayout } from './dia.kernel';
import { DIAGONAL_BINDINGS, diagonalCountFits, diagonalPieces, diagonalPrecheck } from './diagonal-device';

/** Most diagonals of one piece (the workgroup-memory table: 16 bytes each, 4 KiB). */
export const TILED_MAX_DIAGONALS = 256;

/** Diagonals per unrolled step of the interior loop. */
const UNROLL = 4;

/** Parameters of {@link diaTiledKernel}. */
export type DiaTiledParams = { rowsPerThread: number; workgroupSize: number; maxDiagonals: number };

/** An uploaded matrix: the pieces and, per piece, its interior row range [ilo, ihi). */
export interface DiaTiledDeviceMatrix extends EllDeviceMatrix {
  readonly interior: readonly (readonly [number, number])[];
}

/** `n` WGSL statements from `f(j)`, j = 0 … n − 1, joined by newlines with `indent`. */
const each = (n: number, indent: string, f: (j: number) => string): string => Array.from({ length: n }, (_, j) => f(j)).join(`\n${indent}`);

/**
 * The tiled DIA shader for `wg` invocations of `rpt` rows each. Row j of invocation `lid` in
 * the tile starting at local row b0 is t_j = b0 + lid + j·wg; its sum s_j.
 * @example diaTiledWgsl(128, 4)
 */
export function diaTiledWgsl(wg: number, rpt: number): string {
  if (!(Number.isInteger(rpt) && rpt >= 1 && rpt <= 8)) throw new RangeError(`dia-tiled: rowsPerThread expected an integer in 1…8, got ${rpt}`);
  const tile = wg * rpt;
  const rows = (f: (j: number) => string, indent = '      ') => each(rpt, indent, f);
  // one unrolled step: the table entries, then every product (all loads independent), then
  // each row's sum in diagonal order
  const qs = Array.from({ length: UNROLL }, (_, q) => q);
  const step = [
    ...qs.map((q) => `let e${q} = diag[d + ${q}u];`),
    ...qs.flatMap((q) => Array.from({ length: rpt }, (_, j) => `let p${q}_${j} = vals[u32(e${q}.y + t${j})] * x[u32(g${j} + e${q}.x)];`)),
    ...Array.from({ length: rpt }, (_, j) => `s${j} = ${qs.reduce((acc, q) => `(${acc} + p${q}_${j})`, `s${j}`)};`),
  ].join('\n      ');
  return `${preamble([...SPMV_UNIFORMS, ['ilo', 'u32'], ['ihi', 'u32']], DIAGONAL_BINDINGS)}
${SPMV_STORE}
var<workgroup> diag: array<vec4<i32>, ${TILED_MAX_DIAGONALS}>;
@compute @workgroup_size(${wg})
fn main(${entryArgs()}) {
  let b0 = wg_linear(wid, nwg) * ${tile}u;
  if (b0 >= u.rows) { return; }
  for (var q = lid; q < u.count; q += ${wg}u) {
    diag[q] = vec4<i32>(tab[4u * q], tab[4u * q + 1u], tab[4u * q + 2u], tab[4u * q + 3u]);
  }
  workgroupBarrier();
  ${rows((j) => `let t${j} = i32(b0 + lid + ${j * wg}u);\n  let g${j} = i32(u.row_base) + t${j};\n  var s${j} = 0.0;`, '  ')}
  if (b0 >= u.ilo && b0 + ${tile}u <= u.ihi) {
    // interior tile: every row of it has a column on every diagonal
    var d = 0u;
    loop {
      if (d + ${UNROLL}u > u.count) { break; }
      ${step}
      d += ${UNROLL}u;
    }
    for (; d < u.count; d++) {
      let e = diag[d];
      ${rows((j) => `s${j} = s${j} + vals[u32(e.y + t${j})] * x[u32(g${j} + e.x)];`)}
    }
  } else {
    for (var d = 0u; d < u.count; d++) {
      let e = diag[d];
      ${rows((j) => `if (t${j} >= e.z && t${j} < e.w) { s${j} = s${j} + vals[u32(e.y + t${j})] * x[u32(g${j} + e.x)]; }`)}
    }
  }
  ${rows((j) => `if (u32(t${j}) < u.rows) { store_y(u32(t${j}), s${j}); }`, '  ')}
}`;
}

/**
 * The interior [ilo, ihi) of a piece: the local rows valid on every diagonal of its table
 * (4 i32 per diagonal: offset, base, lo, hi), [0, rows) without diagonals, [2³²−1, 2³²−1)
 * when empty (every tile then takes the checked loop). O(count).
 * @example pieceInterior(Int32Array.of(-1, 0, 1, 10, 1, 10, 0, 9), 2, 10) // [1, 9]
 */
export function pieceInterior(tab: Int32Array, count: number, rows: number): [number, number] {
  let lo = 0;
  let hi = rows;
  for (let d = 0; d < count; d++) {
    lo = Math.max(lo, tab[4 * d + 2]!);
    hi = Math.min(hi, tab[4 * d + 3]!);
  }
  return lo < hi ? [lo, hi] : [0xffffffff, 0xffffffff];
}

/**
 * Tiled DIA SpMV. Cost per apply: one dispatch per piece (one for any matrix of ≤ 256
 * diagonals that fits a binding); 4·rows·ndiag bytes of values (padding included) plus x and y.
 * Uploads a host `DiaMatrix`, or takes the layout of a `DeviceDiaMatrix` built on the device.
 * @example const h = diaTiledKernel.upload(ctx, diaFromCsr(a), { rowsPerThread: 4 });
 */
export const diaTiledKernel: SpmvKernel<DiaMatrix | DeviceDiaMatrix, DiaTiledParams, DiaTiledDeviceMatrix> = {
  id: 'dia-tiled',
  format: 'dia',
  title: 'DIA tiled: several coalesced rows per invocation, diagonal table in workgroup memory, unchecked interior tiles',
  params: {
    rowsPerThread: { description: 'rows per invocation (strided by the workgroup size: loads stay coalesced)', values: [4, 2, 1, 8] },
    workgroupSize: { description: 'invocations per workgroup', values: [256, 128] },
    maxDiagonals: { description: 'most diagonals accepted (the dia format default)', values: [diaDefaultParams.maxDiagonals] },
  },
  // H100 (bench/RESULTS.md, session 6, issue 20): rowsPerThread 4 with 256 invocations was the
  // fastest variant on all four matrices measured (27-point stencil 120³ 0.171 ms, tied with
  // rowsPerThread 2; banded 2·10^6 b9 0.091; 5-point 2000² 0.109; 7-point 160³ 0.132 ms);
  // rowsPerThread 1 and 8 were 15–70 % slower
  defaults: { rowsPerThread: 4, workgroupSize: 256, maxDiagonals: diaDefaultParams.maxDiagonals },
  formatParams: () => ({ maxDiagonals: 2 ** 28, ...DIA_DEVICE_FORMAT }),
  precheck: (a, _limits, params) => diagonalPrecheck(a, params.maxDiagonals, 'dia'),
  supports(m, limits, params) {
    const ok = diagonalCountFits(m.offsets.length, params?.maxDiagonals ?? diaDefaultParams.maxDiagonals, 'dia');
    return ok === true ? csrVectorsFit(m, limits.maxStorageBufferBindingSize) : ok;
  },
  wgsl: (p) => diaTiledWgsl(p.workgroupSize, p.rowsPerThread),
  pipelineSpec(p) {
    const text = diaTiledWgsl(p.workgroupSize, p.rowsPerThread);
    return { key: text, label: `dia-tiled(rows=${p.rowsPerThread},wg=${p.workgroupSize})`, bindings: signature(DIAGONAL_BINDINGS), wgsl: () => text };
  },
  upload(ctx, m, params = {}, opts) {
    const p = { ...this.defaults, ...params };
    const pipe = ctx.pipelines.get(this.pipelineSpec!(p, ctx.caps));
    if (isDeviceDia(m)) {
      // built on the device: the same plan, so the same pieces and interiors as the host upload
      const h = deviceDiaHandle(m, this.id, pipe, bindingCapElems(ctx, opts), TILED_MAX_DIAGONALS, p.rowsPerThread * p.workgroupSize);
      return { ...h, interior: h.tabs.map((tab, i) => pieceInterior(tab, h.parts[i]!.count, h.parts[i]!.rows)) };
    }
    // pieces stream through (a split matrix's re-packed copies are not all held at once);
    // each piece's interior is recorded as it passes, in dispatch order
    const interior: [number, number][] = [];
    const pieces = diagonalPieces(diaLayout(m), bindingCapElems(ctx, opts), TILED_MAX_DIAGONALS);
    const tracked = (function* () {
      for (const q of pieces) {
        interior.push(pieceInterior(q.data[0] as Int32Array, q.count, q.rows));
        yield q;
      }
    })();
    return { ...uploadPieces(ctx, this.id, m, pipe, tracked, p.rowsPerThread * p.workgroupSize), interior };
  },
  encode: (ctx, h, x, y, scale) =>
    encodeEll(ctx, h, x, y, scale, (u, i) => {
      u.u[6] = h.interior[i]![0]; // ilo
      u.u[7] = h.interior[i]![1]; // ihi
    }),
};

/**
 * What a DIA conversion on the device and the default dia-tiled upload compile (for
 * PipelineCache.prewarm: the autotuner asks for them while the host prepares the CSR upload).
 */
export function diaDeviceSpecs(caps: GpuCaps): PipelineSpec[] {
  return [...diaBuildSpecs(), diaTiledKernel.pipelineSpec!(diaTiledKernel.defaults, caps)];
}
