/**
 * Dawn prints some notices from native code straight to file descriptor 2 (its `WarningLog`
 * uses fprintf(stderr), with no logging switch or callback for them): on adapter discovery,
 * "maxDynamicUniformBuffersPerPipelineLayout artificially reduced from … to 16 …" and its
 * storage twin, on every run, on lavapipe and on NVIDIA alike. They say nothing a user can act on.
 *
 * {@link captureNativeStderr} runs one synchronous call with fd 2 pointing at a temporary file,
 * then puts the original stream back and re-emits every captured line that the caller's filter
 * keeps — so a real message from the driver (a Vulkan loader or Mesa error) still reaches the
 * user, after the call instead of during it. Node has no dup2, so the swap uses the lowest-free
 * descriptor rule: close 2, reopen the target through /proc/self/fd. That is only done where it
 * is exact — Linux, fds 0 and 1 open, stderr a terminal or a pipe (no file offset that a reopen
 * would lose; a regular file or a socket is left alone) — and the window is one synchronous call
 * in which no JavaScript runs. Where stderr is a regular file or a socket (a child spawned by Node
 * with stdio 'pipe' gets a socket) the notices still appear: reopening would lose the shared
 * file offset. Node only: the browser bundle never calls it.
 * @module
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Dawn's limit-clamping notices (src/dawn/native/Limits.cpp), the only lines dropped by default. */
export const DAWN_LIMIT_NOTICE = /^Warning: maxDynamic(?:Uniform|Storage)BuffersPerPipelineLayout artificially reduced from \d+ to \d+ to fit dynamic offset allocation limit\.\r?$/;

/** Whether fd 2 can be swapped and restored exactly here (see the module notes). */
function swappable(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    fstatSync(0);
    fstatSync(1);
    const st = fstatSync(2);
    return st.isCharacterDevice() || st.isFIFO();
  } catch {
    return false;
  }
}

/**
 * Point fd 2 at what `/proc/self/fd/<fd>` names (close 2, then the reopen takes the lowest free
 * descriptor, 2 since 0 and 1 are open); true when it landed on 2.
 */
function pointStderrAt(fd: number): boolean {
  try {
    closeSync(2);
  } catch {
    // already closed by a failed earlier step: the reopen below fills it
  }
  try {
    const got = openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY);
    if (got === 2) return true;
    closeSync(got);
  } catch {
    // fall through: the caller restores the saved stream
  }
  return false;
}

/**
 * Run `fn` (synchronous) with native writes to fd 2 captured; afterwards write the captured lines
 * that `keep` accepts to process.stderr (default: every line but Dawn's limit notices). Where
 * fd 2 cannot be swapped exactly, `fn` runs unchanged and its output goes straight through.
 * @example
 * const pending = captureNativeStderr(() => gpu.requestAdapter());
 */
export function captureNativeStderr<T>(fn: () => T, keep: (line: string) => boolean = (l) => !DAWN_LIMIT_NOTICE.test(l)): T {
  if (!swappable()) return fn();
  let saved = -1;
  let capture = -1;
  const path = join(tmpdir(), `gpusparse-stderr-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.log`);
  try {
    saved = openSync('/proc/self/fd/2', constants.O_WRONLY);
    capture = openSync(path, 'w+', 0o600);
  } catch {
    if (saved >= 0) closeSync(saved);
    if (capture >= 0) closeSync(capture);
    return fn();
  }
  let swapped = false;
  try {
    swapped = pointStderrAt(capture);
    if (!swapped) pointStderrAt(saved);
    return fn();
  } finally {
    if (swapped) pointStderrAt(saved);
    closeSync(saved);
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } finally {
      closeSync(capture);
      unlinkSync(path);
    }
    const kept = text.split('\n').filter((l, i, all) => (l !== '' || i < all.length - 1) && keep(l));
    if (kept.length > 0) process.stderr.write(`${kept.join('\n')}\n`);
  }
}
