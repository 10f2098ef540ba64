/**
 * The session-13 probe of an async per-iteration callback (host tests, the device tests and
 * bench/hostile-s13.ts): one run with a callback that takes a timer tick (how many callbacks
 * were in flight at once), one whose Promise resolves to false, one whose Promise rejects.
 */

/** What {@link probeAsyncCallback} saw. */
export interface AsyncCallbackProbe {
  reason: string;
  calls: number;
  /** The most callbacks in flight at once (1 when each is awaited). */
  most: number;
  /** Callbacks still running when the solve returned (0 when the last was awaited). */
  inFlight: number;
  /** The reason of the run whose callback resolved to false. */
  stopped: string;
  /** Whether the run whose callback rejected rejected with that very error. */
  rejected: boolean;
}

/** Run `solve` three times with async callbacks (see the module notes). */
export async function probeAsyncCallback(solve: (cb: (info: unknown) => unknown) => Promise<{ reason: string }>): Promise<AsyncCallbackProbe> {
  let inFlight = 0;
  let most = 0;
  let calls = 0;
  const r = await solve(async () => {
    calls++;
    most = Math.max(most, ++inFlight);
    await new Promise((ok) => setTimeout(ok, 1));
    inFlight--;
  });
  const stopped = await solve(async () => false);
  const boom = new Error('callback failed');
  let rejected = false;
  try {
    await solve(() => Promise.reject(boom));
  } catch (e) {
    rejected = e === boom;
  }
  return { reason: r.reason, calls, most, inFlight, stopped: stopped.reason, rejected };
}
