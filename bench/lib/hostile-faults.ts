/**
 * What bench/hostile-s8.ts, hostile-s9.ts and hostile-s10.ts share: the harness (arguments, one
 * GPU context, one PASS/FAIL line per case, the JSON record at the end), the float64 host
 * residual that judges each answer, and the in-solve fault of a tuned kernel that goes wrong
 * after the switch (the fixture of packages/gpu/test/support/faults.ts, which the hostile tests
 * use too).
 */
import { writeFileSync } from 'node:fs';
import { type CsrMatrix, csrSpmv } from '../../packages/formats/src/index';
import { createGpuContext, type GpuContext, GpuVectorSpace } from '../../packages/gpu/src/index';
import { switchedThenWrong as switchedOn, type Tuned } from '../../packages/gpu/test/support/faults';

export type { Tuned };

/** The kernels the in-solve fault cases tune over (candidate 1, csr-vector, is made the winner). */
export const FAULT_CANDIDATES = ['csr-scalar', 'csr-vector', 'ell', 'sliced-ell'];

/** `Name: message` of a thrown value, the message cut to 240 characters. */
export const errText = (e: unknown) => `${(e as Error).name}: ${(e as Error).message.slice(0, 240)}`;

/**
 * The harness of one hostile bench: `--out FILE` and `--small` from the command line, a GPU
 * context and vector space, `line` to record and print a case, `finish` to print the tally,
 * write the JSON, release the device and exit.
 */
export async function hostileHarness(bench: string) {
  const argv = process.argv.slice(2);
  const out = argv.includes('--out') ? argv[argv.indexOf('--out') + 1] : undefined;
  const small = argv.includes('--small');
  const ctx = await createGpuContext();
  const device = ctx.describeText().split('\n')[0];
  const space = new GpuVectorSpace(ctx);
  const cases: Record<string, unknown>[] = [];
  const line = (c: Record<string, unknown>) => {
    cases.push(c);
    console.log(`${c.pass ? 'PASS' : 'FAIL'} ${c.name}${c.detail ? `: ${c.detail}` : ''}`);
  };
  const finish = async (): Promise<never> => {
    await ctx.finish();
    const result = { bench, device, cases, allPass: cases.every((c) => c.pass === true) };
    console.log(`${bench}: ${cases.filter((c) => c.pass).length}/${cases.length} pass on ${device}`);
    if (out) writeFileSync(out, `${JSON.stringify(result, null, 1)}\n`);
    ctx.dispose();
    process.exit(0);
  };
  /** `--only <regex>`: run the cases whose name matches (a rerun of one case on the GPU machine). */
  const only = argv.includes('--only') ? new RegExp(argv[argv.indexOf('--only') + 1]!) : undefined;
  /** Run one case (unless `--only` leaves it out) and record it; a throw is a FAIL with its text. */
  const run = async (name: string, f: () => Promise<{ pass: boolean; detail: string }>): Promise<void> => {
    if (only && !only.test(name)) return;
    try {
      line({ name, ...(await f()) });
    } catch (e) {
      line({ name, pass: false, detail: errText(e) });
    }
  };
  return { small, ctx, device, space, line, run, finish };
}

/** ‖b − A·x‖ and ‖b − A·x‖/‖b‖ in float64 on the host. */
export function hostResidual(a: CsrMatrix, x: Float64Array, b: Float64Array): { abs: number; rel: number } {
  const ax = csrSpmv(a, x);
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.rows; i++) {
    num += (b[i]! - ax[i]!) ** 2;
    den += b[i]! ** 2;
  }
  return { abs: Math.sqrt(num), rel: Math.sqrt(num / den) };
}

/** Tuning (real, checked tuning products) made to choose candidate 1; its products × factor from the `after`-th after the switch. */
export async function switchedThenWrong(ctx: GpuContext, a: CsrMatrix, factor: number, after: number): Promise<Tuned> {
  const { op, cand } = await switchedOn(ctx, a, FAULT_CANDIDATES, factor, after);
  if (op.activeLabel !== cand.label) throw new Error(`expected the switch to ${cand.label}, got ${op.activeLabel}`);
  return op;
}
