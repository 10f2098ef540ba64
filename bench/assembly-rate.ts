/**
 * Assembly rate of the CI Hamiltonian alone (no solve, no device): one FCIDUMP or a generated
 * Hubbard chain, assembled chunked (as the device path does, the chunks dropped after counting)
 * or whole (CSR on the host), with or without the integral screen (whole only), reporting
 * space, tables, assembly seconds, non-zeros per second, threads and CPU seconds.
 *
 *   node .gpukit/app/assembly-rate.mjs --hubbard 15 [--mode chunked|whole] [--workers N]
 *   node .gpukit/app/assembly-rate.mjs --fcidump F --irrep 1 [--mode whole --no-screen] [--out $OUT/rate.json]
 * The Hubbard chain (open, U/t = 2, ⌈L/2⌉ α and ⌊L/2⌋ β electrons) is a model Hamiltonian.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { assembleChunked, assembleHamiltonian, buildCiSpace, type ChunkSink, estimateNnz, countSpace, parseFcidump } from '../packages/chem/src/index';
import { readFcidump } from '../packages/chem/src/node';
import { hubbardFcidump } from './hubbard';

const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const hub = opt('--hubbard');
const file = opt('--fcidump');
if (!hub && !file) throw new Error('assembly-rate: expected --fcidump FILE or --hubbard L');
const mode = opt('--mode') ?? 'chunked';
if (mode !== 'chunked' && mode !== 'whole') throw new Error(`assembly-rate: --mode expected chunked or whole, got ${mode}`);
const screen = !argv.includes('--no-screen');
if (!screen && mode === 'chunked') throw new Error('assembly-rate: --no-screen needs --mode whole (the chunked path always screens)');
const workers: number | 'auto' = opt('--workers') === undefined ? 'auto' : Number(opt('--workers'));
const irrep = opt('--irrep') === undefined ? undefined : Number(opt('--irrep'));
const out = opt('--out');

const name = hub ? `hubbard-L${hub}-U2` : file!.split('/').pop()!;
const fd0 = hub ? parseFcidump(hubbardFcidump(Number(hub)), { file: name }) : await readFcidump(file!);
let t = performance.now();
const { space, fcidump } = buildCiSpace(fd0, 'fci', irrep === undefined ? {} : { irrep });
const spaceS = (performance.now() - t) / 1000;
const irreps = irrep === undefined ? new Array(fcidump.norb).fill(0) : Array.from(fcidump.orbsym, (s) => s - 1);
const est = estimateNnz(fcidump, countSpace({ norb: fcidump.norb, nalpha: space.nalpha, nbeta: space.nbeta, irreps, target: (irrep ?? 1) - 1 }));
console.log(`${name}: ${space.size} determinants (space ${spaceS.toFixed(1)} s), nnz estimated ${est.nnz.toExponential(3)} ± ${est.stderr.toExponential(1)}`);

const cpu0 = process.cpuUsage();
t = performance.now();
let nnz: number;
let threads: number;
let kernel: string;
if (mode === 'chunked') {
  // counts and drops each chunk: the assembly alone, without the device upload
  const sink: ChunkSink<Float64Array> = { add: () => undefined, finish: () => Promise.reject(new Error('assembly-rate: not used')) };
  const chunkNnz = opt('--chunk-nnz') === undefined ? undefined : Number(opt('--chunk-nnz'));
  const h = await assembleChunked(fcidump, space, sink, { perRow: est.perRow, keepHost: false, workers, ...(chunkNnz === undefined ? {} : { chunkNnz }) });
  nnz = h.nnz;
  threads = h.stats.workers + 1;
  kernel = `${h.stats.kernel}, ${h.chunks} chunks`;
} else {
  const h = await assembleHamiltonian(fcidump, space, { workers, screen });
  nnz = h.stats.nnz;
  threads = h.stats.kernel === 'string' || h.stats.workers === 0 ? h.stats.workers + 1 : h.stats.workers;
  kernel = `${h.stats.kernel}, tables ${(h.stats.tablesMs / 1000).toFixed(2)} s`;
}
const seconds = (performance.now() - t) / 1000;
const cpu = process.cpuUsage(cpu0);
const cpuS = (cpu.user + cpu.system) / 1e6;
const result = { name, mode, screen, determinants: space.size, nnz, nnzEstimated: est.nnz, spaceS, seconds, rate: nnz / seconds, threads, cpuS, kernel };
console.log(`${mode} assembly (${screen ? 'screened' : 'unscreened'}, ${kernel}): ${nnz} non-zeros in ${seconds.toFixed(2)} s = ${(nnz / seconds / 1e6).toFixed(1)} M nnz/s on ${threads} threads (CPU ${cpuS.toFixed(1)} s, all threads)`);
if (out) {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
}
