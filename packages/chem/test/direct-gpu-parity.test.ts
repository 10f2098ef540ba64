/**
 * The device direct σ's MS2 = 0 spin parity (packages/chem/src/direct/gpu/parity.ts, lavapipe
 * here): the float32 and df64 operators P H P + (1 − P) D (1 − P) against the host direct σ with
 * time reversal (float64), and the CI driver's `spin.multiplicity` on the device direct σ with no
 * penalty (the df64 device polish allowed, the host polish on the same parity operator): energies
 * equal to the host run's to 1e-8 Eh, ⟨S²⟩ 0 and 2, fewer Davidson iterations than the penalty.
 */
import { InvalidParameterError, NotSupportedError } from '@gpusparse/formats';
import { Df64Blas, Df64VectorSpace, type GpuVector, gpuOperatorFromCsr } from '@gpusparse/gpu';
import { describe, expect, it } from 'vitest';
import { type CiBackend, ciEnergies } from '../src/ci';
import { buildCiSpace } from '../src/determinants/build';
import { directHamiltonian } from '../src/direct/ci';
import { estimateGpuDirectBytes, gpuDirectHamiltonian } from '../src/direct/gpu/ci';
import { gpuDirectSigmaOperator } from '../src/direct/gpu/operator';
import { directSigmaOperator } from '../src/direct/operator';
import { readFcidump } from '../src/fcidump/node';
import { gpuTier, gpuTierSkipped } from './helpers/gpu-tier';
import { data, randomVector } from './helpers/vectors';

const gpu = gpuTier();

const maxAbs = (a: ArrayLike<number>) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]!));
  return m;
};
const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};

describe.skipIf(gpuTierSkipped)('device direct σ with a spin parity (operator)', () => {
  it('float32 and df64 P H P + (1 − P) D (1 − P) equal the host time-reversal operator (N2/STO-3G Ag; H2O/STO-2G in a layout permuted by excitation level), in place too', async () => {
    for (const [file, opts] of [
      ['N2_sto3g_R1.1A_block2.FCIDUMP', { irrep: 1 }],
      ['H2O_sto2g_hande.FCIDUMP', { referenceLevel: 2 }],
    ] as const) {
      const fd0 = await readFcidump(data(file));
      const { fcidump: fd, space } = buildCiSpace(fd0, 'fci', opts);
      for (const parity of [1, -1] as const) {
        const host = await directSigmaOperator(fd, space, { timeReversal: parity > 0 ? 'even' : 'odd', kernel: 'js' });
        const dev = gpuDirectSigmaOperator(gpu.ctx, fd, space, { parity });
        expect(dev.parity).toBe(parity);
        if ('referenceLevel' in opts) expect(dev.label).toMatch(/permuted/); // the swap mapped through the layout permutation
        expect(dev.label).toMatch(parity > 0 ? /spin parity even S/ : /spin parity odd S/);
        const x = randomVector(space.size, 7);
        const want = new Float64Array(space.size);
        host.apply(x, want);
        // float32: to float32 rounding of the products
        const xd = gpu.vs.fromArray(x);
        const yd = gpu.vs.create(space.size);
        dev.apply(xd, yd);
        const got = await gpu.vs.toArray(yd);
        expect(maxDiff(got, want)).toBeLessThan(2e-5 * maxAbs(want));
        // in place (x is y): the projection reads x before the combination writes y
        dev.applyScaled(1, xd, 0, xd);
        expect(maxDiff(await gpu.vs.toArray(xd), want)).toBeLessThan(2e-5 * maxAbs(want));
        // df64: to ≈ 48 bits
        const d = (await Df64Blas.of(gpu.ctx))!;
        const op64 = dev.df64(d);
        expect(op64.parity).toBe(parity);
        const x64 = d.fromFloat64(x);
        const y64 = d.fromFloat64(new Float64Array(space.size));
        op64.apply(x64, y64);
        const got64 = await d.toFloat64(y64);
        expect(maxDiff(got64, want)).toBeLessThan(1e-11 * maxAbs(want));
        // the start vectors' projection: the same P as the host operator's (pairs mapped to the space's order)
        const v = Float64Array.from(x);
        const w = Float64Array.from(x);
        dev.project!(v);
        host.project!(w);
        expect(maxDiff(v, w)).toBeLessThan(1e-15);
        x64.buf.dispose();
        y64.buf.dispose();
        op64.dispose();
        gpu.vs.release(xd as GpuVector);
        gpu.vs.release(yd as GpuVector);
        dev.dispose();
        host.dispose();
      }
    }
  });

  it("the memory estimate and the operator's device bytes count the parity's swap, scratch and diagonal", async () => {
    const n2 = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const { fcidump: fd, space } = buildCiSpace(n2, 'fci', { irrep: 1 });
    const n = space.size;
    const e0 = estimateGpuDirectBytes(fd, space, 3);
    const e1 = estimateGpuDirectBytes(fd, space, 3, true);
    expect(e1.tables - e0.tables).toBe(20 * n);
    expect(e1.polish - e0.polish).toBe(32 * n);
    const plain = gpuDirectSigmaOperator(gpu.ctx, fd, space);
    const par = gpuDirectSigmaOperator(gpu.ctx, fd, space, { parity: 1 });
    expect(par.deviceBytes - plain.deviceBytes).toBeGreaterThanOrEqual(20 * n);
    const d = (await Df64Blas.of(gpu.ctx))!;
    const [p64, q64] = [plain.df64(d), par.df64(d)];
    expect(q64.deviceBytes - p64.deviceBytes).toBeGreaterThanOrEqual(32 * n);
    for (const o of [p64, q64, plain, par]) o.dispose();
  });

  it('refuses a parity at MS2 ≠ 0 (NotSupportedError) and a parity other than ±1 (InvalidParameterError)', async () => {
    const fd0 = await readFcidump(data('O2_cas12e8o_C1_dice.FCIDUMP'));
    const { fcidump: fd, space } = buildCiSpace(fd0, 'fci', { ms2: 2 });
    expect(() => gpuDirectSigmaOperator(gpu.ctx, fd, space, { parity: 1 })).toThrow(NotSupportedError);
    const n2 = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const s = buildCiSpace(n2, 'fci', { irrep: 1 });
    expect(() => gpuDirectSigmaOperator(gpu.ctx, s.fcidump, s.space, { parity: 2 as never })).toThrow(InvalidParameterError);
  });
});

/** A WebGPU backend: float32 Davidson, and a df64 device polish (the direct operator brings its own) or none (host polish). */
function gpuBackend(polish: 'df64' | 'host'): CiBackend<unknown, unknown> {
  const df64 = async () => {
    const space = (await Df64VectorSpace.of(gpu.ctx))!;
    return { space, precision: 'df64 (test)', operator: () => { throw new Error('the direct path brings its own df64 operator'); }, fromFast: (v: never) => space.fromGpu(v), toFast: (p: never, sc: number) => space.toNewGpu(p, sc) };
  };
  return { space: gpu.vs as never, operator: (m) => gpuOperatorFromCsr(gpu.ctx, m, { kernel: 'csr-vector' }) as never, ...(polish === 'df64' ? { devicePolish: df64 as never } : {}) };
}

describe.skipIf(gpuTierSkipped)('CI driver: a multiplicity on the device direct σ by spin parity (no penalty)', () => {
  // N2 Ag singlets: one root (a quintet, of the same parity, lies below the second singlet: see the last test)
  const cases = [
    { file: 'H2O_sto2g_hande.FCIDUMP', opts: { nroots: 2 }, roots: { 1: 2, 3: 2 }, polishes: ['df64', 'host'] as const, penalty: true },
    { file: 'N2_sto3g_R1.1A_block2.FCIDUMP', opts: { irrep: 1 }, roots: { 1: 1, 3: 2 }, polishes: ['df64', 'host'] as const, penalty: false },
    { file: 'H8_sto6g_R1.8_block2.FCIDUMP', opts: {}, roots: { 1: 2, 3: 2 }, polishes: ['df64'] as const, penalty: false },
  ];
  for (const { file, opts, roots, polishes, penalty } of cases) {
    it(`${file}: singlets and triplets (${polishes.join(' and ')} polish) equal the host direct run; ⟨S²⟩ 0 / 2${penalty ? '; fewer iterations than the penalty' : ''}`, async () => {
      const fd = await readFcidump(data(file));
      for (const m of [1, 3] as const) {
        const nroots = roots[m];
        const common = { ...opts, nroots, spin: { multiplicity: m }, solver: 'davidson' as const, workers: 0 };
        const host = await ciEnergies(fd, { ...common, hamiltonian: directHamiltonian({ threads: 1, multiplicity: m }) });
        const pen = penalty ? await ciEnergies(fd, { ...common, backend: gpuBackend('host') as never, hamiltonian: gpuDirectHamiltonian(gpu.ctx, { threads: 1 }) as never }) : undefined;
        for (const polish of polishes) {
          const dev = await ciEnergies(fd, { ...common, backend: gpuBackend(polish) as never, polish: polish === 'df64' ? 'device' : 'host', hamiltonian: gpuDirectHamiltonian(gpu.ctx, { threads: 1, multiplicity: m }) as never });
          const notes = dev.notes.join('\n');
          expect(dev.solver.converged).toBe(true);
          expect(notes).toMatch(new RegExp(`spin: multiplicity ${m} by time-reversal parity and a spin-adapted start \\(no penalty\\)`));
          expect(notes).not.toMatch(/spin penalty|raise spin.penalty/);
          expect(notes).toMatch(polish === 'df64' ? /device polish: roots accepted/ : /host polish: roots accepted/);
          expect(notes).toMatch(m === 1 ? /spin parity even S/ : /spin parity odd S/);
          for (let r = 0; r < nroots; r++) {
            expect(Math.abs(dev.energies[r]! - host.energies[r]!)).toBeLessThan(1e-8);
            expect(Math.abs(dev.s2[r]! - (m === 1 ? 0 : 2))).toBeLessThan(1e-6);
          }
          if (pen) {
            for (let r = 0; r < nroots; r++) expect(Math.abs(pen.energies[r]! - host.energies[r]!)).toBeLessThan(1e-8);
            // measured on lavapipe: singlets 16 → 9, triplets 27 → 8 (float32 + polish iterations)
            expect(dev.solver.iterations).toBeLessThan(pen.solver.iterations);
          }
        }
      }
    });
  }

  it('N2/STO-3G Ag, two singlets: the even parity also holds the quintet below the second singlet; the run repeats with more roots and keeps the singlets', async () => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const common = { irrep: 1, nroots: 2, spin: { multiplicity: 1 }, solver: 'davidson' as const, workers: 0 };
    const host = await ciEnergies(fd, { ...common, hamiltonian: directHamiltonian({ threads: 1, multiplicity: 1 }) });
    const dev = await ciEnergies(fd, { ...common, backend: gpuBackend('df64') as never, hamiltonian: gpuDirectHamiltonian(gpu.ctx, { threads: 1, multiplicity: 1 }) as never });
    expect(dev.energies.length).toBe(2);
    for (let r = 0; r < 2; r++) {
      expect(Math.abs(dev.energies[r]! - host.energies[r]!)).toBeLessThan(1e-8);
      expect(Math.abs(dev.s2[r]!)).toBeLessThan(1e-6);
    }
    const notes = dev.notes.join('\n');
    expect(notes).toMatch(/spin: 1 of the 2 roots of the first run had another spin of the same parity .*repeated with 4 roots and kept the 2 of multiplicity 1/);
    expect(notes).not.toMatch(/root \d+: ⟨S²⟩ = 6/);
    // session 13: the kept roots answer the request (the larger run's own spinShortfall does not carry over)
    expect(dev.spinShortfall).toBeUndefined();
    expect(dev.solver.converged).toBe(true);
  });

  it("an explicit H (no parity operator) with a multiplicity keeps refusing polish 'device'", async () => {
    const fd = await readFcidump(data('H2O_sto2g_hande.FCIDUMP'));
    await expect(ciEnergies(fd, { nroots: 1, spin: { multiplicity: 3 }, solver: 'davidson', backend: gpuBackend('df64') as never, polish: 'device' })).rejects.toThrow(NotSupportedError);
  });

  it('a factory that claims a spin parity but builds none: the penalty with the host polish (auto), refused with polish device', async () => {
    const fd = await readFcidump(data('H2O_sto2g_hande.FCIDUMP'));
    const inner = gpuDirectHamiltonian(gpu.ctx, { threads: 1 }); // no multiplicity: no parity
    const liar = Object.assign((f: never, s: never, n?: string[]) => inner(f, s, n), { spinParity: true });
    const common = { nroots: 1, spin: { multiplicity: 3 }, solver: 'davidson' as const, workers: 0, backend: gpuBackend('df64') as never, hamiltonian: liar as never };
    await expect(ciEnergies(fd, { ...common, polish: 'device' })).rejects.toThrow(/not with a spin penalty/);
    const r = await ciEnergies(fd, common);
    const host = await ciEnergies(fd, { nroots: 1, spin: { multiplicity: 3 }, solver: 'davidson', workers: 0, hamiltonian: directHamiltonian({ threads: 1, multiplicity: 3 }) });
    expect(r.notes.join('\n')).toMatch(/float64 polish on the host: the spin penalty matrix stays on the host/);
    expect(Math.abs(r.energies[0]! - host.energies[0]!)).toBeLessThan(1e-8);
  });
});
