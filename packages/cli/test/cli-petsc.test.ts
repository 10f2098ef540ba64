/**
 * PETSc binary export/import through the CLI, and the `--engine petsc|slepc --np 2` runs
 * against the built-in float64 backends (issue 21). The engine tests need Debian's
 * python3-petsc4py, python3-slepc4py and openmpi-bin: skipped when they are absent on a
 * developer machine, required (failing) in CI (CI=true or GPUSPARSE_REQUIRE_PETSC=1, which
 * .ci/run sets after installing them).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assembleHamiltonian, buildCiSpace } from '@gpusparse/chem';
import { readFcidump } from '@gpusparse/chem/node';
import { csrDiagonal, csrEquals, csrSpmv, formatMatrixMarket, HostVectorSpace, HostOperator, MAT_FILE_CLASSID, readMatrixMarket, readPetscFile, readPetscMatrix, readPetscVectors } from '@gpusparse/formats';
import { cg, jacobi } from '@gpusparse/solvers';
import { describe, expect, it } from 'vitest';
import { locateEngine, runEngine } from '../src/engines/petsc-engine';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();

const dir = mkdtempSync(join(tmpdir(), 'gpusparse-cli-petsc-'));
const tmp = (f: string) => join(dir, f);
const matrix = (f: string) => new URL(`../../../testdata/matrices/${f}`, import.meta.url).pathname;
const fcidump = (f: string) => new URL(`../../../testdata/fcidump/${f}`, import.meta.url).pathname;

const required = process.env.CI === 'true' || process.env.GPUSPARSE_REQUIRE_PETSC === '1';
const installed = (() => {
  try {
    locateEngine('slepc');
    return true;
  } catch {
    return false;
  }
})();

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON, checked field by field
async function json(args: string[], code = 0): Promise<Record<string, any>> {
  captured.stdout = '';
  const rc = await main([...args, '--json']);
  if (rc !== code) throw new Error(`gpusparse ${args.join(' ')}: exit ${rc}, expected ${code}\n${captured.stderr}`);
  return JSON.parse(captured.stdout);
}

describe('gpusparse export and PETSc binary input', () => {
  it('.mtx (symmetric) → export → PETSc binary → export → .mtx is bit-exact, and every matrix command reads the .petsc file', async () => {
    const src = await readMatrixMarket(matrix('bcsstk01.mtx'));
    const s = await json(['export', matrix('bcsstk01.mtx'), '-o', tmp('bcsstk01.petsc')]);
    expect(s).toMatchObject({ format: 'PETSc binary', rows: 48, nnz: 400, bytes: 16 + 4 * 48 + 12 * 400 });
    expect(csrEquals((await readPetscMatrix(tmp('bcsstk01.petsc'))).matrix, src.matrix)).toBe(true);
    const back = await json(['export', tmp('bcsstk01.petsc'), '-o', tmp('back.mtx')]);
    expect(back.format).toBe('Matrix Market (symmetric)');
    expect(readFileSync(tmp('back.mtx'), 'utf8')).toBe(formatMatrixMarket(src.matrix, { symmetry: 'symmetric' }));
    expect(csrEquals((await readMatrixMarket(tmp('back.mtx'))).matrix, src.matrix)).toBe(true);
    // the class id, not the extension, says PETSc
    writeFileSync(tmp('renamed.dat'), readFileSync(tmp('bcsstk01.petsc')));
    const solved = await json(['solve', tmp('renamed.dat'), '--backend', 'cpu', '--rtol', '1e-10']);
    expect(solved).toMatchObject({ rows: 48, nnz: 400, converged: true });
  });

  it('a general matrix goes back as general; --rhs appends b after the matrix (MatLoad, then VecLoad)', async () => {
    await json(['export', matrix('west0067.mtx'), '-o', tmp('west.petsc'), '--rhs', 'ones']);
    const objs = await readPetscFile(tmp('west.petsc'));
    expect(objs.map((o) => o.kind)).toEqual(['matrix', 'vector']);
    const a = (await readMatrixMarket(matrix('west0067.mtx'))).matrix;
    expect(Array.from((objs[1] as { values: Float64Array }).values)).toEqual(Array.from(csrSpmv(a, new Float64Array(67).fill(1))));
    expect((await json(['export', tmp('west.petsc'), '-o', tmp('west.mtx')])).format).toBe('Matrix Market (general)');
  });

  it('solve uses the vector stored after the matrix as b (said in the output), a b file overrides it, and b may be a PETSc vector file', async () => {
    const a = (await readMatrixMarket(matrix('west0067.mtx'))).matrix;
    const xTrue = Float64Array.from({ length: 67 }, (_, i) => 1 + (i % 5));
    const b = csrSpmv(a, xTrue);
    await json(['export', matrix('west0067.mtx'), '-o', tmp('sys.mtx')]);
    writeFileSync(tmp('b.mtx'), `%%MatrixMarket matrix array real general\n67 1\n${Array.from(b).join('\n')}\n`);
    await json(['export', tmp('sys.mtx'), '-o', tmp('sys.petsc'), '--rhs', tmp('b.mtx')]);
    const j = await json(['solve', tmp('sys.petsc'), '--backend', 'cpu', '--method', 'gmres', '--restart', '67', '--rtol', '1e-12', '--with-x']);
    expect(j.rhs).toBe(`the vector stored after A in ${tmp('sys.petsc')}`);
    expect(j.converged).toBe(true);
    for (let i = 0; i < 67; i++) expect(j.x[i]).toBeCloseTo(xTrue[i]!, 6);
    // an explicit b (here a PETSc vector file) wins over the stored one
    const { writePetscVectors } = await import('@gpusparse/formats');
    await writePetscVectors(tmp('ones-b.petsc'), [csrSpmv(a, new Float64Array(67).fill(1))]);
    const k = await json(['solve', tmp('sys.petsc'), tmp('ones-b.petsc'), '--backend', 'cpu', '--method', 'gmres', '--restart', '67', '--rtol', '1e-12', '--with-x']);
    expect(k.rhs).toBe(tmp('ones-b.petsc'));
    for (let i = 0; i < 67; i++) expect(k.x[i]).toBeCloseTo(1, 6);
    // a b of the wrong length is bad input (exit 3) naming the file and both lengths
    await writePetscVectors(tmp('short.petsc'), [new Float64Array(5)]);
    captured.stderr = '';
    expect(await main(['solve', tmp('sys.petsc'), tmp('short.petsc'), '--backend', 'cpu'])).toBe(3);
    expect(captured.stderr).toMatch(/short\.petsc.*expected length 67 \(A's rows\), got a PETSc vector of 5/);
  });

  it('a hostile PETSc file is bad input (exit 3) naming the file and the byte offset', async () => {
    const bad = new Uint8Array(24);
    const dv = new DataView(bad.buffer);
    dv.setInt32(0, MAT_FILE_CLASSID);
    dv.setInt32(4, 1000);
    dv.setInt32(8, 1000);
    dv.setInt32(12, 2147483647);
    writeFileSync(tmp('hostile.petsc'), bad);
    expect(await main(['info', tmp('hostile.petsc')])).toBe(3);
    expect(captured.stderr).toContain(`${tmp('hostile.petsc')}, byte 16: expected 4·rows + 12·nz`);
    // a .petsc name with a foreign first word: named as a PETSc class-id problem
    writeFileSync(tmp('text.petsc'), '%%MatrixMarket matrix coordinate real general\n1 1 0\n');
    expect(await main(['info', tmp('text.petsc')])).toBe(3);
    expect(captured.stderr).toContain(`${tmp('text.petsc')}, byte 0: expected 1211216 (MAT_FILE_CLASSID) or 1211214 (VEC_FILE_CLASSID)`);
  });

  it('engine options are usage errors without --engine, or with the wrong engine', async () => {
    expect(await main(['solve', matrix('bcsstk01.mtx'), '--np', '2'])).toBe(2);
    expect(captured.stderr).toContain('--np: only with --engine petsc or slepc');
    expect(await main(['solve', matrix('bcsstk01.mtx'), '--pc', 'gamg'])).toBe(2);
    expect(await main(['solve', matrix('bcsstk01.mtx'), '--engine', 'trilinos'])).toBe(2);
    expect(captured.stderr).toContain("--engine: expected builtin or petsc or slepc, got 'trilinos'");
    expect(await main(['solve', matrix('bcsstk01.mtx'), '--engine', 'petsc', '--np', '0'])).toBe(2);
    expect(await main(['eigs', matrix('bcsstk01.mtx'), '--engine', 'slepc', '--petsc-option', '--malicious'])).toBe(2);
  });

  it('a missing MPI or PETSc is exit 4 naming the Debian packages', async () => {
    const saved = { ...process.env };
    try {
      process.env.GPUSPARSE_MPIEXEC = tmp('no-such-mpiexec');
      expect(await main(['eigs', matrix('bcsstk01.mtx'), '--engine', 'slepc'])).toBe(4);
      expect(captured.stderr).toMatch(/EngineUnavailableError: .*python3-petsc4py python3-slepc4py openmpi-bin/);
      delete process.env.GPUSPARSE_MPIEXEC;
      process.env.PATH = tmp('empty-path');
      expect(await main(['solve', matrix('bcsstk01.mtx'), '--engine', 'petsc'])).toBe(4);
      expect(captured.stderr).toContain('mpiexec not found on PATH; install python3-petsc4py');
    } finally {
      process.env = saved;
    }
  });
});

describe.skipIf(!installed && !required)('--engine petsc|slepc with mpiexec -n 2 against the built-in float64 backends', () => {
  it('solve 1138_bus: PETSc CG(Jacobi) on 2 processes gives the built-in PCG(Jacobi) solution to the tolerance', async () => {
    const j = await json(['solve', matrix('1138_bus.mtx'), '--engine', 'petsc', '--np', '2', '--pc', 'jacobi', '--rtol', '1e-10']);
    expect(j).toMatchObject({ converged: true, reason: 'converged', engine: { name: 'petsc', np: 2, ksp: 'cg', pc: 'jacobi', reason: 'KSP_CONVERGED_RTOL' } });
    expect(j.iterations).toBeGreaterThan(10);
    expect(j.relativeResidualFloat64).toBeLessThan(1e-9);
    expect(j.stats.matvecs).toBeGreaterThanOrEqual(j.iterations);
    // x itself, against the built-in float64 CG on the same system
    const a = (await readMatrixMarket(matrix('1138_bus.mtx'))).matrix;
    const b = csrSpmv(a, Float64Array.from({ length: a.rows }, (_, i) => Math.sin(i)));
    const xPetsc = await runEngine({ engine: 'petsc', np: 2, passThrough: [] }, { task: 'solve', matrix: a, rhs: b, ksp: { type: 'cg', pc: 'jacobi', rtol: 1e-12, atol: 0, maxit: 20000, restart: 30 } }, async ({ dir: out }) => (await readPetscVectors(`${out}/x.petsc`))[0]!);
    const space = new HostVectorSpace();
    const ours = await cg(space, HostOperator.fromCsr(a), b, { rtol: 1e-12, maxIterations: 20000, preconditioner: jacobi(space, csrDiagonal(a)) });
    let d = 0;
    let n = 0;
    for (let i = 0; i < a.rows; i++) {
      d = Math.max(d, Math.abs(xPetsc[i]! - ours.x[i]!));
      n = Math.max(n, Math.abs(ours.x[i]!));
    }
    expect(d / n).toBeLessThan(1e-6); // cond(1138_bus) ≈ 1e6 × rtol 1e-12
  });

  it('solve --engine petsc honours -o x.mtx and --with-x like the built-in backends', async () => {
    const j = await json(['solve', matrix('bcsstk01.mtx'), '--engine', 'petsc', '--np', '2', '--rtol', '1e-12', '-o', tmp('x-petsc.mtx'), '--with-x']);
    expect(j.xFile).toBe(tmp('x-petsc.mtx'));
    const x = (await readMatrixMarket(tmp('x-petsc.mtx'))).matrix;
    expect(x.rows).toBe(48);
    for (let i = 0; i < 48; i++) {
      expect(x.values[i]).toBeCloseTo(1, 6);
      expect(j.x[i]).toBe(x.values[i]);
    }
  });

  it('PETSc options pass through and override the mapped ones (--petsc-option=-ksp_type gmres)', async () => {
    const j = await json(['solve', matrix('bcsstk01.mtx'), '--engine', 'petsc', '--np', '2', '--rtol', '1e-10', '--petsc-option=-ksp_type gmres -ksp_gmres_restart 60']);
    expect(j).toMatchObject({ converged: true, engine: { ksp: 'gmres', passThrough: ['-ksp_type', 'gmres', '-ksp_gmres_restart', '60'] } });
    expect(j.relativeResidualFloat64).toBeLessThan(1e-9);
  });

  it('eigs bcsstk01: the lowest 4 eigenvalues from SLEPc (Krylov–Schur, shift-invert, MUMPS on 2 processes) match the built-in float64 ones', async () => {
    const ours = await json(['eigs', matrix('bcsstk01.mtx'), '--backend', 'cpu', '--k', '4', '--tol', '1e-12']);
    const j = await json(['eigs', matrix('bcsstk01.mtx'), '--engine', 'slepc', '--np', '2', '--k', '4', '--shift-invert', 'on', '--tol', '1e-12', '--plot', tmp('slepc.svg')]);
    expect(readFileSync(tmp('slepc.svg'), 'utf8')).toContain('<svg');
    expect(j).toMatchObject({ converged: true, engine: { name: 'slepc', np: 2, eps: 'krylovschur', st: 'sinvert' } });
    for (const [i, x] of (j.values as number[]).entries()) expect(Math.abs(x - ours.values[i]) / ours.values[i]).toBeLessThan(1e-9);
    for (const r of j.residualNorms as number[]) expect(r).toBeLessThan(1e-12 * j.tolerance.normEstimate);
  });

  it("eigs 1138_bus --shift-invert on: the rule says SLEPc tested the shift-inverted operator, and a note names every pair whose ‖A v − λ v‖ is above tol·‖A‖", async () => {
    const ours = await json(['eigs', matrix('1138_bus.mtx'), '--backend', 'cpu', '--k', '6']);
    const j = await json(['eigs', matrix('1138_bus.mtx'), '--engine', 'slepc', '--np', '2', '--k', '6', '--shift-invert', 'on']);
    expect(j).toMatchObject({ converged: true, engine: { st: 'sinvert' } });
    expect(j.tolerance.rule).toContain('shift-inverted operator (ST sinvert)');
    for (const [i, x] of (j.values as number[]).entries()) expect(Math.abs(x - ours.values[i]) / ours.values[i]).toBeLessThan(1e-6);
    const over = (j.residualNorms as number[]).flatMap((r, i) => (r > j.tolerance.threshold ? [i] : []));
    if (over.length === 0) expect(j.notes).toEqual([]);
    else expect(j.notes[0]).toMatch(new RegExp(`for pair\\(s\\) ${over.map((i) => `${i} \\([^)]*\\)`).join(', ')}:`));
  });

  it('ci H4 FCI: SLEPc Davidson on 2 processes gives the built-in energies and ⟨S²⟩ of 4 roots', async () => {
    const h4 = fcidump('H4_sto6g_R1.8_block2.FCIDUMP');
    const ours = await json(['ci', h4, '--nroots', '4', '--backend', 'cpu']);
    const j = await json(['ci', h4, '--nroots', '4', '--engine', 'slepc', '--np', '2', '--tol', '1e-9']);
    expect(j.solver.converged).toBe(true);
    expect(j.engine).toMatchObject({ name: 'slepc', np: 2, eps: 'gd' });
    for (const [i, e] of (j.energies as number[]).entries()) expect(Math.abs(e - ours.energies[i])).toBeLessThan(1e-9);
    for (const [i, s] of (j.s2 as number[]).entries()) expect(Math.abs(s - ours.s2[i])).toBeLessThan(1e-6);
  });
});

describe('ci --export-petsc: H streamed in row chunks and its diagonal', () => {
  it('the file holds the assembled H bit for bit (36 chunks of one row), the diagonal file its diagonal', async () => {
    const h4 = fcidump('H4_sto6g_R1.8_block2.FCIDUMP');
    const s = await json(['ci', h4, '--export-petsc', tmp('H4.petsc'), '--chunk-nnz', '1']);
    expect(s).toMatchObject({ determinants: 36, chunks: 36, diagonal: tmp('H4.diag.petsc') });
    const { space, fcidump: fd } = buildCiSpace(await readFcidump(h4), 'fci');
    const whole = await assembleHamiltonian(fd, space, { workers: 0 });
    expect(csrEquals((await readPetscMatrix(tmp('H4.petsc'))).matrix, whole.matrix)).toBe(true);
    expect(Array.from((await readPetscVectors(tmp('H4.diag.petsc')))[0]!)).toEqual(Array.from(whole.diagonal));
  });
});
