/**
 * Deterministic matrix generators for tests and benchmarks. Every generator takes a seed and
 * returns canonical CSR; the same arguments give the same matrix on every machine.
 * @module
 */
import { InvalidParameterError } from '../core/errors';
import { mulberry32 } from '../core/random';
import type { CsrMatrix } from '../core/types';

/** A small, fast, seedable PRNG (mulberry32, core/random.ts). Returns floats in [0, 1). */
export const rng: (seed: number) => () => number = mulberry32;

const MAX_INT32 = 2147483647;

/**
 * Shape checks before anything is allocated: rows and columns must be integers in
 * [0, 2^31 − 1] (32-bit indices), so `poisson2d(100000)` (10^10 rows) is an
 * InvalidParameterError naming the size instead of a RangeError from a typed-array allocation.
 */
function checkShape(rows: number, cols: number): void {
  for (const [what, n] of [['rows', rows], ['columns', cols]] as const) {
    if (!Number.isSafeInteger(n) || n < 0 || n > MAX_INT32) {
      throw new InvalidParameterError(`generated matrix ${what}`, `an integer in [0, ${MAX_INT32}] (32-bit indices)`, n);
    }
  }
}

/**
 * Build canonical CSR row by row: `rowCols(i)` returns row i's columns (any order, unique).
 * The columns go straight into one growing Int32Array (sorted in place per row), then the values
 * are filled in row order — the same calls in the same order as before, so seeded generators give
 * the same matrices. (One small array per row kept until the end cost ≈ 360 bytes of JavaScript
 * heap a row: poisson3d(450), 91 M rows, needed ≈ 33 GB and died at Node's heap limit.)
 */
function buildRows(
  rows: number,
  cols: number,
  rowCols: (i: number) => ArrayLike<number>,
  value: (i: number, j: number) => number,
): CsrMatrix {
  checkShape(rows, cols);
  const rowPtr = new Int32Array(rows + 1);
  let colIdx = new Int32Array(Math.max(16, Math.min(2 ** 24, rows * 4)));
  let nnz = 0;
  for (let i = 0; i < rows; i++) {
    const c = rowCols(i);
    const len = c.length;
    if (nnz + len > MAX_INT32) throw new InvalidParameterError('generated matrix non-zeros', `at most ${MAX_INT32} (32-bit indices)`, `more than that by row ${i} of ${rows}`);
    if (nnz + len > colIdx.length) {
      const grown = new Int32Array(Math.min(MAX_INT32, Math.max(nnz + len, Math.ceil(colIdx.length * 1.5))));
      grown.set(colIdx.subarray(0, nnz));
      colIdx = grown;
    }
    for (let k = 0; k < len; k++) colIdx[nnz + k] = c[k]!;
    if (len > 1) colIdx.subarray(nnz, nnz + len).sort();
    nnz += len;
    rowPtr[i + 1] = nnz;
  }
  if (colIdx.length !== nnz) colIdx = colIdx.slice(0, nnz);
  const values = new Float64Array(nnz);
  for (let i = 0; i < rows; i++) {
    for (let k = rowPtr[i]!; k < rowPtr[i + 1]!; k++) values[k] = value(i, colIdx[k]!);
  }
  return { format: 'csr', rows, cols, rowPtr, colIdx, values };
}

/** Distinct random columns in [0, cols): `count` of them (count ≤ cols). */
function sampleColumns(r: () => number, cols: number, count: number): number[] {
  const k = Math.min(count, cols);
  if (k * 2 > cols) {
    // dense-ish: partial Fisher-Yates over all columns
    const all = Array.from({ length: cols }, (_, j) => j);
    for (let t = 0; t < k; t++) {
      const s = t + Math.floor(r() * (cols - t));
      const tmp = all[t]!;
      all[t] = all[s]!;
      all[s] = tmp;
    }
    return all.slice(0, k);
  }
  const seen = new Set<number>();
  while (seen.size < k) seen.add(Math.floor(r() * cols));
  return [...seen];
}

const randValue = (r: () => number) => () => r() * 2 - 1;

/** Uniform random columns: every row has `perRow` non-zeros (values in [-1, 1)). */
export function uniformRandom(rows: number, cols: number, perRow: number, seed = 1): CsrMatrix {
  const r = rng(seed);
  const v = randValue(r);
  return buildRows(rows, cols, () => sampleColumns(r, cols, perRow), v);
}

/**
 * Power-law row lengths: row length ~ minLen·u^(-1/(alpha-1)), capped at maxLen; columns uniform.
 * alpha around 2–3 gives the skew of web and circuit graphs.
 */
export function powerLaw(rows: number, cols: number, opts: { alpha?: number; minLen?: number; maxLen?: number; seed?: number } = {}): CsrMatrix {
  const alpha = opts.alpha ?? 2.2;
  const minLen = opts.minLen ?? 1;
  const maxLen = Math.min(opts.maxLen ?? Math.max(1, Math.floor(cols / 4)), cols);
  if (alpha <= 1) throw new InvalidParameterError('alpha', '> 1', alpha);
  const r = rng(opts.seed ?? 1);
  const v = randValue(r);
  return buildRows(
    rows,
    cols,
    () => {
      const len = Math.min(maxLen, Math.floor(minLen * (1 - r()) ** (-1 / (alpha - 1))));
      return sampleColumns(r, cols, len);
    },
    v,
  );
}

/** Banded: columns i−lower … i+upper (clipped). Diagonally dominant values when `spd`. */
export function banded(n: number, lower: number, upper: number, opts: { seed?: number; spd?: boolean } = {}): CsrMatrix {
  const r = rng(opts.seed ?? 1);
  const spd = opts.spd ?? false;
  return buildRows(
    n,
    n,
    (i) => {
      const out: number[] = [];
      for (let j = Math.max(0, i - lower); j <= Math.min(n - 1, i + upper); j++) out.push(j);
      return out;
    },
    spd ? (i, j) => (i === j ? lower + upper + 2 : -1 / (1 + Math.abs(i - j))) : () => r() * 2 - 1,
  );
}

/** 2-D 5-point Laplacian on an nx × ny grid (SPD; n = nx·ny). Eigenvalues are known in closed form. */
export function poisson2d(nx: number, ny = nx): CsrMatrix {
  return buildRows(nx * ny, nx * ny, fivePoint(nx, ny), (a, b) => (a === b ? 4 : -1));
}

/** Columns of row p of a 5-point stencil on an nx × ny grid (row-major, p = i + nx·j). */
function fivePoint(nx: number, ny: number): (p: number) => number[] {
  return (p) => {
    const i = p % nx;
    const j = Math.floor(p / nx);
    const out = [p];
    if (i > 0) out.push(p - 1);
    if (i < nx - 1) out.push(p + 1);
    if (j > 0) out.push(p - nx);
    if (j < ny - 1) out.push(p + nx);
    return out;
  };
}

/**
 * 2-D convection–diffusion −Δu + w·∇u on an nx × ny grid with unit spacing, constant wind
 * w = (wx, wy), central differences: nonsymmetric for w ≠ 0 (5 points per row; row p has
 * 4 on the diagonal, −1 − wx/2 to the west, −1 + wx/2 to the east, −1 − wy/2 south and
 * −1 + wy/2 north). Nonsingular for every w (its symmetric part is the 2-D Laplacian), the
 * standard GMRES/BiCGStab test problem.
 * @example convectionDiffusion2d(100, 100, 0.5, 0.25).rows; // 10000
 */
export function convectionDiffusion2d(nx: number, ny = nx, wx = 0.5, wy = 0.25): CsrMatrix {
  return buildRows(nx * ny, nx * ny, fivePoint(nx, ny), (a, b) => (a === b ? 4 : b === a - 1 ? -1 - wx / 2 : b === a + 1 ? -1 + wx / 2 : b < a ? -1 - wy / 2 : -1 + wy / 2));
}

/** 3-D 7-point Laplacian on an n × n × n grid (SPD). */
export function poisson3d(nx: number, ny = nx, nz = nx): CsrMatrix {
  const nxy = nx * ny;
  return buildRows(
    nxy * nz,
    nxy * nz,
    (p) => {
      const i = p % nx;
      const j = Math.floor(p / nx) % ny;
      const k = Math.floor(p / nxy);
      const out = [p];
      if (i > 0) out.push(p - 1);
      if (i < nx - 1) out.push(p + 1);
      if (j > 0) out.push(p - nx);
      if (j < ny - 1) out.push(p + nx);
      if (k > 0) out.push(p - nxy);
      if (k < nz - 1) out.push(p + nxy);
      return out;
    },
    (a, b) => (a === b ? 6 : -1),
  );
}

/** 1-D Laplacian tridiag(−1, 2, −1): eigenvalues 2 − 2cos(kπ/(n+1)). */
export function laplacian1d(n: number): CsrMatrix {
  return buildRows(
    n,
    n,
    (i) => [i - 1, i, i + 1].filter((j) => j >= 0 && j < n),
    (i, j) => (i === j ? 2 : -1),
  );
}

/** Random rows with a fraction of empty rows (rows drawn with probability emptyFraction are empty). */
export function withEmptyRows(rows: number, cols: number, perRow: number, emptyFraction: number, seed = 1): CsrMatrix {
  const r = rng(seed);
  const v = randValue(r);
  return buildRows(rows, cols, () => (r() < emptyFraction ? [] : sampleColumns(r, cols, perRow)), v);
}

/** Sparse rows of `perRow` non-zeros plus one dense row (index `denseRow`) of `denseLen` non-zeros. */
export function oneDenseRow(rows: number, cols: number, perRow: number, denseLen: number, denseRow = 0, seed = 1): CsrMatrix {
  const r = rng(seed);
  const v = randValue(r);
  return buildRows(rows, cols, (i) => sampleColumns(r, cols, i === denseRow ? denseLen : perRow), v);
}

/** Block-structured: dense r×c blocks placed at random block columns, `blocksPerRow` per block row. */
export function blockStructured(blockRows: number, blockCols: number, br: number, bc: number, blocksPerRow: number, seed = 1): CsrMatrix {
  const r = rng(seed);
  const v = randValue(r);
  const choice: number[][] = [];
  for (let b = 0; b < blockRows; b++) choice.push(sampleColumns(r, blockCols, blocksPerRow));
  return buildRows(
    blockRows * br,
    blockCols * bc,
    (i) => {
      const out: number[] = [];
      for (const bj of choice[Math.floor(i / br)]!) for (let t = 0; t < bc; t++) out.push(bj * bc + t);
      return out;
    },
    v,
  );
}

/**
 * A matrix with seed 001's CI structure (labelled synthetic): the first `refFraction` of the
 * columns form a Reference band that each row fills at density `refDensity` (≈ 20 %, i.e. 80 %
 * sparsity), the remaining Expansion columns at density `expDensity` (≈ 1 %). Symmetric pattern
 * is not enforced; use for SpMV benchmarks.
 */
export function ciLike(n: number, opts: { refFraction?: number; refDensity?: number; expDensity?: number; seed?: number; maxPerRow?: number } = {}): CsrMatrix {
  const refCols = Math.max(1, Math.floor(n * (opts.refFraction ?? 0.1)));
  const refDensity = opts.refDensity ?? 0.2;
  const expDensity = opts.expDensity ?? 0.01;
  const maxPerRow = opts.maxPerRow ?? Number.POSITIVE_INFINITY;
  const r = rng(opts.seed ?? 1);
  const v = randValue(r);
  return buildRows(
    n,
    n,
    (i) => {
      const nRef = Math.min(maxPerRow, Math.round(refCols * refDensity * (0.5 + r())));
      const nExp = Math.min(maxPerRow, Math.round((n - refCols) * expDensity * (0.5 + r())));
      const cols = new Set<number>(sampleColumns(r, refCols, nRef));
      for (const c of sampleColumns(r, n - refCols, nExp)) cols.add(refCols + c);
      cols.add(i);
      return [...cols];
    },
    (i, j) => (i === j ? 10 + r() : v() * 0.1),
  );
}

/**
 * A matrix whose values repeat, as a CI Hamiltonian's do (value-indexed formats such as csr-vi):
 * `perRow` distinct random columns per row (rows ≡ 3 mod 7 empty, ≡ 5 mod 7 one entry), each value
 * drawn from a pool of `pool` random values, except a `unique` share of one-off values.
 * @example repeatedValues(400, 300_017, 40, 50, 0.1, 7) // rows spanning several 2^16-column windows
 */
export function repeatedValues(rows: number, cols: number, perRow: number, pool: number, unique: number, seed = 1): CsrMatrix {
  const r = rng(seed);
  const values = Array.from({ length: pool }, () => r() * 2 - 1);
  return buildRows(
    rows,
    cols,
    (i) => sampleColumns(r, cols, i % 7 === 3 ? 0 : i % 7 === 5 ? 1 : perRow),
    () => (r() < unique ? r() * 10 : values[Math.floor(r() * pool)]!),
  );
}
