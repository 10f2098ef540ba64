/**
 * The workspace's built-JavaScript run of the CLI (bin/gpusparse.mjs): every package resolves to
 * its dist/ file under the condition `gpusparse-dist` — the same file its publishConfig gives a
 * published install — and to its TypeScript source otherwise; the root scripts pass the condition.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
const pkg = (name: string) => JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8'));

describe('bin: built JavaScript in the workspace', () => {
  it.each(['formats', 'gpu', 'solvers', 'chem', 'cli'])('%s: exports give dist/ under gpusparse-dist, src/ by default, as publishConfig', (name) => {
    const p = pkg(name);
    for (const [sub, target] of Object.entries(p.exports as Record<string, Record<string, string>>)) {
      expect(target['gpusparse-dist']).toBe(p.publishConfig.exports[sub].import);
      expect(target.default).toMatch(/^\.\/src\/.*\.ts$/);
      expect(Object.keys(target)[0]).toBe('gpusparse-dist'); // the first matching condition wins
    }
  });

  it('pnpm start and pnpm gpusparse run the bin under the condition', () => {
    const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts;
    expect(scripts.start).toBe('node --conditions=gpusparse-dist packages/cli/bin/gpusparse.mjs start');
    expect(scripts.gpusparse).toBe('node --conditions=gpusparse-dist packages/cli/bin/gpusparse.mjs');
  });
});
