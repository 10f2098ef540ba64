import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Dawn's limit notices come from native code on fd 2, so these tests look at a child process's
// real stderr. A shell pipe (`2>&1 >/dev/null | cat`) makes that stderr a FIFO, as in a terminal
// pipeline; Node's own 'pipe' stdio would be a socket, which the capture leaves alone.
const root = new URL('../../../', import.meta.url).pathname;
const notice = 'Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced from 1000000 to 16 to fit dynamic offset allocation limit.';
const gpuTierSkipped = process.env.GPUSPARSE_GPU_TIER === 'skip' && process.env.GPUSPARSE_REQUIRE_GPU !== '1';
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** stderr of `node --import tsx <args>` (stdout dropped), with stderr a FIFO or the file `file`. */
function stderrOf(args: string[], file?: string): string {
  const cmd = `${q(process.execPath)} --import tsx ${args.map(q).join(' ')}`;
  if (file) {
    execFileSync('sh', ['-c', `${cmd} >/dev/null 2>${q(file)}`], { cwd: root });
    return readFileSync(file, 'utf8');
  }
  return execFileSync('sh', ['-c', `${cmd} 2>&1 >/dev/null | cat`], { cwd: root, encoding: 'utf8' });
}

describe.skipIf(process.platform !== 'linux')('native stderr capture (packages/gpu/src/device/native-stderr.ts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gpusparse-stderr-'));
  const script = join(dir, 'child.ts');
  writeFileSync(
    script,
    [
      `import { writeSync } from 'node:fs';`,
      `import { captureNativeStderr } from ${JSON.stringify(join(root, 'packages/gpu/src/device/native-stderr.ts'))};`,
      `process.stderr.write('before\\n');`,
      // raw writes to fd 2, as Dawn's fprintf(stderr) does
      `const v = captureNativeStderr(() => { writeSync(2, ${JSON.stringify(`${notice}\n`)}); writeSync(2, 'MESA: error: a real driver message\\n'); return 42; });`,
      `process.stderr.write('after ' + v + '\\n');`,
    ].join('\n'),
  );

  it('drops the Dawn notice, keeps every other line (re-emitted after the call), and stderr works afterwards', () => {
    expect(stderrOf([script])).toBe('before\nMESA: error: a real driver message\nafter 42\n');
  });

  it('leaves a regular-file stderr alone (a reopen would lose its offset): everything arrives in order', () => {
    const f = join(dir, 'err.txt');
    expect(stderrOf([script], f)).toBe(`before\n${notice}\nMESA: error: a real driver message\nafter 42\n`);
  });
});

describe.skipIf(gpuTierSkipped || process.platform !== 'linux')('gpusparse on WebGPU: Dawn notices only with --debug', () => {
  const cli = join(root, 'packages/cli/src/main.ts');
  it('solve on WebGPU prints no "artificially reduced" notice', () => {
    expect(stderrOf([cli, 'solve', 'gen:poisson2d:6', '--backend', 'webgpu'])).not.toMatch(/artificially reduced/);
  });
  it('--debug shows it', () => {
    expect(stderrOf([cli, 'solve', 'gen:poisson2d:6', '--backend', 'webgpu', '--debug'])).toMatch(/maxDynamic\w+BuffersPerPipelineLayout artificially reduced/);
  });
});
