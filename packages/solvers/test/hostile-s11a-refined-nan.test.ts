/**
 * Session 11, from the H100 run of bench/hostile-s11.ts: refinedSolve (inner cg, the reliable
 * recurrence) on poisson2d 128²·1e-30 ended 'non-finite' with x = NaN (its float32 correction
 * x ~ 1e30 overflowed; lavapipe converged). Now a 'non-finite' reliable recurrence restores the
 * best x and goes on with restarted refinement (as after its 'breakdown'), and no exit returns a
 * NaN x. Reproduced here with an inner float32 operator whose products go NaN for a stretch.
 */
import { csrSpmv, generators, HostOperator, type LinearOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { refinedSolve } from '../src/index';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';

const a = generators.poisson2d(16);
const b = csrSpmv(a, new Float64Array(a.rows).fill(1));
const rel = (x: Float64Array) => Math.hypot(...csrSpmv(a, x).map((v, i) => b[i]! - v)) / Math.hypot(...b);

/** The float32 operator, with products NaN from the `from`-th to the `to`-th. */
function nanFor(from: number, to: number): LinearOperator<Float64Array> {
  const inner = float32CsrOperator(a);
  let calls = 0;
  const bad = () => ++calls >= from && calls <= to;
  return {
    rows: inner.rows,
    cols: inner.cols,
    label: 'nan-stretch',
    apply(x, y) {
      inner.apply(x, y);
      if (bad()) y.fill(Number.NaN);
    },
    applyScaled(al, x, be, y) {
      inner.applyScaled(al, x, be, y);
      if (bad()) y.fill(Number.NaN);
    },
  };
}

describe('refinedSolve when the reliable float32 recurrence goes non-finite', () => {
  it("restarted refinement goes on from the best x: converged to 1e-10 (was 'non-finite')", async () => {
    const r = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: nanFor(5, 20), innerSpace: new Float32HostSpace(), b, rtol: 1e-10, extended: false, inner: { method: 'cg', rtol: 1e-4 } });
    expect(r.method).toMatch(/reliable → restarted/);
    expect(r.reason).toBe('converged');
    expect(rel(r.x)).toBeLessThan(1e-9);
  });
  it('products NaN for good: non-finite, but x is the best finite iterate (never NaN)', async () => {
    const r = await refinedSolve({ hostOperator: HostOperator.fromCsr(a), innerOperator: nanFor(5, Number.POSITIVE_INFINITY), innerSpace: new Float32HostSpace(), b, rtol: 1e-10, extended: false, inner: { method: 'cg', rtol: 1e-4 } });
    expect(r.converged).toBe(false);
    expect(r.x.every(Number.isFinite)).toBe(true);
  });
});
