/**
 * The device cases of the session-12 adversarial sweep (bench/hostile-s12.ts): 1×1 and 2×2
 * problems through every solver, a preconditioner that turns NaN under gmres, products that change
 * at an eigensolver's exit, and a tuned-kernel candidate list with an unknown id. Each case is a
 * name and a function giving { pass, detail }.
 */
import { type CsrMatrix, csrDiagonal, generators, HostOperator, InvalidParameterError, type LinearOperator } from '../../packages/formats/src/index';
import { type GpuContext, gpuOperatorFromCsr, type GpuVector, type GpuVectorSpace, tunedOperator } from '../../packages/gpu/src/index';
import { bicg, bicgstab, cg, davidson, eigsMixed, gmres, lanczos, lobpcg, refinedSolve } from '../../packages/solvers/src/index';
import { errText } from './hostile-faults';

type Case = [string, () => Promise<{ pass: boolean; detail: string }>];

/** A dense matrix as CSR (zeros left out). */
function dense(rows: number[][]): CsrMatrix {
  const rowPtr = [0];
  const colIdx: number[] = [];
  const values: number[] = [];
  for (const r of rows) {
    r.forEach((v, j) => {
      if (v !== 0) {
        colIdx.push(j);
        values.push(v);
      }
    });
    rowPtr.push(colIdx.length);
  }
  return { rows: rows.length, cols: rows[0]!.length, rowPtr: Int32Array.from(rowPtr), colIdx: Int32Array.from(colIdx), values: Float64Array.from(values) } as CsrMatrix;
}

/** 1×1 [3] and 2×2 [[2, 1], [1, 3]] (λ = (5 ∓ √5)/2) through the Krylov solvers, refinedSolve and the eigensolvers. */
function tinyCases(ctx: GpuContext, space: GpuVectorSpace): Case[] {
  const out: Case[] = [];
  for (const [name, a, lambda] of [['1×1', dense([[3]]), [3]], ['2×2', dense([[2, 1], [1, 3]]), [(5 - Math.sqrt(5)) / 2, (5 + Math.sqrt(5)) / 2]]] as const) {
    const b = new Float64Array(a.rows).fill(1);
    out.push([`${name}: cg, gmres, bicgstab, bicg converge (true rel ≤ 1e-6); refinedSolve to 1e-12`, async () => {
      const op = gpuOperatorFromCsr(ctx, a);
      const got: string[] = [];
      let pass = true;
      for (const [m, f] of Object.entries({ cg, gmres, bicgstab, bicg })) {
        const r = await f(space, op, space.fromArray(b), { rtol: 1e-6 });
        pass &&= r.converged && r.trueResidual <= 2e-6 * Math.hypot(...b);
        got.push(`${m} ${r.reason} ${r.iterations}`);
      }
      const rr = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: op, innerSpace: space, b, rtol: 1e-12 });
      pass &&= rr.converged;
      op.dispose();
      return { pass, detail: `${got.join(', ')}; refinedSolve ${rr.reason}` };
    }]);
    out.push([`${name}: lanczos, davidson, lobpcg and eigsMixed (each method) for k = 1 and n: every λ to 1e-5 (eigsMixed 1e-12)`, async () => {
      const op = gpuOperatorFromCsr(ctx, a);
      const d = csrDiagonal(a);
      let worst = 0;
      let pass = true;
      for (const k of [...new Set([1, a.rows])]) {
        const runs = [
          await lanczos(space, op, { k }),
          await davidson(space, op, { k, diagonal: d }),
          await lobpcg(space, op, { k }),
        ];
        for (const method of ['lanczos', 'davidson', 'lobpcg'] as const) {
          const r = await eigsMixed({ method, k, fastOperator: op, fastSpace: space, hostOperator: HostOperator.fromCsr(a), diagonal: d });
          pass &&= r.converged && r.values.every((v, i) => Math.abs(v - lambda[i]!) < 1e-12);
        }
        for (const r of runs) {
          pass &&= r.converged;
          for (const [i, v] of r.values.entries()) worst = Math.max(worst, Math.abs(v - lambda[i]!));
          for (const v of r.vectors) space.release(v);
        }
      }
      op.dispose();
      return { pass: pass && worst < 1e-5, detail: `max |λ − λ_exact| ${worst.toExponential(2)} (float32 methods)` };
    }]);
  }
  return out;
}

/** A device operator whose products are × `factor` from the `from`-th on (a kernel that goes wrong late). */
function turning(op: LinearOperator<GpuVector>, from: number, factor: number): LinearOperator<GpuVector> & { products: () => number } {
  let c = 0;
  const scaled = (alpha: number) => (++c >= from ? alpha * factor : alpha);
  return {
    rows: op.rows,
    cols: op.cols,
    apply: (x, y) => op.applyScaled(scaled(1), x, 0, y),
    applyScaled: (alpha, x, beta, y) => op.applyScaled(scaled(alpha), x, beta, y),
    products: () => c,
  };
}

/** The session-12 sweep's device cases. */
export function sweepCases(ctx: GpuContext, space: GpuVectorSpace, small: boolean): Case[] {
  const a = generators.poisson2d(small ? 8 : 16);
  return [
    ...tinyCases(ctx, space),
    ["gmres with a preconditioner turning NaN at its 4th application: 'non-finite', x finite (session 11 tree: x = NaN)", async () => {
      const op = gpuOperatorFromCsr(ctx, a);
      let c = 0;
      const pre: LinearOperator<GpuVector> = {
        rows: a.rows,
        cols: a.rows,
        apply: (x, y) => (++c >= 4 ? space.fill(y, Number.NaN) : space.copy(x, y)),
        applyScaled: () => {
          throw new Error('not used');
        },
      };
      const r = await gmres(space, op, space.fromArray(new Float64Array(a.rows).fill(1)), { rtol: 1e-8, preconditioner: pre });
      const finite = (await space.toArray(r.x)).every(Number.isFinite);
      op.dispose();
      return { pass: r.reason === 'non-finite' && finite, detail: `${r.reason}, x finite ${finite}, true ${r.trueResidual.toExponential(2)}` };
    }],
    ["lanczos / lobpcg / davidson whose products turn ×1.5 at the exit's residuals: 'breakdown', not 'converged'", async () => {
      const op = gpuOperatorFromCsr(ctx, a);
      const d = csrDiagonal(a);
      const runs = {
        lanczos: (o: LinearOperator<GpuVector>) => lanczos(space, o, { k: 2 }),
        lobpcg: (o: LinearOperator<GpuVector>) => lobpcg(space, o, { k: 2 }),
        davidson: (o: LinearOperator<GpuVector>) => davidson(space, o, { k: 2, diagonal: d }),
      };
      const got: string[] = [];
      let pass = true;
      for (const [name, run] of Object.entries(runs)) {
        const clean = turning(op, Number.POSITIVE_INFINITY, 1);
        const ok = await run(clean);
        const bad = await run(turning(op, clean.products() - 1, 1.5));
        pass &&= ok.converged && bad.reason === 'breakdown';
        got.push(`${name} ${ok.reason} → ${bad.reason}`);
        for (const v of [...ok.vectors, ...bad.vectors]) space.release(v);
      }
      op.dispose();
      return { pass, detail: got.join(', ') };
    }],
    ["tunedOperator candidates ['csr-scalar', 'csr-vectr']: InvalidParameterError naming 'csr-vectr' (was a tuning over csr-scalar only)", async () => {
      try {
        (await tunedOperator(ctx, a, { cache: false, candidates: ['csr-scalar', 'csr-vectr'], warn: () => {} })).dispose();
        return { pass: false, detail: 'tuned' };
      } catch (e) {
        return { pass: e instanceof InvalidParameterError && /csr-vectr/.test((e as Error).message), detail: errText(e).slice(0, 140) };
      }
    }],
  ];
}
