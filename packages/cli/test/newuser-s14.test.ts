/**
 * What a newcomer met in session 14's first-hour walk-through (README, docs/guides, --help), kept
 * true: every guide is reachable from both indexes, the numbers the docs give for the CLI are the
 * code's, and the top-level `--version` / option-first errors say what they should.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { benchJobs } from '../src/commands/bench';
import { maxitHint } from '../src/commands/solve';
import { ciCommand } from '../src/commands/ci';
import { eigenResultOf, residualsAboveThreshold } from '../src/engines/engine-eigs';
import type { DriverResult } from '../src/engines/petsc-engine';
import { solve } from '../src/api';
import { cliVersion, main } from '../src/main';
import { progressBar } from '../src/util/progress';
import { captured, captureOutput } from './capture';

captureOutput();
const root = fileURLToPath(new URL('../../..', import.meta.url));
const text = (f: string) => readFileSync(join(root, f), 'utf8');

describe('the guides', () => {
  const guides = readdirSync(join(root, 'docs/guides')).filter((f) => f.endsWith('.md'));
  it('are each linked from docs/README.md and from README.md', () => {
    expect(guides.length).toBeGreaterThanOrEqual(11);
    expect(guides.filter((g) => !text('docs/README.md').includes(`(guides/${g})`)), 'docs/README.md lacks').toEqual([]);
    expect(guides.filter((g) => !text('README.md').includes(`(docs/guides/${g})`)), 'README.md lacks').toEqual([]);
  });
});

describe('numbers the docs give for the command line', () => {
  it("cli.md's count of bench --variants jobs is the registry's", async () => {
    const gpu = await import('@gpusparse/gpu');
    const m = /there are (\d+) kernel variants/.exec(text('docs/guides/cli.md'));
    expect(m, 'docs/guides/cli.md: "there are N kernel variants"').not.toBeNull();
    expect(Number(m![1])).toBe(benchJobs(gpu, gpu.kernels, true).length);
  });

  it('ci: the --nroots shown in its usage and in cli.md is the default (the count of roots a run without it returns)', async () => {
    const shown = /\[--nroots (\d+)\]/.exec(ciCommand.usage)?.[1];
    expect(shown, 'ci usage: "[--nroots N]"').toBeDefined();
    expect(text('docs/guides/cli.md')).toContain(`\`--nroots ${shown}\``);
    expect(await main(['ci', join(root, 'testdata/fcidump/H2O_sto2g_hande.FCIDUMP'), '--backend', 'cpu', '--json'])).toBe(0);
    const r = JSON.parse(captured.stdout) as { energies: number[] };
    expect(r.energies.length).toBe(Number(shown));
  }, 60_000);
});

/** The table rows of the ``` block that follows `$ pnpm gpusparse <cmd>` in `file`: energy, ⟨S²⟩, accepted by. */
function docTable(file: string, cmd: string): Array<{ energy: number; s2: number; acceptedBy?: string }> {
  const md = text(file);
  const at = md.indexOf(`$ pnpm gpusparse ${cmd}\n`);
  expect(at, `${file}: "$ pnpm gpusparse ${cmd}"`).toBeGreaterThanOrEqual(0);
  const block = md.slice(at, md.indexOf('```', at));
  return [...block.matchAll(/^ +\d+ +(-?\d+\.\d+) +\S+ +(-?\d+\.\d+)(?: +(\w+))?/gm)].map((m) => ({ energy: Number(m[1]), s2: Number(m[2]), ...(m[3] ? { acceptedBy: m[3] } : {}) }));
}

describe("ci.md's worked example is what the command prints (CPU backend)", () => {
  const cmd = 'ci packages/chem/data/H2O_sto2g_hande.FCIDUMP --irrep 1 --nroots 4 --backend cpu';
  for (const extra of ['', ' --multiplicity 1']) {
    it(`gpusparse ${cmd}${extra}`, async () => {
      const rows = docTable('docs/guides/ci.md', `${cmd}${extra}`);
      expect(rows.length).toBe(4);
      const args = `${cmd}${extra}`.split(' ');
      expect(await main([...args.slice(0, 1), join(root, args[1]!), ...args.slice(2), '--json'])).toBe(0);
      const r = JSON.parse(captured.stdout) as { energies: number[]; s2: number[]; bounds?: { acceptedBy: string[] } };
      // the doc prints 10 decimals; the run's energies lie within its 1e-8 Eh stop of each other run's
      rows.forEach((row, i) => {
        expect(Math.abs(r.energies[i]! - row.energy), `root ${i}: doc ${row.energy}, run ${r.energies[i]}`).toBeLessThan(1e-9);
        expect(Math.abs(r.s2[i]! - row.s2)).toBeLessThan(1e-6);
        expect(r.bounds?.acceptedBy[i]).toBe(row.acceptedBy);
      });
    }, 60_000);
  }
});

describe("formats.md's memory tables", () => {
  it('have a row for every format of the registry (csr-vi was missing)', async () => {
    const { formats } = await import('@gpusparse/formats');
    const md = text('docs/guides/formats.md');
    const section = md.slice(md.indexOf('## Memory tables of three real matrices'));
    const blocks = [...section.matchAll(/```\n(\.\.\/shared\/data\/matrices\/[\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBe(3);
    for (const b of blocks) {
      const table = b.slice(b.indexOf('\nformat '));
      const names = [...table.matchAll(/^([a-z][\w-]*) {2,}/gm)].map((m) => m[1]!).filter((n) => n !== 'format');
      expect(names, b.split('\n')[0]).toEqual(formats.map((f) => f.name));
    }
  });
});

describe('eigs --engine slepc: the rule and the residuals shown agree', () => {
  // a SLEPc answer as the driver returns it: one pair above tol·‖A‖ (as 1138_bus with ST sinvert gave)
  const driver = (stType: string): DriverResult => ({ ok: true, np: 2, petsc: '3.18.5', slepc: '3.18.2', loadSeconds: 0, solveSeconds: 0.1, iterations: 2, reason: 'CONVERGED_TOL', reasonCode: 1, matMults: 36, matType: 'mpiaij', values: [0.0035, 0.0986, 0.1768], residualNorms: [1e-12, 1e-10, 0.0709], normInf: 40370, history: [], epsType: 'krylovschur', stType, converged: 3 });
  it('names SLEPc\'s shift-inverted test in the rule, and every pair above the threshold in a note', () => {
    const r = eigenResultOf(driver('sinvert'), 3, 1e-8, 'norm');
    expect(r.tolerance?.rule).toContain('tested by SLEPc on the shift-inverted operator (ST sinvert), not on A');
    expect(residualsAboveThreshold(r)).toEqual(["‖A v − λ v‖ above the threshold 4.037e-4 for pair(s) 2 (7.090e-2): SLEPc's test passed on the operator it iterated with; --shift-invert off judges A's own residual"]);
    const plain = eigenResultOf({ ...driver('shift'), residualNorms: [1e-12, 1e-10, 1e-5] }, 3, 1e-8, 'norm');
    expect(plain.tolerance?.rule).toBe('SLEPc EPS_CONV_NORM: ‖A·v − λ·v‖ ≤ tol·‖A‖ (‖A‖∞ from PETSc)');
    expect(residualsAboveThreshold(plain)).toEqual([]);
  });
});

describe('ci --sigma direct, text output', () => {
  it('says H is not stored instead of "H nnz 0" and "0.00 M nnz/s"', async () => {
    expect(await main(['ci', join(root, 'testdata/fcidump/H2O_sto2g_hande.FCIDUMP'), '--backend', 'cpu', '--sigma', 'direct', '--no-progress'])).toBe(0);
    expect(captured.stdout).toMatch(/441 determinants, H not stored \(direct-sigma\(/);
    expect(captured.stdout).toMatch(/assembly \d+ \(σ tables; H not stored\)/);
    expect(captured.stdout).not.toMatch(/H nnz 0|0\.00 M nnz\/s/);
    // one root, no guard root: no bound, said as such (was "certified bounds Infinity Eh")
    expect(captured.stdout).toContain('note: stop: roots accepted by residual; certified bounds none (0 ≤ E − λ ≤ bound');
  }, 60_000);
});

describe('solve stopped by its iteration limit', () => {
  it('says so and suggests what was not tried (bcsstk13 without a preconditioner reaches 10·n)', async () => {
    expect(maxitHint(2003, { precond: 'none', method: 'cg' })).toBe('the iteration limit was reached (--maxit, default max(100, 10·n) = 20030); --precond jacobi, a larger --maxit or --method gmres may converge');
    expect(maxitHint(50, { maxit: 10, precond: 'jacobi', method: 'gmres' })).toBe('the iteration limit was reached (--maxit 10); a larger --maxit may converge');
    expect(await main(['solve', join(root, 'testdata/matrices/bcsstk05.mtx'), '--backend', 'cpu', '--maxit', '3', '--no-progress'])).toBe(1);
    expect(captured.stdout).toContain('hint: the iteration limit was reached (--maxit 3); --precond jacobi, a larger --maxit or --method gmres may converge');
    expect(captured.stdout).not.toContain('cg needs a symmetric'); // bcsstk05 is symmetric
  });

  it('cg that failed on a non-symmetric A names the first mirrored pair that differs and the methods that fit (bayer10 broke down silently as to why)', async () => {
    const f = join(mkdtempSync(join(tmpdir(), 'gpusparse-nu14-')), 'nonsym.mtx');
    writeFileSync(f, '%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 4\n2 2 4\n3 3 4\n1 3 1\n2 1 -1\n');
    expect(await main(['solve', f, '--backend', 'cpu', '--maxit', '1', '--no-progress'])).toBe(1);
    expect(captured.stdout).toContain('hint: cg needs a symmetric positive definite A, and A(row 1, column 3) = 1 but A(row 3, column 1) = 0: --method gmres or bicgstab');
    // the one-call API: in stats.warnings; none for a symmetric A or another method
    const r = await solve(f, [1, 2, 3], { backend: 'cpu', maxIterations: 1 });
    expect(r.converged).toBe(false);
    expect(r.stats.warnings).toContain('cg needs a symmetric positive definite A, and A(row 1, column 3) = 1 but A(row 3, column 1) = 0: use gmres or bicgstab');
    expect((await solve(f, [1, 2, 3], { backend: 'cpu', maxIterations: 1, method: 'gmres' })).stats.warnings ?? []).toEqual([]);
  });
});

describe('progress off a terminal (a 40 s bench in a pipe printed nothing)', () => {
  const sink = () => {
    const s = {
      text: '',
      isTTY: false,
      write(t: string) {
        s.text += t;
        return true;
      },
    };
    return s;
  };
  it('a line per interval once the operation has run that long; nothing for a short one, nor with lines: false or enabled: false', () => {
    const quiet = sink();
    progressBar('bench', { stream: quiet as never }).update(3, 115, 'csr-vector'); // default 5 s: too early
    expect(quiet.text).toBe('');
    const s = sink();
    const p = progressBar('bench', { stream: s as never, intervalMs: 0 });
    p.update(3, 115, 'csr-vector');
    p.finish();
    expect(s.text).toMatch(/^bench \[\d+\.\ds\] 3% csr-vector\n$/);
    for (const opts of [{ lines: false }, { enabled: false }]) {
      const off = sink();
      progressBar('ci', { stream: off as never, intervalMs: 0, ...opts }).update(1, 2, 'x');
      expect(off.text).toBe('');
    }
  });
});

describe('start --json: results with their stats', () => {
  it('the Poisson solve carries its solver stats, the CI its sizes and timings, the run its open and total ms', async () => {
    expect(await main(['start', '--backend', 'cpu', '--grid', '32', '--nroots', '2', '--json'])).toBe(0);
    const r = JSON.parse(captured.stdout);
    expect(r.ci).toMatchObject({ determinants: 133, nnz: 6197 });
    expect(Object.keys(r.ci.timings)).toEqual(expect.arrayContaining(['read', 'space', 'assembly', 'solve']));
    expect(r.poisson).toMatchObject({ rows: 1024, nnz: 4992, converged: true });
    expect(r.poisson.stats.matvecs).toBeGreaterThan(0);
    expect(r.totalMs).toBeGreaterThanOrEqual(r.openMs);
  }, 60_000);
});

describe('a Matrix Market file with more entries than its size line (ExaSP2_trpcage_8K)', () => {
  it('the error gives command-line advice, not the API option strictCount', async () => {
    const f = join(mkdtempSync(join(tmpdir(), 'gpusparse-nu14-')), 'extra.mtx');
    writeFileSync(f, '%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\n1 2 1\n');
    expect(await main(['info', f, '--json'])).toBe(3);
    expect(JSON.parse(captured.stdout).error.message).toBe(`${f}:5: expected 2 entries (declared on line 2), got entry number 3 (--lenient keeps them, with a warning)`);
    expect(await main(['solve', f, '--backend', 'cpu'])).toBe(3);
    expect(captured.stderr).toContain('got entry number 3 (correct the count on the size line; gpusparse info --lenient reads the file with a warning)');
    expect(captured.stderr).not.toContain('strictCount');
  });
});

describe('--json carries the reader\'s warnings (they reached only stderr)', () => {
  it('solve and eigs of a pattern file: stats.warnings says its entries were taken as 1', async () => {
    const f = join(root, 'testdata/matrices/can_1072.mtx');
    for (const args of [['solve', f], ['eigs', f, '--k', '2']]) {
      captured.stdout = '';
      expect(await main([...args, '--backend', 'cpu', '--json'])).toBe(0);
      expect(JSON.parse(captured.stdout).stats.warnings[0], args[0]).toMatch(/can_1072\.mtx: a pattern file .*every stored entry is taken as 1$/);
    }
  }, 60_000);
});

describe('the top level', () => {
  it('--version prints the package version, --json as one document', async () => {
    const pkg = JSON.parse(text('packages/cli/package.json')) as { version: string };
    expect(cliVersion()).toBe(pkg.version);
    expect(await main(['--version'])).toBe(0);
    expect(captured.stdout).toBe(`gpusparse ${pkg.version}\n`);
    captured.stdout = '';
    expect(await main(['--version', '--json'])).toBe(0);
    expect(JSON.parse(captured.stdout)).toEqual({ version: pkg.version });
  });

  it('an option before any command is a usage error naming it and the commands, one JSON document under --json', async () => {
    expect(await main(['--json'])).toBe(2);
    const doc = JSON.parse(captured.stdout) as { error: { name: string; message: string; exitCode: number } };
    expect(doc.error.name).toBe('UsageError');
    expect(doc.error.exitCode).toBe(2);
    expect(doc.error.message).toMatch(/^expected a command first \(one of info, .*start\), got the option '--json'$/);
    expect(await main(['frob'])).toBe(2);
    expect(captured.stderr).toContain("unknown command 'frob': expected one of info,");
  });

  it('an unknown option names the command, the nearest accepted option and the list (was node\'s raw "Unknown option … place it after \'--\'")', async () => {
    expect(await main(['solve', 'A.mtx', '--rtoll', '1e-8', '--json'])).toBe(2);
    const doc = JSON.parse(captured.stdout) as { error: { name: string; message: string } };
    expect(doc.error.name).toBe('UsageError');
    expect(doc.error.message).toMatch(/^solve: unknown option '--rtoll': did you mean --rtol\? \(expected one of --atol, .*--rtol, --with-x\)$/);
    expect(await main(['ci', 'H.FCIDUMP', '--nroot', '3'])).toBe(2);
    expect(captured.stderr).toContain("ci: unknown option '--nroot': did you mean --nroots?");
    expect(await main(['eigs', 'A.mtx', '--bogus'])).toBe(2);
    expect(captured.stderr).toMatch(/eigs: unknown option '--bogus' \(expected one of --accept, /);
    expect(await main(['solve', 'A.mtx', '--rtol'])).toBe(2);
    expect(captured.stderr).toContain('solve: --rtol: expected a value after it, got none');
  });
});
