/**
 * Fault-injection fixtures of the solver-side hostile tests: a host float32 operator that
 * stands for an in-solve tuned operator whose chosen kernel is wrong until the solver falls back
 * to the verified kernel (the VerifiedKernelSource contract the GPU's InSolveOperator fulfils).
 */
import type { CsrMatrix, LinearOperator, VerifiedKernelSource } from '@gpusparse/formats';
import { float32CsrOperator } from '../eigen-f32-space';

/** A float32 operator whose "tuned kernel" gives 1.1·A·x until the solver falls back. */
export function wrongUntilFallback(a: CsrMatrix): LinearOperator<Float64Array> & VerifiedKernelSource<Float64Array> & { fell: string | undefined } {
  const inner = float32CsrOperator(a);
  const o = {
    rows: a.rows,
    cols: a.cols,
    fell: undefined as string | undefined,
    verifiedLabel: 'verified-f32',
    get activeLabel() {
      return o.fell === undefined ? 'tuned-f32' : 'verified-f32';
    },
    runsUnverified: () => o.fell === undefined,
    applyVerified: (x: Float64Array, y: Float64Array) => inner.apply(x, y),
    fallBackToVerified: (why: string) => {
      o.fell = why;
    },
    apply: (x: Float64Array, y: Float64Array) => inner.applyScaled(o.fell === undefined ? 1.1 : 1, x, 0, y),
    applyScaled: (alpha: number, x: Float64Array, beta: number, y: Float64Array) => inner.applyScaled(o.fell === undefined ? 1.1 * alpha : alpha, x, beta, y),
  };
  return o;
}
