/**
 * Where tests find real input files. The small ones live in this folder (default tier: a fresh
 * clone has them); the rest belong to the opt-in data tier, the shared data folder named by
 * `GPUSPARSE_DATA` or found next to the repository (`../shared/data`). A test that needs a file
 * of the data tier is skipped, with a note naming the file, when the tier is absent; when
 * `GPUSPARSE_DATA` is set (as `.ci/run` does) a missing file fails instead.
 * @module
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestRunner } from 'vitest';

/** The two kinds of input kept here and in the shared data folder. */
export type DataKind = 'matrices' | 'fcidump';

const here = dirname(fileURLToPath(import.meta.url));
const explicit = process.env.GPUSPARSE_DATA;

/** The data tier: its folder, whether it exists, and whether it was asked for explicitly. */
export const dataTier = {
  dir: explicit ? resolve(explicit) : resolve(here, '..', '..', 'shared', 'data'),
  required: Boolean(explicit),
  get available(): boolean {
    return existsSync(this.dir);
  },
};

/** Skip the running test (or throw outside one) because the data tier lacks `what`. */
function missing(what: string): never {
  const note = `needs ${what} from the data tier (set GPUSPARSE_DATA to the shared data folder; see testdata/README.md)`;
  const test = TestRunner.getCurrentTest();
  if (dataTier.required || !test) throw new Error(`${what}: not found (${dataTier.dir}); ${note}`);
  return test.context.skip(note) as never;
}

/** Absolute path of a data file: testdata/<kind>/<name> if kept here, else the data tier's. */
export function dataFile(kind: DataKind, name: string): string {
  const local = join(here, kind, name);
  if (existsSync(local)) return local;
  const shared = join(dataTier.dir, kind, name);
  return existsSync(shared) ? shared : missing(`${kind}/${name}`);
}

/** The data tier's folder of one kind (for tests that list it); skips the test without it. */
export function dataDir(kind: DataKind | '.'): string {
  const dir = join(dataTier.dir, kind);
  return existsSync(dir) ? dir : missing(kind === '.' ? 'its folder' : `${kind}/`);
}
