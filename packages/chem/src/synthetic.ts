/**
 * A synthetic symmetric matrix with the statistics seed 001 §4 gives for CI matrices: a
 * Reference region (the first ≈ 10 % of the columns, and by symmetry of the rows) at ≈ 80 %
 * sparsity, and an Expansion region at ≈ 99 % sparsity; a diagonally dominant-ish CI-like
 * diagonal. For benchmarks of the formats and kernels; it is labelled synthetic everywhere.
 * @module
 */
import { type CsrMatrix, generators, InvalidParameterError } from '@gpusparse/formats';

/** Options of {@link syntheticCiMatrix}. */
export interface SyntheticCiOptions {
  /** Matrix size n. */
  n: number;
  /** Fraction of the columns in the Reference region (default 0.1). */
  referenceFraction?: number;
  /** Density of the Reference region, 1 − sparsity (default 0.2 = 80 % sparse). */
  referenceDensity?: number;
  /** Density of the Expansion region (default 0.01 = 99 % sparse). */
  expansionDensity?: number;
  seed?: number;
}

/** The matrix, where its Reference region ends, and the densities actually drawn. */
export interface SyntheticCiMatrix {
  readonly label: string;
  readonly matrix: CsrMatrix;
  /** Columns (and rows) 0..boundary−1 form the Reference region. */
  readonly boundary: number;
  readonly measured: { referenceDensity: number; expansionDensity: number; nnz: number };
}

/**
 * Draw the matrix: entry (i, j), j < i, is present with probability referenceDensity when
 * j < boundary, else expansionDensity (geometric skipping: O(nnz) work); mirrored; the
 * diagonal is always present (increasing "determinant energies" −1 + 2i/n), off-diagonal
 * values uniform in [−0.05, 0.05]. Cost O(nnz) time, 12 bytes per non-zero.
 * @example
 * const { matrix, boundary } = syntheticCiMatrix({ n: 10_000, seed: 1 }); // boundary = 1000
 */
export function syntheticCiMatrix(options: SyntheticCiOptions): SyntheticCiMatrix {
  const n = options.n;
  const fr = options.referenceFraction ?? 0.1;
  const pr = options.referenceDensity ?? 0.2;
  const pe = options.expansionDensity ?? 0.01;
  if (!Number.isInteger(n) || n < 1 || n > 2 ** 26) throw new InvalidParameterError('n', 'an integer in 1..2^26', n);
  for (const [name, v] of [
    ['referenceFraction', fr],
    ['referenceDensity', pr],
    ['expansionDensity', pe],
  ] as const) {
    if (!(v >= 0 && v <= 1)) throw new InvalidParameterError(name, 'a number in [0, 1]', v);
  }
  const rand = generators.rng(options.seed ?? 1);
  const boundary = Math.round(fr * n);
  const expected = n + Math.ceil(2 * (pr * boundary * n + pe * n * n * 0.5)) + 1024;
  let cap = Math.min(expected, 2 ** 31 - 1);
  let ri = new Int32Array(cap);
  let ci = new Int32Array(cap);
  let vv = new Float64Array(cap);
  let m = 0;
  const push = (i: number, j: number, v: number) => {
    if (m === cap) {
      cap *= 2;
      const a = new Int32Array(cap);
      a.set(ri);
      ri = a;
      const b = new Int32Array(cap);
      b.set(ci);
      ci = b;
      const c = new Float64Array(cap);
      c.set(vv);
      vv = c;
    }
    ri[m] = i;
    ci[m] = j;
    vv[m++] = v;
  };
  // next present column after j with probability p: j + 1 + floor(log U / log(1 − p))
  const skip = (p: number) => (p >= 1 ? 0 : p <= 0 ? Number.POSITIVE_INFINITY : Math.floor(Math.log(1 - rand()) / Math.log(1 - p)));
  let refCount = 0;
  let expCount = 0;
  for (let i = 0; i < n; i++) {
    push(i, i, -1 + (2 * i) / n);
    const refEnd = Math.min(i, boundary);
    for (let j = skip(pr); j < refEnd; j += 1 + skip(pr)) {
      const v = (rand() - 0.5) * 0.1;
      push(i, j, v);
      push(j, i, v);
      refCount += 2;
    }
    for (let j = boundary + skip(pe); j < i; j += 1 + skip(pe)) {
      const v = (rand() - 0.5) * 0.1;
      push(i, j, v);
      push(j, i, v);
      expCount += 2;
    }
  }
  const matrix = tripletsToCsr(n, ri.subarray(0, m), ci.subarray(0, m), vv.subarray(0, m));
  // Reference region: rows × columns < boundary and its mirror (minus the diagonal block counted twice)
  const refCells = 2 * boundary * n - boundary * boundary - boundary;
  const expCells = (n - boundary) * (n - boundary) - (n - boundary);
  return {
    label: `synthetic CI-like (seed 001 statistics), n=${n}`,
    matrix,
    boundary,
    measured: { referenceDensity: refCells > 0 ? refCount / refCells : 0, expansionDensity: expCells > 0 ? expCount / expCells : 0, nnz: m },
  };
}

/** Counting-sort triplets (no duplicates) into canonical CSR. O(nnz + n). */
function tripletsToCsr(n: number, ri: Int32Array, ci: Int32Array, v: Float64Array): CsrMatrix {
  const nnz = ri.length;
  const rowPtr = new Int32Array(n + 1);
  for (let k = 0; k < nnz; k++) rowPtr[ri[k]! + 1]!++;
  for (let i = 0; i < n; i++) rowPtr[i + 1]! += rowPtr[i]!;
  const next = rowPtr.slice(0, n);
  const colIdx = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  for (let k = 0; k < nnz; k++) {
    const p = next[ri[k]!]!++;
    colIdx[p] = ci[k]!;
    values[p] = v[k]!;
  }
  // sort each row by column
  for (let i = 0; i < n; i++) {
    const s = rowPtr[i]!;
    const e = rowPtr[i + 1]!;
    const order = Array.from({ length: e - s }, (_, t) => s + t).sort((a, b) => colIdx[a]! - colIdx[b]!);
    const c = order.map((k) => colIdx[k]!);
    const w = order.map((k) => values[k]!);
    colIdx.set(c, s);
    values.set(w, s);
  }
  return { format: 'csr', rows: n, cols: n, rowPtr, colIdx, values };
}
