/**
 * Session 8b: in-solve tuning with a candidate whose products are wrong (NaN, or finite but
 * off) during the solve although it passed the verification before it. The solve must get the
 * verified kernel's products, converge to the right x, and the candidate must be retired and
 * named — never win, never hand a wrong x labelled converged.
 */
import { csrSpmv, generators as g, ResourceLimitError } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { cg } from '../../solvers/src/index';
import { GpuVectorSpace } from '../src/index';
import { guardVerdict } from '../src/autotune/in-solve-guard';
import { testContext, trueRelative } from './helpers';
import { inSolve } from './support/in-solve';

afterAll(async () => (await testContext()).dispose());

const a = g.poisson2d(16);
const ones = new Float64Array(a.rows).fill(1);
const b = csrSpmv(a, ones);

const escapeParens = (s: string) => s.replace(/[()]/g, '\\$&');

describe('in-solve tuning with a candidate giving wrong products', () => {
  for (const [what, alphaOf] of [
    ['NaN', () => Number.NaN],
    ['finite but 1 % off', (alpha: number) => alpha * 1.01],
  ] as const) {
    it(`${what}: CG converges to the right x, the candidate is retired and never wins`, async () => {
      const ctx = await testContext();
      const space = new GpuVectorSpace(ctx);
      const { op, others } = await inSolve(a);
      const o = others[0]!;
      const bad = o.label;
      const orig = o.applyScaled.bind(o);
      o.applyScaled = (alpha, x, beta, y) => orig(alphaOf(alpha), x, beta, y);
      const r = await cg(space, op, space.fromArray(b), { rtol: 1e-5 });
      await op.decided;
      expect(r.reason).toBe('converged');
      expect(trueRelative(a, await space.toArray(r.x), b)).toBeLessThan(1e-4);
      const t = op.tuning.trials.find((x) => x.status === 'error');
      expect(t?.error).toMatch(new RegExp(`candidate ${escapeParens(bad)} gave a wrong product \\d+ of the solve \\((\\d+ non-finite row|max \\|difference\\|)`));
      expect(op.activeLabel).not.toBe(bad);
      // the sound candidates passed the check: only the broken one failed
      expect(op.tuning.decision?.note).toMatch(/\(1 failed\)/);
      op.dispose();
    });
  }

  it("no room for the check's scratch: tuning stops, the verified kernel runs every product, right x", async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op, others } = await inSolve(a);
    const o = others[0]!;
    const orig = o.applyScaled.bind(o);
    o.applyScaled = (_alpha, x, beta, y) => orig(Number.NaN, x, beta, y); // would be caught by the check
    const acquire = ctx.buffers.acquire.bind(ctx.buffers);
    ctx.buffers.acquire = (bytes, usage, label) => {
      if (label === 'in-solve-guard') throw new ResourceLimitError("GPU buffer 'in-solve-guard' (injected)", bytes, 0, 'free memory');
      return acquire(bytes, usage, label);
    };
    try {
      const r = await cg(space, op, space.fromArray(b), { rtol: 1e-5 });
      await op.decided;
      expect(r.reason).toBe('converged');
      expect(trueRelative(a, await space.toArray(r.x), b)).toBeLessThan(1e-4);
      expect(op.activeLabel).toBe(op.label);
      expect(op.tuning.warnings.join('\n')).toMatch(/the product check's scratch \(\d+ bytes\) could not be had .*injected.*tuning stopped/);
    } finally {
      ctx.buffers.acquire = acquire;
      op.dispose();
    }
  });

  it('sound candidates pass the check on a matrix with cancelling rows (no false retirement)', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op } = await inSolve(a);
    // a smooth x: rows of the Laplacian cancel to ~h², the summation order differs per kernel
    const x = space.fromArray(Float64Array.from({ length: a.rows }, (_, i) => Math.sin(i / 40) + 1e3));
    const y = space.create(a.rows);
    for (let p = 0; p < 16; p++) op.applyScaled(1, x, p % 2, y);
    await op.decided;
    expect(op.tuning.trials.filter((t) => t.status === 'error')).toEqual([]);
    op.dispose();
  });

  it('the verdict: non-finite rows, a difference past 1e-3 of max |y|, and agreement', () => {
    const w = new Uint32Array(6);
    const f = new Float32Array(w.buffer);
    w[0] = 2;
    expect(guardVerdict(w, 0)).toMatch(/2 non-finite row/);
    w[0] = 0;
    f[1] = 0.5;
    f[2] = 100;
    expect(guardVerdict(w, 0)).toMatch(/max \|difference\| 0.500.*at most 0.001 × max \|y\| = 0.100/);
    f[1] = 1e-5;
    expect(guardVerdict(w, 0)).toBeUndefined();
    expect(guardVerdict(w, 3)).toBeUndefined(); // all zero: x = 0, exact
  });
});

/** Timestamps (ns) of `total` tuning products, candidate k % n, as decide() gets them. */
function stamps(total: number, ms: (k: number) => number): BigUint64Array {
  const t = new BigUint64Array(2 * total);
  for (let k = 0; k < total; k++) {
    t[2 * k] = 10_000_000_000n + BigInt(k) * 1_000_000_000n;
    // BigUint64Array wraps a negative value: an end before the begin reads as huge or, after Number(), negative
    t[2 * k + 1] = BigInt.asUintN(64, t[2 * k]! + BigInt(Math.round(ms(k) * 1e6)));
  }
  return t;
}

describe('in-solve decision with hostile GPU timestamps', () => {
  type Internals = { total: number; candidates: unknown[]; decide(t: BigUint64Array, w: Uint32Array | undefined): void };

  it('an end-before-begin (negative) time is no sample: that candidate does not win', async () => {
    const { op, others } = await inSolve(a);
    const inner = op as unknown as Internals;
    const n = inner.candidates.length;
    // candidate 1 "takes" −5 ms on every product; the others 1, 2, 3… ms
    inner.decide(stamps(inner.total, (k) => (k % n === 1 ? -5 : 1 + (k % n))), undefined);
    expect(op.activeLabel).not.toBe(others[0]!.label);
    expect(op.activeLabel).toBe(op.label); // candidate 0 at 1 ms is the fastest left
    expect(op.tuning.warnings.join('\n')).toMatch(new RegExp(`expected non-negative finite GPU timestamps, got none usable for ${escapeParens(others[0]!.label)}`));
    expect(op.tuning.winner?.ms).toBeGreaterThan(0);
    op.dispose();
  });

  it('no usable timestamp at all: no crash, no winner chosen, the products stay on a candidate that runs', async () => {
    const ctx = await testContext();
    const space = new GpuVectorSpace(ctx);
    const { op } = await inSolve(a);
    const inner = op as unknown as Internals;
    expect(() => inner.decide(stamps(inner.total, () => -1), undefined)).not.toThrow();
    expect(op.tuning.winner?.ms ?? 0).toBeGreaterThanOrEqual(0); // never a negative time reported
    expect(op.tuning.warnings.join('\n')).toMatch(/got none usable for/);
    expect(op.activeLabel).toBe(op.label);
    const x = space.fromArray(ones);
    const y = space.create(a.rows);
    op.apply(x, y);
    const got = await space.toArray(y);
    const want = csrSpmv(a, ones);
    for (let r = 0; r < a.rows; r++) expect(Math.abs(got[r]! - want[r]!)).toBeLessThan(1e-5);
    op.dispose();
  });
});
