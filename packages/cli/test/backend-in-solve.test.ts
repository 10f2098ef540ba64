/**
 * The CLI / one-call API backend tunes inside the solve by default (issue 16): the tuned
 * operator is an in-solve operator that switches to the fastest kernel during the solve;
 * `inSolve: false` times before the solve instead.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generators } from '@gpusparse/formats';
import { InSolveOperator } from '@gpusparse/gpu';
import { describe, expect, it } from 'vitest';
import { gpuBackend } from '../src/util/backend';

// part of the GPU tier (vitest.config.ts): skipped with it when no adapter appears, required in CI
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';

describe.skipIf(gpuTierSkipped)('backend: in-solve tuning', () => {
  it('tunes inside the solve by default, before it with inSolve: false', async () => {
    process.env.GPUSPARSE_CACHE_DIR = mkdtempSync(join(tmpdir(), 'gpusparse-in-solve-')); // no hit from an earlier run
    const backend = await gpuBackend();
    try {
      const a = generators.poisson2d(40);
      const inSolve = await backend.operator(a, { expectedProducts: 2000 });
      expect(inSolve.op).toBeInstanceOf(InSolveOperator);
      const before = await backend.operator(a, { expectedProducts: 2000, inSolve: false });
      expect(before.op).not.toBeInstanceOf(InSolveOperator);
    } finally {
      backend.dispose();
    }
  });
});
