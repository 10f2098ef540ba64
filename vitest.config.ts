import { defineConfig } from 'vitest/config';

// One project per package. GPU tests live in packages/gpu and need a WebGPU adapter
// (lavapipe in CI): they fail, not skip, when none appears.
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

export default defineConfig({
  test: {
    projects: [
      pkg('formats'),
      pkg('solvers'),
      pkg('chem'),
      pkg('cli'),
      // Dawn devices are process-wide: run GPU test files one at a time in one fork.
      pkg('gpu', { fileParallelism: false }),
    ],
  },
});
