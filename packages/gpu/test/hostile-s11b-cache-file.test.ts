/**
 * Session 11: the tuning cache file under hostile conditions (no GPU needed: the file store alone).
 * Two worker threads of one process writing it at once shared one temporary file (named by the
 * process id): renames failed with ENOENT and choices were lost. A cache file of hundreds of
 * megabytes was read whole (text and JSON) at every tuning. A truncated file, a path whose folder
 * is a file were already handled (warned, replaced on write). A file that is not JSON-object text at
 * all — a matrix given as `--cache` — was replaced by the cache JSON: now it is left as it is.
 */
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../src/autotune/cache';
import { FileTuneStore, MAX_CACHE_BYTES } from '../src/autotune/cache-fs';

const dir = mkdtempSync(join(tmpdir(), 'gpusparse-s11b-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const entry: CacheEntry = { kernel: 'csr-scalar', params: { workgroupSize: 256 }, productMs: 1, conversionMs: 0, uploadMs: 0, method: 'wall', date: '2026-11-26' };

/** A worker thread that sets `n` entries `tag-i` in the FileTuneStore at `path`; resolves to its warnings. */
function writer(path: string, tag: string, n: number): Promise<string[]> {
  const script = join(dir, 'writer.mjs');
  writeFileSync(
    script,
    `import { parentPort, workerData as d } from 'node:worker_threads';
const { tsImport } = await import(d.tsx);
const { FileTuneStore } = await tsImport(d.module, import.meta.url);
const warns = [];
const store = new FileTuneStore(d.path, (m) => warns.push(m));
for (let i = 0; i < d.n; i++) store.set(d.tag + '-' + i, d.entry);
parentPort.postMessage(warns);
`,
  );
  const workerData = { path, tag, n, entry, tsx: import.meta.resolve('tsx/esm/api'), module: join(import.meta.dirname, '../src/autotune/cache-fs.ts') };
  return new Promise((resolve, reject) => {
    const w = new Worker(script, { workerData });
    w.on('message', resolve);
    w.on('error', reject);
  });
}

describe('the tuning cache file', () => {
  it('three worker threads writing one file at once: no failed write, a valid file (renames failed with ENOENT before: 41 of 900 in one run)', async () => {
    const path = join(dir, 'threads.json');
    const warns = await Promise.all(['a', 'b', 'c'].map((t) => writer(path, t, 150)));
    expect(warns.flat()).toEqual([]);
    const doc = JSON.parse(readFileSync(path, 'utf8')) as { version: number; entries: Record<string, unknown> };
    expect(doc.version).toBe(1);
    // read-merge-write without a lock can lose a choice another thread wrote meanwhile (it is
    // tuned again next time); most survive
    expect(Object.keys(doc.entries).length).toBeGreaterThan(300);
  }, 60000);

  it('a file larger than MAX_CACHE_BYTES is not read: a warning with its size, then replaced by the next write', () => {
    const path = join(dir, 'huge.json');
    writeFileSync(path, '{"version":1,"entries":{');
    truncateSync(path, MAX_CACHE_BYTES + 1); // sparse: no disk used
    const warns: string[] = [];
    const store = new FileTuneStore(path, (m) => warns.push(m));
    expect(store.get('k')).toBeUndefined();
    expect(warns).toEqual([`gpusparse autotune: ignoring the cache ${path}: ${MAX_CACHE_BYTES + 1} bytes, more than the ${MAX_CACHE_BYTES} a tuning cache is read up to (delete it or choose another path)`]);
    store.set('k', entry);
    expect(warns).toHaveLength(1);
    expect(new FileTuneStore(path).get('k')).toEqual(entry);
  });

  it('a truncated file: warned, its entries missed, and the next write leaves a valid file (already so)', () => {
    const path = join(dir, 'cut.json');
    const good = new FileTuneStore(path);
    good.set('k1', entry);
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.slice(0, text.length / 2));
    const warns: string[] = [];
    const store = new FileTuneStore(path, (m) => warns.push(m));
    expect(store.get('k1')).toBeUndefined();
    expect(warns[0]).toMatch(/ignoring the cache .*cut\.json: expected JSON, got a parse error/);
    store.set('k2', entry);
    expect(new FileTuneStore(path).get('k2')).toEqual(entry);
  });

  it('a matrix file given as the cache path (tune A.mtx --cache A.mtx): left as it is, the choice kept in memory (was overwritten by the cache JSON)', () => {
    const path = join(dir, 'A.mtx');
    const text = '%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 4\n';
    writeFileSync(path, text);
    const warns: string[] = [];
    const store = new FileTuneStore(path, (m) => warns.push(m));
    store.set('k', entry);
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(store.get('k')).toEqual(entry);
    expect(warns.join('\n')).toMatch(/not writing the cache .*A\.mtx: the file there is not a tuning cache \(not a JSON object\) and is left as it is/);
  });

  it('an empty file is a cache to write (not someone\'s data)', () => {
    const path = join(dir, 'empty.json');
    writeFileSync(path, '');
    new FileTuneStore(path, () => {}).set('k', entry);
    expect(new FileTuneStore(path).get('k')).toEqual(entry);
  });

  it("a cache path under a regular file: reads and writes warn, the choice stays in memory (already so)", () => {
    const file = join(dir, 'plain');
    writeFileSync(file, 'x');
    const warns: string[] = [];
    const store = new FileTuneStore(join(file, 'tune.json'), (m) => warns.push(m));
    store.set('k', entry);
    expect(store.get('k')).toEqual(entry);
    expect(warns.join('\n')).toMatch(/cannot write the cache .*plain\/tune\.json: (ENOTDIR|EEXIST)/);
  });
});
