/**
 * Run the doc blocks of README.md and docs/guides/*.md as a reader would, each in its own node
 * process from the repository root, on whatever backend the machine has — in particular the
 * blocks marked `<!-- snippet: gpu -->`, which packages/cli/test/docs-snippets.test.ts only
 * type-checks (it runs on the CPU backend). Prints one line per block; exit 1 when one fails.
 *
 *   node --import tsx scripts/test/run-doc-snippets.ts [gpu|run|all]   (default gpu)
 * @module
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docFiles, extractSnippets, writeSnippets } from './doc-snippets';

const root = fileURLToPath(new URL('../..', import.meta.url));
const which = process.argv[2] ?? 'gpu';
if (!['gpu', 'run', 'all'].includes(which)) {
  console.error(`run-doc-snippets: expected gpu, run or all, got '${which}'`);
  process.exit(2);
}
// under packages/cli (a "type": "module" package) so that tsx runs the blocks as ES modules
const dir = join(root, 'packages/cli/.cache/doc-snippets-run');
const all = extractSnippets(root, docFiles(root));
const chosen = all.filter((s) => s.mode !== 'fragment' && (which === 'all' || s.mode === which));
const paths = writeSnippets(root, dir, chosen);
let failed = 0;
chosen.forEach((s, k) => {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', paths[k]!], { cwd: root, encoding: 'utf8' });
  const s2 = ((performance.now() - t0) / 1000).toFixed(1);
  const ok = r.status === 0;
  if (!ok) failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${s.file}:${s.line} (${s.mode}, ${s2} s)${ok ? '' : `\n${r.stderr.trim().split('\n').slice(-8).join('\n')}`}`);
  if (r.stdout.trim()) console.log(r.stdout.trim().replace(/^/gm, '     '));
});
rmSync(dir, { recursive: true, force: true });
console.log(`doc blocks (${which}): ${chosen.length - failed} ran, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
