/**
 * Hostile inputs, second sweep (session 6): cases the first sweep (hostile-probes.test.ts) left
 * open and the places it did not go. Each case failed (wrong exit code, misleading message, NaN
 * result reported as "not converged", an allocation of gigabytes) before its fix.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eigsh, solve } from '../src/api';
import { main } from '../src/main';
import { captured, captureOutput } from './capture';

captureOutput();
const dir = mkdtempSync(join(tmpdir(), 'gpusparse-probes2-'));
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';
const h4 = join(__dirname, '../../../testdata/fcidump/H4_sto6g_R1.8_block2.FCIDUMP');

/** A Matrix Market file in the temporary folder: banner fields, then the size line and entries. */
function mtx(name: string, banner: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `%%MatrixMarket matrix ${banner}\n${body}`);
  return path;
}
const spd3 = mtx('spd3.mtx', 'coordinate real symmetric', '3 3 5\n1 1 4\n2 1 1\n2 2 4\n3 2 1\n3 3 4\n');

describe('usage errors exit 2 with our wording', () => {
  it('ci --solver bogus and --tol 0 / -1: exit 2 naming the flag (was exit 3 or 70 from the driver)', async () => {
    expect(await main(['ci', h4, '--backend', 'cpu', '--solver', 'bogus'])).toBe(2);
    expect(captured.stderr).toMatch(/--solver: expected davidson, dense or auto, got 'bogus'/);
    for (const tol of ['0', '-1']) {
      captured.stderr = '';
      expect(await main(['ci', h4, '--backend', 'cpu', '--tol', tol])).toBe(2);
      expect(captured.stderr).toMatch(new RegExp(`--tol: expected .*, got '${tol}'`));
    }
  });
  it('ci count and size flags out of range (--nroots 0/1.5, --irrep 9, --multiplicity 0, --penalty -1/0, --host-memory 0, --chunk-nnz 0): exit 2 (were exit 3, or accepted: a negative penalty ran, exit 0)', async () => {
    for (const flags of [['--nroots', '0'], ['--nroots', '1.5'], ['--irrep', '9'], ['--ms2', '0.5'], ['--multiplicity', '0'], ['--multiplicity', '1', '--penalty', '-1'], ['--multiplicity', '1', '--penalty', '0'], ['--host-memory', '0'], ['--chunk-nnz', '0']]) {
      captured.stderr = '';
      expect(await main(['ci', h4, '--backend', 'cpu', ...flags]), flags.join(' ')).toBe(2);
      expect(captured.stderr).toMatch(new RegExp(`${flags.at(-2)}: expected .*got '${flags.at(-1)}'`));
    }
  });
  it('a negative number after a flag (--rtol -1, --maxit -5): our message, not parseArgs\' "ambiguous"', async () => {
    expect(await main(['solve', spd3, '--backend', 'cpu', '--rtol', '-1'])).toBe(2);
    expect(captured.stderr).toMatch(/--rtol: expected .*≥ 0, got '-1'/);
    expect(captured.stderr).not.toMatch(/ambiguous/);
    captured.stderr = '';
    expect(await main(['solve', spd3, '--backend', 'cpu', '--maxit', '-5'])).toBe(2);
    expect(captured.stderr).toMatch(/--maxit: expected .*, got '-5'/);
    captured.stderr = '';
    // a value that is not a number still gets parseArgs' refusal (a flag forgotten its value)
    expect(await main(['solve', spd3, '--backend', 'cpu', '--rtol', '--json'])).toBe(2);
  });
});

describe.skipIf(gpuTierSkipped)('solve --backend webgpu with rtol 0 or tiny', () => {
  it('converged with a float64 residual of 0 (was "breakdown": the scale 1/‖r‖ ≈ 2e36 overflowed the df64 split to NaN)', async () => {
    for (const rtol of ['0', '1e-300']) {
      captured.stdout = '';
      expect(await main(['solve', spd3, '--backend', 'webgpu', '--json', '--rtol', rtol])).toBe(0);
      const j = JSON.parse(captured.stdout);
      expect(j).toMatchObject({ converged: true, reason: 'converged', relativeResidualFloat64: 0 });
      expect(j.detail ?? '').not.toMatch(/non-finite|NaN/);
    }
  });
  it('--no-refine --rtol 0: not "converged" when the float64 residual (≈ 3e-8) misses the rule (was converged, exit 0)', async () => {
    expect(await main(['solve', spd3, '--backend', 'webgpu', '--json', '--no-refine', '--rtol', '0'])).toBe(1);
    const j = JSON.parse(captured.stdout);
    expect(j).toMatchObject({ converged: false, reason: 'breakdown' });
    expect(j.relativeResidualFloat64).toBeGreaterThan(0);
    // either the float32 CG met its own rtol 0 (then the float64 check demotes it and says why) or it broke down first (ρ = 0 exactly)
    expect(j.detail).toMatch(/float64 residual ‖b − A·x‖\/‖b‖ = .* does not meet rtol 0.*drop --no-refine|ρ = ⟨r, z⟩ = 0/);
    captured.stdout = '';
    // a float32 solve that meets a float32-sized tolerance stays converged
    expect(await main(['solve', spd3, '--backend', 'webgpu', '--json', '--no-refine', '--rtol', '1e-5'])).toBe(0);
    expect(JSON.parse(captured.stdout).converged).toBe(true);
  });
});

describe.skipIf(gpuTierSkipped)('ci --sigma direct --backend webgpu with integrals beyond float32', () => {
  it('an integral of 1e40: exit 3 naming it and --backend cpu, before any σ (was NaN energies, "NOT converged")', async () => {
    const big = join(dir, 'big.FCIDUMP');
    writeFileSync(big, readFileSync(h4, 'utf8').replace('0.4572694352280730   2   2   1   1', '1e40   2   2   1   1'));
    for (const sigma of ['direct', 'auto']) {
      captured.stderr = '';
      captured.stdout = '';
      expect(await main(['ci', big, '--backend', 'webgpu', '--sigma', sigma, '--solver', 'davidson'])).toBe(3);
      expect(captured.stderr).toMatch(/FcidumpError: .*big\.FCIDUMP: expected \|\(1 1\|2 2\)\| ≤ 3\.4e38 .*float32.*--backend cpu.*got 1e\+40/);
      expect(captured.stdout).not.toMatch(/NaN/);
    }
  });
});

describe('library (api.ts) edge inputs', () => {
  it('eigsh on a 0×0 matrix: InvalidMatrixError saying it has no eigenvalues (was "k: expected an integer in [1, 0]")', async () => {
    const empty = mtx('empty00.mtx', 'coordinate real general', '0 0 0\n');
    await expect(eigsh(empty, 1, { backend: 'cpu' })).rejects.toThrow(/0×0 \(no eigenvalues/);
    await expect(eigsh(empty, 1, { backend: 'cpu' })).rejects.toMatchObject({ name: 'InvalidMatrixError' });
  });
});

describe('FCIDUMP header keys the reader does not know', () => {
  it('accepted, with a note naming each key and its line (was a bare list of names: a misspelt key hid)', async () => {
    const unk = join(dir, 'unknown-keys.FCIDUMP');
    writeFileSync(unk, readFileSync(h4, 'utf8').replace('  ISYM=   1,\n', '  ISYM=   1,\n  FOOBAR=3, NLEC=4,\n'));
    expect(await main(['ci', unk, '--backend', 'cpu', '--json'])).toBe(0);
    const j = JSON.parse(captured.stdout);
    const note = j.notes.find((n: string) => /header keys not used/.test(n));
    expect(note).toMatch(/FOOBAR \(.*unknown-keys\.FCIDUMP:4\), NLEC \(.*unknown-keys\.FCIDUMP:4\)/);
    expect(Number.isFinite(j.energies[0])).toBe(true);
  });
});

describe('convert to a format whose padding explodes', () => {
  it('bcsr/sbcsr with 1024×1024 blocks and scsr with 65536 streams: exit 5, ResourceLimitError naming slots and bytes (was exit 3, InvalidMatrixError)', async () => {
    const out = join(dir, 'out.mtx');
    // row 1 dense (5000 entries) plus the diagonal: every one of 65536 streams pads to it
    const n = 5000;
    const entries = [...Array.from({ length: n }, (_, j) => `1 ${j + 1} 1`), ...Array.from({ length: n - 1 }, (_, i) => `${i + 2} ${i + 2} 2`)];
    const denseRow = mtx('dense-row.mtx', 'coordinate real general', `${n} ${n} ${entries.length}\n${entries.join('\n')}\n`);
    for (const [to, param, what, input] of [
      ['bcsr', 'blockSize=1024', /bcsrFromCsr: \d+ padded slots .*needs [\d.]+ GB, 3\.2 GB available — \d+ blocks of 1024x1024: use smaller blocks/, 'gen:laplacian1d:300000'],
      ['sbcsr', 'blockSize=1024', /needs [\d.]+ GB/, 'gen:laplacian1d:300000'],
      ['scsr', 'numStreams=65536', /scsrFromCsr: \d+ padded slots .*needs [\d.]+ GB.*use fewer streams/, denseRow],
    ] as const) {
      captured.stderr = '';
      expect(await main(['convert', input, '--to', to, '--param', param, '-o', out])).toBe(5);
      expect(captured.stderr).toMatch(/ResourceLimitError: /);
      expect(captured.stderr).toMatch(what);
    }
  });
});

describe('thread counts of the CPU backend', () => {
  it('GPUSPARSE_THREADS=0/-1/abc/1e6: exit 3 naming the variable (was ignored silently, or "WasmVectorSpace threads")', async () => {
    const saved = process.env.GPUSPARSE_THREADS;
    try {
      for (const bad of ['0', '-1', 'abc', '1e6', '1000000', '2.5']) {
        process.env.GPUSPARSE_THREADS = bad;
        captured.stderr = '';
        expect(await main(['solve', spd3, '--backend', 'cpu'])).toBe(3);
        expect(captured.stderr).toMatch(new RegExp(`GPUSPARSE_THREADS \\(environment variable\\): expected an integer in \\[1, 64\\], got ${bad.replace('.', '\\.')}`));
      }
      process.env.GPUSPARSE_THREADS = '2';
      expect(await main(['solve', spd3, '--backend', 'cpu'])).toBe(0);
    } finally {
      if (saved === undefined) delete process.env.GPUSPARSE_THREADS;
      else process.env.GPUSPARSE_THREADS = saved;
    }
  });
  it('the library option threads: 0, -1, 1.5, 65: InvalidParameterError naming "threads"', async () => {
    for (const threads of [0, -1, 1.5, 65]) {
      await expect(solve(spd3, [1, 2, 3], { backend: 'cpu', threads })).rejects.toThrow(/parameter threads: expected an integer in \[1, 64\]/);
    }
  });
});
