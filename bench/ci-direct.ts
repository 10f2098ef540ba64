/**
 * Direct (matrix-free) σ against the explicit path on the host, float64: one FCIDUMP, one space.
 *
 *   pnpm -s tsx bench/ci-direct.ts FCIDUMP [--irrep 1] [--ms2 n] [--cas E,O] [--threads 1,2]
 *       [--products 5] [--solve direct|explicit|both|none] [--nroots 1] [--time-reversal even|odd]
 *       [--explicit-products] [--kernel wasm|js] [--multiplicity m] [--out file.json]
 *
 * Prints one JSON object: determinants; per thread count, the direct operator's table-build time,
 * the median σ time over `--products` products and its bytes (held tables, scratch, shared
 * vectors, diagonal; integrals and Davidson's own vectors not counted); the explicit path's
 * assembly time, nnz, CSR bytes and median product time (skipped with `--solve direct` /
 * `none` and no `--explicit-products`); with `--solve`, whole `ciEnergies` runs (energies,
 * iterations, wall and CPU seconds — CPU time of every thread, the robust figure on a shared
 * machine) and the process's peak resident memory (VmHWM) after each, so run one
 * solve per process when comparing memory. `--kernel js` times the JavaScript inner loops instead
 * of the wasm f64x2 kernels (the default; both give the same σ bit for bit). `--multiplicity m`
 * solves for that multiplicity: the direct path by time-reversal parity and spin-adapted starts
 * (no penalty), the explicit path with the ⟨S²⟩ penalty.
 *
 * `--backend webgpu`: the device direct σ (float32 WGSL, packages/chem/src/direct/gpu) instead:
 * table-build time, median σ time over `--products` products (each between two device
 * synchronisations), device bytes of the tables per determinant, the largest deviation from the
 * host float64 direct σ (relative to max |σ|; skipped with `--no-check`); with `--solve direct`
 * a whole `ciEnergies` run (float32 Davidson on the device; the float64 polish in df64 on the
 * device, or with `--polish host` on the host with the host direct σ on every core): energies,
 * residuals, ⟨S²⟩, seconds per stage, peak host and device bytes, and the device memory
 * estimate checked before the build (`--products 0` skips the separate σ timing and its own
 * table build: for the largest spaces). On the GPU machine (packed
 * by ../shared/gpukit/pack.sh):
 *   node .gpukit/app/ci-direct.mjs .gpukit/data/N2_631g_fc_cas10e16o_D2h.FCIDUMP --irrep 1
 *       --backend webgpu --products 5 --solve direct --nroots 6 --out $OUT/n2-direct.json
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { HostOperator } from '../packages/formats/src/index';
import { assembleHamiltonian, buildCiSpace, ciEnergies, directHamiltonian, directSigmaOperator, type SpaceSpec } from '../packages/chem/src/index';
import { readFcidump } from '../packages/chem/src/node';
import { gpuDirectBench } from './ci-direct-gpu';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const file = argv[0];
if (!file || file.startsWith('--')) {
  process.stderr.write('usage: ci-direct.ts FCIDUMP [--irrep I] [--ms2 n] [--cas E,O] [--threads 1,2] [--products 5] [--solve direct|explicit|both|none] [--nroots 1]\n');
  process.exit(2);
}
const irrep = opt('--irrep') === undefined ? undefined : Number(opt('--irrep'));
const ms2 = opt('--ms2') === undefined ? undefined : Number(opt('--ms2'));
const cas = opt('--cas')?.split(',').map(Number);
const threads = (opt('--threads') ?? '1,2').split(',').map(Number);
const products = Number(opt('--products') ?? 5);
const solve = opt('--solve') ?? 'none';
const nroots = Number(opt('--nroots') ?? 1);
const tr = opt('--time-reversal') as 'even' | 'odd' | undefined;
const kernel = (opt('--kernel') ?? 'wasm') as 'wasm' | 'js';
const multiplicity = opt('--multiplicity') === undefined ? undefined : Number(opt('--multiplicity'));
const trOpt = { kernel, ...(tr ? { timeReversal: tr } : {}) };
const explicitProducts = argv.includes('--explicit-products') || solve === 'explicit' || solve === 'both';
const spec: SpaceSpec = cas ? { kind: 'cas', electrons: cas[0]!, orbitals: cas[1]! } : 'fci';
const spaceOpts = { ...(irrep === undefined ? {} : { irrep }), ...(ms2 === undefined ? {} : { ms2 }) };

const peakRss = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;

const fd = await readFcidump(file);
const { fcidump, space } = buildCiSpace(fd, spec, spaceOpts);
const n = space.size;
const c = new Float64Array(n).map((_, i) => Math.sin(i + 1));
const out: Record<string, unknown> = { file, space: space.label, determinants: n, norb: fcidump.norb, timeReversal: tr ?? 'off', node: process.version };

if (opt('--backend') === 'webgpu') {
  const text = JSON.stringify({ ...out, ...(await gpuDirectBench({ fd, fcidump, space, spec, spaceOpts, products, solve, nroots, check: !argv.includes('--no-check'), polish: (opt('--polish') ?? 'auto') as 'auto' | 'device' | 'host' })), peakRssBytes: peakRss() }, null, 1);
  if (opt('--out')) writeFileSync(opt('--out')!, text);
  process.stdout.write(`${text}\n`);
  process.exit(0);
}

/** Wall and CPU ms of each of `products` products y = op·c. */
function timeProducts(op: { apply(x: Float64Array, y: Float64Array): void }): { times: number[]; cpu: number[] } {
  const y = new Float64Array(n);
  const times: number[] = [];
  const cpu: number[] = [];
  for (let k = 0; k < products; k++) {
    const s = performance.now();
    const u = process.cpuUsage();
    op.apply(c, y);
    cpu.push(cpuMs(process.cpuUsage(u)));
    times.push(performance.now() - s);
  }
  return { times, cpu };
}

const direct: unknown[] = [];
for (const t of threads) {
  const t0 = performance.now();
  const op = await directSigmaOperator(fcidump, space, { threads: t, ...trOpt });
  const buildMs = performance.now() - t0;
  const { times, cpu } = timeProducts(op);
  direct.push({ threads: op.threads, kernel: op.kernel, buildMs, sigmaMs: median(times), sigmaCpuMs: median(cpu), minSigmaMs: Math.min(...times), minSigmaCpuMs: Math.min(...cpu), bytes: op.bytes, bytesPerDet: op.bytes / n });
  op.dispose();
}
out.direct = direct;

if (explicitProducts) {
  const t0 = performance.now();
  const h = await assembleHamiltonian(fcidump, space, { workers: 'auto' });
  const assemblyMs = performance.now() - t0;
  const op = HostOperator.fromCsr(h.matrix);
  const { times, cpu } = timeProducts(op);
  const csrBytes = h.matrix.values.byteLength + h.matrix.colIdx.byteLength + (h.matrix.rowPtr as Int32Array).byteLength;
  out.explicit = { assemblyMs, workers: h.stats.workers, nnz: h.stats.nnz, csrBytes, bytesPerDet: csrBytes / n, productMs: median(times), productCpuMs: median(cpu), minProductCpuMs: Math.min(...cpu) };
}

const runs: unknown[] = [];
for (const which of solve === 'both' ? ['explicit', 'direct'] : solve === 'none' ? [] : [solve]) {
  const t0 = performance.now();
  const u0 = process.cpuUsage();
  const r = await ciEnergies(fd, {
    space: spec,
    ...spaceOpts,
    nroots,
    tol: Number(opt('--tol') ?? 1e-8),
    ...(multiplicity === undefined ? {} : { spin: { multiplicity } }),
    ...(which === 'direct' ? { hamiltonian: directHamiltonian({ threads: Math.max(...threads), ...trOpt, ...(multiplicity === undefined ? {} : { multiplicity }) }) } : { workers: 'auto' as const }),
  });
  runs.push({
    sigma: which,
    s2: r.s2,
    notes: r.notes,
    format: r.format,
    energies: r.energies,
    residuals: r.residualNorms,
    iterations: r.solver.iterations,
    matvecs: r.solver.matvecs,
    assemblyS: r.timings.assembly / 1000,
    solveS: r.timings.solve / 1000,
    wallS: (performance.now() - t0) / 1000,
    cpuS: cpuMs(process.cpuUsage(u0)) / 1000,
    peakRssBytes: peakRss(),
  });
}
if (runs.length) out.solve = runs;
out.peakRssBytes = peakRss();
const text = JSON.stringify(out, null, 1);
if (opt('--out')) writeFileSync(opt('--out')!, text);
process.stdout.write(`${text}\n`);
