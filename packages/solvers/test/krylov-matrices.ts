/**
 * Test matrices for the solver suites: generators (SPD, nonsymmetric, indefinite,
 * ill-conditioned) and real matrices from /work/shared/data/matrices, plus float64 helpers.
 * @module
 */
import { type CsrMatrix, csrFromTriplets, csrSpmv, generators, readMatrixMarket } from '@gpusparse/formats';
import { LuDecomposition, Matrix } from 'ml-matrix';
import { dataFile } from '../../../testdata/index';

/** Path of a matrix in the shared data folder. */
export function sharedMatrixPath(name: string): string {
  return dataFile('matrices', name);
}

/** Read a real matrix (Matrix Market) as CSR. */
export async function loadShared(name: string): Promise<CsrMatrix> {
  return (await readMatrixMarket(sharedMatrixPath(name))).matrix;
}

/** A with its triplets transformed: (i, j, v) → f(i, j, v); `extra` adds entries. */
function mapCsr(a: CsrMatrix, f: (i: number, j: number, v: number) => number, extra: [number, number, number][] = []): CsrMatrix {
  const ri: number[] = [];
  const ci: number[] = [];
  const vs: number[] = [];
  for (let i = 0; i < a.rows; i++) {
    for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
      ri.push(i);
      ci.push(a.colIdx[k]!);
      vs.push(f(i, a.colIdx[k]!, a.values[k]!));
    }
  }
  for (const [i, j, v] of extra) {
    ri.push(i);
    ci.push(j);
    vs.push(v);
  }
  return csrFromTriplets(a.rows, a.cols, ri, ci, vs);
}

/** 2-D convection–diffusion (5-point Laplacian + upwind convection of strength c): nonsymmetric, nonsingular. */
export function convectionDiffusion(nx: number, c: number): CsrMatrix {
  const a = generators.poisson2d(nx);
  // upwind in x: +c on the diagonal, −c on the west neighbour
  return mapCsr(a, (i, j, v) => (i === j ? v + c : j === i - 1 && i % nx !== 0 ? v - c : v));
}

/** poisson2d(nx) − σ·I: symmetric indefinite for σ inside the spectrum (0, 8). */
export function shiftedPoisson(nx: number, sigma: number): CsrMatrix {
  return mapCsr(generators.poisson2d(nx), (i, j, v) => (i === j ? v - sigma : v));
}

/** D·A·D with D_ii = 10^(decades·i/(n−1)): SPD, condition number ~10^(2·decades)·κ(A). */
export function badlyScaled(a: CsrMatrix, decades: number): CsrMatrix {
  const d = (i: number) => 10 ** ((decades * i) / Math.max(1, a.rows - 1));
  return mapCsr(a, (i, j, v) => d(i) * v * d(j));
}

/** Dense float64 solve (ml-matrix LU): the reference solution. */
export function denseSolve(a: CsrMatrix, b: Float64Array): Float64Array {
  const m = Matrix.zeros(a.rows, a.cols);
  for (let i = 0; i < a.rows; i++) for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) m.set(i, a.colIdx[k]!, m.get(i, a.colIdx[k]!) + a.values[k]!);
  return Float64Array.from(new LuDecomposition(m).solve(Matrix.columnVector(Array.from(b))).getColumn(0));
}

/** The dense inverse A⁻¹ as CSR (every entry stored): an exact-inverse preconditioner. */
export function denseInverseCsr(a: CsrMatrix): CsrMatrix {
  const n = a.rows;
  const ri: number[] = [];
  const ci: number[] = [];
  const vs: number[] = [];
  for (let j = 0; j < n; j++) {
    const e = new Float64Array(n);
    e[j] = 1;
    const col = denseSolve(a, e);
    for (let i = 0; i < n; i++) {
      ri.push(i);
      ci.push(j);
      vs.push(col[i]!);
    }
  }
  return csrFromTriplets(n, n, ri, ci, vs);
}

/** ‖v‖₂ in float64. */
export function norm(v: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  return Math.sqrt(s);
}

/** ‖b − A·x‖₂ and ‖ |A|·|x| ‖₂ in float64 (the second scales the rounding error of A·x). */
export function residual64(a: CsrMatrix, x: Float64Array, b: ArrayLike<number>): { r: number; scale: number } {
  const ax = csrSpmv(a, x);
  const abs: CsrMatrix = { ...a, values: a.values.map(Math.abs) };
  const axAbs = csrSpmv(abs, x.map(Math.abs));
  const r = new Float64Array(a.rows);
  for (let i = 0; i < a.rows; i++) r[i] = b[i]! - ax[i]!;
  return { r: norm(r), scale: norm(axAbs) };
}

/** A deterministic right-hand side with entries in [−1, 1). */
export function rhs(n: number, seed = 7): Float64Array {
  const r = generators.rng(seed);
  return Float64Array.from({ length: n }, () => 2 * r() - 1);
}
