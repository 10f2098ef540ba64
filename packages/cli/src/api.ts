/**
 * The one-call API, in the habits of SciPy / CuPy users: `solve(A, b, { method, rtol })` and
 * `eigsh(A, k, { which })`. A may be a CsrMatrix, a Matrix Market path, a mathjs SparseMatrix or
 * an ml-matrix Matrix. The backend is WebGPU when an adapter exists (autotuned operator, float32
 * Krylov / eigen iterations refined to float64 on the host), else the float64 CPU backend. The
 * answer is always float64: `x` (or `vectors`) as Float64Array, plus the solver's result object.
 * Also the converters to and from mathjs and ml-matrix, without depending on either library (the
 * caller passes its own instance / class, so versions never clash).
 * @module
 */
import {
  type CsrMatrix,
  csrDiagonal,
  firstAsymmetry,
  csrFromTriplets,
  csrSpmv,
  csrTranspose,
  DimensionMismatchError,
  HostOperator,
  type HostVectorSpace,
  InvalidMatrixError,
  InvalidParameterError,
  readMatrixMarket,
  validateCsr,
} from '@gpusparse/formats';
import { bicg, bicgstab, cg, davidson, type EigenResult, type EigenvalueBoundReport, eigsMixed, gmres, jacobi, lanczos, lobpcg, refinedSolve, type SolveResult } from '@gpusparse/solvers';
import { checkedBackend, checkedOptions } from './api-options';
import { openBackend } from './util/backend';
import { cgAsymmetryHint } from './util/hints';

/** mathjs' SparseMatrix (`math.sparse(...)`) as far as the converters use it: its JSON form is CSC. */
export interface MathjsSparseLike {
  storage(): string;
  toJSON(): unknown;
}
/** What `toMathjs` needs of a mathjs instance: `sparse` (for the type) and `SparseMatrix.fromJSON`. */
export interface MathjsLike {
  sparse: (...args: never[]) => unknown;
}
type MathjsJson = { mathjs: 'SparseMatrix'; values: number[]; index: number[]; ptr: number[]; size: [number, number]; datatype: string };
/** ml-matrix' Matrix (or any dense matrix) as far as the converters use it. */
export interface MlMatrixLike {
  rows: number;
  columns: number;
  get(row: number, column: number): number;
}
/** A matrix the one-call API accepts. */
export type MatrixInput = CsrMatrix | string | MathjsSparseLike | MlMatrixLike;
export type Backend = 'auto' | 'webgpu' | 'cpu';

/**
 * mathjs SparseMatrix → canonical CSR (float64). Cost O(nnz log nnz).
 * @param s - a mathjs `SparseMatrix` (`math.sparse(...)`), rows × cols, numeric entries
 * @returns a CsrMatrix of the same shape (sorted columns per row)
 * @throws InvalidMatrixError for dense storage, a size that is not 2-D, a pattern matrix or a non-number entry
 */
export function fromMathjs(s: MathjsSparseLike): CsrMatrix {
  if (s.storage() !== 'sparse') throw new InvalidMatrixError('fromMathjs', `expected a SparseMatrix (math.sparse), got ${s.storage()} storage`);
  const j = s.toJSON() as { values?: unknown[]; index: number[]; ptr: number[]; size: number[] };
  const [rows, cols] = j.size as [number, number];
  if (j.size.length !== 2) throw new InvalidMatrixError('fromMathjs', `expected a 2-D SparseMatrix, got size [${j.size.join(', ')}]`);
  if (!j.values) throw new InvalidMatrixError('fromMathjs', 'expected a SparseMatrix with values, got a pattern matrix');
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  for (let c = 0; c < cols; c++) {
    for (let k = j.ptr[c]!; k < j.ptr[c + 1]!; k++) {
      const x = j.values[k];
      if (typeof x !== 'number') throw new InvalidMatrixError('fromMathjs', `expected number entries, got ${typeof x} at (${j.index[k]}, ${c})`);
      ri.push(j.index[k]!);
      ci.push(c);
      v.push(x);
    }
  }
  return csrFromTriplets(rows, cols, ri, ci, v);
}

/**
 * CSR → a mathjs SparseMatrix of `math` (pass your mathjs instance, e.g. `create(all)`). O(nnz).
 * @throws InvalidParameterError when `math` has no `SparseMatrix.fromJSON` (not a mathjs instance)
 */
export function toMathjs<M extends MathjsLike>(a: CsrMatrix, math: M): ReturnType<M['sparse']> {
  const ctor = (math as unknown as { SparseMatrix?: { fromJSON?: (j: MathjsJson) => unknown } }).SparseMatrix;
  if (typeof ctor?.fromJSON !== 'function') throw new InvalidParameterError('math', 'a mathjs instance (create(all)) with SparseMatrix.fromJSON', typeof math);
  const t = csrTranspose(a); // the CSR of Aᵀ is the CSC of A
  const json: MathjsJson = { mathjs: 'SparseMatrix', values: Array.from(t.values), index: Array.from(t.colIdx), ptr: Array.from(t.rowPtr), size: [a.rows, a.cols], datatype: 'number' };
  return ctor.fromJSON(json) as ReturnType<M['sparse']>;
}

/** A dense ml-matrix Matrix (or any `rows`/`columns`/`get`) → CSR of its non-zeros. O(rows·cols). */
export function fromMlMatrix(m: MlMatrixLike): CsrMatrix {
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  for (let i = 0; i < m.rows; i++) {
    for (let j = 0; j < m.columns; j++) {
      const x = m.get(i, j);
      // a string or boolean entry was converted without a word ('4' → 4, true → 1), as fromMathjs refuses it
      if (typeof x !== 'number') throw new InvalidMatrixError('fromMlMatrix', `expected number entries, got ${x === null ? 'null' : typeof x} at (${i}, ${j})`);
      if (x !== 0) {
        ri.push(i);
        ci.push(j);
        v.push(x);
      }
    }
  }
  return csrFromTriplets(m.rows, m.columns, ri, ci, v);
}

/** CSR → a dense matrix of the class you pass (ml-matrix' `Matrix`): `toMlMatrix(a, Matrix)`. */
export function toMlMatrix<T extends { set(row: number, column: number, value: number): unknown }>(a: CsrMatrix, MatrixClass: new (rows: number, columns: number) => T): T {
  const m = new MatrixClass(a.rows, a.cols);
  for (let i = 0; i < a.rows; i++) for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) m.set(i, a.colIdx[k]!, a.values[k]!);
  return m;
}

/**
 * A non-finite entry of an in-memory matrix, named (1-based) — a Matrix Market path is checked
 * by its reader; a CSR, mathjs or ml-matrix input with NaN reached the solver and came back as
 * "jacobi: row 1: expected a non-zero finite pivot, got NaN".
 */
function assertFiniteValues(a: CsrMatrix, where: string): CsrMatrix {
  for (let i = 0; i < a.rows; i++) {
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      const v = a.values[k]!;
      if (!Number.isFinite(v)) throw new InvalidMatrixError(`${where}(row ${i + 1}, column ${a.colIdx[k]! + 1})`, `expected a finite value, got ${v}`);
    }
  }
  return a;
}

/**
 * Any accepted input → canonical CSR; the error names what came when nothing matches.
 * `onWarning` receives the Matrix Market reader's warnings (2^53 rounding, summed repeats,
 * underflow) and a note for a pattern file; solve and eigsh put them in `stats.warnings`.
 * @param where - the name errors use for this argument ('A')
 * @throws InvalidParameterError when `a` is none of the accepted kinds; the reader's
 *   MatrixMarketError (file, line, what was expected) for a malformed file; InvalidMatrixError for a
 *   non-finite entry of an in-memory matrix
 */
export async function toCsr(a: MatrixInput, where = 'A', onWarning?: (message: string) => void): Promise<CsrMatrix> {
  if (typeof a === 'string') {
    // the command's `gen:poisson2d:300` came back as "ENOENT … open 'gen:poisson2d:300'"
    if (/^gen:/.test(a)) throw new InvalidParameterError(where, "a Matrix Market path (the 'gen:' specs are the gpusparse command's: in code build the matrix with generators from @gpusparse/formats, e.g. generators.poisson2d(300))", `'${a}'`);
    if (a === '') throw new InvalidParameterError(where, 'a Matrix Market path', "'' (an empty string)");
    const r = await readMatrixMarket(a, onWarning ? { onWarning: (w) => onWarning(`${w.file}:${w.line}: ${w.message}`) } : {});
    if (r.header.field === 'pattern') onWarning?.(`${a}: a pattern file (structure only, no values): every stored entry is taken as 1`);
    return r.matrix;
  }
  const o = a as unknown as Record<string, unknown>;
  if (o && typeof o === 'object') {
    if ('rowPtr' in o && 'colIdx' in o && 'values' in o) {
      validateCsr(a as CsrMatrix, where);
      return assertFiniteValues(a as CsrMatrix, where);
    }
    if (typeof o.storage === 'function' && typeof o.toJSON === 'function') return assertFiniteValues(fromMathjs(a as MathjsSparseLike), where);
    if (typeof o.rows === 'number' && typeof o.columns === 'number' && typeof o.get === 'function') return assertFiniteValues(fromMlMatrix(a as MlMatrixLike), where);
  }
  const got = o && typeof o === 'object' ? `an object with keys ${Object.keys(o).slice(0, 6).join(', ')}` : a === null ? 'null' : typeof a;
  throw new InvalidParameterError(where, 'a CsrMatrix, a Matrix Market path, a mathjs SparseMatrix or an ml-matrix Matrix', got);
}

/** The reader's warnings first in `stats.warnings` (a file read with summed repeats was a silent 2·A). */
function withReadWarnings<R extends { stats: { warnings?: string[] } }>(r: R, read: readonly string[]): R {
  if (read.length === 0) return r;
  return { ...r, stats: { ...r.stats, warnings: [...read, ...(r.stats.warnings ?? [])] } };
}

function relResidual(a: CsrMatrix, x: Float64Array, b: Float64Array): number {
  const ax = csrSpmv(a, x);
  let r = 0;
  let nb = 0;
  for (let i = 0; i < b.length; i++) {
    r += (b[i]! - ax[i]!) ** 2;
    nb += b[i]! ** 2;
  }
  return Math.sqrt(r) / (Math.sqrt(nb) || 1);
}

const krylov = { cg, gmres, bicgstab, bicg } as const;

/**
 * b as float64, or InvalidParameterError / DimensionMismatchError naming what came: undefined
 * threw a TypeError, a string of digits was read as its characters, 'x' entries became NaN.
 */
function rightHandSide(b: ArrayLike<number>, n: number): Float64Array {
  const isArrayLike = Array.isArray(b) || (ArrayBuffer.isView(b) && !(b instanceof DataView));
  if (!isArrayLike) throw new InvalidParameterError('b', 'an array or typed array of numbers', b === null ? 'null' : typeof b);
  if (b.length !== n) throw new DimensionMismatchError('solve: b', n, b.length);
  for (let i = 0; i < n; i++) {
    const v = b[i];
    if (typeof v !== 'number' && typeof v !== 'bigint') throw new InvalidParameterError(`b[${i}]`, 'a number', typeof v);
    // NaN / ±Infinity came back as reason 'non-finite' with x = 0 and no word of where; so did a
    // bigint beyond float64's range (10n ** 400n became Infinity in the conversion)
    if (typeof v === 'number' && !Number.isFinite(v)) throw new InvalidParameterError(`b[${i}]`, 'a finite number', v);
    if (typeof v === 'bigint' && !Number.isFinite(Number(v))) throw new InvalidParameterError(`b[${i}]`, 'a finite number (a bigint within float64 range)', `a bigint of ${String(v).replace('-', '').length} digits`);
  }
  return Float64Array.from(b as ArrayLike<number>, Number);
}

/** maxIterations: undefined or an integer ≥ 0 (−1 ran 0 iterations; '100' reached the tuner as a string). */
function checkMaxIterations(m: unknown): void {
  if (m !== undefined && !(Number.isSafeInteger(m) && (m as number) >= 0)) throw new InvalidParameterError('maxIterations', 'an integer ≥ 0', m);
}

export interface SolveOptions {
  /** 'cg' (default; A symmetric positive definite), 'gmres', 'bicgstab' or 'bicg'. */
  method?: keyof typeof krylov;
  /** Relative residual ‖b − A·x‖/‖b‖ to reach, in float64 (default 1e-8). */
  rtol?: number;
  maxIterations?: number;
  /** 'jacobi' (default when A's diagonal has no zero) or 'none'. */
  precond?: 'jacobi' | 'none';
  backend?: Backend;
  /** Threads of the CPU backend (default: GPUSPARSE_THREADS, else the cores, at most 8); results are the same for any count. */
  threads?: number;
}

export interface OneCallSolveResult extends Omit<SolveResult<unknown>, 'x'> {
  x: Float64Array;
  /** ‖b − A·x‖/‖b‖ recomputed in float64 on the host. */
  relativeResidual: number;
  backend: string;
  operator: string;
  /** True on WebGPU: float32 inner iterations, float64 refinement. */
  refined: boolean;
}

/** The keys of {@link SolveOptions}; any other key is refused (it would be ignored). */
const SOLVE_KEYS = ['method', 'rtol', 'maxIterations', 'precond', 'backend', 'threads'] as const satisfies readonly (keyof SolveOptions)[];

/**
 * Solve A·x = b. On WebGPU the autotuned float32 Krylov method runs inside float64 iterative
 * refinement, so x is accurate to `rtol` in float64 on either backend.
 * @param A - n × n: a CsrMatrix, a Matrix Market path, a mathjs SparseMatrix or an ml-matrix Matrix
 * @param b - the right-hand side, n finite numbers
 * @param opts - `method` ('cg' default, 'gmres', 'bicgstab', 'bicg'), `rtol` (relative to ‖b‖₂,
 *   default 1e-8), `maxIterations`, `precond` ('none' | 'jacobi'), `backend` ('auto' | 'webgpu' |
 *   'cpu'), `threads`; any other key is refused
 * @returns `x` (Float64Array, length n), `converged`, `reason`, `relativeResidual` (‖b − A·x‖₂ / ‖b‖₂
 *   recomputed in float64), the backend and operator used, and the solver's statistics (`stats.warnings`:
 *   the reader's, then, for a CG that failed on a non-symmetric A, the first pair A(i,j) ≠ A(j,i))
 * @throws InvalidParameterError for an unknown option key or value, a non-finite entry of b (named by
 *   index) or an input that is no matrix; DimensionMismatchError for a non-square A or a b whose
 *   length is not n; NoAdapterError with `backend: 'webgpu'` and no adapter. Not converging is no
 *   error: `converged` is false.
 * @example const { x, converged } = await solve('A.mtx', b, { method: 'cg', rtol: 1e-10 });
 */
export async function solve(A: MatrixInput, b: ArrayLike<number>, opts?: SolveOptions): Promise<OneCallSolveResult> {
  const options = checkedOptions('solve', opts, SOLVE_KEYS);
  const backendChoice = checkedBackend('solve', options.backend);
  const read: string[] = [];
  const a = await toCsr(A, 'A', (m) => read.push(m));
  const method = options.method ?? 'cg';
  // own keys only: 'toString' in krylov is true and ran Object.prototype.toString as the solver
  if (typeof method !== 'string' || !Object.hasOwn(krylov, method)) throw new InvalidParameterError('method', 'cg, gmres, bicgstab or bicg', method);
  if (a.rows !== a.cols) throw new DimensionMismatchError('solve: A must be square; A.cols', a.rows, a.cols);
  const rhs = rightHandSide(b, a.rows);
  const rtol = options.rtol ?? 1e-8;
  checkMaxIterations(options.maxIterations);
  const diag = csrDiagonal(a);
  // an unknown name ('ilu', 'Jacobi') ran without a preconditioner, silently
  if (options.precond !== undefined && options.precond !== 'jacobi' && options.precond !== 'none') throw new InvalidParameterError('precond', "'jacobi' or 'none'", options.precond);
  const precond = options.precond ?? (diag.every((d) => d !== 0) ? 'jacobi' : 'none');
  // a failed CG on a non-symmetric A says why in stats.warnings, after the reader's
  const warn = (converged: boolean) => [...read, ...(converged || method !== 'cg' ? [] : [cgAsymmetryHint(a)].filter((h) => h !== undefined))];
  const backend = await openBackend(backendChoice, options.threads);
  try {
    const built = await backend.operator(a, { expectedProducts: options.maxIterations ?? 1000 });
    const pre = precond === 'jacobi' ? jacobi(backend.space, diag) : undefined;
    const base = { backend: backend.description, operator: built.label };
    if (backend.kind === 'webgpu') {
      const inner = { method, rtol: 1e-4, preconditioner: pre, maxIterations: options.maxIterations };
      const r = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: built.op, innerSpace: backend.space, b: rhs, rtol, inner });
      return withReadWarnings({ ...r, ...base, relativeResidual: relResidual(a, r.x, rhs), refined: true }, warn(r.converged));
    }
    const space = backend.space as HostVectorSpace;
    // b converted at the boundary: into the backend's space (wasm memory on the CPU backend)
    const r = await krylov[method](space, built.op as HostOperator, space.fromArray(rhs), { rtol, maxIterations: options.maxIterations, preconditioner: pre });
    const x = await space.toArray(r.x);
    return withReadWarnings({ ...r, ...base, x, relativeResidual: relResidual(a, x, rhs), refined: false }, warn(r.converged));
  } finally {
    backend.dispose();
  }
}

export interface EigshOptions {
  /** 'smallest' (default) or 'largest' algebraic eigenvalues. */
  which?: 'smallest' | 'largest';
  /** 'lanczos' (default), 'davidson' or 'lobpcg' ('largest' needs lanczos). */
  method?: 'lanczos' | 'davidson' | 'lobpcg';
  /** Relative residual to reach per pair, in float64: ‖A·v − λ·v‖ ≤ tol·‖A‖∞ (default 1e-8, as SciPy's eigsh tol). */
  tol?: number;
  maxIterations?: number;
  backend?: Backend;
  /** Threads of the CPU backend (as in solve). */
  threads?: number;
  /**
   * How the float64 polish after the float32 phase (WebGPU) accepts a pair: 'residual' (default,
   * the tol rule) or 'bound': also when its certified bound 0 ≤ λ̃ − λ ≤ ε²/gap is ≤ 1e-10·|λ̃|
   * (assumes no eigenvalue missed below the guard pair; docs/guides/precision.md). No effect on
   * the CPU backend (float64 throughout).
   */
  accept?: 'residual' | 'bound';
}

export interface OneCallEigshResult extends Omit<EigenResult<unknown>, 'vectors'> {
  vectors: Float64Array[];
  /** WebGPU: per pair, how the polish accepted it and its certified bound (eigsMixed's report). */
  bounds?: EigenvalueBoundReport;
  backend: string;
  operator: string;
}

/** The keys of {@link EigshOptions}; any other key is refused (it would be ignored). */
const EIGSH_KEYS = ['which', 'method', 'tol', 'maxIterations', 'backend', 'threads', 'accept'] as const satisfies readonly (keyof EigshOptions)[];

/** Throws InvalidMatrixError at the first pair (i, j) where |A[i][j] − A[j][i]| > 1e-12·max|A|. O(nnz) (a Map per row took minutes on 10^8 rows). */
function assertSymmetric(a: CsrMatrix): void {
  let scale = 0;
  for (const v of a.values) scale = Math.max(scale, Math.abs(v));
  const bad = firstAsymmetry(a, (x, y) => Math.abs(x - y) > 1e-12 * scale);
  if (bad) throw new InvalidMatrixError('eigsh', `expected a symmetric matrix, got A[${bad.row}][${bad.col}] − A[${bad.col}][${bad.row}] = ${bad.aij - bad.aji}`);
}

/**
 * The k smallest (or largest) eigenpairs of a symmetric A. On WebGPU the float32 iterations
 * are polished in float64 on the host (`eigsMixed`); vectors come back as Float64Array.
 * @param A - a symmetric n × n matrix, in any form {@link solve} accepts
 * @param k - how many eigenpairs, an integer in [1, n]
 * @param opts - `which` ('smallest' default | 'largest', algebraic), `method` ('lanczos' default,
 *   'davidson', 'lobpcg'), `tol` (residual relative to ‖A‖∞, default 1e-8), `maxIterations`,
 *   `accept` ('residual' | 'bound', WebGPU's polish), `backend`, `threads`; any other key is refused
 * @returns `values` (k numbers: ascending for 'smallest', descending for 'largest'), `vectors`
 *   (k Float64Array of length n, unit 2-norm), `converged`, the backend and operator used
 * @throws InvalidMatrixError for a non-symmetric A (naming the first pair A[i][j] ≠ A[j][i]) or a
 *   0×0 one; DimensionMismatchError for a non-square A; InvalidParameterError for a bad k, an
 *   unknown option key or value ('largest' with a method other than lanczos); NoAdapterError with
 *   `backend: 'webgpu'` and no adapter
 * @example const { values } = await eigsh(A, 4, { which: 'smallest' });
 */
export async function eigsh(A: MatrixInput, k: number, opts?: EigshOptions): Promise<OneCallEigshResult> {
  const options = checkedOptions('eigsh', opts, EIGSH_KEYS);
  const backendChoice = checkedBackend('eigsh', options.backend);
  const read: string[] = [];
  const a = await toCsr(A, 'A', (m) => read.push(m));
  if (a.rows !== a.cols) throw new DimensionMismatchError('eigsh: A must be square; A.cols', a.rows, a.cols);
  // the CLI's check (eigs): "k in [1, 0]" would blame k for an empty matrix
  if (a.rows === 0) throw new InvalidMatrixError('eigsh A', 'expected a matrix of order ≥ 1, got 0×0 (no eigenvalues to compute)');
  if (!Number.isInteger(k) || k < 1 || k > a.rows) throw new InvalidParameterError('k', `an integer in [1, ${a.rows}]`, k);
  assertSymmetric(a);
  const which = options.which ?? 'smallest';
  const method = options.method ?? 'lanczos';
  const accept = options.accept ?? 'residual';
  // SciPy's which codes ('LA', 'SA', 'LM') or a misspelt method ran as 'smallest' / lobpcg before
  if (which !== 'smallest' && which !== 'largest') throw new InvalidParameterError('which', "'smallest' or 'largest' (algebraic; SciPy's 'SA' / 'LA')", which);
  if (method !== 'lanczos' && method !== 'davidson' && method !== 'lobpcg') throw new InvalidParameterError('method', "'lanczos', 'davidson' or 'lobpcg'", method);
  // ≥ 1 accepts any vector (session 13: tol 2 'converged' to values that are not eigenvalues)
  if (options.tol !== undefined && !(typeof options.tol === 'number' && options.tol > 0 && options.tol < 1)) throw new InvalidParameterError('tol', 'a finite number > 0 and below 1 (a relative tolerance: ≥ 1 accepts any vector)', options.tol);
  checkMaxIterations(options.maxIterations);
  if (accept !== 'residual' && accept !== 'bound') throw new InvalidParameterError('accept', "'residual' or 'bound'", accept);
  if (which === 'largest' && method !== 'lanczos') throw new InvalidParameterError('method', "lanczos with which: 'largest'", method);
  let normInf = 0; // ‖A‖∞ ≥ every |λ|: the scale that makes the tolerance relative
  for (let i = 0; i < a.rows; i++) {
    let row = 0;
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) row += Math.abs(a.values[k]!);
    normInf = Math.max(normInf, row);
  }
  const residualTol = (options.tol ?? 1e-8) * (normInf || 1);
  const diagonal = csrDiagonal(a);
  const backend = await openBackend(backendChoice, options.threads);
  try {
    const built = await backend.operator(a, { expectedProducts: 500 });
    const base = { backend: backend.description, operator: built.label };
    if (backend.kind === 'webgpu') {
      const r = await eigsMixed({ method, k, which, fastOperator: built.op, fastSpace: backend.space, hostOperator: HostOperator.fromCsr(a), diagonal, residualTol, accept, fastMaxIterations: options.maxIterations });
      return withReadWarnings({ ...r, ...base }, read);
    }
    const space = backend.space as HostVectorSpace;
    const op = built.op as HostOperator;
    const maxIterations = options.maxIterations;
    let r: EigenResult<Float64Array>;
    if (method === 'lanczos') r = await lanczos(space, op, { k, which, residualTol, maxIterations });
    else if (method === 'davidson') r = await davidson(space, op, { k, diagonal, residualTol, maxIterations });
    else r = await lobpcg(space, op, { k, residualTol, maxIterations });
    // plain arrays at the boundary (the CPU backend's vectors are views on its wasm memory)
    const vectors = await Promise.all(r.vectors.map((v) => space.toArray(v)));
    return withReadWarnings({ ...r, vectors, ...base }, read);
  } finally {
    backend.dispose();
  }
}
