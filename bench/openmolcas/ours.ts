/**
 * Our side of the OpenMolcas comparison: FCI of one FCIDUMP on the host-only backend
 * (float64 CSR assembly + float64 Davidson, residual tolerance 1e-8), timed in-process.
 * Prints one JSON line: energy, determinants, nnz, the stage timings of `ciEnergies`, the
 * assembly worker count, and the wall time of the whole `ciEnergies` call (read included).
 *
 *   pnpm -s tsx bench/openmolcas/ours.ts <FCIDUMP> [--workers 0|auto|n]
 *
 * `--workers 0` assembles on the main thread only (one thread, like OMP_NUM_THREADS=1);
 * `auto` (the library default) uses min(availableParallelism − 1, 8) workers from 20 000
 * determinants up (1 worker on a 2-core machine).
 */
import { ciEnergies, hostBackend } from '../../packages/chem/src/index';

const argv = process.argv.slice(2);
const file = argv.find((a, i) => !a.startsWith('--') && argv[i - 1] !== '--workers');
const w = argv.includes('--workers') ? argv[argv.indexOf('--workers') + 1] : 'auto';
if (!file || w === undefined || !(w === 'auto' || /^\d+$/.test(w))) {
  process.stderr.write(`usage: ours.ts <FCIDUMP> [--workers 0|auto|n]; got file=${file} workers=${w}\n`);
  process.exit(2);
}
const workers = w === 'auto' ? 'auto' : Number(w);
const t0 = performance.now();
const r = await ciEnergies(file, { backend: hostBackend(), space: 'fci', nroots: 1, tol: 1e-8, workers });
const wallMs = performance.now() - t0;
process.stdout.write(
  `${JSON.stringify({
    file,
    energy: r.energies[0],
    residual: r.residualNorms[0],
    s2: r.s2[0],
    determinants: r.determinants,
    nnz: r.nnz,
    converged: r.solver.converged,
    iterations: r.solver.iterations,
    workers: r.assembly.workers,
    timings: r.timings,
    wallMs,
  })}\n`,
);
