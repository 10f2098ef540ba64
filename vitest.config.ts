import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The GPU tier (packages/gpu) needs a WebGPU adapter (lavapipe in CI). Without one it is skipped,
 * with one line saying so, unless GPUSPARSE_REQUIRE_GPU=1 (.ci/run): then its files fail as
 * before. The probe runs in a child process so Dawn never loads in vitest's main process.
 */
function gpuTier(): 'run' | 'skip' {
  if (process.env.GPUSPARSE_REQUIRE_GPU === '1') return 'run';
  const cached = process.env.GPUSPARSE_GPU_TIER;
  if (cached === 'run' || cached === 'skip') return cached;
  const probe = spawnSync(process.execPath, ['--import', 'tsx', resolve(root, 'scripts/test/gpu-probe.ts')], { encoding: 'utf8', timeout: 120_000 });
  const tier = probe.status === 0 ? 'run' : 'skip';
  if (tier === 'skip') console.log('GPU tier: no WebGPU adapter — skipped; install lavapipe (README) to run it');
  process.env.GPUSPARSE_GPU_TIER = tier;
  return tier;
}

/** The data tier (testdata/index.ts): larger real inputs outside the repository. */
function announceDataTier(): void {
  const dir = resolve(process.env.GPUSPARSE_DATA ?? resolve(root, '..', 'shared', 'data'));
  if (existsSync(dir) || process.env.GPUSPARSE_DATA_TIER_SHOWN) return;
  process.env.GPUSPARSE_DATA_TIER_SHOWN = '1';
  console.log(`data tier: ${dir} not found — tests of its larger files skipped; set GPUSPARSE_DATA to run them`);
}

// One project per package.
const pkg = (name: string, extra: Record<string, unknown> = {}) => ({
  test: {
    name,
    root: `packages/${name}`,
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    pool: 'forks' as const,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    ...extra,
  },
});

announceDataTier();
const skipGpu = gpuTier() === 'skip' ? { runner: resolve(root, 'scripts/test/gpu-skip-runner.ts'), env: { GPUSPARSE_GPU_TIER: 'skip' } } : {};

export default defineConfig({
  test: {
    projects: [
      pkg('formats'),
      pkg('solvers'),
      pkg('chem'),
      pkg('cli'),
      // Dawn devices are process-wide: run GPU test files one at a time in one fork.
      pkg('gpu', { fileParallelism: false, ...skipGpu }),
    ],
  },
});
