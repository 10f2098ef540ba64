/**
 * The wasm f64x2 kernels of the direct σ (packages/chem/src/direct/scatter.kernel.ts: same-spin
 * rows and α–β scatter): the same σ, bit for bit, as the JavaScript kernel on one and two threads
 * (point-group blocks with odd replacement groups, MS2 ≠ 0 down to no β electron, time
 * reversal), the module validates, and the option is checked.
 */
import { InvalidParameterError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { buildCiSpace, type SpaceSpec } from '../src/determinants/build';
import { chooseSigma } from '../src/direct/choose';
import { type DirectSigmaOptions, directSigmaOperator } from '../src/direct/operator';
import { scatterLayout, scatterModuleBytes } from '../src/direct/scatter.kernel';
import { directContext } from '../src/direct/tables';
import { readFcidump } from '../src/fcidump/node';
import { data, randomVector } from './helpers/vectors';

/** σ of one random vector with each (kernel, threads) option set. */
async function sigmas(file: string, spec: SpaceSpec, opts: { irrep?: number; ms2?: number }, runs: DirectSigmaOptions[]) {
  const fd = await readFcidump(data(file));
  const { fcidump, space } = buildCiSpace(fd, spec, opts);
  const c = randomVector(space.size, 11);
  const out: { y: Float64Array; kernel: string; threads: number }[] = [];
  for (const o of runs) {
    const op = await directSigmaOperator(fcidump, space, o);
    try {
      const y = new Float64Array(space.size);
      op.apply(c, y);
      out.push({ y, kernel: op.kernel, threads: op.threads });
    } finally {
      op.dispose();
    }
  }
  return out;
}

const bitsEqual = (a: Float64Array, b: Float64Array) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

describe('wasm kernels of the direct σ', () => {
  it.each([
    ['N2_sto3g_R1.1A_block2.FCIDUMP', 'fci', { irrep: 6 }],
    ['C4_sto3g_cas8e12o_spin3_dice.FCIDUMP', 'fci', { irrep: 2 }],
    ['O2_cas12e8o_C1_dice.FCIDUMP', 'fci', { ms2: 2 }],
    ['H8_sto6g_R1.8_block2.FCIDUMP', 'fci', { ms2: 6 }],
    ['H2_ccpvtz_Lz_hande.FCIDUMP', 'fci', { ms2: 2 }],
  ] as const)('%s %s %o: wasm (1 and 2 threads) = js, bit for bit', async (file, spec, opts) => {
    const [js, w1, w2] = await sigmas(file, spec, opts, [{ kernel: 'js' }, {}, { threads: 2 }]);
    expect(js!.kernel).toBe('js');
    expect(w1!.kernel).toBe('wasm');
    expect(w2!.kernel).toBe('wasm');
    expect(w2!.threads).toBe(2);
    expect(js!.y.some((v) => v !== 0)).toBe(true);
    expect(bitsEqual(w1!.y, js!.y)).toBe(true);
    expect(bitsEqual(w2!.y, js!.y)).toBe(true);
  });

  it('with time reversal (half the rows) too', async () => {
    const [js, w2] = await sigmas('N2_sto3g_R1.1A_block2.FCIDUMP', 'fci', { irrep: 1 }, [
      { kernel: 'js', timeReversal: 'even' },
      { threads: 2, timeReversal: 'even' },
    ]);
    expect(w2!.kernel).toBe('wasm');
    expect(bitsEqual(w2!.y, js!.y)).toBe(true);
  });

  it('the module validates and its memory holds scratch and β records', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep: 1 });
    const { ctx } = directContext(fcidump, space);
    const bytes = scatterModuleBytes(ctx);
    expect(bytes).toBeDefined();
    expect(WebAssembly.validate(bytes!)).toBe(true);
    const mem = scatterLayout(ctx);
    expect(mem.pages * 65536).toBeGreaterThanOrEqual(mem.rec + 24 * ctx.nB * ctx.mB);
  });

  it('the cost model uses the wasm rate: direct up to ≈ 500 products of an H that fits', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep: 1 });
    expect(chooseSigma(fcidump, space, { products: 400, hostBytes: 1e12 }).sigma).toBe('direct');
    expect(chooseSigma(fcidump, space, { products: 1000, hostBytes: 1e12 }).sigma).toBe('explicit');
  });

  it('an unknown kernel name is refused', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', {});
    await expect(directSigmaOperator(fcidump, space, { kernel: 'gpu' as 'js' })).rejects.toThrow(InvalidParameterError);
  });
});
