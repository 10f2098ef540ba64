/**
 * Host-side splitting of a *grouped* matrix — a pointer array over groups (BCSR block rows, CMRS
 * strips) and per-unit arrays (blocks, non-zeros) — into pieces that fit one binding each,
 * shared by the BCSR and CMRS kernels. Planning reuses CSR's {@link splitCsrPlan} (the pointer
 * array is CSR's row pointer over groups); a group longer than a binding is cut into unit
 * ranges whose later pieces accumulate into y (beta = 1, dispatched after the first: ordered,
 * deterministic, no atomics).
 * @module
 */
import { InvalidMatrixError } from '@gpusparse/formats';
import { splitCsrPlan } from '../csr/csr-device';
import type { HostPiece, PieceArray } from '../ell/ell-device';

/** A per-unit array of a grouped matrix: `per` consecutive elements per unit. */
export interface UnitArray {
  readonly data: PieceArray;
  readonly per: number;
}

/**
 * Check a group pointer array: length groups + 1, starts at 0, non-decreasing, ends at `units`.
 * Throws InvalidMatrixError naming the first bad group. O(groups).
 * @example checkGroupPtr(m.rowPtr, m.numBlockRows, m.numBlocks, 'bcsr upload')
 */
export function checkGroupPtr(ptr: Int32Array, groups: number, units: number, where: string): void {
  if (ptr.length !== groups + 1) throw new InvalidMatrixError(where, `expected a pointer array of ${groups + 1} entries, got ${ptr.length}`);
  if (ptr[0] !== 0) throw new InvalidMatrixError(where, `expected pointer[0] = 0, got ${ptr[0]}`);
  for (let g = 0; g < groups; g++) {
    if (ptr[g + 1]! < ptr[g]!) throw new InvalidMatrixError(where, `group ${g}: expected non-decreasing pointers, got ${ptr[g]} > ${ptr[g + 1]}`);
  }
  if (ptr[groups] !== units) throw new InvalidMatrixError(where, `expected pointer[${groups}] = ${units} units, got ${ptr[groups]}`);
}

/**
 * Pieces of a grouped matrix for bindings of `cap` elements. Each piece's data: the local
 * pointer array (u32), then every unit array sliced to the piece; `rowsPerGroup` matrix rows per
 * group; `count(groups, rows)` gives the uniform `count`. One piece, arrays as they are, when
 * everything fits. Cost: O(groups) planning plus the slices' copies when split.
 * @example [...groupedPieces(ptr, ns, [{ data: vals, per: 1 }], rows, 8, 1 << 20, () => 0)]
 */
export function* groupedPieces(
  ptr: Int32Array,
  groups: number,
  arrays: readonly UnitArray[],
  rows: number,
  rowsPerGroup: number,
  cap: number,
  count: (groups: number, rows: number) => number,
): Generator<HostPiece> {
  const per = Math.max(1, ...arrays.map((a) => a.per));
  const capUnits = Math.floor(cap / per);
  if (capUnits < 1) throw new RangeError(`grouped upload: a binding of ${cap} elements cannot hold one unit of ${per}`);
  const asCsr = { format: 'csr' as const, rows: groups, cols: 0, rowPtr: ptr, colIdx: new Int32Array(0), values: new Float64Array(0) };
  const plan = splitCsrPlan(asCsr, capUnits, cap - 1);
  for (const b of plan) {
    const whole = plan.length === 1;
    const local = whole ? ptr : new Uint32Array(b.rows + 1);
    if (!whole) for (let i = 0; i <= b.rows; i++) local[i] = Math.min(Math.max(ptr[b.rowStart + i]!, b.k0), b.k1) - b.k0;
    const rowBase = b.rowStart * rowsPerGroup;
    const pieceRows = Math.min(rows - rowBase, b.rows * rowsPerGroup);
    const data = arrays.map((a) => (whole ? a.data : a.data.subarray(b.k0 * a.per, b.k1 * a.per)));
    yield { rows: pieceRows, rowBase, count: count(b.rows, pieceRows), accumulate: b.cont, data: [local, ...data] };
  }
}
