/**
 * What the docs say about the command line is what it does:
 * - every option a command accepts is in its --help text and in docs/guides/cli.md "Every
 *   command's options", and every flag those name is accepted (the three sets are equal);
 * - every `gpusparse <command> …` line of README.md and docs/guides/*.md parses (strict) with that
 *   command's options;
 * - the exit codes in README.md and in `gpusparse --help` are those of ExitCode (util/context.ts).
 * Nothing here runs a command: help texts and option tables only.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { joinNegativeValues, main } from '../src/main';
import { type Command, ExitCode } from '../src/util/context';
import { captured, captureOutput } from './capture';

captureOutput();
const root = fileURLToPath(new URL('../../..', import.meta.url));
const docs = ['README.md', 'docs/README.md', ...readdirSync(join(root, 'docs/guides')).filter((f) => f.endsWith('.md')).map((f) => `docs/guides/${f}`)];
const text = (f: string) => readFileSync(join(root, f), 'utf8');

type Options = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

async function loadCommands(): Promise<Map<string, Command>> {
  const dir = fileURLToPath(new URL('../src/commands/', import.meta.url));
  const out = new Map<string, Command>();
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.ts')).sort()) {
    const mod = (await import(join(dir, f))) as Record<string, unknown>;
    const cmd = Object.values(mod).find((x): x is Command => typeof x === 'object' && x !== null && 'usage' in x && 'options' in x);
    if (cmd) out.set(f.replace(/\.ts$/, ''), cmd);
  }
  return out;
}

/** `--flag` tokens of a text (and `-o` as `output` when the options have that short name). */
function flagsIn(s: string, options?: Options): Set<string> {
  const found = new Set<string>();
  for (const m of s.matchAll(/(?<![\w-])--([a-zA-Z][\w-]*)/g)) found.add(m[1]!);
  for (const m of s.matchAll(/(?<![\w-])-([a-zA-Z])(?![\w-])/g)) {
    const long = Object.entries(options ?? {}).find(([, o]) => o.short === m[1])?.[0];
    if (long) found.add(long);
  }
  return found;
}

/** The "Every command's options" section of cli.md: common options and one subsection per command. */
function referenceSection(): { common: string; byCommand: Map<string, string> } {
  const md = text('docs/guides/cli.md');
  const start = md.indexOf("## Every command's options");
  expect(start, "docs/guides/cli.md: a section \"## Every command's options\"").toBeGreaterThanOrEqual(0);
  const end = md.indexOf('\n## ', start + 3);
  const body = md.slice(start, end < 0 ? undefined : end);
  const parts = body.split(/^### `gpusparse (\w+)`$/m);
  const byCommand = new Map<string, string>();
  for (let i = 1; i < parts.length; i += 2) byCommand.set(parts[i]!, parts[i + 1]!);
  return { common: parts[0]!, byCommand };
}

const commands = await loadCommands();

async function helpOf(args: string[]): Promise<string> {
  captured.stdout = '';
  expect(await main(args)).toBe(0);
  return captured.stdout;
}

describe('the options of every command', () => {
  it('the top-level --help lists the commands and the common options the parser takes', async () => {
    const help = await helpOf(['--help']);
    const listed = [...help.matchAll(/^ {2}(\w+) /gm)].map((m) => m[1]!).sort();
    expect(listed).toEqual([...commands.keys()].sort());
    const common = flagsIn(help.split('\n').find((l) => l.startsWith('common options:'))!);
    expect([...common].sort()).toEqual(['backend', 'debug', 'help', 'json', 'no-progress']);
    expect([...flagsIn(referenceSection().common)].sort()).toEqual([...common].sort());
  });

  for (const [name, cmd] of commands) {
    it(`${name}: --help, cli.md and the parser name the same options`, async () => {
      const options = cmd.options as Options;
      const accepted = new Set(Object.keys(options));
      const help = await helpOf([name, '--help']);
      const common = new Set(['json', 'backend', 'debug', 'no-progress', 'help']);
      // --help: every accepted option; nothing it names that the command (or, after 'gpusparse X', X) refuses
      const inHelp = new Set<string>();
      for (const line of help.split('\n')) {
        const other = /gpusparse (\w+)/.exec(line)?.[1];
        const [own, rest] = other && other !== name ? [line.slice(0, line.indexOf(`gpusparse ${other}`)), line.slice(line.indexOf(`gpusparse ${other}`))] : [line, ''];
        for (const f of flagsIn(own, options)) inHelp.add(f);
        if (rest) for (const f of flagsIn(rest)) expect(Object.keys(commands.get(other!)!.options), `${name} --help names ${other}'s --${f}`).toContain(f);
      }
      expect([...accepted].filter((o) => !inHelp.has(o)), `${name}: accepted but not in --help`).toEqual([]);
      expect([...inHelp].filter((o) => !accepted.has(o) && !common.has(o)), `${name}: in --help but refused`).toEqual([]);
      // docs/guides/cli.md: exactly the accepted options
      const section = referenceSection().byCommand.get(name);
      expect(section, `docs/guides/cli.md: a subsection ### \`gpusparse ${name}\``).toBeDefined();
      const inDocs = flagsIn(section!, options);
      expect([...accepted].filter((o) => !inDocs.has(o)), `${name}: accepted but not in docs/guides/cli.md`).toEqual([]);
      expect([...inDocs].filter((o) => !accepted.has(o) && !common.has(o)), `${name}: in docs/guides/cli.md but refused`).toEqual([]);
    });
  }
});

/** Every `gpusparse <command> …` of the docs: file, line, command and the rest of the line. */
function docCommandLines(): Array<{ at: string; name: string; rest: string }> {
  const names = [...commands.keys()].join('|');
  const re = new RegExp(`\\bgpusparse (${names})\\b([^\`#|;&>\\n]*)`, 'g');
  const out: Array<{ at: string; name: string; rest: string }> = [];
  for (const f of docs) {
    text(f)
      .split('\n')
      .forEach((line, i) => {
        for (const m of line.matchAll(re)) out.push({ at: `${f}:${i + 1}`, name: m[1]!, rest: m[2]! });
      });
  }
  return out;
}

describe('the command lines of README.md and docs/guides', () => {
  const lines = docCommandLines();
  it('are many (the extraction works)', () => {
    expect(lines.length).toBeGreaterThan(30);
  });

  it('each parses with its command\'s options (a synopsis "[--x …]" names only accepted options)', () => {
    const common: Options = { json: { type: 'boolean' }, backend: { type: 'string' }, debug: { type: 'boolean' }, 'no-progress': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } };
    const failures: string[] = [];
    for (const { at, name, rest } of lines) {
      const options = { ...common, ...(commands.get(name)!.options as Options) };
      if (/\[-/.test(rest)) {
        for (const f of flagsIn(rest, options)) if (!(f in options)) failures.push(`${at}: gpusparse ${name} has no --${f}`);
        continue;
      }
      const args = [...rest.matchAll(/"[^"]*"|'[^']*'|\S+/g)].map((m) => m[0].replace(/^(["'])(.*)\1$/, '$2'));
      // prose names an option without its value ("`gpusparse ci --tol`"), or wraps the line there
      const last = args.at(-1)?.replace(/^--/, '');
      if (last !== undefined && options[last]?.type === 'string') args.push('value');
      try {
        parseArgs({ args: joinNegativeValues(args, options), options, allowPositionals: true, strict: true });
      } catch (e) {
        failures.push(`${at}: gpusparse ${name}${rest}: ${(e as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('exit codes', () => {
  const codes = Object.values(ExitCode)
    .map(Number)
    .sort((a, b) => a - b);

  it("README's list is ExitCode's", () => {
    const sentence = /Exit codes: ([\s\S]*?)\. `gen:/.exec(text('README.md'))?.[1];
    expect(sentence, 'README.md: "Exit codes: …"').toBeDefined();
    const listed = [...sentence!.matchAll(/(?:^|, )(\d+) /g)].map((m) => Number(m[1]));
    expect(listed).toEqual(codes);
  });

  it('gpusparse --help lists them too', async () => {
    const help = await helpOf(['--help']);
    const block = help.slice(help.indexOf('exit codes:'));
    expect([...block.matchAll(/(?:: |, |^ +)(\d+) /gm)].map((m) => Number(m[1]))).toEqual(codes);
  });
});

describe('the files the docs name', () => {
  it('exist (every `packages/…`, `bench/…`, `scripts/…`, `examples/…`, `testdata/…`, `docs/…` path in backticks)', () => {
    const missing: string[] = [];
    for (const f of [...docs, 'examples/browser/README.md']) {
      text(f)
        .split('\n')
        .forEach((line, i) => {
          for (const m of line.matchAll(/`((?:packages|bench|scripts|examples|testdata|docs)\/[\w./-]+\.(?:ts|mjs|py|md|json|sh|mtx|FCIDUMP))`/g)) {
            if (!existsSync(join(root, m[1]!))) missing.push(`${f}:${i + 1}: ${m[1]}`);
          }
        });
    }
    expect(missing).toEqual([]);
  });
});

describe('the links the docs make', () => {
  /** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
  const slug = (h: string) =>
    h
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
  const anchors = (f: string) => new Set(text(f).split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => slug(l.replace(/^#+ /, ''))));

  it('resolve: every relative [text](file.md#anchor) names a file that exists and a heading it has', () => {
    const packages = ['chem', 'cli', 'formats', 'gpu', 'solvers'].map((p) => `packages/${p}/README.md`);
    const bad: string[] = [];
    for (const f of [...docs, ...packages, 'examples/browser/README.md']) {
      text(f)
        .split('\n')
        .forEach((line, i) => {
          for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
            if (/^(https?|mailto):/.test(m[1]!)) continue;
            const [path, anchor] = m[1]!.split('#');
            const target = path ? normalize(join(dirname(f), path)) : f;
            if (!existsSync(join(root, target))) bad.push(`${f}:${i + 1}: ${m[1]}: no file ${target}`);
            else if (anchor && target.endsWith('.md') && !anchors(target).has(anchor)) bad.push(`${f}:${i + 1}: ${m[1]}: no heading #${anchor} in ${target}`);
          }
        });
    }
    expect(bad).toEqual([]);
  });
});
