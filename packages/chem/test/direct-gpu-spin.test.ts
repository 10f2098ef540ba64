/**
 * ⟨S²⟩ on the device (packages/chem/src/direct/gpu/spin-square.ts, lavapipe here) against the
 * host's float64 ⟨S²⟩ (hamiltonian/spin.ts): random vectors (no spin eigenstates: every term of
 * S₋S₊ counts) and CI eigenvectors (singlets, triplets, MS2 = 0, 2 and 3), float32 and df64
 * vectors, permuted layouts, staged-integral tables, more roots than one pass holds. Measured on
 * lavapipe: random vectors within 3.5e-9 of the host (the float32 rounding of the vector, first
 * order away from an eigenvector), eigenvectors within 5e-14 (second order).
 */
import { Df64Blas, type Df64Vector, Df64VectorSpace, type GpuContext, type GpuVector, gpuOperatorFromCsr } from '@gpusparse/gpu';
import { describe, expect, it } from 'vitest';
import { type CiBackend, ciEnergies } from '../src/ci';
import { buildCiSpace, type SpaceSpec } from '../src/determinants/build';
import { directHamiltonian } from '../src/direct/ci';
import { gpuDirectHamiltonian } from '../src/direct/gpu/ci';
import { gpuDirectSigmaOperator } from '../src/direct/gpu/operator';
import type { SharedSigmaTables } from '../src/direct/gpu/operator-df64';
import { GpuSpinSquare, occupationWords, SPIN_SQUARE_MAX_ROOTS } from '../src/direct/gpu/spin-square';
import { directContext } from '../src/direct/tables';
import { readFcidump } from '../src/fcidump/node';
import { parseFcidump } from '../src/fcidump/parse';
import type { Fcidump } from '../src/fcidump/types';
import { spinSquaredExpectations } from '../src/hamiltonian/spin';
import { gpuTier, gpuTierSkipped } from './helpers/gpu-tier';
import { data, randomVector } from './helpers/vectors';

const gpu = gpuTier();

/** Device ⟨S²⟩ of `vectors` (float32, and df64 when asked) and the host's, for the space of `fd`. */
async function both(fd: Fcidump, spec: SpaceSpec, opts: { irrep?: number; ms2?: number; referenceLevel?: number }, vectors: (n: number) => Float64Array[], o: { stage?: boolean; df64?: boolean } = {}) {
  const { fcidump, space } = buildCiSpace(fd, spec, opts);
  const op = gpuDirectSigmaOperator(gpu.ctx, fcidump, space, { stageIntegrals: o.stage === true });
  const cs = vectors(space.size);
  const want = spinSquaredExpectations(space, cs);
  const xs = cs.map((c) => gpu.vs.fromArray(c));
  const got = await op.spinSquared(xs);
  let gotDf: number[] | undefined;
  if (o.df64) {
    const d = await Df64Blas.of(gpu.ctx);
    if (!d) throw new Error('lavapipe passes the df64 self-test: no Df64Blas here is a test-setup fault');
    const ds: Df64Vector[] = cs.map((c) => d.fromFloat64(c));
    gotDf = await op.spinSquared(ds);
    for (const x of ds) x.buf.dispose();
  }
  for (const x of xs) gpu.vs.release(x as GpuVector);
  const label = op.label;
  op.dispose();
  const err = Math.max(...want.map((w, i) => Math.abs(got[i]! - w)), ...(gotDf ? want.map((w, i) => Math.abs(gotDf![i]! - w)) : [0]));
  return { size: space.size, want, got, gotDf, err, label };
}

const randoms = (k: number, seed: number) => (n: number) => Array.from({ length: k }, (_, r) => randomVector(n, seed + r));

describe.skipIf(gpuTierSkipped)('⟨S²⟩ on the device = host float64 ⟨S²⟩', () => {
  it('H8/STO-6G FCI (4900 dets, no symmetry) and its Ag block: random vectors, float32 and df64, 10 vectors in two passes', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const all = await both(fd, 'fci', {}, randoms(SPIN_SQUARE_MAX_ROOTS + 2, 5), { df64: true });
    expect(all.size).toBe(4900);
    expect(all.want.every((w) => w > 0.5)).toBe(true); // random vectors: far from any spin state
    expect(all.err).toBeLessThan(1e-8 * Math.max(...all.want));
    const ag = await both(fd, 'fci', { irrep: 1 }, randoms(3, 17), { stage: true });
    expect(ag.label).toMatch(/staged/);
    expect(ag.err).toBeLessThan(1e-8 * Math.max(...ag.want));
  });

  it('O2 CAS(12e,8o): MS2 = 2 and a layout permuted by excitation level; C4 MS2 = 3 (B3u block)', async () => {
    const o2 = await readFcidump(data('O2_cas12e8o_C1_dice.FCIDUMP'));
    const t = await both(o2, 'fci', { ms2: 2 }, randoms(2, 3), { df64: true });
    expect(t.err).toBeLessThan(1e-8 * Math.max(...t.want));
    const p = await both(o2, 'fci', { referenceLevel: 2 }, randoms(2, 7));
    expect(p.label).toMatch(/permuted/);
    expect(p.err).toBeLessThan(1e-8 * Math.max(...p.want));
    const c4 = await both(await readFcidump(data('C4_sto3g_cas8e12o_spin3_dice.FCIDUMP')), 'fci', { irrep: 2 }, randoms(2, 9));
    expect(c4.err).toBeLessThan(1e-8 * Math.max(...c4.want));
  });

  it('a small storage binding: fewer vectors per pass (2, then 1) and the partial sums split over calls, the same ⟨S²⟩', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', {});
    const op = gpuDirectSigmaOperator(gpu.ctx, fcidump, space);
    const shared = (op as unknown as { shared(): SharedSigmaTables }).shared();
    const cs = randoms(5, 31)(space.size);
    const want = spinSquaredExpectations(space, cs);
    const xs = cs.map((c) => gpu.vs.fromArray(c));
    const { ctx: dctx } = directContext(fcidump, space);
    const input = { norb: dctx.norb, nA: dctx.nA, sz: 0, occ: occupationWords(dctx, space) };
    // a context whose bindings hold two float32 vectors (4 B × 4900 each), then one vector and two roots' partial sums
    for (const binding of [2 * 4 * space.size + 64, 16 * shared.uni.groups * 2]) {
      const small = Object.create(gpu.ctx, { limits: { value: { ...gpu.ctx.limits, maxStorageBufferBindingSize: binding } } }) as GpuContext;
      const spin = new GpuSpinSquare(small, shared, input);
      const got = await spin.expectations(xs);
      spin.dispose();
      for (let r = 0; r < 5; r++) expect(Math.abs(got[r]! - want[r]!)).toBeLessThan(1e-8 * want[r]!);
    }
    for (const x of xs) gpu.vs.release(x);
    op.dispose();
  });

  it('34 orbitals (strings past 32 bits: the high occupation words), MS2 = 1, D2h labels', async () => {
    // one-electron integrals and self-repulsions only: ⟨S²⟩ needs the strings, not the Hamiltonian
    const n = 34;
    const orbsym = Array.from({ length: n }, (_, i) => 1 + (i % 4));
    const lines = [`&FCI NORB=${n},NELEC=3,MS2=1,`, `ORBSYM=${orbsym.join(',')},`, 'ISYM=1,', '&END'];
    for (let i = 1; i <= n; i++) lines.push(`0.5 ${i} ${i} ${i} ${i}`, `${(-2 + 0.05 * i).toFixed(3)} ${i} ${i} 0 0`);
    lines.push('0.0 0 0 0 0');
    const fd = parseFcidump(lines.join('\n'), { file: 'wide-34' });
    const r = await both(fd, 'fci', { ms2: 1 }, randoms(2, 23));
    expect(r.size).toBe(561 * 34);
    expect(r.err).toBeLessThan(1e-8 * Math.max(...r.want));
  });

  it('CI eigenvectors: N2/STO-3G Ag singlets and triplets (MS2 = 0) and O2 triplets (MS2 = 2) to ≤ 1e-12 of the host', async () => {
    const cases = [
      { file: 'N2_sto3g_R1.1A_block2.FCIDUMP', opts: { irrep: 1, nroots: 4 } },
      { file: 'O2_cas12e8o_C1_dice.FCIDUMP', opts: { ms2: 2, nroots: 3 } },
    ];
    for (const { file, opts } of cases) {
      const fd = await readFcidump(data(file));
      const r = await ciEnergies(fd, { ...opts, solver: 'davidson', workers: 0, hamiltonian: directHamiltonian({ threads: 1 }) });
      const e = await both(fd, 'fci', opts, () => r.vectors);
      expect(e.err).toBeLessThan(1e-12); // 5e-14 measured (lavapipe)
      // spin eigenstates: S(S+1) within 1e-9, S from 2S = √(1 + 4⟨S²⟩) − 1 rounded
      for (const s of e.got) {
        const twoS = Math.round(Math.sqrt(1 + 4 * s) - 1);
        expect(Math.abs(s - (twoS * (twoS + 2)) / 4)).toBeLessThan(1e-9);
      }
    }
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

describe.skipIf(gpuTierSkipped)('CI driver: ⟨S²⟩ on the device with the device direct σ', () => {
  it('N2/STO-3G Ag (df64 polish: in the final check) and O2 MS2 = 2 (host polish: host vectors uploaded) and a triplet by penalty: ⟨S²⟩ equal to the host run', async () => {
    const cases = [
      { file: 'N2_sto3g_R1.1A_block2.FCIDUMP', opts: { irrep: 1, nroots: 3 }, polish: 'df64' as const, where: /final vectors, df64 sums/ },
      { file: 'O2_cas12e8o_C1_dice.FCIDUMP', opts: { ms2: 2, nroots: 2 }, polish: 'host' as const, where: /host vectors uploaded/ },
      { file: 'N2_sto3g_R1.1A_block2.FCIDUMP', opts: { irrep: 1, nroots: 1, spin: { multiplicity: 3 } }, polish: 'host' as const, where: /host vectors uploaded/ },
    ];
    for (const { file, opts, polish, where } of cases) {
      const fd = await readFcidump(data(file));
      const common = { ...opts, solver: 'davidson' as const, workers: 0 };
      const host = await ciEnergies(fd, { ...common, hamiltonian: directHamiltonian({ threads: 1 }) });
      const logAt = gpu.ctx.pipelines.log.length;
      const dev = await ciEnergies(fd, { ...common, backend: gpuBackend(polish) as never, hamiltonian: gpuDirectHamiltonian(gpu.ctx, { threads: 1 }) as never });
      expect(dev.solver.converged).toBe(true);
      expect(dev.notes.join('\n')).toMatch(where);
      expect(dev.timings.spin).toBeGreaterThan(0);
      if (polish === 'df64') {
        // the ⟨S²⟩ kernel was compiled ahead of time (requested before the float32 solve), not blocking at the end
        const spinCompiles = gpu.ctx.pipelines.log.slice(logAt).filter((l) => l.key.startsWith('chem-direct-spin2:'));
        expect(spinCompiles.map((l) => l.mode)).toEqual(['async']);
      }
      for (let r = 0; r < opts.nroots; r++) {
        expect(Math.abs(dev.energies[r]! - host.energies[r]!)).toBeLessThan(1e-8);
        // both runs' vectors converged to 1e-8: ⟨S²⟩ agrees to second order in that
        expect(Math.abs(dev.s2[r]! - host.s2[r]!)).toBeLessThan(1e-9);
      }
      if ('spin' in opts) expect(Math.abs(dev.s2[0]! - 2)).toBeLessThan(1e-9);
    }
  });

  it('a device ⟨S²⟩ that fails (a lost device, say) leaves the energies and gives the host ⟨S²⟩, with a note', async () => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const failing = async (f: Fcidump, space: never, notes?: string[]) => {
      const h = await gpuDirectHamiltonian(gpu.ctx, { threads: 1 })(f, space, notes);
      h.spinSquared = async () => {
        throw new Error('device lost (test)');
      };
      return h;
    };
    const common = { irrep: 1, nroots: 2, solver: 'davidson' as const, workers: 0 };
    const host = await ciEnergies(fd, { ...common, hamiltonian: directHamiltonian({ threads: 1 }) });
    for (const polish of ['df64', 'host'] as const) {
      const r = await ciEnergies(fd, { ...common, backend: gpuBackend(polish) as never, hamiltonian: failing as never });
      expect(r.notes.join('\n')).toMatch(/⟨S²⟩ on the device failed \(device lost \(test\)\): computed on the host/);
      for (let k = 0; k < 2; k++) {
        expect(Math.abs(r.energies[k]! - host.energies[k]!)).toBeLessThan(1e-8);
        expect(Math.abs(r.s2[k]! - host.s2[k]!)).toBeLessThan(1e-9);
      }
    }
  });
});
