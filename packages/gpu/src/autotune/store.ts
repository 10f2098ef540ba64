/**
 * Picking the tuning store from the `cache` option: a path or `true` gives the JSON file store
 * in Node (loaded dynamically) and `localStorage` or memory in a browser; a store object is
 * used as given; `false` disables caching.
 * @module
 */
import { LocalStorageTuneStore, MemoryTuneStore, type TuneStore } from './cache';

const inNode = (): boolean => typeof process !== 'undefined' && typeof process.versions?.node === 'string';

/** One memory store per process for browsers without localStorage (choices survive calls). */
let sharedMemory: MemoryTuneStore | undefined;

/**
 * The store for a `cache` option: `false` → none; a {@link TuneStore} → itself; a string → that
 * file (Node); `true` or undefined → the default file (`GPUSPARSE_CACHE_DIR`, XDG, ~/.cache) in
 * Node, `localStorage` or a process-wide memory store in a browser. Cost: one dynamic import.
 * @example const store = await resolveStore('/tmp/tune.json', console.warn);
 */
export async function resolveStore(cache: boolean | string | TuneStore | undefined, warn: (msg: string) => void): Promise<TuneStore | undefined> {
  if (cache === false) return undefined;
  if (typeof cache === 'object') return cache;
  if (inNode()) {
    const { FileTuneStore, defaultCachePath } = await import('./cache-fs');
    return new FileTuneStore(typeof cache === 'string' ? cache : defaultCachePath(), warn);
  }
  if (typeof cache === 'string') warn(`gpusparse autotune: a cache path (${cache}) needs Node; using the browser store instead`);
  const ls = (globalThis as { localStorage?: { getItem(k: string): string | null; setItem(k: string, v: string): void } }).localStorage;
  if (ls) return new LocalStorageTuneStore(ls, 'gpusparse-tune', warn);
  sharedMemory ??= new MemoryTuneStore();
  return sharedMemory;
}
