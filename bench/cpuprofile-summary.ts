/**
 * Self and total CPU time by function of a V8 `.cpuprofile` (node --cpu-prof), for the host
 * solver profiles of issue 18: `pnpm -s tsx bench/cpuprofile-summary.ts FILE.cpuprofile [--top 30]
 * [--under NAME[,NAME…]]`. Total time counts a function once per sample however deep it recurses;
 * `--under` lists the self time of everything below the named functions.
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const argv = process.argv;
const file = argv[2]!;
const top = Number(argv.includes('--top') ? argv[argv.indexOf('--top') + 1] : 30);
const prof = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(packages|bench)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
const selfUs = new Map<string, number>();
const totalUs = new Map<string, number>();
let all = 0;
for (let i = 0; i < prof.samples.length; i++) {
  const dt = prof.timeDeltas[i] ?? 0;
  all += dt;
  let id: number | undefined = prof.samples[i]!;
  const leaf = byId.get(id)!;
  selfUs.set(label(leaf), (selfUs.get(label(leaf)) ?? 0) + dt);
  const seen = new Set<string>();
  while (id !== undefined) {
    const l = label(byId.get(id)!);
    if (!seen.has(l)) totalUs.set(l, (totalUs.get(l) ?? 0) + dt);
    seen.add(l);
    id = parent.get(id);
  }
}
const show = (title: string, m: Map<string, number>) => {
  console.log(`${title} (of ${(all / 1e3).toFixed(0)} ms sampled)`);
  for (const [k, v] of [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * v) / all).toFixed(1).padStart(6)} % ${(v / 1e3).toFixed(1).padStart(8)} ms  ${k}`);
};
show('self', selfUs);
show('total', totalUs);
