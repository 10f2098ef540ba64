/**
 * The `--backend webgpu` part of bench/ci-direct.ts: the device direct σ's build time, σ time,
 * device bytes and accuracy against the host float64 direct σ, and optionally a whole CI run
 * with it (see the usage there).
 */
import { readFileSync } from 'node:fs';
import { type CiBackend, ciEnergies, type DeterminantSpace, directSigmaOperator, type Fcidump, gpuDirectHamiltonian, type SpaceSpec, spinSquaredExpectations } from '../packages/chem/src/index';
import { estimateGpuDirectBytes, gpuDirectSigmaOperator } from '../packages/chem/src/direct/gpu/index';
import { deviceMemoryOf } from '../packages/cli/src/util/ci-memory';
import { gpuDevicePolish } from '../packages/cli/src/util/ci-device';

/** `--stage`: stage the integral blocks in workgroup memory (off by default: slower on the H100). */
const STAGE = process.argv.includes('--stage');
import { createGpuContext, GpuVectorSpace, gpuOperatorFromCsr } from '../packages/gpu/src/index';

const peakRss = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const log = (s: string) => process.stderr.write(`[${(performance.now() / 1000).toFixed(1)}s] ${s}\n`);

/** What {@link gpuDirectBench} takes from the command line. */
export interface GpuBenchInput {
  fd: Fcidump;
  fcidump: Fcidump;
  space: DeterminantSpace;
  spec: SpaceSpec;
  spaceOpts: { irrep?: number; ms2?: number };
  products: number;
  solve: string;
  nroots: number;
  check: boolean;
  /** Where the float64 polish runs (CiOptions.polish). */
  polish: 'auto' | 'device' | 'host';
}

/** Time the device σ and, with solve 'direct', run ciEnergies on it; returns the report's fields. */
export async function gpuDirectBench(o: GpuBenchInput): Promise<Record<string, unknown>> {
  const ctx = await createGpuContext();
  const out: Record<string, unknown> = { device: ctx.describeText().split('\n')[0] };
  // the driver's k: nroots plus one guard root above one root
  const roots = o.nroots + (o.nroots > 1 ? 1 : 0);
  const memory = deviceMemoryOf(Object.values(ctx.describe().adapter).join(' '));
  const estimate = estimateGpuDirectBytes(o.fcidump, o.space, roots);
  out.deviceEstimate = { ...estimate, bytesPerDet: estimate.total / Math.max(1, o.space.size), available: memory ?? 'unknown (not checked)' };
  log(`device estimate ${(estimate.total / 1e9).toFixed(2)} GB for ${o.space.size} determinants, k = ${roots}; available ${memory ? `${(memory.bytes / 1e9).toFixed(0)} GB (${memory.source})` : 'unknown'}`);
  const vs = new GpuVectorSpace(ctx);
  // --products 0: no separate σ timing (its own table build), straight to the solve
  if (o.products > 0) out.gpu = await timeSigma(ctx, vs, o);
  if (o.solve === 'direct') out.solve = await solveDirect(ctx, vs, o, { roots, ...(memory ? { deviceBytes: memory.bytes } : {}) });
  ctx.dispose();
  return out;
}

/** Build the device tables, time `products` σ products, and compare one with the host float64 σ. */
async function timeSigma(ctx: Awaited<ReturnType<typeof createGpuContext>>, vs: GpuVectorSpace, o: GpuBenchInput): Promise<Record<string, unknown>> {
  const n = o.space.size;
  const t0 = performance.now();
  const op = gpuDirectSigmaOperator(ctx, o.fcidump, o.space, { stageIntegrals: STAGE });
  await ctx.finish();
  const buildMs = performance.now() - t0;
  log(`device tables built in ${buildMs.toFixed(0)} ms (${(op.deviceBytes / 1e6).toFixed(1)} MB)`);
  const c = new Float64Array(n).map((_, i) => Math.sin(i + 1));
  const x = vs.fromArray(c);
  const y = vs.create(n);
  op.apply(x, y); // warm-up: pipeline compile
  await ctx.finish();
  const times: number[] = [];
  for (let k = 0; k < o.products; k++) {
    const s = performance.now();
    op.apply(x, y);
    await ctx.finish();
    times.push(performance.now() - s);
  }
  log(`σ: median ${median(times).toFixed(2)} ms over ${o.products} products`);
  const gpu: Record<string, unknown> = { buildMs, sigmaMs: median(times), minSigmaMs: Math.min(...times), deviceBytes: op.deviceBytes, deviceBytesPerDet: op.deviceBytes / n, label: op.label };
  if (o.check) {
    const got = await vs.toArray(y);
    const host = await directSigmaOperator(o.fcidump, o.space, { threads: 'auto' });
    const want = new Float64Array(n);
    const s = performance.now();
    host.apply(c, want);
    gpu.hostSigmaMs = performance.now() - s;
    gpu.hostThreads = host.threads;
    host.dispose();
    let scale = 0;
    let diff = 0;
    for (let i = 0; i < n; i++) {
      scale = Math.max(scale, Math.abs(want[i]!));
      diff = Math.max(diff, Math.abs(got[i]! - want[i]!));
    }
    gpu.maxRelDiffVsHostF64 = diff / scale;
    log(`device σ vs host float64 direct σ: max |Δ| / max |σ| = ${(diff / scale).toExponential(2)} (host σ ${(gpu.hostSigmaMs as number).toFixed(0)} ms on ${host.threads} threads)`);
  }
  vs.release(x);
  vs.release(y);
  op.dispose();
  return gpu;
}

/**
 * ciEnergies with the device direct σ (no stored H) and the float64 polish: energies, residuals,
 * ⟨S²⟩ and timings (also bench/fci-check.ts's independent energy for an assembled matrix).
 */
export async function solveDirect(ctx: Awaited<ReturnType<typeof createGpuContext>>, vs: GpuVectorSpace, o: GpuBenchInput, sizing: { roots: number; deviceBytes?: number }): Promise<Record<string, unknown>> {
  const backend: CiBackend<unknown, unknown> = {
    space: vs as never,
    operator: (m) => gpuOperatorFromCsr(ctx, m, { kernel: 'csr-vector' }) as never,
    devicePolish: () => gpuDevicePolish(ctx) as never,
  };
  let peakDevice = 0;
  const t0 = performance.now();
  const r = await ciEnergies(o.fd, {
    space: o.spec,
    ...o.spaceOpts,
    nroots: o.nroots,
    tol: 1e-8,
    solver: 'davidson',
    polish: o.polish,
    backend,
    hamiltonian: gpuDirectHamiltonian(ctx, { threads: 'auto', stageIntegrals: STAGE, ...sizing }) as never,
    onProgress: (p) => {
      peakDevice = Math.max(peakDevice, ctx.buffers.allocatedBytes);
      if ((p.stage === 'solve' || p.stage === 'polish') && p.iteration % 5 === 0) log(`${p.stage} iter ${p.iteration}: max res ${Math.max(...p.residualNorms).toExponential(2)}`);
    },
  });
  peakDevice = Math.max(peakDevice, ctx.buffers.allocatedBytes);
  const wallS = (performance.now() - t0) / 1000;
  log(`E = ${r.energies.map((e) => e.toFixed(10)).join(', ')}; ${r.solver.method}; total ${wallS.toFixed(1)} s`);
  const spin = hostSpinCheck(o.space, r);
  log(`⟨S²⟩ ${r.s2.map((x) => x.toFixed(9)).join(', ')}: device ${(spin.deviceMs / 1000).toFixed(3)} s, host (before) ${(spin.hostMs / 1000).toFixed(3)} s, max |Δ| ${spin.maxDiff.toExponential(2)}`);
  return {
    energies: r.energies,
    residualNorms: r.residualNorms,
    s2: r.s2,
    spin,
    converged: r.solver.converged,
    method: r.solver.method,
    iterations: r.solver.iterations,
    matvecs: r.solver.matvecs,
    seconds: { read: r.timings.read / 1000, space: r.timings.space / 1000, tables: r.timings.assembly / 1000, solve: r.timings.solve / 1000, float64Phase: r.timings.polish / 1000, spin: (r.timings.spin ?? 0) / 1000, total: wallS },
    peakHostBytes: peakRss(),
    peakDeviceBytes: peakDevice,
    peakDeviceBytesPerDet: peakDevice / o.space.size,
    notes: r.notes,
  };
}

/**
 * The spin step before and after: the run's ⟨S²⟩ (on the device since session 10, `timings.spin`)
 * against the host float64 ⟨S²⟩ of the same final vectors (what the driver computed before,
 * single-threaded `spinSquaredExpectations`), timed here after the run.
 */
function hostSpinCheck(space: DeterminantSpace, r: Awaited<ReturnType<typeof ciEnergies>>): { deviceMs: number; hostMs: number; host: number[]; maxDiff: number; where: string } {
  const t = performance.now();
  const host = spinSquaredExpectations(space, r.vectors);
  const hostMs = performance.now() - t;
  const where = r.notes.find((x) => x.startsWith('⟨S²⟩ on the device')) ?? 'host (no device ⟨S²⟩ note)';
  return { deviceMs: r.timings.spin ?? 0, hostMs, host, maxDiff: Math.max(...host.map((h, i) => Math.abs(h - r.s2[i]!))), where };
}
