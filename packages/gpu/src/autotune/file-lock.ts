/**
 * A lock file for the autotuner's JSON files (Node only): `withFileLock(path, fn)` runs `fn`
 * while holding `${path}.lock`, created with O_EXCL, so that the read–merge–write of the tuning
 * cache (or the calibration file) by several processes or worker threads at once loses nothing.
 * A lock left behind is broken when its owner is a dead process on this host, or when it is older
 * than `staleMs` (a crashed process on another host, or a hung one). Breaking goes through a
 * second, short-held lock (`.lock.break`) and re-reads the lock under it, so that two processes
 * judging the same stale lock never remove a fresh one. Waiting sleeps the thread (Atomics.wait):
 * the stores are synchronous and the critical section is one small file's read and write.
 * @module
 */
import { closeSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { threadId } from 'node:worker_threads';

/** Timing of {@link withFileLock}. */
export interface FileLockOptions {
  /** A lock older than this (ms) is stale whoever holds it. Default 30 000 (the section takes milliseconds). */
  readonly staleMs?: number;
  /** Give up (throw {@link FileLockTimeout}) after waiting this long (ms). Default 2 × staleMs. */
  readonly waitMs?: number;
}

/** The lock could not be taken within `waitMs`; the message names the lock file and its holder. */
export class FileLockTimeout extends Error {
  override name = 'FileLockTimeout';
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms: number): void => void Atomics.wait(sleeper, 0, 0, ms);

/** What a lock file says of its owner (written in one write right after the exclusive create). */
interface Owner {
  readonly pid: number;
  readonly host: string;
  readonly thread: number;
  readonly nonce: string;
}

/** The lock's text and modification time, or undefined when there is none. */
function peek(lock: string): { text: string; mtimeMs: number } | undefined {
  try {
    const { mtimeMs } = statSync(lock);
    return { text: readFileSync(lock, 'utf8'), mtimeMs };
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Whether process `pid` exists on this host (EPERM: it exists, owned by another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM';
  }
}

/** Why the lock seen as `seen` is stale, or undefined while its owner may still hold it. */
function staleness(seen: { text: string; mtimeMs: number }, staleMs: number): string | undefined {
  const age = Date.now() - seen.mtimeMs;
  if (age > staleMs) return `${Math.round(age)} ms old`;
  let o: Partial<Owner>;
  try {
    o = JSON.parse(seen.text) as Partial<Owner>;
  } catch {
    return undefined; // being written (created, not yet filled): young, so wait
  }
  if (o.host === hostname() && typeof o.pid === 'number' && o.pid !== process.pid && !alive(o.pid)) return `its process ${o.pid} is gone`;
  return undefined;
}

/** Try once to create `path` exclusively with `text`; false when it exists. */
function create(path: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (e) {
    if ((e as { code?: string }).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Remove `lock` if it still reads as `seen`, under the breaker lock; a breaker itself older than `staleMs` is removed. */
function breakStale(lock: string, seen: { text: string; mtimeMs: number }, staleMs: number, me: string): void {
  const breaker = `${lock}.break`;
  if (!create(breaker, me)) {
    const b = peek(breaker);
    if (b && Date.now() - b.mtimeMs > staleMs) unlinkIfSame(breaker, b.text);
    return;
  }
  try {
    const now = peek(lock);
    if (now && now.text === seen.text && now.mtimeMs === seen.mtimeMs) unlinkSync(lock);
  } finally {
    unlinkIfSame(breaker, me);
  }
}

/** Unlink `path` when it still holds `text` (ours); a vanished file is fine. */
function unlinkIfSame(path: string, text: string): void {
  try {
    if (readFileSync(path, 'utf8') === text) unlinkSync(path);
  } catch (e) {
    if ((e as { code?: string }).code !== 'ENOENT') throw e;
  }
}

/**
 * Run `fn` holding `${path}.lock` (created exclusively; removed after, if still ours). Waits with
 * a growing sleep (1–25 ms, jittered) while another live owner holds it; breaks a stale one.
 * Errors other than EEXIST creating the lock (a read-only folder) are thrown as they come.
 * @throws FileLockTimeout after `waitMs` without the lock.
 * @example withFileLock('/tmp/tune.json', () => writeFileAtomic('/tmp/tune.json', '{}'))
 */
export function withFileLock<T>(path: string, fn: () => T, opts: FileLockOptions = {}): T {
  const staleMs = opts.staleMs ?? 30_000;
  const waitMs = opts.waitMs ?? 2 * staleMs;
  const lock = `${path}.lock`;
  const me = JSON.stringify({ pid: process.pid, host: hostname(), thread: threadId, nonce: Math.random().toString(36).slice(2) } satisfies Owner);
  const t0 = Date.now();
  for (let pause = 1; !create(lock, me); pause = Math.min(25, pause * 2)) {
    const seen = peek(lock);
    if (seen && staleness(seen, staleMs)) {
      breakStale(lock, seen, staleMs, me);
      continue;
    }
    if (Date.now() - t0 > waitMs) throw new FileLockTimeout(`the lock ${lock} is held (${seen?.text || 'no owner written'}) for more than ${waitMs} ms`);
    sleep(pause * (0.5 + Math.random()));
  }
  try {
    return fn();
  } finally {
    unlinkIfSame(lock, me);
  }
}

/**
 * Write `text` to `path` through a temporary file in the same folder and a rename (readers see
 * the old file or the new one, never a part). The temporary name carries the process, the thread
 * and a random part.
 * @example writeFileAtomic('/tmp/tune.json', '{"version":1,"entries":{}}')
 */
export function writeFileAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.${threadId}.${Math.random().toString(36).slice(2, 8)}.tmp`;
  writeFileSync(tmp, text);
  try {
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // the rename's error is the one to report
    }
    throw e;
  }
}
