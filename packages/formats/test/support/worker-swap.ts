/**
 * Tests that make worker threads die: swap node:worker_threads' Worker class for a subclass (the
 * library's `import('node:worker_threads')` sees it after syncBuiltinESMExports), and put the real
 * one back after each test. Shared by formats' and chem's dying-worker tests.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { afterEach } from 'vitest';

export type WorkerCtor = typeof import('node:worker_threads').Worker;
const wtModule = createRequire(import.meta.url)('node:worker_threads') as { Worker: WorkerCtor };
/** The real Worker class. */
export const RealWorker = wtModule.Worker;

/** Make `cls` the Worker class every later `new Worker` (and import) gets. */
export function setWorkerClass(cls: WorkerCtor): void {
  wtModule.Worker = cls;
  syncBuiltinESMExports();
}

/** Register the restore of the real class after each test of the calling file. */
export function restoreWorkersAfterEach(): void {
  afterEach(() => setWorkerClass(RealWorker));
}
