/**
 * The tuning cache: choices keyed by matrix fingerprint × adapter × candidate space ×
 * expected-products decade. Stores are synchronous key/value maps; this module holds the
 * in-memory and browser `localStorage` stores and the validation of loaded entries. The
 * file store (Node) lives in `cache-fs.ts`, loaded only in Node, so browser bundles do not
 * pull in `node:fs`.
 * @module
 */
import { getKernel } from '../kernels/registry';
import type { AnySpmvKernel } from '../kernels/types';
import { type CandidateSpec, EXTRA_VALUES } from './candidates';

/** One remembered choice. */
export interface CacheEntry {
  readonly kernel: string;
  readonly params: Readonly<Record<string, number>>;
  /** Product time measured when it was chosen (ms, median). */
  readonly productMs: number;
  readonly conversionMs: number;
  readonly uploadMs: number;
  readonly method: 'timestamp' | 'wall';
  /** ISO date of the tuning. */
  readonly date: string;
}

/** Where choices are kept. `get`/`set` never throw; problems are reported through `warn`. */
export interface TuneStore {
  /** Human description (e.g. the file path). */
  readonly where: string;
  get(key: string): CacheEntry | undefined;
  set(key: string, entry: CacheEntry): void;
  /** Forget a choice (one that went wrong after it was made); optional for stores of callers. */
  delete?(key: string): void;
}

/** The format version written into cache files; other versions are ignored. */
export const CACHE_VERSION = 1;

/**
 * Check a loaded entry: a registered kernel, parameters it declares with integer values, finite
 * times ≥ 0. Returns the reason it is unusable, or undefined. O(params).
 * @example validateEntry({ kernel: 'nope', params: {} }) // "unknown kernel 'nope'"
 */
export function validateEntry(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return `expected an object, got ${e === null ? 'null' : typeof e}`;
  const r = e as Record<string, unknown>;
  if (typeof r.kernel !== 'string') return 'expected a kernel id string';
  let k: ReturnType<typeof getKernel>;
  try {
    k = getKernel(r.kernel);
  } catch {
    return `unknown kernel '${r.kernel}'`;
  }
  if (typeof r.params !== 'object' || r.params === null) return 'expected a params object';
  for (const [name, v] of Object.entries(r.params as Record<string, unknown>)) {
    if (!(name in k.params)) return `kernel ${k.id} has no parameter '${name}'`;
    // kernel parameters are integers (shader constants): 1.5 or 1e300 reached the WGSL text and failed as "a bug of gpusparse"
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) return `parameter ${name} expected an integer, got ${String(v)}`;
  }
  for (const f of ['productMs', 'conversionMs', 'uploadMs'] as const) {
    if (typeof r[f] !== 'number' || !((r[f] as number) >= 0) || !Number.isFinite(r[f])) return `expected a finite ${f} ≥ 0, got ${String(r[f])}`;
  }
  return undefined;
}

/**
 * Why a valid cache entry is not a choice this tuning could have made, or undefined: its kernel
 * is not among `ks` (an experimental kernel, a `kernels` option), or a parameter value is none the
 * tuner tries — the declared values, the extra ones, a value fixed by the caller's `candidates`,
 * or for hybrid's boundary a row length in [0, `maxRowLength`]. Such an entry was hand-edited or
 * written by another build: `sell` with C = 2 000 000 on a 1 600-row matrix was used as it stood
 * (1 250× padding) and a larger one would have exhausted memory. O(params · specs).
 * @example entryOutsideSpace({ kernel: 'sell', params: { C: 2e6 } } as CacheEntry, registry, undefined, 5) // "parameter C = 2000000 …"
 */
export function entryOutsideSpace(e: CacheEntry, ks: readonly AnySpmvKernel[], specs: readonly CandidateSpec[] | undefined, maxRowLength: number): string | undefined {
  const k = ks.find((d) => d.id === e.kernel);
  if (!k) return `kernel ${e.kernel} is not among this tuning's candidates`;
  const fixed = (specs ?? []).flatMap((s) => (typeof s === 'object' && s.kernel === k.id && s.params ? [s.params] : []));
  for (const [name, v] of Object.entries(e.params)) {
    const spec = (k.params as Record<string, { values: readonly number[] } | undefined>)[name];
    if (!spec) return `kernel ${k.id} has no parameter '${name}'`;
    if (spec.values.includes(v) || EXTRA_VALUES[k.id]?.[name]?.includes(v) || fixed.some((f) => f[name] === v)) continue;
    if (k.id === 'hybrid' && name === 'boundary' && v >= 0 && v <= maxRowLength) continue;
    return `parameter ${name} = ${v} is none the tuner tries (${spec.values.join(', ')})`;
  }
  return undefined;
}

/**
 * Parse the JSON text of a cache file into its entries; anything malformed is dropped with a
 * warning (the whole file when it is not a version-{@link CACHE_VERSION} object). Never throws.
 * Cost: O(text).
 * @example parseCacheText('{"version":1,"entries":{}}', 'tune.json', console.warn).size // 0
 */
export function parseCacheText(text: string, where: string, warn: (msg: string) => void): Map<string, CacheEntry> {
  const out = new Map<string, CacheEntry>();
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    warn(`gpusparse autotune: ignoring the cache ${where}: expected JSON, got a parse error (${(e as Error).message})`);
    return out;
  }
  const d = doc as { version?: unknown; entries?: unknown };
  if (typeof d !== 'object' || d === null || d.version !== CACHE_VERSION || typeof d.entries !== 'object' || d.entries === null) {
    warn(`gpusparse autotune: ignoring the cache ${where}: expected {version: ${CACHE_VERSION}, entries: {...}}, got ${text.slice(0, 60)}`);
    return out;
  }
  for (const [key, e] of Object.entries(d.entries as Record<string, unknown>)) {
    const bad = validateEntry(e);
    if (bad) warn(`gpusparse autotune: ignoring cache entry ${key} in ${where}: ${bad}`);
    else out.set(key, e as CacheEntry);
  }
  return out;
}

/** The JSON text of a cache file holding `entries`. O(entries). @example serializeCache(new Map()) */
export function serializeCache(entries: ReadonlyMap<string, CacheEntry>): string {
  return `${JSON.stringify({ version: CACHE_VERSION, entries: Object.fromEntries(entries) }, null, 1)}\n`;
}

/**
 * A store in memory (lost with the process; the default in browsers without localStorage).
 * @example const store = new MemoryTuneStore(); autotune(ctx, a, { cache: store })
 */
export class MemoryTuneStore implements TuneStore {
  readonly where = 'memory';
  readonly entries = new Map<string, CacheEntry>();
  get(key: string): CacheEntry | undefined {
    return this.entries.get(key);
  }
  set(key: string, entry: CacheEntry): void {
    this.entries.set(key, entry);
  }
  delete(key: string): void {
    this.entries.delete(key);
  }
}

/** The part of the Web Storage API (localStorage) the store uses. */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/**
 * A store in a browser's `localStorage` under one item (default 'gpusparse-tune'), in the
 * same JSON layout as the cache file. Corrupt content is ignored with a warning.
 * @example new LocalStorageTuneStore(window.localStorage)
 */
export class LocalStorageTuneStore implements TuneStore {
  readonly where: string;
  private entries: Map<string, CacheEntry> | undefined;

  constructor(
    private readonly storage: StorageLike,
    private readonly item = 'gpusparse-tune',
    private readonly warn: (msg: string) => void = console.warn,
  ) {
    this.where = `localStorage[${item}]`;
  }

  private load(): Map<string, CacheEntry> {
    if (this.entries) return this.entries;
    let text: string | null = null;
    try {
      text = this.storage.getItem(this.item);
    } catch (e) {
      this.warn(`gpusparse autotune: cannot read ${this.where}: ${(e as Error).message}`);
    }
    this.entries = text === null ? new Map() : parseCacheText(text, this.where, this.warn);
    return this.entries;
  }

  get(key: string): CacheEntry | undefined {
    return this.load().get(key);
  }

  set(key: string, entry: CacheEntry): void {
    const m = this.load();
    m.set(key, entry);
    this.save(m);
  }

  delete(key: string): void {
    const m = this.load();
    if (m.delete(key)) this.save(m);
  }

  private save(m: Map<string, CacheEntry>): void {
    try {
      this.storage.setItem(this.item, serializeCache(m));
    } catch (e) {
      this.warn(`gpusparse autotune: cannot write ${this.where}: ${(e as Error).message}`);
    }
  }
}
