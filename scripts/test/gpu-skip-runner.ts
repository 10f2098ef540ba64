/**
 * Test runner of the GPU tier when no WebGPU adapter exists (and GPUSPARSE_REQUIRE_GPU is not
 * set): before a suite runs, its hooks are dropped (the files create a context in `beforeAll`,
 * which would fail) and every test in it is marked skipped, so reporters count them as skipped.
 * vitest.config.ts picks this runner for the gpu project.
 */
import { type RunnerTestSuite, TestRunner } from 'vitest';

export default class GpuSkipRunner extends TestRunner {
  override async onBeforeRunSuite(suite: RunnerTestSuite): Promise<void> {
    const hooks = TestRunner.getSuiteHooks(suite) as unknown as Record<string, unknown[]> | undefined;
    for (const list of Object.values(hooks ?? {})) list.length = 0;
    for (const t of suite.tasks) {
      if (t.type !== 'test' || (t.mode !== 'run' && t.mode !== 'queued')) continue;
      t.mode = 'skip';
      t.result = { state: 'skip' }; // the state reporters count (the mode was reported at collection)
    }
    await super.onBeforeRunSuite(suite);
  }
}
