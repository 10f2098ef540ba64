/**
 * Sizing a CI run before anything large is allocated: exact determinant and string counts
 * (./determinants/count.ts), a sampled non-zero count of H (./hamiltonian/nnz-estimate.ts), and
 * the bytes each stage holds on the host and on the device, compared with what is available
 * (host: MemAvailable and the cgroup limit; device: a declared or detected size). A run that
 * cannot fit is refused with a ResourceLimitError naming needed vs available bytes and what to
 * change, within milliseconds instead of after minutes of assembly and an OOM kill.
 * @module
 */
import { formatBytes, InvalidParameterError, ResourceLimitError } from '@gpusparse/formats';
import type { PreparedSpace } from './determinants/build';
import { type CountedSpace, countSpace } from './determinants/count';
import { binomial } from './determinants/bits';
import { estimateNnz, type NnzEstimate } from './hamiltonian/nnz-estimate';

/** How the run will hold H and its vectors. */
/**
 * Host bytes per non-zero slot of a chunk in flight during the chunked assembly: 12 for the
 * chunk itself (float64 value + column) and 12 more for what it passes through — the growth
 * slack of the worker's build arrays, then the float32 values, low parts and staging copies
 * while the main thread uploads it. Measured on the H100 (N2 CAS(10e,16o), 1.4·10^9 non-zeros,
 * 16 threads, 2^24-non-zero chunks): peak 10.7 GB against 7.0 GB estimated at 12 B.
 */
const INFLIGHT_BYTES_PER_NNZ = 24;

export interface CiMemoryPlan {
  /** 'host': float64 on the host; 'device': float32 on the GPU plus a float64 polish (see `polish`). */
  backend: 'host' | 'device';
  /** Roots Davidson converges (requested + guard roots). */
  kSolve: number;
  /** Assembly worker threads (their shared copies of the tables are counted). */
  workers: number;
  /** Device path only: H assembled in row chunks straight to the device (./hamiltonian/chunked.ts). */
  chunked?: { chunkNnz: number };
  /** Whether the S² penalty matrix is built (spin.multiplicity). */
  spinPenalty?: boolean;
  /**
   * Device path: where the float64 polish runs. 'host' (default): float64 H on the host.
   * 'device': df64 on the GPU over the float32 H plus 4 bytes per non-zero of low parts (counted
   * for every non-zero: molecular integrals are rarely exact in f32), df64 vectors of 8 bytes.
   */
  polish?: 'host' | 'device';
}

/** Bytes held during one stage. */
export interface StageBytes {
  stage: string;
  host: number;
  device: number;
  what: string;
}

/** Memory that can be used, and where the figure comes from. */
export interface AvailableMemory {
  bytes: number;
  source: string;
}

/** The sizing of one CI run. */
export interface CiEstimate {
  determinants: number;
  alphaStrings: number;
  betaStrings: number;
  nnz: NnzEstimate;
  stages: StageBytes[];
  peakHost: number;
  peakDevice: number;
  host: AvailableMemory;
  device: AvailableMemory | undefined;
}

const pow2Slots = (count: number) => {
  let cap = 16;
  while (cap < 2 * count) cap *= 2;
  return cap;
};

/**
 * Host memory this process may still use: min(free memory, cgroup limit − cgroup usage).
 * Node only (dynamic imports, so that browsers can load this module); elsewhere +∞.
 */
export async function hostMemoryAvailable(): Promise<AvailableMemory> {
  let fs: typeof import('node:fs');
  let os: typeof import('node:os');
  try {
    fs = await import('node:fs');
    os = await import('node:os');
  } catch {
    return { bytes: Number.POSITIVE_INFINITY, source: 'unknown (no node:os)' };
  }
  const { existsSync, readFileSync } = fs;
  const { freemem, totalmem } = os;
  let bytes = freemem();
  let source = `free memory ${formatBytes(bytes)} of ${formatBytes(totalmem())} (os.freemem)`;
  for (const [limitFile, usageFile] of [
    ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory.current'],
    ['/sys/fs/cgroup/memory/memory.limit_in_bytes', '/sys/fs/cgroup/memory/memory.usage_in_bytes'],
  ] as const) {
    try {
      if (!existsSync(limitFile)) continue;
      const limit = Number(readFileSync(limitFile, 'utf8').trim());
      const used = existsSync(usageFile) ? Number(readFileSync(usageFile, 'utf8').trim()) : 0;
      if (Number.isFinite(limit) && limit > 0 && limit < 2 ** 60 && limit - used < bytes) {
        bytes = Math.max(0, limit - used);
        source = `cgroup limit ${formatBytes(limit)} − ${formatBytes(used)} in use (${limitFile})`;
      }
    } catch {
      /* unreadable: keep the os figure */
    }
  }
  return { bytes, source };
}

/** The counted shape of a prepared space (irreps 0-based; all 0 without an irrep). */
export function countPrepared(p: PreparedSpace): CountedSpace {
  const fd = p.fcidump;
  if (p.irrep !== undefined && (!Number.isInteger(p.irrep) || p.irrep < 1 || p.irrep > 8)) {
    throw new InvalidParameterError('irrep', 'a Molpro irrep number 1..8', p.irrep);
  }
  const irreps = p.irrep === undefined ? new Array<number>(fd.norb).fill(0) : Array.from(fd.orbsym, (s) => s - 1);
  return countSpace({
    norb: fd.norb,
    nalpha: p.nalpha,
    nbeta: p.nbeta,
    irreps,
    target: p.irrep === undefined ? 0 : p.irrep - 1,
    ...(p.kind === 'ci' ? { level: p.level!, reference: p.reference } : {}),
  });
}

/** The sampled nnz of each prepared space (a run sizes the same space for several plans). */
const sampled = new WeakMap<PreparedSpace, NnzEstimate>();

/** Bytes of the per-string tables of one spin (upper bound: every single and double of a string). */
function tableBytes(strings: number, norb: number, nel: number): number {
  const s = nel * (norb - nel);
  const d = binomial(nel, 2) * binomial(norb - nel, 2);
  return strings * (60 * s + 24 * d + 32);
}

/**
 * Size a CI run: counts, sampled nnz (or `opts.nnz`), bytes per stage. Cost: O(norb · nelec) counting plus
 * a few hundred sampled rows (milliseconds); allocates nothing in proportion to the space.
 * @example
 * const e = estimateCi(prepareCiSpace(fd, 'fci', { irrep: 1 }), { backend: 'host', kSolve: 2, workers: 0 }, { host: await hostMemoryAvailable() });
 */
export function estimateCi(p: PreparedSpace, plan: CiMemoryPlan, opts: { host: AvailableMemory; device?: AvailableMemory; nnz?: NnzEstimate }): CiEstimate {
  const counted = countPrepared(p);
  const n = counted.determinants;
  const nA = counted.alpha.total;
  const nB = counted.beta.total;
  // opts.nnz: given by the caller (e.g. none for an operator that stores no H), not sampled
  let nnz = opts.nnz ?? sampled.get(p);
  if (!nnz) {
    nnz = n === 0 ? { nnz: 0, perRow: 0, stderr: 0, maxRow: 0, rowsSampled: 0, method: 'empty space' } : estimateNnz(p.fcidump, counted);
    sampled.set(p, nnz);
  }
  // sizing uses the estimate plus two standard errors, so that an unlucky sample errs towards refusing
  const z = nnz.nnz + 2 * nnz.stderr;
  const norb = p.fcidump.norb;
  const strings = 8 * (nA + nB) + 12 * (pow2Slots(nA) + pow2Slots(nB));
  const transient = p.irrep !== undefined || p.kind === 'ci' ? 24 * n : 0; // JS number arrays while filtering
  const space = 8 * n + 12 * pow2Slots(n) + (p.kind === 'ci' ? 4 * n : 0);
  const table = nA * nB <= 2 ** 27 && nA * nB <= 16 * n + 65536 ? 4 * nA * nB : 0;
  const tables = (table + tableBytes(nA, norb, p.nalpha) + tableBytes(nB, norb, p.nbeta)) * (plan.workers > 0 ? 2 : 1) + (plan.workers > 0 ? 8 * n : 0);
  const base = strings + space;
  const k = plan.kSolve;
  const m = Math.min(n, 12 + 4 * (k - 1));
  const hHost = 12 * z + 12 * n; // float64 CSR + diagonal
  const spin = plan.spinPenalty ? 12 * n * (1 + p.nalpha * p.nbeta) : 0;
  // HostOperator.fromCsr copies H into WebAssembly memory on its first product (10^4 ≤ nnz, ≤ 4 GiB)
  const wasm = z >= 1e4 && 12 * z + 8 * n <= 2 ** 32 ? 12 * z + 8 * n : 0;
  const stages: StageBytes[] = [{ stage: 'space', host: strings + space + transient, device: 0, what: 'strings, determinant pairs and hash' }];
  if (plan.backend === 'host') {
    stages.push({ stage: 'assembly', host: base + tables + 2 * hHost, device: 0, what: 'row chunks (float64) + their concatenation into CSR' });
    stages.push({ stage: 'solve', host: base + hHost + wasm + spin + (2 * m + 4 * k) * 8 * n, device: 0, what: `float64 CSR (+ its wasm copy) + Davidson (${2 * m + 4 * k} vectors of ${n})` });
  } else if (plan.polish === 'device') {
    stages.push(...devicePolishStages(plan, { n, z, m, k, base, tables, hHost }));
  } else {
    const dMatrix = 8 * z + 8 * n;
    const dVectors = (2 * m + 2 * k + 8) * 4 * n;
    if (plan.chunked) {
      // up to 2·(workers + 1) chunks in flight, never more than H itself
      const inflight = INFLIGHT_BYTES_PER_NNZ * Math.min(2 * plan.chunked.chunkNnz * (plan.workers + 1), z);
      stages.push({ stage: 'assembly', host: base + tables + inflight + hHost, device: dMatrix, what: 'chunks in flight; float32 CSR on the device; float64 row blocks kept for the polish' });
      // above 2^25 non-zeros the kept blocks are copied into shared memory for the threaded
      // host product (ci-assembly.ts): both copies exist until the originals are dropped
      if (z >= 2 ** 25) stages.push({ stage: 'share', host: base + 2 * hHost, device: dMatrix, what: 'float64 row blocks copied to shared memory for the threaded host product' });
    } else {
      stages.push({ stage: 'assembly', host: base + tables + 2 * hHost, device: 0, what: 'row chunks (float64) + their concatenation into CSR' });
      stages.push({ stage: 'upload', host: base + hHost + 4 * z, device: dMatrix, what: 'float64 CSR + float32 copy per binding block' });
    }
    stages.push({ stage: 'solve', host: base + hHost + spin + 2 * k * 8 * n, device: dMatrix + dVectors + (spin * 2) / 3, what: `float32 Davidson (${2 * m + 2 * k} vectors) on the device` });
    const pm = Math.min(n, 4 * k + 8);
    stages.push({ stage: 'polish', host: base + hHost + (plan.chunked ? 0 : wasm) + spin + (2 * pm + 3 * k) * 8 * n, device: dMatrix + (2 * k + 40) * 4 * n, what: `float64 Jacobi–Davidson on the host (${2 * pm + 3 * k} vectors), corrections on the device` });
  }
  return {
    determinants: n,
    alphaStrings: nA,
    betaStrings: nB,
    nnz,
    stages,
    peakHost: Math.max(...stages.map((s) => s.host)),
    peakDevice: Math.max(...stages.map((s) => s.device)),
    host: opts.host,
    device: opts.device,
  };
}

/** Sizes {@link estimateCi} passes to the stage builders. */
interface StageSizes {
  n: number;
  z: number;
  m: number;
  k: number;
  base: number;
  tables: number;
  hHost: number;
}

/**
 * Stages of the device path with the df64 polish on the device: no float64 H on the host when
 * chunked (only the chunks in flight, the diagonal and the final vectors); on the device the
 * float32 H (8 B/nnz), its low parts (4 B/nnz) and the polish's df64 vectors (8 B per row each).
 */
function devicePolishStages(plan: CiMemoryPlan, s: StageSizes): StageBytes[] {
  const { n, z, m, k, base, tables, hHost } = s;
  const dMatrix = 8 * z + 8 * n;
  const dLo = 4 * z;
  const dVectors = (2 * m + 2 * k + 8) * 4 * n;
  const pm = Math.min(n, 4 * k + 8);
  const out: StageBytes[] = [];
  // chunked: the host holds the chunks in flight and the diagonal; whole: the float64 CSR
  const hostH = plan.chunked ? 8 * n : hHost;
  // whole assembly: the df64 operator is its own upload (col + hi + lo: 12 B/nnz)
  const dPolishH = plan.chunked ? dLo : 12 * z + 4 * n;
  if (plan.chunked) {
    const inflight = INFLIGHT_BYTES_PER_NNZ * Math.min(2 * plan.chunked.chunkNnz * (plan.workers + 1), z);
    out.push({ stage: 'assembly', host: base + tables + inflight + hostH, device: dMatrix + dLo, what: 'chunks in flight; float32 CSR + low parts of inexact values on the device (no float64 H on the host)' });
  } else {
    out.push({ stage: 'assembly', host: base + tables + 2 * hHost, device: 0, what: 'row chunks (float64) + their concatenation into CSR' });
    out.push({ stage: 'upload', host: base + hHost + 4 * z, device: dMatrix, what: 'float64 CSR + float32 copy per binding block' });
  }
  out.push({ stage: 'solve', host: base + hostH + 2 * k * 8 * n, device: dMatrix + (plan.chunked ? dLo : 0) + dVectors, what: `float32 Davidson (${2 * m + 2 * k} vectors) on the device` });
  out.push({
    stage: 'polish',
    host: base + hostH + k * 8 * n,
    device: dMatrix + dPolishH + (2 * pm + 3 * k + 2) * 8 * n + (2 * k + 40) * 4 * n,
    what: `df64 Jacobi–Davidson on the device (${2 * pm + 3 * k + 2} df64 vectors), corrections in float32`,
  });
  return out;
}

/** What to change, in the order that saves most. */
function advice(p: PreparedSpace, plan: CiMemoryPlan, onDevice: boolean): string {
  const tips: string[] = [];
  const symmetric = p.fcidump.orbsym.some((s) => s !== 1);
  if (p.irrep === undefined && symmetric) tips.push('select one point-group irrep (--irrep / options.irrep): a D2h sector holds about 1/8 of the determinants');
  else if (!symmetric) tips.push('use point-group symmetry (an FCIDUMP with ORBSYM, then --irrep)');
  tips.push('a smaller active space (--space cas:N,M or a truncated CI level)');
  if (!onDevice && plan.backend === 'host') tips.push('the GPU backend (--backend webgpu: H in float32 on the device)');
  if (plan.kSolve > 2) tips.push('fewer roots');
  return tips.join('; or ');
}

/**
 * Throw ResourceLimitError when the estimate's peak exceeds what is available (host, then
 * device). Cost O(stages).
 * @throws ResourceLimitError naming the stage, bytes needed and available, and what to change
 */
export function checkCiMemory(e: CiEstimate, p: PreparedSpace, plan: CiMemoryPlan): void {
  const sizes = `${e.determinants.toExponential(3)} determinants, H ≈ ${e.nnz.nnz.toExponential(2)} non-zeros (${e.nnz.perRow.toFixed(0)} per row, sampled)`;
  if (e.peakHost > e.host.bytes) {
    const worst = e.stages.reduce((a, b) => (b.host > a.host ? b : a));
    throw new ResourceLimitError(`CI ${p.kind} space (${sizes}): host memory at stage '${worst.stage}' (${worst.what}); available: ${e.host.source}`, e.peakHost, e.host.bytes, advice(p, plan, false));
  }
  if (e.device && e.peakDevice > e.device.bytes) {
    const worst = e.stages.reduce((a, b) => (b.device > a.device ? b : a));
    throw new ResourceLimitError(`CI ${p.kind} space (${sizes}): device memory at stage '${worst.stage}' (${worst.what}); available: ${e.device.source}`, e.peakDevice, e.device.bytes, advice(p, plan, true));
  }
}
