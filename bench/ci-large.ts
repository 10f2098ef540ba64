/**
 * CI at the sizes that need a GPU: one FCIDUMP (or a generated Hubbard chain) solved end to end
 * with the chunked device assembly (float32 CSR on the GPU; the Jacobi–Davidson polish in df64
 * on the device with the low parts of H there, or with --polish host float64 row blocks on the
 * host), reporting assembly, solve, float64-phase (and its stages: prewarm wait, wait for H in
 * df64, Davidson, final check; plus where H's low parts were built: in slices during the float32
 * Davidson — host scan/upload seconds, inside solve — or with the chunks, inside assembly) and
 * total seconds, peak host memory
 * (VmHWM) and peak device memory (bytes the library allocated), next to the estimate made
 * before anything was allocated.
 *
 *   node .gpukit/app/ci-large.mjs --fcidump F [--irrep I] [--nroots 6] [--out $OUT/ci.json]
 *   node .gpukit/app/ci-large.mjs --hubbard 15 --nroots 6 --out $OUT/hubbard15.json
 * Options: --backend webgpu|host (default webgpu), --assembly chunked|whole|auto (default
 * chunked on webgpu), --chunk-nnz N, --workers N, --tol 1e-8, --ms2 n, --dry-run (estimate only),
 * --polish auto|device|host (default auto: df64 on the device when the GPU passes its self-test),
 * --accept residual|bound (default residual: every root to ‖r‖ ≤ tol; bound: a root is also
 * accepted when its certified energy bound is ≤ tol Eh — docs/guides/precision.md).
 * The Hubbard chain (open, U/t = 2, ⌈L/2⌉ α and ⌊L/2⌋ β electrons) is a model Hamiltonian.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type CiBackend, ciEnergies, estimateCiEnergies, hostBackend, type PolishStages, parseFcidump } from '../packages/chem/src/index';
import { readFcidump } from '../packages/chem/src/node';
import { gpuChunkSink, gpuDevicePolish } from '../packages/cli/src/util/ci-device';
import { deviceMemoryOf } from '../packages/cli/src/util/ci-memory';
import { createGpuContext, type GpuContext, GpuVectorSpace, gpuOperatorFromCsr } from '../packages/gpu/src/index';
import { hubbardFcidump } from './hubbard';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const num = (n: string, d: number) => (opt(n) === undefined ? d : Number(opt(n)));
const out = opt('--out') ?? 'bench/out/ci-large.json';
const nroots = num('--nroots', 6);
const which = opt('--backend') ?? 'webgpu';
const assembly = (opt('--assembly') ?? (which === 'webgpu' ? 'chunked' : 'whole')) as 'chunked' | 'whole' | 'auto';
const workers: number | 'auto' = opt('--workers') === undefined ? 'auto' : Number(opt('--workers'));
const t0 = performance.now();
const sec = () => ((performance.now() - t0) / 1000).toFixed(1);
const log = (s: string) => console.log(`[${sec()}s] ${s}`);

/** VmHWM (peak resident set) of this process in bytes, from /proc/self/status. */
function peakRss(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : process.memoryUsage().rss;
  } catch {
    return process.memoryUsage().rss;
  }
}

/** The Hubbard chain of bench/hubbard.ts with explicit zero h_ii lines (strict FCIDUMP readers want every diagonal). */
function hubbardText(l: number): string {
  const text = hubbardFcidump(l);
  const zeros = Array.from({ length: l }, (_, i) => `0.0 ${i + 1} ${i + 1} 0 0`).join('\n');
  return text.replace(/^0\.0 0 0 0 0$/m, `${zeros}\n0.0 0 0 0 0`);
}

/** The device phase's stage timings in seconds (operatorBuild: its host parts, outside the phase). */
function stagesSeconds(st: PolishStages | undefined): Record<string, unknown> | undefined {
  if (!st) return undefined;
  const b = st.operatorBuild;
  return { prewarmWait: st.prewarmWait / 1000, operatorWait: st.operatorWait / 1000, davidson: st.davidson / 1000, check: st.check / 1000, ...(b ? { operatorBuild: { scan: b.scan / 1000, upload: b.upload / 1000, slices: b.slices, yields: b.yields } } : {}) };
}

const hub = opt('--hubbard') ?? opt('--sites');
const file = opt('--fcidump');
if (!hub && !file) throw new Error('ci-large: expected --fcidump FILE or --hubbard L');
const name = hub ? `hubbard-L${hub}-U2` : file!.split('/').pop()!;
const fd = hub ? parseFcidump(hubbardText(Number(hub)), { file: name }) : await readFcidump(file!);
const irrep = opt('--irrep') === undefined ? undefined : Number(opt('--irrep'));
const common = { nroots, workers, ...(irrep === undefined ? {} : { irrep }), ...(opt('--ms2') === undefined ? {} : { ms2: Number(opt('--ms2')) }) };

let ctx: GpuContext | undefined;
let peakDevice = 0;
let backend: CiBackend<unknown, unknown>;
let sink: Awaited<ReturnType<typeof gpuChunkSink>> | undefined; // the chunked assembly's sink (its low-part time)
if (which === 'webgpu') {
  ctx = await createGpuContext();
  const c = ctx;
  const adapter = Object.values(c.describe().adapter).join(' ');
  console.log(c.describeText().split('\n')[0]);
  const chunkNnz = opt('--chunk-nnz') === undefined ? undefined : Number(opt('--chunk-nnz'));
  const deviceMemory = deviceMemoryOf(adapter);
  backend = {
    space: new GpuVectorSpace(c) as never,
    operator: (m) => gpuOperatorFromCsr(c, m, { kernel: 'csr-vector', params: { lanes: 32 } }) as never,
    chunkSink: async (rows, perRow, o) => (sink = await gpuChunkSink(c, rows, perRow, undefined, undefined, o)) as never,
    devicePolish: () => gpuDevicePolish(c) as never,
    ...(deviceMemory ? { deviceMemory } : {}),
  };
  if (chunkNnz !== undefined) Object.assign(common, { chunkNnz });
} else backend = hostBackend() as never;

const polish = (opt('--polish') ?? 'auto') as 'auto' | 'device' | 'host';
const onDevice = which === 'webgpu' && polish !== 'host' && (await backend.devicePolish?.()) !== undefined;
const est = await estimateCiEnergies(fd, { ...common, backend: which === 'webgpu' ? 'device' : 'host', polish: onDevice ? 'device' : 'host', ...(which === 'webgpu' ? { chunkNnz: num('--chunk-nnz', 2 ** 24) } : {}), ...(backend.deviceMemory ? { deviceMemory: backend.deviceMemory } : {}) });
const e = est.estimate;
log(`${name}: ${est.label}: ${e.determinants} determinants, H ≈ ${e.nnz.nnz.toExponential(3)} ± ${e.nnz.stderr.toExponential(1)} non-zeros; estimated peak host ${(e.peakHost / 1e9).toFixed(1)} GB, device ${(e.peakDevice / 1e9).toFixed(1)} GB`);
const report: Record<string, unknown> = { date: new Date().toISOString(), system: name, space: est.label, backend: which, assembly, estimate: { determinants: e.determinants, nnz: e.nnz, stages: e.stages, peakHost: e.peakHost, peakDevice: e.peakDevice, host: e.host, device: e.device } };
const save = () => {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(report, null, 1));
};
save();
if (!argv.includes('--dry-run')) {
  const marks: Record<string, number> = {};
  const r = await ciEnergies(fd, {
    ...common,
    solver: 'davidson',
    backend,
    assembly,
    polish,
    tol: num('--tol', 1e-8),
    accept: (opt('--accept') ?? 'residual') as 'residual' | 'bound',
    onProgress: (p) => {
      if (ctx) peakDevice = Math.max(peakDevice, ctx.buffers.allocatedBytes);
      if (!(p.stage in marks)) {
        marks[p.stage] = performance.now() - t0;
        log(`stage ${p.stage}`);
      }
      if (p.stage === 'assembly' && p.rowsDone === p.rows) log(`assembly done: ${p.rows} rows`);
      if ((p.stage === 'solve' || p.stage === 'polish') && p.iteration % 10 === 0) log(`${p.stage} iter ${p.iteration}: ${p.values.slice(0, nroots).map((v) => v.toFixed(8)).join(' ')} max res ${Math.max(...p.residualNorms).toExponential(2)}`);
    },
  });
  if (ctx) peakDevice = Math.max(peakDevice, ctx.buffers.allocatedBytes);
  const totalS = (performance.now() - t0) / 1000;
  Object.assign(report, {
    energies: r.energies,
    residualNorms: r.residualNorms,
    s2: r.s2,
    determinants: r.determinants,
    nnz: r.nnz,
    seconds: { read: r.timings.read / 1000, space: r.timings.space / 1000, assembly: r.timings.assembly / 1000, solve: r.timings.solve / 1000, float64Phase: r.timings.polish / 1000, total: totalS },
    float64Share: r.timings.polish / Math.max(1e-9, r.timings.solve),
    // the phase's parts (seconds); operatorBuild: host time of H's low parts built in slices during the float32 Davidson (inside solve, outside the phase)
    float64PhaseStages: stagesSeconds(r.timings.polishStages),
    // chunked assembly with the device polish: the low parts were built with the chunks (inside assembly)
    ...(sink && sink.lowPartMs > 0 ? { lowPartsInAssemblySeconds: sink.lowPartMs / 1000 } : {}),
    peakHostBytes: peakRss(),
    peakDeviceBytes: peakDevice,
    solver: r.solver,
    assemblyStats: r.assembly,
    notes: r.notes,
  });
  save();
  log(`${name}: ${r.determinants} dets, nnz ${r.nnz} (estimated ${e.nnz.nnz}); assembly ${(r.timings.assembly / 1000).toFixed(1)} s, solve ${(r.timings.solve / 1000).toFixed(1)} s (float64 phase ${(r.timings.polish / 1000).toFixed(1)} s = ${((100 * r.timings.polish) / Math.max(1e-9, r.timings.solve)).toFixed(0)} %), total ${totalS.toFixed(1)} s; peak host ${(peakRss() / 1e9).toFixed(2)} GB (estimated ${(e.peakHost / 1e9).toFixed(2)}), device ${(peakDevice / 1e9).toFixed(2)} GB (estimated ${(e.peakDevice / 1e9).toFixed(2)})`);
  log(`E = ${r.energies.map((x) => x.toFixed(10)).join(', ')}; residuals ${r.residualNorms.map((x) => x.toExponential(1)).join(', ')}; ${r.solver.method}; ${r.solver.converged ? 'converged' : 'NOT converged'}`);
  for (const n of r.notes.filter((x) => x.startsWith('device polish') || x.startsWith('float32 backend') || x.startsWith('H in '))) log(n);
}
ctx?.dispose();
