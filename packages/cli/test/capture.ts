/** Captures what the CLI writes to stdout and stderr during each test of a file. */
import { afterEach, beforeEach, vi } from 'vitest';

/** The text written so far in the current test. */
export const captured = { stdout: '', stderr: '' };

/** Install the spies (call once at the top of a test file). */
export function captureOutput(): void {
  beforeEach(() => {
    captured.stdout = '';
    captured.stderr = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => {
      captured.stdout += String(s);
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
      captured.stderr += String(s);
      return true;
    });
  });
  afterEach(() => vi.restoreAllMocks());
}
