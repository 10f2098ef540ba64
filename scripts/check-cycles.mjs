#!/usr/bin/env node
// Circular-import check over the TypeScript sources of every package: follows relative imports
// and @gpusparse/* package imports, reports each cycle with its file chain, exits 1 if any.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const files = [];
const walk = (d) => {
  for (const e of readdirSync(d)) {
    const p = join(d, e);
    if (e === 'node_modules') continue;
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith('.ts') && !p.endsWith('.test.ts') && !p.endsWith('.d.ts')) files.push(p);
  }
};
for (const pkg of readdirSync(join(root, 'packages'))) {
  const src = join(root, 'packages', pkg, 'src');
  if (existsSync(src)) walk(src);
}
const resolveImport = (from, spec) => {
  let base;
  if (spec.startsWith('.')) base = resolve(dirname(from), spec);
  else if (spec.startsWith('@gpusparse/')) base = join(root, 'packages', spec.slice('@gpusparse/'.length).split('/')[0], 'src', 'index');
  else return null;
  for (const c of [base, `${base}.ts`, join(base, 'index.ts')]) if (existsSync(c) && statSync(c).isFile()) return c;
  return null;
};
const re = /(?:^|\n)\s*(?:import|export)\s+(?!type\b)[^'"]*?from\s+['"]([^'"]+)['"]|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g;
const graph = new Map();
for (const f of files) {
  const text = readFileSync(f, 'utf8');
  const deps = new Set();
  for (const m of text.matchAll(re)) {
    const t = resolveImport(f, m[1] ?? m[2]);
    if (t) deps.add(t);
  }
  graph.set(f, [...deps]);
}
const state = new Map();
const stack = [];
const cycles = [];
const visit = (f) => {
  state.set(f, 1);
  stack.push(f);
  for (const d of graph.get(f) ?? []) {
    if (state.get(d) === 1) cycles.push([...stack.slice(stack.indexOf(d)), d]);
    else if (!state.has(d)) visit(d);
  }
  stack.pop();
  state.set(f, 2);
};
for (const f of files) if (!state.has(f)) visit(f);
if (cycles.length) {
  for (const c of cycles) console.error(`cycle: ${c.map((p) => relative(root, p)).join(' -> ')}`);
  process.exit(1);
}
console.log(`check-cycles: ${files.length} files, no import cycles`);
