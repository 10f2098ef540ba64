/**
 * Session 11 hardening: a caller's LinearOperator whose product is a plain (not `async`)
 * function that returns a Promise — `apply: (x, y) => work(x, y)` with an async `work`, or any
 * thenable. Session 10 refused `async apply` by the function's kind only; this one passed, the
 * solvers read y before it was written, and came back with a wrong answer: lanczos "converged"
 * to λ = 0 for the 1-D Laplacian of order 4 (smallest 0.382). Now the first product's return
 * value is checked in every solver, preconditioner and refinedSolve / eigsMixed / shift-invert
 * path: a thenable is InvalidParameterError naming the method and the product, and the pending
 * promise's rejection is swallowed (no unhandled rejection ends the process).
 */
import { generators, HostOperator, HostVectorSpace, InvalidParameterError, type LinearOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { bicg, bicgstab, cg, davidson, eigsMixed, gmres, lanczos, lanczosShiftInvert, lobpcg, refinedSolve } from '../src/index';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';

const space = new HostVectorSpace();
const n = 4;
/** y = L·x, L = tridiag(−1, 2, −1) of order n (λ_min = 2 − 2cos(π/5) ≈ 0.382). */
function lap(x: Float64Array, y: Float64Array): void {
  for (let i = 0; i < n; i++) y[i] = 2 * x[i]! - (i > 0 ? x[i - 1]! : 0) - (i < n - 1 ? x[i + 1]! : 0);
}
function scaled(a: number, x: Float64Array, b: number, y: Float64Array): void {
  const t = new Float64Array(n);
  lap(x, t);
  for (let i = 0; i < n; i++) y[i] = a * t[i]! + b * y[i]!;
}
async function lapLater(x: Float64Array, y: Float64Array): Promise<void> {
  await null;
  lap(x, y);
}
const syncOp = { rows: n, cols: n, label: 'lap4', apply: lap, applyScaled: scaled, applyTranspose: lap } as LinearOperator<Float64Array>;
/** Plain arrow functions (not async) that hand back a Promise, a bare thenable, a rejected Promise. */
const returning: Record<string, (x: Float64Array, y: Float64Array) => unknown> = {
  'a Promise from an arrow function': (x, y) => lapLater(x, y),
  // biome-ignore lint/suspicious/noThenProperty: the hostile case is a thenable that is not a Promise
  'a bare thenable': (x, y) => ({ then: (ok?: () => void) => setTimeout(() => {
        lap(x, y);
        ok?.();
      }, 0) }),
  'a Promise that rejects': () => Promise.reject(new Error('device gone')),
};
const withApply = (f: (x: Float64Array, y: Float64Array) => unknown) => ({ ...syncOp, apply: f }) as unknown as LinearOperator<Float64Array>;
const b = () => space.fromArray([1, 0, 0, 1]);
const solvers: Record<string, (op: LinearOperator<Float64Array>) => Promise<unknown>> = {
  cg: (op) => cg(space, op, b(), { rtol: 1e-10 }),
  gmres: (op) => gmres(space, op, b(), { rtol: 1e-10 }),
  bicgstab: (op) => bicgstab(space, op, b(), { rtol: 1e-10 }),
  bicg: (op) => bicg(space, op, b(), { rtol: 1e-10 }),
  lanczos: (op) => lanczos(space, op, { k: 1 }),
  davidson: (op) => davidson(space, op, { k: 1, diagonal: new Float64Array(n).fill(2) }),
  lobpcg: (op) => lobpcg(space, op, { k: 1 }),
};

describe('a LinearOperator whose non-async product returns a Promise (or any thenable)', () => {
  for (const [name, run] of Object.entries(solvers)) {
    it(`${name}: InvalidParameterError naming the method and apply (lanczos returned λ = 0 'converged' before)`, async () => {
      for (const [what, f] of Object.entries(returning)) {
        await expect(run(withApply(f)), what).rejects.toThrow(InvalidParameterError);
        await expect(run(withApply(f)), what).rejects.toThrow(new RegExp(`${name}.* operator apply: expected a synchronous product.*got a Promise \\(a thenable\\)`));
      }
    });
  }
  it('bicg: an applyTranspose returning a Promise is refused, naming applyTranspose', async () => {
    const op = { ...syncOp, applyTranspose: (x: Float64Array, y: Float64Array) => lapLater(x, y) } as unknown as LinearOperator<Float64Array>;
    await expect(bicg(space, op, b(), { rtol: 1e-10 })).rejects.toThrow(/bicg operator applyTranspose: expected a synchronous product/);
  });
  it('preconditioners: cg, lobpcg and lanczosShiftInvert refuse one whose apply returns a Promise', async () => {
    const m = { ...syncOp, label: 'M', apply: (x: Float64Array, y: Float64Array) => Promise.resolve().then(() => y.set(x)) } as unknown as LinearOperator<Float64Array>;
    await expect(cg(space, syncOp, b(), { preconditioner: m })).rejects.toThrow(/cg operator preconditioner apply: expected a synchronous product/);
    await expect(lobpcg(space, syncOp, { k: 1, preconditioner: m })).rejects.toThrow(/lobpcg operator preconditioner apply/);
    await expect(lanczosShiftInvert(generators.laplacian1d(4), { k: 1, preconditioner: m })).rejects.toThrow(/lanczosShiftInvert operator preconditioner apply/);
  });
  it('refinedSolve: a hostOperator or innerOperator whose apply returns a Promise is refused', async () => {
    const a = generators.laplacian1d(4);
    const host = { ...HostOperator.fromCsr(a), rows: 4, cols: 4, apply: (x: Float64Array, y: Float64Array) => lapLater(x, y) } as unknown as LinearOperator<Float64Array>;
    const inner32 = float32CsrOperator(a);
    const rhs = new Float64Array([1, 0, 0, 1]);
    await expect(refinedSolve({ hostOperator: host, innerOperator: inner32, innerSpace: new Float32HostSpace(), b: rhs, extended: false, inner: { method: 'cg', rtol: 1e-4 } })).rejects.toThrow(/refinedSolve hostOperator operator apply: expected a synchronous product/);
    const badInner = { ...inner32, rows: 4, cols: 4, apply: (x: Float64Array, y: Float64Array) => Promise.resolve().then(() => inner32.apply(x, y)) } as unknown as LinearOperator<Float64Array>;
    await expect(refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: badInner, innerSpace: new Float32HostSpace(), b: rhs, extended: false, inner: { method: 'gmres', rtol: 1e-4 } })).rejects.toThrow(/gmres.* operator apply: expected a synchronous product/);
  });
  it('eigsMixed: a fastOperator or hostOperator whose apply returns a Promise is refused (largest: through the negated wrapper)', async () => {
    const a = generators.laplacian1d(8);
    const f32 = float32CsrOperator(a);
    const badFast = { ...f32, rows: 8, cols: 8, apply: (x: Float64Array, y: Float64Array) => Promise.resolve().then(() => f32.apply(x, y)), applyScaled: (al: number, x: Float64Array, be: number, y: Float64Array) => Promise.resolve().then(() => f32.applyScaled(al, x, be, y)) } as unknown as LinearOperator<Float64Array>;
    for (const which of ['smallest', 'largest'] as const) {
      await expect(eigsMixed({ method: 'lanczos', k: 1, which, fastOperator: badFast, fastSpace: new Float32HostSpace(), hostOperator: HostOperator.fromCsr(a) }), which).rejects.toThrow(/operator apply(Scaled)?: expected a synchronous product/);
    }
    const h = HostOperator.fromCsr(a);
    const badHost = { rows: 8, cols: 8, apply: (x: Float64Array, y: Float64Array) => Promise.resolve().then(() => h.apply(x, y)), applyScaled: h.applyScaled.bind(h) } as unknown as LinearOperator<Float64Array>;
    await expect(eigsMixed({ method: 'lanczos', k: 1, fastOperator: f32, fastSpace: new Float32HostSpace(), hostOperator: badHost })).rejects.toThrow(/operator apply: expected a synchronous product/);
  });
  it('the same products returning undefined (or a non-thenable value) solve: x = L⁻¹b, λ_min ≈ 0.382', async () => {
    const lambdaMin = 2 - 2 * Math.cos(Math.PI / (n + 1));
    // biome-ignore lint/suspicious/noThenProperty: a 'then' that is not a function is not a thenable
    const notThenable = { then: 'not a function' };
    for (const op of [syncOp, withApply((x, y) => {
      lap(x, y);
      return 42;
    }), withApply((x, y) => {
      lap(x, y);
      return notThenable;
    })]) {
      for (const [name, run] of Object.entries(solvers)) {
        const r = (await run(op)) as { converged: boolean; x?: Float64Array; values?: number[] };
        expect(r.converged, name).toBe(true);
        if (r.x) for (const v of r.x) expect(v, name).toBeCloseTo(1, 8);
        else expect(r.values![0]!, name).toBeCloseTo(lambdaMin, 8);
      }
    }
  });
});
