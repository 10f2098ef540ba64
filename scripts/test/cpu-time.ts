/**
 * CPU time for the tests' cost bounds (session 13, CI stability). A test that guards against a
 * hang or a blow-up in complexity ("O(diagonals), not O(n)", "no parse takes 2 s") by reading the
 * wall clock fails on a loaded CI machine (2 cores, other processes): the process may wait its
 * turn between the two readings for longer than the bound. The CPU time this process spent is
 * what the bound means — the work done — and another process's load does not add to it.
 *
 * It counts every thread of the process (worker threads, libuv's pool, a software GPU adapter's
 * threads), so a multi-threaded step may spend more CPU than wall time: bound it accordingly.
 * @module
 */

/** CPU milliseconds (user + system) this process has spent so far. @example const t = cpuMs(); work(); cpuMs() - t */
export function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** `fn()`'s value and the CPU milliseconds this process spent on it. @example const { ms } = cpuTimed(() => parse(text)); */
export function cpuTimed<T>(fn: () => T): { value: T; ms: number } {
  const t0 = cpuMs();
  const value = fn();
  return { value, ms: cpuMs() - t0 };
}
