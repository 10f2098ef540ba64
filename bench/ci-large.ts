/**
 * CI end to end at scale: assemble and solve a ≥ 10^6-determinant Hamiltonian on the GPU
 * (float32 Davidson on the device + float64 host polish) and on the host-only backend (float64
 * Davidson), same space, same tolerance; prints times and energies, writes JSON to --out.
 *
 * Systems: the 1-D Hubbard chain (open, U/t = 2; the FCIDUMP is generated here — a model
 * Hamiltonian, labelled as such) with L sites and ⌈L/2⌉ α, ⌊L/2⌋ β electrons:
 * L = 13 gives C(13,7)·C(13,6) = 2 944 656 determinants; and FCIDUMP files given on the command
 * line (e.g. H10 STO-6G, 63 504 determinants, 28 M non-zeros).
 *
 *   node .gpukit/app/ci-large.mjs --out $OUT/ci.json [--sites 13] [--no-host | --host-only] [--workers N] [files...]
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type CiBackend, type CiResult, ciEnergies, hostBackend, parseFcidump } from '../packages/chem/src/index';
import type { CsrMatrix } from '../packages/formats/src/index';
import { createGpuContext, type GpuContext, GpuVectorSpace, gpuOperatorFromCsr } from '../packages/gpu/src/index';
import { hubbardFcidump } from './hubbard';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const out = opt('--out') ?? 'bench/out/ci-large.json';
const sites = Number(opt('--sites') ?? 13);
const kernel = opt('--kernel') ?? 'csr-vector';
const workers = opt('--workers') === undefined ? 'auto' : Number(opt('--workers'));
const valueArgs = new Set(['--out', '--sites', '--kernel', '--workers'].map(opt).filter(Boolean) as string[]);
const files = argv.filter((a) => !a.startsWith('--') && !valueArgs.has(a));

function gpuBackend(ctx: GpuContext): CiBackend<unknown, unknown> {
  const space = new GpuVectorSpace(ctx);
  return { space: space as never, operator: (m: CsrMatrix) => gpuOperatorFromCsr(ctx, m, { kernel }) as never };
}

const summary = (r: CiResult) => ({
  energies: r.energies,
  residualNorms: r.residualNorms,
  s2: r.s2,
  determinants: r.determinants,
  nnz: r.nnz,
  timings: r.timings,
  solver: r.solver,
  assembly: r.assembly,
  notes: r.notes,
});

const ctx = await createGpuContext();
console.log(ctx.describeText().split('\n')[0]);
const systems: [string, string][] = [[`hubbard-L${sites}-U2`, hubbardFcidump(sites)], ...files.map((f) => [f.split('/').pop()!, readFileSync(f, 'utf8')] as [string, string])];
const results: Record<string, unknown>[] = [];
for (const [name, text] of systems) {
  const fd = parseFcidump(text, { file: name });
  for (const which of argv.includes('--host-only') ? ['host'] : argv.includes('--no-host') ? ['webgpu'] : ['webgpu', 'host']) {
    const t0 = performance.now();
    const r = await ciEnergies(fd, {
      space: 'fci',
      nroots: 1,
      solver: 'davidson',
      workers,
      backend: which === 'webgpu' ? gpuBackend(ctx) : (hostBackend() as never),
      onProgress: (p) => {
        if (p.stage === 'solve' && p.iteration % 10 === 0) console.log(`  ${which} iter ${p.iteration} ${p.values.map((v) => v.toFixed(10)).join(' ')}`);
      },
    });
    const totalMs = performance.now() - t0;
    console.log(`${name} ${which}: ${r.determinants} dets, nnz ${r.nnz}, assembly ${r.timings.assembly.toFixed(0)} ms (${(r.assembly.rate / 1e6).toFixed(1)} M nnz/s, ${r.assembly.workers} workers), solve ${r.timings.solve.toFixed(0)} ms, total ${totalMs.toFixed(0)} ms; E = ${r.energies.map((e) => e.toFixed(10)).join(', ')}; ${r.solver.method}`);
    results.push({ system: name, backend: which, totalMs, ...summary(r) });
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify({ date: new Date().toISOString(), device: ctx.describe(), results }, null, 1));
  }
}
ctx.dispose();
