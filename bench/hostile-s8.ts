/**
 * Session 8 hardening on a real GPU (subgroup size 32, real timestamps): the fixes made on
 * lavapipe, checked where the tuner and in-solve tuning really time. A pass/fail record per case,
 * one summary line each, plus the host timing of the one compare per entry the fixes add to the
 * CSR upload's validation (the only cost they add to a hot path):
 *   - device DIA build (gpuOperatorFromCsr dia / dia-tiled): a CSR with a repeated column is an
 *     InvalidMatrixError (was a silently wrong product); edge shapes (0×0, 1×1, corner offsets,
 *     rectangular, split over 256-byte bindings) against the float64 product;
 *   - the tuner on a 2·10^6-row tridiagonal (6·10^6 non-zeros: verification samples rows) whose
 *     row 20 001 repeats a column: no DIA candidate may be timed or win, the product right;
 *   - in-solve tuning (timestamps) with a candidate whose encode throws, and one whose products
 *     are NaN: CG converges to the right x, or does not report 'converged';
 *   - the reusable SpGEMM plan: execute after dispose / with a disposed operand is refused;
 *   - host ms of the CSR upload's index validation on a 7-point Poisson 160³ (2.8·10^7 nnz), which
 *     now also finds the first unsorted or repeated column (one compare per entry), against the
 *     same loop with bounds checks only.
 *
 *   node .gpukit/app/hostile-s8.mjs [--out $OUT/hostile-s8.json]
 */
import { type CsrMatrix, csrFromTriplets, csrSpmv, generators, hmFromCsr } from '../packages/formats/src/index';
import { validateCsrIndices } from '../packages/gpu/src/memory/upload';
import { type GpuOperator, gpuOperatorFromCsr, InSolveOperator, tunedOperator } from '../packages/gpu/src/index';
import { internals, tunedInSolve } from '../packages/gpu/test/support/faults';
import { uploadDiagonal } from '../packages/gpu/src/spgemm/device-diagonal';
import { planSpgemm } from '../packages/gpu/src/spgemm/plan';
import { cg } from '../packages/solvers/src/index';
import { errText, FAULT_CANDIDATES, hostileHarness, hostResidual, type Tuned } from './lib/hostile-faults';

const { ctx, space, line, finish } = await hostileHarness('hostile-s8');

/** n × n tridiagonal; row `dupRow` (when given) repeats its diagonal column instead of i + 1. */
function tridiagonal(n: number, dupRow = -1): CsrMatrix {
  const rowPtr = new Int32Array(n + 1);
  const col = new Int32Array(3 * n);
  const val = new Float64Array(3 * n);
  let k = 0;
  for (let i = 0; i < n; i++) {
    for (const d of [-1, 0, 1]) {
      const j = i + d;
      if (j < 0 || j >= n) continue;
      col[k] = i === dupRow && d === 1 ? i : j;
      val[k++] = d === 0 ? 4 : -1 - (i % 3);
    }
    rowPtr[i + 1] = k;
  }
  return { format: 'csr', rows: n, cols: n, rowPtr, colIdx: col.slice(0, k), values: val.slice(0, k) };
}

async function maxError(op: GpuOperator, a: CsrMatrix): Promise<number> {
  const x = new Float64Array(a.cols).map((_, i) => 1 + (i % 17));
  const y = space.create(a.rows);
  op.apply(space.fromArray(x), y);
  const got = await space.toArray(y);
  const want = csrSpmv(a, x);
  let e = 0;
  for (let i = 0; i < a.rows; i++) e = Math.max(e, Math.abs(got[i]! - want[i]!) / Math.max(1, Math.abs(want[i]!)));
  space.release(y);
  return e;
}

// 1. device DIA build
const dup: CsrMatrix = { format: 'csr', rows: 2, cols: 2, rowPtr: Int32Array.of(0, 3, 4), colIdx: Int32Array.of(0, 0, 1, 1), values: Float64Array.of(1, 2, 7, 5) };
const shapes: Array<[string, CsrMatrix, { maxBindingBytes?: number }?]> = [
  ['0x0', csrFromTriplets(0, 0, [], [], [])],
  ['1x1', csrFromTriplets(1, 1, [0], [0], [4])],
  ['5x5 offsets +-4', csrFromTriplets(5, 5, [0, 4, 2], [4, 0, 2], [1, 2, 3])],
  ['3x7', csrFromTriplets(3, 7, [0, 2, 1], [6, 0, 3], [1, 2, 3])],
  ['7x3', csrFromTriplets(7, 3, [6, 0, 5], [0, 2, 2], [1, 2, 3])],
  ['3000 split 256 B', tridiagonal(3000), { maxBindingBytes: 256 }],
];
for (const k of ['dia', 'dia-tiled']) {
  try {
    gpuOperatorFromCsr(ctx, dup, { kernel: k }).dispose();
    line({ name: `${k} repeated column refused`, pass: false, detail: 'accepted' });
  } catch (e) {
    line({ name: `${k} repeated column refused`, pass: (e as Error).name === 'InvalidMatrixError', detail: errText(e) });
  }
  for (const [name, a, upload] of shapes) {
    try {
      const op = gpuOperatorFromCsr(ctx, a, { kernel: k, upload: upload ?? {} });
      const e = await maxError(op, a);
      op.dispose();
      line({ name: `${k} ${name}`, pass: e < 1e-5, maxRelError: e });
    } catch (e) {
      line({ name: `${k} ${name}`, pass: false, detail: errText(e) });
    }
  }
}

// 2. the tuner on a large matrix with one repeated column in a row verification does not sample
{
  const n = 2_000_000;
  const bad = 20_001;
  const a = tridiagonal(n, bad);
  const t0 = performance.now();
  try {
    const op = await tunedOperator(ctx, a, { warn: () => {}, cache: false, candidates: ['dia', 'dia-tiled', 'csr-vector', 'csr-scalar'], budgetMs: 1e5 });
    const ms = performance.now() - t0;
    const dia = op.tuning.trials.filter((t) => t.kernel.startsWith('dia') && t.status !== 'skipped');
    const e = await maxError(op, a);
    line({ name: 'tuner, 6e6 nnz with a repeated column', pass: dia.every((t) => t.status !== 'timed') && !op.label.startsWith('dia') && e < 1e-5, detail: `winner ${op.label}, DIA trials ${dia.map((t) => t.status).join(',')}, max rel error ${e.toExponential(2)}, tune ${ms.toFixed(0)} ms` });
    op.dispose();
  } catch (e) {
    line({ name: 'tuner, 6e6 nnz with a repeated column', pass: false, detail: errText(e) });
  }
}

// 3. in-solve tuning with failing candidates
async function inSolveCase(name: string, sabotage: (o: GpuOperator) => void): Promise<void> {
  const a = generators.poisson2d(256);
  const b = csrSpmv(a, new Float64Array(a.rows).fill(1));
  try {
    const op = (await tunedInSolve(ctx, a, FAULT_CANDIDATES)) as Tuned;
    if (!(op instanceof InSolveOperator)) throw new Error(`expected an InSolveOperator, got ${(op as GpuOperator).label}`);
    sabotage(internals(op).others[0]!);
    const r = await cg(space, op, space.fromArray(b), { rtol: 1e-5, maxIterations: 5000 });
    await op.decided;
    const rel = hostResidual(a, await space.toArray(r.x), b).rel;
    const pass = r.converged ? rel < 1e-4 : r.reason !== 'converged';
    line({ name, pass, detail: `reason ${r.reason}, ${r.iterations} it, true rel ${rel.toExponential(2)}, active ${op.activeLabel}, failed ${op.tuning.failed}` });
    op.dispose();
  } catch (e) {
    line({ name, pass: (e as Error).name !== 'TypeError', detail: errText(e) });
  }
}
await inSolveCase('in-solve, a candidate that throws', (o) => {
  o.applyScaled = () => {
    throw new Error('createComputePipeline failed (injected)');
  };
});
await inSolveCase('in-solve, a candidate whose products are NaN', (o) => {
  const orig = o.applyScaled.bind(o);
  o.applyScaled = (_alpha, x, beta, y) => orig(Number.NaN, x, beta, y);
});

// 4. the SpGEMM plan after dispose / with a disposed operand
{
  const da = uploadDiagonal(ctx, hmFromCsr(tridiagonal(1000)));
  const db = uploadDiagonal(ctx, hmFromCsr(tridiagonal(1000)));
  const plan = planSpgemm(ctx, da, db);
  plan.dispose();
  try {
    plan.execute(da, db);
    line({ name: 'spgemm plan execute after dispose refused', pass: false, detail: 'accepted' });
  } catch (e) {
    line({ name: 'spgemm plan execute after dispose refused', pass: (e as Error).name === 'InvalidParameterError', detail: errText(e) });
  }
  const p2 = planSpgemm(ctx, da, db);
  db.dispose();
  try {
    p2.execute(da, db);
    line({ name: 'spgemm plan disposed operand refused', pass: false, detail: 'accepted' });
  } catch (e) {
    line({ name: 'spgemm plan disposed operand refused', pass: (e as Error).name === 'InvalidParameterError', detail: errText(e) });
  }
  p2.dispose();
  da.dispose();
}

// 5. host cost of the upload's index validation, which now also finds the first unsorted entry
// (one compare per entry in the same loop), against the same loop without it
{
  const p = generators.poisson3d(160);
  const plain = (a: CsrMatrix): number => {
    let bad = 0;
    for (let i = 0; i < a.rows; i++) {
      for (let k = a.rowPtr[i]!; k < a.rowPtr[i + 1]!; k++) {
        const c = a.colIdx[k]!;
        if (c < 0 || c >= a.cols) bad++;
      }
    }
    return bad;
  };
  const best = (f: () => unknown): number => {
    let m = Number.POSITIVE_INFINITY;
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      f();
      m = Math.min(m, performance.now() - t0);
    }
    return m;
  };
  const withCheck = best(() => validateCsrIndices(p, 'bench'));
  const without = best(() => plain(p));
  line({ name: 'upload index validation cost, poisson3d 160^3', pass: true, detail: `${p.colIdx.length} nnz: ${withCheck.toFixed(1)} ms validateCsrIndices (bounds, rowPtr, sortedness), ${without.toFixed(1)} ms a bare bounds-only loop over the columns (best of 5)`, withMs: withCheck, withoutMs: without });
}

await finish();
