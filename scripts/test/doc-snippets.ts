/**
 * The ```ts blocks of README.md, docs/guides/*.md and packages/<name>/README.md as a newcomer copies them: extracted with
 * their file and line, imports of '@gpusparse/…' resolved through each package's own `exports`
 * map (a subpath a package does not export is an error, as it would be for a consumer), then
 * type-checked together against the packages' sources (packages/cli/test/docs-snippets.test.ts
 * also runs them). A block is run unless the HTML comment right before it says why not:
 *
 *   <!-- snippet: gpu -->       needs a WebGPU adapter: type-checked only (the test runs on the CPU)
 *   <!-- snippet: fragment -->  a piece of a larger program (a declaration, a list of calls):
 *                               type-checked only
 *
 * Any other `snippet:` comment is an error, so a typo cannot silently skip a block.
 * @module
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

/** One ```ts block of a document. */
export interface Snippet {
  /** Path relative to the repository root. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** 'run': type-checked and run; 'gpu' / 'fragment': type-checked only. */
  mode: 'run' | 'gpu' | 'fragment';
  code: string;
}

const MARK = /^<!--\s*snippet:\s*(\S+)\s*-->$/;
const MODES = new Set(['gpu', 'fragment']);

/** The documents a user reads: README.md, every guide, and each package's README (its npm page). */
export function docFiles(root: string): string[] {
  const guides = readdirSync(join(root, 'docs/guides'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/guides/${f}`);
  const packages = readdirSync(join(root, 'packages'))
    .sort()
    .map((p) => `packages/${p}/README.md`)
    .filter((f) => existsSync(join(root, f)));
  return ['README.md', 'docs/README.md', ...guides, ...packages];
}

/**
 * Every ```ts block of `files` (relative to `root`), with its mode.
 * @throws Error naming file and line for an unknown `snippet:` mark, or one not followed by a ts block
 */
export function extractSnippets(root: string, files: readonly string[]): Snippet[] {
  const out: Snippet[] = [];
  for (const file of files) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    let mark: { mode: string; line: number } | undefined;
    for (let i = 0; i < lines.length; i++) {
      const t = lines[i]!.trim();
      const m = MARK.exec(t);
      if (m) {
        if (!MODES.has(m[1]!)) throw new Error(`${file}:${i + 1}: expected '<!-- snippet: gpu -->' or '<!-- snippet: fragment -->', got '${t}'`);
        mark = { mode: m[1]!, line: i + 1 };
        continue;
      }
      if (/^```(ts|typescript)\s*$/.test(t)) {
        const start = i;
        const body: string[] = [];
        for (i++; i < lines.length && lines[i]!.trim() !== '```'; i++) body.push(lines[i]!);
        out.push({ file, line: start + 1, mode: (mark?.mode ?? 'run') as Snippet['mode'], code: body.join('\n') });
        mark = undefined;
        continue;
      }
      if (mark && t !== '') throw new Error(`${file}:${mark.line}: a 'snippet:' mark must come right before a \`\`\`ts block, got '${t}' at line ${i + 1}`);
    }
    if (mark) throw new Error(`${file}:${mark.line}: a 'snippet:' mark must come right before a \`\`\`ts block, got the end of the file`);
  }
  return out;
}

/**
 * The file a consumer's `import … from '@gpusparse/<pkg>[/<sub>]'` loads in this workspace: the
 * `default` condition of that subpath in packages/<pkg>/package.json's `exports`.
 * @throws Error when the package does not exist or does not export the subpath
 */
export function resolvePackageImport(root: string, specifier: string): string {
  const m = /^@gpusparse\/([a-z-]+)(\/.*)?$/.exec(specifier);
  if (!m) throw new Error(`expected '@gpusparse/<package>[/<subpath>]', got '${specifier}'`);
  let pkg: { exports?: Record<string, string | Record<string, string>> };
  try {
    pkg = JSON.parse(readFileSync(join(root, 'packages', m[1]!, 'package.json'), 'utf8'));
  } catch {
    throw new Error(`'${specifier}': no package @gpusparse/${m[1]} (packages/${m[1]}/package.json)`);
  }
  const sub = `.${m[2] ?? ''}`;
  const entry = pkg.exports?.[sub];
  const target = typeof entry === 'string' ? entry : entry?.default;
  if (!target) throw new Error(`'${specifier}': @gpusparse/${m[1]} exports ${Object.keys(pkg.exports ?? {}).join(', ')}, not '${sub}'`);
  return resolve(root, 'packages', m[1]!, target);
}

/** The snippet's code with '@gpusparse/…' imports pointing at the files the exports map names. */
export function rewriteImports(root: string, code: string): string {
  return code.replace(/(\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)(['"])(@gpusparse\/[^'"]+)\2/g, (_all, lead: string, q: string, spec: string) => `${lead}${q}${resolvePackageImport(root, spec)}${q}`);
}

/** Write each snippet as a module in `dir` (emptied first); returns the paths, in order. */
export function writeSnippets(root: string, dir: string, snippets: readonly Snippet[]): string[] {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return snippets.map((s, k) => {
    const name = `${String(k).padStart(2, '0')}-${s.file.replace(/[/.]/g, '_')}-L${s.line}.ts`;
    const path = join(dir, name);
    writeFileSync(path, `// ${s.file}:${s.line} (${s.mode})\n${rewriteImports(root, s.code)}\nexport {};\n`);
    return path;
  });
}

/**
 * Type-check the snippet files with the repository's compiler options (strict; unused locals
 * allowed: a doc block may show a value without using it). Only the snippets' own diagnostics
 * are asked for, so the packages' sources are read but not checked again (pnpm typecheck does).
 * @returns one message per diagnostic, naming the document line (block line + offset)
 */
export function typecheckSnippets(root: string, paths: readonly string[], snippets: readonly Snippet[]): string[] {
  const base = ts.readConfigFile(join(root, 'tsconfig.base.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(base.config, ts.sys, root);
  const options: ts.CompilerOptions = { ...parsed.options, noEmit: true, allowImportingTsExtensions: true, noUnusedLocals: false, noUnusedParameters: false, typeRoots: [join(root, 'node_modules/@types')] };
  const program = ts.createProgram({ rootNames: [...paths], options });
  const messages: string[] = [];
  paths.forEach((p, k) => {
    const sf = program.getSourceFile(p);
    if (!sf) {
      messages.push(`${snippets[k]!.file}:${snippets[k]!.line}: not compiled`);
      return;
    }
    for (const d of [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]) {
      // the file's line 1 is the header comment: line L of the file is line (block + L − 1) of the document
      const at = d.start === undefined ? 0 : sf.getLineAndCharacterOfPosition(d.start).line;
      messages.push(`${snippets[k]!.file}:${snippets[k]!.line + at}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    }
  });
  return messages;
}
