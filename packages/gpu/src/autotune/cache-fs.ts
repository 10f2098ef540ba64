/**
 * The tuning cache as a JSON file (Node only; the autotuner imports this module dynamically
 * so browser bundles never load `node:fs`). Default path: `$GPUSPARSE_CACHE_DIR/tune.json`,
 * else `$XDG_CACHE_HOME/gpusparse/tune.json`, else `~/.cache/gpusparse/tune.json`.
 * @module
 */
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { type CacheEntry, parseCacheText, serializeCache, type TuneStore } from './cache';
import { type FileLockOptions, withFileLock, writeFileAtomic } from './file-lock';

/**
 * The default cache file: `$GPUSPARSE_CACHE_DIR/tune.json`, `$XDG_CACHE_HOME/gpusparse/tune.json`
 * or `~/.cache/gpusparse/tune.json`. O(1).
 * @example defaultCachePath({ GPUSPARSE_CACHE_DIR: '/tmp/c' }) // '/tmp/c/tune.json'
 */
export function defaultCachePath(env: Record<string, string | undefined> = process.env): string {
  if (env.GPUSPARSE_CACHE_DIR) return join(env.GPUSPARSE_CACHE_DIR, 'tune.json');
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'gpusparse', 'tune.json');
}

/** Largest cache file read (64 MiB, ~200 000 choices); a larger one is ignored with a warning. */
export const MAX_CACHE_BYTES = 64 * 2 ** 20;

/**
 * A store in a JSON file. The file is read once (a missing file is an empty cache; a corrupt
 * one is ignored with a warning and replaced on the next write, unless it is no JSON object text
 * at all — a matrix file given as the cache path — which is never overwritten) and rewritten atomically
 * (temporary file + rename) after each `set`, merging entries another process wrote meanwhile.
 * The read–merge–write holds the lock file `<path>.lock` ({@link withFileLock}), so processes and
 * threads writing at once lose no entry (without it, 6 processes × 60 writes kept 320–351 of 360); a lock
 * left by a dead process, or older than `lock.staleMs`, is broken.
 * `delete` rewrites it the same way. Write failures warn and leave the choice in memory. Cost: O(file) per `set`.
 * @example const store = new FileTuneStore('/tmp/tune.json');
 */
export class FileTuneStore implements TuneStore {
  private entries: Map<string, CacheEntry> | undefined;
  /** The file holds text that is no JSON object: never overwritten. */
  private foreign = false;

  constructor(
    readonly where: string = defaultCachePath(),
    private readonly warn: (msg: string) => void = console.warn,
    private readonly lock: FileLockOptions = {},
  ) {}

  private read(quiet: boolean): Map<string, CacheEntry> {
    let text: string;
    try {
      // a cache of choices is ~300 bytes an entry: a file of gigabytes is something else, and
      // reading it whole (text and parsed JSON, every tuning) would exhaust memory first
      const { size } = statSync(this.where);
      if (size > MAX_CACHE_BYTES) {
        if (!quiet) this.warn(`gpusparse autotune: ignoring the cache ${this.where}: ${size} bytes, more than the ${MAX_CACHE_BYTES} a tuning cache is read up to (delete it or choose another path)`);
        return new Map();
      }
      text = readFileSync(this.where, 'utf8');
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code !== 'ENOENT' && !quiet) this.warn(`gpusparse autotune: cannot read the cache ${this.where}: ${(e as Error).message}`);
      return new Map();
    }
    // a file that is not JSON-object text at all (a matrix, an FCIDUMP given as --cache) is
    // someone's data: it was overwritten by the next write
    this.foreign = !/^\uFEFF?\s*(\{|$)/.test(text);
    return parseCacheText(text, this.where, quiet ? () => {} : this.warn);
  }

  get(key: string): CacheEntry | undefined {
    this.entries ??= this.read(false);
    return this.entries.get(key);
  }

  set(key: string, entry: CacheEntry): void {
    this.write((m) => m.set(key, entry));
  }

  /** Forget `key` (in memory, on disk and among entries another process wrote meanwhile). */
  delete(key: string): void {
    this.write((m) => m.delete(key));
  }

  private write(change: (m: Map<string, CacheEntry>) => void): void {
    try {
      mkdirSync(dirname(this.where), { recursive: true });
      withFileLock(this.where, () => this.mergeAndWrite(change), this.lock);
    } catch (e) {
      this.warn(`gpusparse autotune: cannot write the cache ${this.where}: ${(e as Error).message}`);
      if (!this.entries) this.entries = new Map();
      change(this.entries); // the choice stays in memory
    }
  }

  /** Under the lock: read the file, add this process's entries it lacks, apply `change`, write it back. */
  private mergeAndWrite(change: (m: Map<string, CacheEntry>) => void): void {
    const merged = this.read(true);
    for (const [k, v] of this.entries ?? []) if (!merged.has(k)) merged.set(k, v);
    change(merged);
    this.entries = merged;
    if (this.foreign) {
      this.warn(`gpusparse autotune: not writing the cache ${this.where}: the file there is not a tuning cache (not a JSON object) and is left as it is; the choice is kept for this process only`);
      return;
    }
    writeFileAtomic(this.where, serializeCache(merged));
  }
}
