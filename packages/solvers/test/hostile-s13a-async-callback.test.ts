/**
 * Session 13: an `onIteration` (or refinedSolve's `onOuterIteration`) that returns a Promise was
 * not awaited: the solve went on while the callback ran (several callbacks in flight at once), a
 * Promise resolving to `false` did not stop it, and one that rejected was an unhandled rejection
 * (which ends a Node process). Now every solver awaits it: one callback at a time, `false`
 * stops ('stopped'), a rejection rejects the solve with the callback's own error.
 */
import { generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { bicg, bicgstab, cg, davidson, eigsMixed, gmres, lanczos, lanczosShiftInvert, lobpcg, refinedSolve } from '../src/index';
import { Float32HostSpace, float32CsrOperator } from './eigen-f32-space';
import { probeAsyncCallback } from './support/async-callback';

const space = new HostVectorSpace();
const a = generators.poisson2d(10);
const n = a.rows;
const op = HostOperator.fromCsr(a);
const rhs = () => space.fromArray(Float64Array.from({ length: n }, (_, i) => 1 + (i % 7) / 7));
type Cb = (info: unknown) => unknown;
/** Each solver, run with `cb` as its per-iteration callback. */
const runs: Record<string, (cb: Cb) => Promise<{ reason: string; iterations: number }>> = {
  cg: (cb) => cg(space, op, rhs(), { rtol: 1e-10, onIteration: cb as never }),
  gmres: (cb) => gmres(space, op, rhs(), { rtol: 1e-10, restart: 10, onIteration: cb as never }),
  bicgstab: (cb) => bicgstab(space, op, rhs(), { rtol: 1e-10, onIteration: cb as never }),
  bicg: (cb) => bicg(space, op, rhs(), { rtol: 1e-10, onIteration: cb as never }),
  lanczos: (cb) => lanczos(space, op, { k: 2, onIteration: cb }),
  davidson: (cb) => davidson(space, op, { k: 2, diagonal: new Float64Array(n).fill(4), onIteration: cb }),
  lobpcg: (cb) => lobpcg(space, op, { k: 2, onIteration: cb }),
  lanczosShiftInvert: (cb) => lanczosShiftInvert(a, { k: 2, onIteration: cb }),
  eigsMixed: (cb) => eigsMixed({ method: 'lanczos', k: 2, fastOperator: float32CsrOperator(a), fastSpace: new Float32HostSpace(), hostOperator: op, onIteration: cb }),
  'refinedSolve (reliable cg)': (cb) => refined('cg', cb),
  'refinedSolve (gmres outer loop)': (cb) => refined('gmres', cb),
};
function refined(method: 'cg' | 'gmres', cb: Cb) {
  const b = Float64Array.from({ length: n }, (_, i) => 1 + (i % 7) / 7);
  return refinedSolve({ hostOperator: op, innerOperator: float32CsrOperator(a), innerSpace: new Float32HostSpace(), b, extended: false, rtol: 1e-12, inner: { method, rtol: 1e-3 }, onOuterIteration: cb as never });
}
const later = (ms: number) => new Promise<void>((ok) => setTimeout(ok, ms));

describe('an async per-iteration callback is awaited by every solver', () => {
  for (const [name, run] of Object.entries(runs)) {
    it(`${name}: one callback in flight at a time; resolving false stops; a rejection rejects the solve with its error`, async () => {
      const p = await probeAsyncCallback(run);
      expect(p).toEqual({ reason: 'converged', calls: p.calls, most: 1, inFlight: 0, stopped: 'stopped', rejected: true }); // was: every callback in flight together, false ignored, the rejection unhandled
      expect(p.calls).toBeGreaterThan(0);
      let seen = 0;
      const stopAtSecond = async () => {
        await later(1);
        return ++seen < 2;
      };
      const stopped = await run(stopAtSecond);
      expect(stopped.reason).toBe('stopped'); // was: the Promise read as "go on"
      expect(seen).toBe(2);
    });
  }
});
