/**
 * Cost of ⟨S²⟩ of CI vectors on the FCI space of the open 1-D Hubbard chain (a model
 * Hamiltonian, bench/hubbard.ts; L sites, ⌈L/2⌉α ⌊L/2⌋β), or with --irrep on the FCI space
 * of irrep 1 under a made-up orbital symmetry (orbital p in irrep 1 + p mod 4; the space
 * only): the context (move tables, pair lists), the alpha-string pair kernel that
 * `spinSquaredExpectations` runs on FCI and CAS spaces,
 * the per-determinant kernel with arithmetic lookup (`pairs: false`) and with hash probes
 * only (`moveTables: false, lookup: 'hash'`, the construction the tables replace), and
 * `spinSquaredExpectationsParallel` with 1..--workers worker threads. Every path's values
 * are checked against the pair kernel's (relative 1e-12).
 *
 * Run: `pnpm -s tsx bench/spin-cost.ts [--sizes 11,12,13] [--vectors 1] [--workers 1]
 * [--reps 3] [--skip-hash] [--irrep]` (minimum over --reps runs, in ms). Profile with
 * `node --cpu-prof --import tsx bench/spin-cost.ts --sizes 12`.
 */
import { parseArgs } from 'node:util';
import { buildCiSpace, fciSpace, parseFcidump, spinContext, spinPairsKernel, spinRowsKernel, spinSquaredExpectations, spinSquaredExpectationsParallel } from '../packages/chem/src/index';
import { hubbardFcidump } from './hubbard';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '11,12' },
    vectors: { type: 'string', default: '1' },
    workers: { type: 'string', default: '1' },
    reps: { type: 'string', default: '3' },
    'skip-hash': { type: 'boolean', default: false },
    irrep: { type: 'boolean', default: false },
  },
});
const reps = Number(args.reps);
const maxWorkers = Number(args.workers);

async function best<T>(f: () => T | Promise<T>): Promise<[number, T]> {
  let ms = Infinity;
  let out: T | undefined;
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    out = await f();
    ms = Math.min(ms, performance.now() - t);
  }
  return [ms, out!];
}

const ratio = (s: Float64Array, n: number) => Array.from({ length: n }, (_, r) => s[r]! / s[n + r]!);

for (const l of args.sizes.split(',').map(Number)) {
  const space = args.irrep
    ? fciSpace(l, Math.ceil(l / 2), Math.floor(l / 2), { irrep: 1, orbsym: Int32Array.from({ length: l }, (_, p) => 1 + (p % 4)) })
    : buildCiSpace(parseFcidump(hubbardFcidump(l), { file: `hubbard-${l}` }), 'fci').space;
  const vecs = Array.from({ length: Number(args.vectors) }, (_, r) => Float64Array.from({ length: space.size }, (_, i) => Math.sin(i + r)));
  const nv = vecs.length;
  const [ctxMs, ctx] = await best(() => spinContext(space));
  const [syncMs, ref] = await best(() => spinSquaredExpectations(space, vecs));
  const [pairMs] = await best(() => spinPairsKernel(ctx, vecs, 0, ctx.alpha.count));
  const rowsCtx = spinContext(space, { pairs: false });
  const [rowsMs, rows] = await best(() => ratio(spinRowsKernel(rowsCtx, vecs, 0, space.size), nv));
  const check = (what: string, got: readonly number[]) =>
    got.forEach((x, r) => {
      if (Math.abs(x - ref[r]!) > 1e-12 * Math.abs(ref[r]!)) throw new Error(`L=${l} ${what}: expected ⟨S²⟩ ${ref[r]} for vector ${r}, got ${x}`);
    });
  check('rows kernel', rows);
  const line = [`L=${l}`, `${space.size} dets`, `context ${ctxMs.toFixed(1)}`, `sync ${syncMs.toFixed(1)}`, `pair kernel ${pairMs.toFixed(1)}`, `rows kernel ${rowsMs.toFixed(1)}`];
  if (!args['skip-hash']) {
    const hashCtx = spinContext(space, { moveTables: false, lookup: 'hash' });
    const [hashMs, hash] = await best(() => ratio(spinRowsKernel(hashCtx, vecs, 0, space.size), nv));
    check('hash-only rows kernel', hash);
    line.push(`hash-only rows ${hashMs.toFixed(1)}`);
  }
  for (let w = 1; w <= maxWorkers; w++) {
    const [parMs, par] = await best(() => spinSquaredExpectationsParallel(space, vecs, { workers: w }));
    check(`${w} workers`, par);
    line.push(`${w} workers ${parMs.toFixed(1)}`);
  }
  console.log(`${line.join(' | ')} ms; ⟨S²⟩ = ${ref.map((x) => x.toFixed(12)).join(', ')}`);
}
