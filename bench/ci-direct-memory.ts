/**
 * Where the host direct CI's memory goes (issue 19's memory item): runs `ciEnergies` as
 * `gpusparse ci --backend cpu --sigma direct` does (WasmVectorSpace, direct σ on every core,
 * spin by parity), one irrep after the other, and samples process.memoryUsage() and the vector
 * heap (wasm memory size and bytes in use) every 20 ms and at each stage. Prints per irrep the
 * peaks, bytes per determinant, the operator's own `op.bytes`, Davidson's iterations and products.
 *
 *   pnpm -s tsx bench/ci-direct-memory.ts FCIDUMP [--irrep 1,2,3,4] [--nroots 3] [--multiplicity 1] [--threads auto|N] [--tol-residual] [--floor r]
 * @module
 */
import { ciEnergies, directHamiltonian } from '@gpusparse/chem';
import { readFcidump } from '@gpusparse/chem/node';
import { WasmVectorSpace } from '@gpusparse/formats';

const args = process.argv.slice(2);
const opt = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const file = args.find((a, i) => !a.startsWith('--') && (i === 0 || !args[i - 1]!.startsWith('--')));
if (!file) {
  console.error('usage: ci-direct-memory.ts FCIDUMP [--irrep 1,2,3,4] [--nroots 3] [--multiplicity 1] [--tol-residual]');
  process.exit(2);
}
const irreps = opt('irrep', '1').split(',').map(Number);
const nroots = Number(opt('nroots', '3'));
const multiplicity = Number(opt('multiplicity', '1'));
const residualRule = args.includes('--tol-residual');
const floor = args.includes('--floor') ? Number(opt('floor', '1e-5')) : undefined;
const threadsOpt: number | 'auto' = opt('threads', 'auto') === 'auto' ? 'auto' : Number(opt('threads', 'auto'));

const space = WasmVectorSpace.create({ threads: 1 })!;
const MB = 1e6;
const peak = { rss: 0, heap: 0, used: 0, arrayBuffers: 0 };
const sample = () => {
  const m = process.memoryUsage();
  peak.rss = Math.max(peak.rss, m.rss);
  peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers);
  peak.heap = Math.max(peak.heap, space.heap.memoryBytes);
  peak.used = Math.max(peak.used, space.heap.usedBytes);
};
const timer = setInterval(sample, 20);
const fd = await readFcidump(file);
console.log(`# ${file}; node ${process.version}; rss at start ${(process.memoryUsage().rss / MB).toFixed(1)} MB; stop ${residualRule ? 'residual 1e-8' : `default (bound)${floor === undefined ? '' : `, floor ${floor}`}`}`);
console.log('irrep\tdeterminants\titerations\tproducts\tpeak rss MB\tvector heap MB (size / peak in use)\top.bytes MB\tB/det (rss − start)\tstage peaks in use MB');
for (const irrep of irreps) {
  const rss0 = process.memoryUsage().rss;
  const stages: string[] = [];
  let opBytes = 0;
  const base = directHamiltonian({ threads: threadsOpt, multiplicity });
  const r = await ciEnergies(fd, {
    irrep,
    nroots,
    spin: { multiplicity },
    backend: { space, operator: () => { throw new Error('explicit H not expected'); } },
    hamiltonian: Object.assign(
      async (f: typeof fd, sp: Parameters<ReturnType<typeof directHamiltonian>>[1]) => {
        const h = await base(f, sp);
        opBytes = (h.host as unknown as { bytes: number }).bytes;
        return h;
      },
      { storesMatrix: false as const },
    ),
    ...(residualRule ? { accept: 'residual' as const } : {}),
    ...(floor === undefined ? {} : { residualFloor: floor }),
    onProgress: (p) => {
      sample();
      if (p.stage !== 'solve') stages.push(`${p.stage}:${(space.heap.usedBytes / MB).toFixed(0)}`);
    },
  });
  sample();
  const n = r.determinants;
  console.log([irrep, n, r.solver.iterations, r.solver.matvecs, (peak.rss / MB).toFixed(1), `${(peak.heap / MB).toFixed(1)} / ${(peak.used / MB).toFixed(1)}`, (opBytes / MB).toFixed(1), ((peak.rss - rss0) / n).toFixed(0), stages.join(' ')].join('\t'));
}
clearInterval(timer);
space.dispose();
