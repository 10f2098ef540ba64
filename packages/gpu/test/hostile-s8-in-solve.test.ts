/**
 * Session 8: in-solve tuning with a candidate that fails in the middle of the solve (an encode
 * that throws: a pipeline that cannot be created, a buffer that does not fit). The solve must
 * go on with a verified candidate and give the right x, or stop with a named error — never a
 * wrong x. A candidate that writes NaN must not end in a 'converged' result either.
 */
import { csrSpmv, generators as g, ResourceLimitError } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { cg } from '../../solvers/src/index';
import { type GpuOperator, GpuValidationError, GpuVectorSpace, InSolveOperator } from '../src/index';
import { testContext, trueRelative } from './helpers';
import { inSolve } from './support/in-solve';

afterAll(async () => (await testContext()).dispose());

const a = g.poisson2d(16);
const ones = new Float64Array(a.rows).fill(1);
const b = csrSpmv(a, ones);

/** Make one candidate's products throw, before anything is recorded (as a failed pipeline creation does). */
function breakBefore(o: GpuOperator, message: string): void {
  o.applyScaled = () => {
    throw new Error(message);
  };
}

describe('in-solve tuning with a failing candidate', () => {
  it('a candidate that throws is dropped, named in the report, and CG still converges to the right x', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op, others } = await inSolve(a);
    const broken = others[0]!.label;
    breakBefore(others[0]!, 'createComputePipeline failed (injected)');
    const r = await cg(space, op, space.fromArray(b), { rtol: 1e-5 });
    await op.decided;
    expect(r.reason).toBe('converged');
    expect(trueRelative(a, await space.toArray(r.x), b)).toBeLessThan(1e-4);
    const t = op.tuning.trials.find((x) => x.status === 'error' && x.error?.includes('injected'));
    expect(t?.error).toMatch(new RegExp(`candidate ${broken.replace(/[()]/g, '\\$&')} threw on product \\d+ of the solve: createComputePipeline failed`));
    expect(op.tuning.warnings.join('\n')).toMatch(/dropped and the product redone on another verified candidate/);
    expect(op.activeLabel).not.toBe(broken);
    expect(op.tuning.decision?.note).toMatch(/\(1 failed\)/);
    op.dispose();
  });

  it('the first candidate (the operator itself) failing: the others carry the solve', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op } = await inSolve(a);
    const base = op.label;
    // the operator's own product path: GpuOperator.prototype.applyScaled via super
    const proto = Object.getPrototypeOf(InSolveOperator.prototype) as GpuOperator;
    const orig = proto.applyScaled;
    proto.applyScaled = function (this: GpuOperator, ...args: Parameters<GpuOperator['applyScaled']>) {
      if (this === (op as unknown as GpuOperator)) throw new Error('out of memory (injected)');
      return orig.apply(this, args);
    };
    try {
      const r = await cg(space, op, space.fromArray(b), { rtol: 1e-5 });
      await op.decided;
      expect(r.reason).toBe('converged');
      expect(trueRelative(a, await space.toArray(r.x), b)).toBeLessThan(1e-4);
      expect(op.activeLabel).not.toBe(base);
    } finally {
      proto.applyScaled = orig;
      op.dispose();
    }
  });

  it('a candidate that fails after recording part of y with β ≠ 0: a named error, not a wrong y', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op, others } = await inSolve(a);
    const o = others[0]!;
    const orig = o.applyScaled.bind(o);
    o.applyScaled = (alpha, x, beta, y) => {
      orig(alpha, x, beta, y); // records its dispatch, then fails
      throw new TypeError('kernel bug (injected)');
    };
    const x = space.fromArray(ones);
    const y = space.fromArray(ones);
    op.applyScaled(1, x, 1, y); // product 1: candidate 0, fine
    expect(() => op.applyScaled(1, x, 1, y)).toThrow(/candidate .* threw on product 2 of the solve after recording part of y .* β = 1 \(cannot be redone\).*kernel bug \(injected\)/);
    expect(op.tuning.trials.some((t) => t.status === 'error' && /kernel bug/.test(t.error ?? ''))).toBe(true);
    // the failed candidate is retired: the operator goes on with the others, products right
    const want = csrSpmv(a, ones);
    const z = space.create(a.rows);
    for (let p = 0; p < 8; p++) {
      op.apply(x, z);
      const got = await space.toArray(z);
      for (let r = 0; r < a.rows; r++) expect(Math.abs(got[r]! - want[r]!)).toBeLessThan(1e-5);
    }
    op.dispose();
  });

  it('every candidate failing: the solve stops with a named error', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op, others } = await inSolve(a);
    for (const o of others) breakBefore(o, 'no pipeline (injected)');
    const proto = Object.getPrototypeOf(InSolveOperator.prototype) as GpuOperator;
    const orig = proto.applyScaled;
    let calls = 0;
    proto.applyScaled = function (this: GpuOperator, ...args: Parameters<GpuOperator['applyScaled']>) {
      if (this === (op as unknown as GpuOperator) && ++calls > 1) throw new Error('device memory (injected)');
      return orig.apply(this, args);
    };
    try {
      const err = await cg(space, op, space.fromArray(b), { rtol: 1e-5 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      // plain Errors (no gpusparse class): a bug, exit 70, with every candidate's failure named
      expect(err).toBeInstanceOf(GpuValidationError);
      expect((err as Error).message).toMatch(/in-solve tuning: expected at least one candidate that runs, got all \d+ failing .*device memory \(injected\).*no pipeline \(injected\)/);
    } finally {
      proto.applyScaled = orig;
      op.dispose();
    }
  });

  it('disposing the operator before its tuning products were submitted leaves the context usable', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op } = await inSolve(a);
    const x = space.fromArray(ones);
    const y = space.create(a.rows);
    op.apply(x, y); // one timestamped pass recorded, not submitted
    op.dispose();
    // this submit carried the pass with the destroyed query set: a GpuValidationError before
    expect(Array.from(await space.toArray(space.fromArray(ones)))).toEqual(Array.from(ones));
    await ctx.finish();
  });

  it('every candidate out of memory: the ResourceLimitError itself (CLI exit 5), not a bug', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op, others } = await inSolve(a);
    const oom = () => {
      throw new ResourceLimitError('op-scratch (injected)', 1e12, 8e10, 'use a smaller matrix');
    };
    for (const o of others) o.applyScaled = oom;
    const proto = Object.getPrototypeOf(InSolveOperator.prototype) as GpuOperator;
    const orig = proto.applyScaled;
    let calls = 0;
    proto.applyScaled = function (this: GpuOperator, ...args: Parameters<GpuOperator['applyScaled']>) {
      if (this === (op as unknown as GpuOperator) && ++calls > 1) oom();
      return orig.apply(this, args);
    };
    try {
      const err = await cg(space, op, space.fromArray(b), { rtol: 1e-5 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ResourceLimitError);
      expect(op.tuning.warnings.join('\n')).toMatch(/expected at least one candidate that runs/);
    } finally {
      proto.applyScaled = orig;
      op.dispose();
    }
  });

  it('a candidate whose products are NaN: the solve never reports converged with a wrong x', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op, others } = await inSolve(a);
    const o = others[0]!;
    const orig = o.applyScaled.bind(o);
    o.applyScaled = (_alpha, x, beta, y) => orig(Number.NaN, x, beta, y);
    const r = await cg(space, op, space.fromArray(b), { rtol: 1e-5 });
    await op.decided;
    const rel = trueRelative(a, await space.toArray(r.x), b);
    if (r.converged) expect(rel).toBeLessThan(1e-4);
    else expect(['non-finite', 'breakdown', 'max-iterations']).toContain(r.reason);
    op.dispose();
  });
});
