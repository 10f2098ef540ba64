/**
 * Session 9 (wave 2): a bad tuner option, an unknown kernel id or an unknown format name came
 * out of the public API as a plain RangeError / Error, which callers cannot tell from a bug (the
 * CLI maps those to exit 70). They are InvalidParameterError now: the option, what was expected
 * and what came.
 */
import { generators as g, getFormat, GpuSparseError, InvalidParameterError } from '@gpusparse/formats';
import { afterAll, describe, expect, it } from 'vitest';
import { autotune, getKernel, gpuOperatorFromCsr, tunedOperator } from '../src/index';
import { testContext } from './helpers';

afterAll(async () => (await testContext()).dispose());

const a = g.poisson2d(8);

/** The error `f` throws or rejects with. */
async function caught(f: () => unknown): Promise<unknown> {
  try {
    await f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw, got none');
}

function expectInvalid(e: unknown, parameter: string, message: RegExp): void {
  expect(e).toBeInstanceOf(InvalidParameterError);
  expect(e).toBeInstanceOf(GpuSparseError);
  expect((e as InvalidParameterError).parameter).toBe(parameter);
  expect((e as Error).message).toMatch(message);
}

describe('tuner options: InvalidParameterError naming the option, what was expected and what came', () => {
  const bad: [string, Record<string, number>, RegExp][] = [
    ['fraction', { fraction: 2 }, /parameter autotune fraction: expected a number in \(0, 1\], got 2$/],
    ['fraction', { fraction: Number.NaN }, /autotune fraction: expected a number in \(0, 1\], got NaN/],
    ['budgetMs', { budgetMs: 0 }, /autotune budgetMs: expected a number > 0, got 0/],
    ['expectedProducts', { expectedProducts: -5 }, /autotune expectedProducts: expected a number > 0, got -5/],
    ['reps', { reps: 1.5 }, /autotune reps: expected an integer ≥ 1, got 1.5/],
    ['rounds', { rounds: 0 }, /autotune rounds: expected an integer ≥ 1, got 0/],
    ['maxTimed', { maxTimed: -1 }, /autotune maxTimed: expected an integer ≥ 1, got -1/],
  ];
  for (const [name, opts, message] of bad) {
    it(`autotune and tunedOperator with ${JSON.stringify(opts)}`, async () => {
      const ctx = await testContext();
      expectInvalid(await caught(() => autotune(ctx, a, { ...opts, cache: false })), `autotune ${name}`, message);
      expectInvalid(await caught(() => tunedOperator(ctx, a, { ...opts, cache: false })), `autotune ${name}`, message);
    });
  }
});

describe('unknown kernel ids and format names', () => {
  it('getKernel lists the known ids', async () => {
    expectInvalid(await caught(() => getKernel('nope')), 'kernel', /parameter kernel: expected a known SpMV kernel id \(one of csr-scalar, .*csr-vector.*\), got 'nope'/);
  });

  it('gpuOperatorFromCsr and autotune({ fixed }) with an unknown kernel', async () => {
    const ctx = await testContext();
    expectInvalid(await caught(() => gpuOperatorFromCsr(ctx, a, { kernel: 'nope' })), 'kernel', /got 'nope'/);
    expectInvalid(await caught(() => autotune(ctx, a, { fixed: { kernel: 'nope', params: {} }, cache: false })), 'kernel', /got 'nope'/);
  });

  it('getFormat lists the known names', async () => {
    expectInvalid(await caught(() => getFormat('nope')), 'format', /parameter format: expected a registered format name \(one of csr, .*ell.*\), got 'nope'/);
  });
});
