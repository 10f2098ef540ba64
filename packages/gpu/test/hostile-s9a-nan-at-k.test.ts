/**
 * Session 9: a device operator whose product is NaN or ±Inf at one call k only (a kernel fault,
 * a driver hiccup, a bit flip in an exponent). Every solver must then stop with a named error or
 * a non-converged result that says why, or recover and converge to the right answer — never
 * report converged with a NaN or wrong x or λ.
 */
import { csrSpmv, generators as g, HostOperator, type LinearOperator } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { bicgstab, cg, davidson, eigsMixed, gmres, lanczos, lobpcg, refinedSolve } from '../../solvers/src/index';
import { type GpuOperator, gpuOperatorFromCsr, type GpuVector, GpuVectorSpace } from '../src/index';
import { testContext, trueRelative } from './helpers';

afterAll(async () => (await testContext()).dispose());

const a = g.poisson2d(16);
const b = csrSpmv(a, new Float64Array(a.rows).fill(1));
const hostOp = HostOperator.fromCsr(a);
// the 5-point Laplacian's eigenvalues in closed form (λ₂ = λ₃: a degenerate pair)
const closed: number[] = [];
for (let i = 1; i <= 16; i++) for (let j = 1; j <= 16; j++) closed.push(4 - 2 * Math.cos((i * Math.PI) / 17) - 2 * Math.cos((j * Math.PI) / 17));
const want = { values: closed.sort((p, q) => p - q).slice(0, 2) };

/**
 * The GPU operator of `a`, whose `at`-th product (1-based) is `bad` (NaN or ±Inf) everywhere, or
 * in its row `row` only when given.
 */
function faulty(op: GpuOperator, at: number, bad: number, row?: number): LinearOperator<GpuVector> & { calls: () => number } {
  let calls = 0;
  const product = (alpha: number, x: GpuVector, beta: number, y: GpuVector) => {
    calls++;
    if (calls !== at || row === undefined) {
      // α·A·x with α = NaN / Inf: every row NaN or ±Inf (0·Inf is NaN too)
      op.applyScaled(calls === at ? bad : alpha, x, beta, y);
      return;
    }
    op.applyScaled(alpha, x, beta, y);
    op.ctx.recorder.flush(); // the write below must land after the product
    op.ctx.device.queue.writeBuffer(y.buf.buffer, 4 * row, Float32Array.of(bad));
  };
  return {
    rows: op.rows,
    cols: op.cols,
    label: `${op.label} (product ${at} = ${bad})`,
    apply: (x, y) => product(1, x, 0, y),
    applyScaled: product,
    diagonal: () => op.diagonal!(),
    calls: () => calls,
  };
}

const FAIL_REASONS = ['non-finite', 'breakdown', 'max-iterations'];

type Outcome = { converged: boolean; reason: string; detail?: string };

/** A converged answer must be right; anything else must be a named error or a reason with why. */
function judge(what: string, r: Outcome | Error, right: () => Promise<boolean>): Promise<void> | void {
  if (process.env.S9A_LOG) console.log(what, r instanceof Error ? `${r.name}: ${r.message.slice(0, 160)}` : `${r.reason} ${r.detail ?? ''}`.slice(0, 200));
  if (r instanceof Error) {
    expect(r.name, `${what}: ${r.message}`).not.toMatch(/^(TypeError|RangeError|ReferenceError|Error)$/);
    return;
  }
  if (!r.converged) {
    expect(FAIL_REASONS, what).toContain(r.reason);
    expect(r.detail ?? '', `${what}: a non-converged result says why`).not.toBe('');
    return;
  }
  return right().then((ok) => expect(ok, `${what}: converged, so the answer must be right`).toBe(true));
}

const settle = <T>(p: Promise<T>): Promise<T | Error> => p.catch((e: unknown) => e as Error);

describe('a device product that is NaN / Inf at one call only', () => {
  for (const [bad, row] of [
    [Number.NaN, undefined],
    [Number.POSITIVE_INFINITY, undefined],
    [Number.NaN, 37],
    [Number.NEGATIVE_INFINITY, 200],
  ] as const) {
    for (const at of [2, 20]) {
      const tag = `product ${at} = ${bad}${row === undefined ? '' : ` in row ${row}`}`;
      it(`Krylov (cg, bicgstab, gmres), ${tag}`, async () => {
        const ctx = await testContext();
        const space = new GpuVectorSpace(ctx);
        for (const [name, solve] of [
          ['cg', cg],
          ['bicgstab', bicgstab],
          ['gmres', gmres],
        ] as const) {
          const base = gpuOperatorFromCsr(ctx, a);
          const op = faulty(base, at, bad, row);
          const r = await settle(solve(space, op, space.fromArray(b), { rtol: 1e-5, maxIterations: 1000 }));
          await judge(`${name} ${tag}`, r, async () => trueRelative(a, await space.toArray((r as { x: GpuVector }).x), b) < 1e-4);
          base.dispose();
        }
      });

      it(`eigen (lanczos, lobpcg, davidson), ${tag}`, async () => {
        const ctx = await testContext();
        const space = new GpuVectorSpace(ctx);
        for (const [name, run] of [
          ['lanczos', (op: LinearOperator<GpuVector>) => lanczos(space, op, { k: 2, checkMultiplicity: false, maxIterations: 400 })],
          ['lobpcg', (op: LinearOperator<GpuVector>) => lobpcg(space, op, { k: 2, maxIterations: 200 })],
          ['davidson', (op: LinearOperator<GpuVector>) => davidson(space, op, { k: 2, diagonal: op.diagonal!(), maxIterations: 200 })],
        ] as const) {
          const base = gpuOperatorFromCsr(ctx, a);
          const op = faulty(base, at, bad, row);
          const r = await settle(run(op));
          await judge(`${name} ${tag}`, r, async () => {
            const v = (r as { values: number[] }).values;
            return v.every((x, i) => Math.abs(x - want.values[i]!) < 1e-4 * Math.abs(want.values[i]!) + 1e-5);
          });
          base.dispose();
        }
      });

      it(`refinedSolve and eigsMixed, ${tag}`, async () => {
        const ctx = await testContext();
        const space = new GpuVectorSpace(ctx);
        const base = gpuOperatorFromCsr(ctx, a);
        const op = faulty(base, at, bad, row);
        const r = await settle(refinedSolve({ innerOperator: op, innerSpace: space, hostOperator: hostOp, b, rtol: 1e-10 }));
        await judge(`refinedSolve ${tag}`, r, async () => trueRelative(a, (r as { x: Float64Array }).x, b) < 1e-9);
        const base2 = gpuOperatorFromCsr(ctx, a);
        const op2 = faulty(base2, at, bad, row);
        const m = await settle(eigsMixed({ k: 2, method: 'lanczos', fastOperator: op2, fastSpace: space, hostOperator: hostOp }));
        await judge(`eigsMixed ${tag}`, m, async () => (m as { values: number[] }).values.every((x, i) => Math.abs(x - want.values[i]!) < 1e-8 * Math.abs(want.values[i]!)));
        base.dispose();
        base2.dispose();
      });
    }
  }
});
