// Session 10: the browser page's run (examples/browser/compute.ts) on a working WebGPU (lavapipe
// here) with a user's Matrix Market file whose values float32 cannot hold. The page showed
// "TuningError: … got none (1 timed, 0 failed, 162 rejected)": every kernel failed verification
// on ±Infinity (1e39) or flushed zeros (1e-39). Such a matrix is now solved on the CPU in float64,
// the reason in the summary. An unknown matrix source threw "Cannot read properties of undefined".
import { InvalidParameterError } from '@gpusparse/formats';
import { createGpuContext } from '@gpusparse/gpu';
import { describe, expect, it } from 'vitest';
import { float32Trouble, makeMatrix, runDemo } from '../../../examples/browser/compute';

/** tridiag(−s, 4s, −s) of order 3 from a Matrix Market file, s given as text. */
const file = (name: string, s: string) => makeMatrix({ kind: 'file', name, bytes: new TextEncoder().encode(`%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n1 1 4${s}\n2 1 -1${s}\n2 2 4${s}\n3 2 -1${s}\n3 3 4${s}\n`) });

describe('the browser page with values outside float32', () => {
  it('tridiag(−1, 4, −1) × 1e39 and × 1e-39 on WebGPU: solved on the CPU in float64 with the reason (was a TuningError, 162 kernels rejected); 4 still runs on the device', async () => {
    const ctx = await createGpuContext();
    try {
      const be = { kind: 'webgpu' as const, ctx, adapter: 'test' };
      for (const [v, why] of [['e39', /a value of magnitude 4\.00e\+39 is above float32's 3\.4e38 \(WebGPU holds A in float32\): solved on the CPU in float64/], ['e-39', /every value is below float32's normal range \(largest magnitude 4\.00e-39\)/]] as const) {
        const { summary } = await runDemo(be, file(`v${v}.mtx`, v), { tuneMs: 20, rtol: 1e-8, hostToo: false }, () => {});
        expect(summary.backend, v).toBe('cpu');
        expect(summary.noWebGpuReason, v).toMatch(why);
        expect([summary.hostCg?.converged, summary.hostCg!.relTrueResidual < 1e-8], v).toEqual([true, true]);
      }
      const { summary } = await runDemo(be, file('ok.mtx', ''), { tuneMs: 20, rtol: 1e-5, hostToo: false }, () => {});
      expect([summary.backend, summary.spmv?.ok, summary.gpuCg?.converged]).toEqual(['webgpu', true, true]);
    } finally {
      ctx.dispose();
    }
  });

  it('float32Trouble: a tiny entry beside normal ones in its row is fine; a row of tiny entries only is not', () => {
    expect(float32Trouble(file('a.mtx', '').a)).toBeUndefined();
    expect(float32Trouble(makeMatrix({ kind: 'file', name: 'b.mtx', bytes: new TextEncoder().encode('%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n1 2 1e-300\n2 2 1\n') }).a)).toBeUndefined();
    expect(float32Trouble(file('c.mtx', 'e38').a)).toMatch(/magnitude 4\.00e\+38 is above float32's 3\.4e38/);
    // one row of tiny values only (the tuner rejected every kernel on it)
    const mixed = makeMatrix({ kind: 'file', name: 'd.mtx', bytes: new TextEncoder().encode('%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 4\n2 2 4\n3 3 1e-39\n') });
    expect(float32Trouble(mixed.a)).toBe("row 3 has non-zeros only below float32's normal range (1.2e-38): a zero row on the device");
  });

  it("an unknown source kind, or a file without bytes: InvalidParameterError (was a TypeError)", () => {
    expect(() => makeMatrix({ kind: 'nope' } as never)).toThrow(InvalidParameterError);
    expect(() => makeMatrix({ kind: 'nope' } as never)).toThrow(/parameter matrix source: expected .*got "nope"/);
    expect(() => makeMatrix({ kind: 'file', name: 'x.mtx' } as never)).toThrow(/got a file without its bytes/);
  });
});
