/**
 * Example: interoperability.
 * - mathjs: a `SparseMatrix` in (its CSC arrays `_values`, `_index`, `_ptr` become our CSR), a
 *   product computed by gpusparse, and a `SparseMatrix` out again;
 * - ml-matrix: a dense `Matrix` as a LinearOperator (so our solvers run on it), and our sparse
 *   matrix as a dense `Matrix` for its eigen decomposition.
 *
 *   pnpm tsx examples/interop-mathjs-mlmatrix.ts
 */
import { type CsrMatrix, csrFromTriplets, csrSpmv, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { cg, lanczos } from '@gpusparse/solvers';
import { all, create } from 'mathjs';
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';

const math = create(all);
/** mathjs' sparse matrix type (the value `math.sparse()` returns). */
type SparseMatrix = ReturnType<typeof math.sparse>;

/** mathjs SparseMatrix (CSC inside) → canonical CSR. */
function fromMathjs(s: SparseMatrix): CsrMatrix {
  const [rows, cols] = s.size() as [number, number];
  const ri: number[] = [];
  const ci: number[] = [];
  const v: number[] = [];
  s.forEach((value: number, index: number[]) => {
    ri.push(index[0]!);
    ci.push(index[1]!);
    v.push(value);
  }, true);
  return csrFromTriplets(rows, cols, ri, ci, v);
}

/** canonical CSR → mathjs SparseMatrix. */
function toMathjs(a: CsrMatrix): SparseMatrix {
  const s = math.sparse() as SparseMatrix;
  s.resize([a.rows, a.cols]);
  for (let i = 0; i < a.rows; i++) for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) s.set([i, a.colIdx[k]!], a.values[k]!);
  return s;
}

// 1. mathjs in: a tridiagonal SPD matrix built by mathjs
const n = 50;
const m = math.sparse() as SparseMatrix;
m.resize([n, n]);
for (let i = 0; i < n; i++) {
  m.set([i, i], 4);
  if (i > 0) m.set([i, i - 1], -1);
  if (i < n - 1) m.set([i, i + 1], -1);
}
const a = fromMathjs(m);
const x = Float64Array.from({ length: n }, (_, i) => i / n);
const ours = csrSpmv(a, x);
const theirs = (math.multiply(m, math.matrix(Array.from(x))) as unknown as { toArray(): number[] }).toArray();
const diff = Math.max(...Array.from(ours, (y, i) => Math.abs(y - theirs[i]!)));
console.log(`mathjs → CSR: ${a.rows}×${a.cols}, nnz ${a.rowPtr[a.rows]}; max |ours − mathjs| for A·x = ${diff.toExponential(2)}`);

// solve with our CG and hand the solution back to mathjs
const space = new HostVectorSpace();
const sol = await cg(space, HostOperator.fromCsr(a), ours, { rtol: 1e-12 });
console.log(`CG on the mathjs matrix: ${sol.reason} in ${sol.iterations} iterations`);
const back = toMathjs(a);
console.log(`CSR → mathjs: size ${JSON.stringify(back.size())}, equal to the original: ${math.deepEqual(back, m)}`);

// 2. ml-matrix: a dense Matrix as an operator for our Lanczos, checked against its own eigen solver
const d = new Matrix(Array.from({ length: 30 }, (_, i) => Array.from({ length: 30 }, (_, j) => (i === j ? i + 1 : 0.01 * Math.cos(i * j)))));
const sym = d.add(d.transpose()).mul(0.5);
const op = HostOperator.fromFunction(30, 30, (xv, yv) => {
  const r = sym.mmul(Matrix.columnVector(Array.from(xv)));
  for (let i = 0; i < 30; i++) yv[i] = r.get(i, 0);
});
const ev = await lanczos(space, op, { k: 3, which: 'smallest' });
const dense = new EigenvalueDecomposition(sym, { assumeSymmetric: true }).realEigenvalues.sort((p, q) => p - q);
console.log(`ml-matrix operator, Lanczos k=3: ${ev.values.map((v) => v.toFixed(12)).join(', ')}`);
console.log(`ml-matrix dense eigensolver:      ${dense.slice(0, 3).map((v) => v.toFixed(12)).join(', ')}`);
const eigErr = Math.max(...ev.values.map((v, i) => Math.abs(v - dense[i]!)));

// 3. our sparse matrix as a dense ml-matrix Matrix
const denseA = new Matrix(a.rows, a.cols);
for (let i = 0; i < a.rows; i++) for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) denseA.set(i, a.colIdx[k]!, a.values[k]!);
console.log(`CSR → ml-matrix: ${denseA.rows}×${denseA.columns}, trace ${denseA.trace()}`);
if (diff > 1e-12 || !sol.converged || eigErr > 1e-9) process.exit(1);
