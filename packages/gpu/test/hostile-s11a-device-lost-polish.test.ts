/**
 * Session 11 hunt: the device lost in the middle of eigsMixed's polish (session 9 covered the
 * Krylov solvers and lanczos). The default polish ('jd') runs float64 Davidson on the host but
 * solves its correction equations on the device; `devicePolish` keeps everything in df64 on the
 * device. Either way the call must end with DeviceLostError — no hang, no crash, no result that
 * mixes pairs from a dead device — and the context must keep raising it.
 */
import { generators as g, HostOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { eigsMixed } from '../../solvers/src/index';
import { createGpuContext, Df64CsrOperator, Df64VectorSpace, DeviceLostError, gpuOperatorFromCsr, GpuVectorSpace } from '../src/index';

const a = g.poisson2d(24);

describe('device lost during eigsMixed polish', () => {
  for (const where of ['host jd polish', 'device (df64) polish'] as const) {
    it(`${where}: DeviceLostError, then the context keeps raising it`, async () => {
      const ctx = await createGpuContext();
      const space = new GpuVectorSpace(ctx);
      const op = gpuOperatorFromCsr(ctx, a);
      let polishSteps = 0;
      const onIteration = (i: { phase: 'fast' | 'polish' }) => {
        if (i.phase === 'polish' && ++polishSteps === 2 && !ctx.isLost) ctx.device.destroy();
      };
      const common = { method: 'lanczos' as const, k: 2, fastOperator: op, fastSpace: space, rtol: 1e-12, onIteration };
      let call: Promise<unknown>;
      if (where === 'host jd polish') call = eigsMixed({ ...common, hostOperator: HostOperator.fromCsr(a) });
      else {
        const s = (await Df64VectorSpace.of(ctx))!;
        call = eigsMixed({ ...common, devicePolish: s.polish(Df64CsrOperator.fromGpuOperator(s.d, op, a)!) });
      }
      const got = await Promise.race([call.then((r) => ({ result: r }), (e: unknown) => ({ error: e })), new Promise((r) => setTimeout(() => r('hang'), 60_000))]);
      expect(got).not.toBe('hang');
      expect(polishSteps, 'the polish ran').toBeGreaterThanOrEqual(2);
      expect((got as { error?: unknown }).error).toBeInstanceOf(DeviceLostError);
      expect(() => space.create(a.rows)).toThrow(DeviceLostError);
      ctx.dispose();
    }, 90_000);
  }
});
