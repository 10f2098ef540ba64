/**
 * Every ```ts block of README.md, docs/guides/*.md and packages/<name>/README.md type-checks against the packages' public
 * exports (imported as a consumer imports them: '@gpusparse/<pkg>[/<subpath>]' through the
 * package's `exports` map), and every block not marked `<!-- snippet: gpu -->` or
 * `<!-- snippet: fragment -->` runs, on the CPU backend (this file hides the WebGPU adapter, as on
 * a machine without a GPU). scripts/test/doc-snippets.ts extracts and checks them.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { docFiles, extractSnippets, resolvePackageImport, rewriteImports, type Snippet, typecheckSnippets, writeSnippets } from '../../../scripts/test/doc-snippets';

// the CPU backend only: createGpuContext finds no adapter, so 'auto' falls back as without a GPU
vi.mock('@gpusparse/gpu', async (importOriginal) => {
  const gpu = await importOriginal<typeof import('@gpusparse/gpu')>();
  return {
    ...gpu,
    createGpuContext: async () => {
      throw new gpu.NoAdapterError('hidden by docs-snippets.test.ts: the doc blocks run on the CPU backend');
    },
  };
});

const root = fileURLToPath(new URL('../../..', import.meta.url));
const dir = join(root, 'packages/cli/.cache/doc-snippets');
const snippets = extractSnippets(root, docFiles(root));
const paths = writeSnippets(root, dir, snippets);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// one program for the doc blocks and a block with a known mistake (the checker must name its line)
const bad: Snippet = { file: 'x.md', line: 10, mode: 'fragment', code: "import { cg } from '@gpusparse/solvers';\nconst o: Parameters<typeof cg>[3] = { rtoll: 1e-8 };" };
const badPath = writeSnippets(root, join(dir, 'bad'), [bad]);
let diagnostics: string[] | undefined;
const typecheck = () => (diagnostics ??= typecheckSnippets(root, [...paths, ...badPath], [...snippets, bad]));

const where = (s: Snippet) => `${s.file}:${s.line}`;

describe('the doc blocks', () => {
  it('are found, and few are exempt from running', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(13);
    const exempt = snippets.filter((s) => s.mode !== 'run');
    expect(exempt.length).toBeLessThanOrEqual(snippets.length / 2);
    // a mark exempts a block for a reason the block shows: 'gpu' ones open a GPU context
    for (const s of snippets.filter((x) => x.mode === 'gpu')) expect(s.code, where(s)).toMatch(/createGpuContext\(/);
    for (const s of snippets.filter((x) => x.mode === 'run')) expect(s.code, where(s)).not.toMatch(/createGpuContext\(/);
  });

  it('type-check against the public exports', () => {
    expect(typecheck().filter((m) => !m.startsWith('x.md:'))).toEqual([]);
  }, 120_000);

  const cwd = process.cwd();
  for (const [k, s] of snippets.entries()) {
    it.skipIf(s.mode !== 'run')(`run on the CPU: ${where(s)}`, async () => {
      process.chdir(root); // the blocks name files relative to the repository root
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      try {
        await import(/* @vite-ignore */ paths[k]!);
      } finally {
        log.mockRestore();
        process.chdir(cwd);
      }
    }, 60_000);
  }
});

describe('the checker itself', () => {
  it('refuses a subpath a package does not export, an unknown package and an unknown mark', () => {
    expect(resolvePackageImport(root, '@gpusparse/chem/node')).toMatch(/packages\/chem\/src\/node\.ts$/);
    expect(() => resolvePackageImport(root, '@gpusparse/chem/fcidump')).toThrow(/exports \., \.\/node, \.\/gpu, not '\.\/fcidump'/);
    expect(() => resolvePackageImport(root, '@gpusparse/solver')).toThrow(/no package @gpusparse\/solver/);
    expect(rewriteImports(root, "import { cg } from '@gpusparse/solvers';")).toContain(join(root, 'packages/solvers/src/index.ts'));
  });

  it('reports a wrong option at its document line', () => {
    const msgs = typecheck().filter((m) => m.startsWith('x.md:'));
    expect(msgs.length).toBe(1);
    expect(msgs[0]).toMatch(/^x\.md:12: .*'rtoll'/);
  }, 120_000);
});
