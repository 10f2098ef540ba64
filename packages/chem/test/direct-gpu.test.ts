/**
 * The device direct σ (packages/chem/src/direct/gpu, float32 WGSL on lavapipe here) against the
 * host float64 direct σ and the explicit H: σ vectors equal to float32 rounding on FCI and CAS
 * spaces, D2h and C2v irreps, MS2 = 0, 2 and 3, permuted layouts, in-place and scaled products.
 */
import { GpuSparseError, HostOperator, NotSupportedError, ResourceLimitError } from '@gpusparse/formats';
import { Df64Blas, Df64VectorSpace, type GpuContext, gpuOperatorFromCsr } from '@gpusparse/gpu';
import { describe, expect, it } from 'vitest';
import { type CiBackend, ciEnergies } from '../src/ci';
import { buildCiSpace, type SpaceSpec } from '../src/determinants/build';
import { directHamiltonian } from '../src/direct/ci';
import { gpuAutoHamiltonian } from '../src/direct/gpu/auto';
import { checkGpuDirectFits, estimateGpuDirectBytes, type GpuDirectCiHamiltonian, gpuDirectHamiltonian } from '../src/direct/gpu/ci';
import { gpuDirectSigmaOperator } from '../src/direct/gpu/operator';
import { directSigmaOperator } from '../src/direct/operator';
import { readFcidump } from '../src/fcidump/node';
import { parseFcidump } from '../src/fcidump/parse';
import type { Fcidump } from '../src/fcidump/types';
import { assembleHamiltonian } from '../src/hamiltonian/assemble';
import { gpuTier, gpuTierSkipped } from './helpers/gpu-tier';
import { data, randomVector } from './helpers/vectors';

// part of the GPU tier (vitest.config.ts): skipped with it when no adapter appears
const gpu = gpuTier();

/**
 * An FCIDUMP of random integrals that obey D2h selection rules for orbital irreps `orbsym`
 * (1-based, XOR numbering): (ij|kl) ≠ 0 only when Γi⊗Γj⊗Γk⊗Γl = Ag, h_ij only when Γi = Γj.
 */
function randomD2hFcidump(orbsym: number[], nelec: number, seed: number): Fcidump {
  const n = orbsym.length;
  const g = orbsym.map((x) => x - 1);
  let s = seed >>> 0;
  const rnd = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
  const lines = [`&FCI NORB=${n},NELEC=${nelec},MS2=0,`, `ORBSYM=${orbsym.join(',')},`, 'ISYM=1,', '&END'];
  for (let i = 1; i <= n; i++) {
    for (let j = 1; j <= i; j++) {
      for (let k = 1; k <= n; k++) {
        for (let l = 1; l <= k; l++) {
          if ((i - 1) * n + (j - 1) < (k - 1) * n + (l - 1)) continue; // 8-fold unique: ij ≥ kl
          if ((g[i - 1]! ^ g[j - 1]! ^ g[k - 1]! ^ g[l - 1]!) !== 0) continue;
          lines.push(`${(i === j && k === l ? 0.5 + 0.2 * rnd() : 0.1 * rnd()).toExponential(12)} ${i} ${j} ${k} ${l}`);
        }
      }
    }
  }
  for (let i = 1; i <= n; i++) for (let j = 1; j <= i; j++) if (g[i - 1] === g[j - 1]) lines.push(`${(i === j ? -2 + 0.3 * i : 0.2 * rnd()).toExponential(12)} ${i} ${j} 0 0`);
  lines.push('1.5 0 0 0 0');
  return parseFcidump(lines.join('\n'), { file: 'random-d2h' });
}

/** max |a − b| / max |b|. */
function relDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let scale = 0;
  let diff = 0;
  for (let i = 0; i < b.length; i++) {
    scale = Math.max(scale, Math.abs(b[i]!));
    diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
  }
  return diff / scale;
}

/** Device σ vs host float64 direct σ (and, small spaces, the explicit H) on a random vector. */
async function compare(fd: Fcidump, spec: SpaceSpec, opts: { irrep?: number; ms2?: number; referenceLevel?: number }, explicit = false) {
  const { fcidump, space } = buildCiSpace(fd, spec, opts);
  const host = await directSigmaOperator(fcidump, space);
  const dev = gpuDirectSigmaOperator(gpu.ctx, fcidump, space, { stageIntegrals: true });
  const unstaged = gpuDirectSigmaOperator(gpu.ctx, fcidump, space);
  try {
    const c = randomVector(space.size, 11);
    const want = new Float64Array(space.size);
    host.apply(c, want);
    const x = gpu.vs.fromArray(c);
    const y = gpu.vs.create(space.size);
    dev.apply(x, y);
    const got = await gpu.vs.toArray(y);
    unstaged.apply(x, y);
    const got2 = await gpu.vs.toArray(y);
    gpu.vs.release(x);
    gpu.vs.release(y);
    let rel = Math.max(relDiff(got, want), relDiff(got2, want));
    expect(unstaged.label).not.toMatch(/staged/);
    if (explicit) {
      const h = await assembleHamiltonian(fcidump, space, { workers: 0 });
      const e = new Float64Array(space.size);
      HostOperator.fromCsr(h.matrix).apply(c, e);
      rel = Math.max(rel, relDiff(got, e));
    }
    const d = dev.diagonal();
    const hd = host.diagonal();
    return { size: space.size, rel, diagSame: d.every((v, i) => v === hd[i]), label: dev.label };
  } finally {
    host.dispose();
    dev.dispose();
    unstaged.dispose();
  }
}

describe.skipIf(gpuTierSkipped)('device direct σ (float32) = host float64 direct σ', () => {
  it('H8/STO-6G FCI (4900 dets): no symmetry and the Ag block; also the explicit H', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const all = await compare(fd, 'fci', {}, true);
    expect(all.size).toBe(4900);
    expect(all.label).toMatch(/integrals staged/);
    expect(all.rel).toBeLessThan(2e-6);
    expect(all.diagSame).toBe(true);
    const ag = await compare(fd, 'fci', { irrep: 1 });
    expect(ag.size).toBeLessThan(4900);
    expect(ag.rel).toBeLessThan(2e-6);
  });

  it.each([1, 4, 6, 8])('N2/STO-3G FCI, D2h irrep %i (MS2 = 0)', async (irrep) => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const r = await compare(fd, 'fci', { irrep });
    expect(r.rel).toBeLessThan(2e-6);
  });

  it('O2 CAS(12e,8o) C1: MS2 = 2, and MS2 = 0 with the space permuted by excitation level', async () => {
    const fd = await readFcidump(data('O2_cas12e8o_C1_dice.FCIDUMP'));
    const t = await compare(fd, 'fci', { ms2: 2 }, true);
    expect(t.rel).toBeLessThan(2e-6);
    const p = await compare(fd, 'fci', { referenceLevel: 2 });
    expect(p.size).toBe(784);
    expect(p.label).toMatch(/permuted/);
    expect(p.rel).toBeLessThan(2e-6);
  });

  it('C4 CAS(8e,12o) MS2 = 3 (B3u block) and N2 CAS(6e,6o) in a frozen-core FCIDUMP, MS2 = 2', async () => {
    const c4 = await readFcidump(data('C4_sto3g_cas8e12o_spin3_dice.FCIDUMP'));
    expect((await compare(c4, 'fci', { irrep: 2 })).rel).toBeLessThan(2e-6);
    const n2 = await readFcidump(data('N2_sto3g_R2.06bohr_chemps2.FCIDUMP'));
    expect((await compare(n2, { kind: 'cas', electrons: 6, orbitals: 6 }, { ms2: 2 }, true)).rel).toBeLessThan(2e-6);
  });

  it('a full product space of D2h orbitals groups the α–β work by pair irrep; labels the integrals break fall back to one group', async () => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const all = await compare(fd, 'fci', {});
    expect(all.label).toMatch(/pairs by irrep/);
    expect(all.rel).toBeLessThan(2e-6);
    // the same integrals under labels they do not obey: every pair in one group, the same σ
    const wrong = { ...fd, orbsym: fd.orbsym.map((g, i) => (i === 0 ? (g === 1 ? 2 : 1) : g)) } as Fcidump;
    const one = await compare(wrong, 'fci', {});
    expect(one.label).toMatch(/one pair group/);
    expect(one.rel).toBeLessThan(2e-6);
    const lz = await compare(await readFcidump(data('H2_ccpvtz_Lz_hande.FCIDUMP')), 'fci', {});
    expect(lz.size).toBe(784);
    expect(lz.rel).toBeLessThan(2e-6);
  });

  it.each([
    [0, [1, 3, 6]],
    [2, [2, 5]],
    [4, [8]],
  ] as const)('random D2h integrals (7 orbitals, 6 electrons), MS2 = %i, irreps %j: equal to the explicit H', async (ms2, irreps) => {
    const fd = randomD2hFcidump([1, 2, 3, 4, 1, 5, 8], 6, 99 + ms2);
    for (const irrep of irreps) {
      const r = await compare(fd, 'fci', { ms2, irrep }, true);
      expect(r.size).toBeGreaterThan(0);
      expect(r.rel).toBeLessThan(2e-6);
    }
  });

  it('applyScaled (y = α·H·x + β·y) and in place (x is y) agree with apply', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    for (const opts of [{ irrep: 1 }, { referenceLevel: 2 }]) {
      const { fcidump, space } = buildCiSpace(fd, 'fci', opts);
      const dev = gpuDirectSigmaOperator(gpu.ctx, fcidump, space);
      const n = space.size;
      const c = randomVector(n, 3);
      const y0 = randomVector(n, 5);
      const x = gpu.vs.fromArray(c);
      const hx = gpu.vs.create(n);
      dev.apply(x, hx);
      const h = await gpu.vs.toArray(hx);
      const y = gpu.vs.fromArray(y0);
      dev.applyScaled(-0.5, x, 2, y);
      const scaled = await gpu.vs.toArray(y);
      const want = h.map((v, i) => -0.5 * v + 2 * y0[i]!);
      expect(relDiff(scaled, want)).toBeLessThan(1e-6);
      dev.applyScaled(1, x, 0, x); // x ← H·x
      expect(relDiff(await gpu.vs.toArray(x), h)).toBeLessThan(1e-7);
      for (const v of [x, hx, y]) gpu.vs.release(v);
      dev.dispose();
    }
  });
});

function gpuBackend(polish: 'none' | 'foreign' | 'df64' = 'none'): CiBackend<unknown, unknown> {
  const df64 = async () => {
    const space = (await Df64VectorSpace.of(gpu.ctx))!;
    return { space, precision: 'df64 (test)', operator: () => { throw new Error('the direct path must bring its own df64 operator'); }, fromFast: (v: never) => space.fromGpu(v), toFast: (p: never, sc: number) => space.toNewGpu(p, sc) };
  };
  return {
    space: gpu.vs as never,
    operator: (m) => gpuOperatorFromCsr(gpu.ctx, m, { kernel: 'csr-vector' }) as never,
    // 'foreign': a device polish space the direct operator has no product in; the driver must say so
    ...(polish === 'foreign' ? { devicePolish: async () => ({ precision: 'foreign (test)', space: {} }) as never } : {}),
    ...(polish === 'df64' ? { devicePolish: df64 as never } : {}),
  };
}

describe.skipIf(gpuTierSkipped)('device direct σ in df64 = host float64 direct σ', () => {
  it.each([
    ['H8 Ag', 'H8_sto6g_R1.8_block2.FCIDUMP', { irrep: 1 }],
    ['O2 CAS(12e,8o) MS2 = 2', 'O2_cas12e8o_C1_dice.FCIDUMP', { ms2: 2 }],
    ['O2 permuted layout', 'O2_cas12e8o_C1_dice.FCIDUMP', { referenceLevel: 2 }],
  ] as const)('%s: σ to 1e-12 relative, and α·H·x + β·y', async (_name, file, opts) => {
    const fd = await readFcidump(data(file));
    const { fcidump, space } = buildCiSpace(fd, 'fci', opts);
    const d = await Df64Blas.of(gpu.ctx);
    expect(d).toBeDefined(); // lavapipe passes the df64 self-test
    const f32 = gpuDirectSigmaOperator(gpu.ctx, fcidump, space, { stageIntegrals: _name !== 'H8 Ag' });
    expect(f32.label).toMatch(_name === 'H8 Ag' ? /one pair group|pairs by irrep\)/ : /integrals staged/);
    const op = f32.df64(d!);
    const host = await directSigmaOperator(fcidump, space);
    const n = space.size;
    const c = randomVector(n, 17);
    const y0 = randomVector(n, 19);
    const want = new Float64Array(n);
    host.apply(c, want);
    const x = d!.fromFloat64(c);
    const y = d!.create(n);
    op.apply(x, y);
    expect(relDiff(await d!.toFloat64(y), want)).toBeLessThan(1e-12);
    d!.write(y, y0);
    op.applyScaled(0.75, x, -1.5, y);
    expect(relDiff(await d!.toFloat64(y), want.map((v, i) => 0.75 * v - 1.5 * y0[i]!))).toBeLessThan(1e-12);
    expect(op.diagonal()).toBe(f32.diagonal());
    x.buf.dispose();
    y.buf.dispose();
    op.dispose();
    f32.dispose();
    host.dispose();
  });
});

describe.skipIf(gpuTierSkipped)('CI driver with the device direct σ', () => {
  it('H8 Ag (3 roots) and O2 CAS(12e,8o) MS2 = 2 (2 roots): energies equal the host direct σ to 1e-8 Eh after the df64 device polish and after the host polish', async () => {
    const cases = [
      { file: 'H8_sto6g_R1.8_block2.FCIDUMP', opts: { irrep: 1, nroots: 3 } },
      { file: 'O2_cas12e8o_C1_dice.FCIDUMP', opts: { ms2: 2, nroots: 2 } },
    ];
    for (const { file, opts } of cases) {
      const fd = await readFcidump(data(file));
      const common = { ...opts, solver: 'davidson' as const, workers: 0 };
      const host = await ciEnergies(fd, { ...common, hamiltonian: directHamiltonian() });
      const dev = await ciEnergies(fd, { ...common, backend: gpuBackend('foreign') as never, hamiltonian: gpuDirectHamiltonian(gpu.ctx, { threads: 1 }) as never });
      const df = await ciEnergies(fd, { ...common, backend: gpuBackend('df64') as never, hamiltonian: gpuDirectHamiltonian(gpu.ctx, { threads: 1 }) as never });
      expect(df.solver.converged).toBe(true);
      expect(df.solver.method).toMatch(/float32.*df64 \(test\) polish/);
      expect(dev.solver.converged).toBe(true);
      expect(dev.solver.method).toMatch(/float32.*float64 polish/);
      expect(dev.format).toMatch(/direct-sigma/);
      expect(dev.notes.join('\n')).toMatch(/direct σ on the device .* B per determinant/);
      expect(dev.notes.join('\n')).toMatch(/float64 polish on the host: the operator of options.hamiltonian has no product in the device polish's space/);
      for (let r = 0; r < opts.nroots; r++) {
        expect(Math.abs(df.energies[r]! - host.energies[r]!)).toBeLessThan(1e-8);
        expect(df.residualNorms[r]).toBeLessThan(1e-8);
        expect(Math.abs(df.s2[r]! - host.s2[r]!)).toBeLessThan(1e-6);
        expect(Math.abs(dev.energies[r]! - host.energies[r]!)).toBeLessThan(1e-8);
        expect(dev.residualNorms[r]).toBeLessThan(1e-8);
        expect(Math.abs(dev.s2[r]! - host.s2[r]!)).toBeLessThan(1e-6);
      }
    }
  });

  it('sigma auto on the device: explicit when the timed σ loses to the modelled assembly, direct when the explicit H would not fit', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const opts = { irrep: 1, nroots: 1, solver: 'davidson' as const, workers: 0, backend: gpuBackend() as never };
    const ref = -4.3450794027;
    // 10^6 products: the measured σ times 10^6 exceeds any assembly of this small H
    const explicit = await ciEnergies(fd, { ...opts, hamiltonian: gpuAutoHamiltonian(gpu.ctx, { products: 1e6, threads: 1 }) as never });
    expect(explicit.notes.join('\n')).toMatch(/sigma auto: explicit — σ measured [\d.]+ ms on the device × 1000000 products/);
    expect(explicit.nnz).toBeGreaterThan(0);
    expect(Math.abs(explicit.energies[0]! - ref)).toBeLessThan(1e-8);
    // a device just large enough for the direct run: the explicit H (12 B per non-zero) would not fit
    const { space } = buildCiSpace(fd, 'fci', { irrep: 1 });
    const deviceBytes = 2 * estimateGpuDirectBytes(fd, space, 1).total;
    const direct = await ciEnergies(fd, { ...opts, hamiltonian: gpuAutoHamiltonian(gpu.ctx, { products: 1e6, threads: 1, deviceBytes }) as never });
    expect(direct.notes.join('\n')).toMatch(/sigma auto: direct — the explicit H would need .* GB of the device's/);
    expect(direct.nnz).toBe(0);
    expect(Math.abs(direct.energies[0]! - ref)).toBeLessThan(1e-8);
  });

  it("refuses polish 'device' in a space the operator has no product in, and a factory without a host operator", async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const opts = { irrep: 1, nroots: 1, solver: 'davidson' as const, workers: 0 };
    await expect(ciEnergies(fd, { ...opts, backend: gpuBackend('foreign') as never, polish: 'device', hamiltonian: gpuDirectHamiltonian(gpu.ctx, { threads: 1 }) as never })).rejects.toThrow(/no product in the device polish's space/);
    const deviceOnly = async (f: Fcidump, s: Parameters<ReturnType<typeof gpuDirectHamiltonian>>[1]) => ({ ...(await gpuDirectHamiltonian(gpu.ctx, { threads: 1 })(f, s)), host: undefined });
    await expect(ciEnergies(fd, { ...opts, backend: gpuBackend() as never, hamiltonian: deviceOnly as never })).rejects.toThrow(NotSupportedError);
  });

  it('builds the host float64 direct σ only for a host polish, not when the df64 polish runs', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const opts = { irrep: 1, nroots: 2, solver: 'davidson' as const, workers: 0 };
    const made: GpuDirectCiHamiltonian[] = [];
    const factory = gpuDirectHamiltonian(gpu.ctx, { threads: 1, roots: 3 });
    const keep = async (f: Fcidump, s: Parameters<typeof factory>[1], notes: string[]) => {
      const h = await factory(f, s, notes);
      made.push(h);
      return h;
    };
    const df = await ciEnergies(fd, { ...opts, backend: gpuBackend('df64') as never, hamiltonian: keep as never });
    expect(df.solver.method).toMatch(/df64 \(test\) polish/);
    expect(made[0]!.hostBuilt).toBe(false);
    expect(df.notes.join('\n')).not.toMatch(/host float64 direct σ built/);
    expect(df.notes.join('\n')).toMatch(/device memory estimate: [\d.]+ GB \(\d+ B per determinant\)/);
    const host = await ciEnergies(fd, { ...opts, backend: gpuBackend('foreign') as never, hamiltonian: keep as never });
    expect(made[1]!.hostBuilt).toBe(true);
    expect(host.notes.join('\n')).toMatch(/host float64 direct σ built for the polish in [\d.]+ s \(1 thread\)/);
    for (let r = 0; r < 2; r++) expect(Math.abs(df.energies[r]! - host.energies[r]!)).toBeLessThan(1e-8);
    // used before it is built: a named error, not a silent zero product
    const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep: 1 });
    const h = await factory(fcidump, space);
    expect(() => h.host!.apply(new Float64Array(space.size), new Float64Array(space.size))).toThrow(GpuSparseError);
    (h.host as unknown as { dispose(): void }).dispose();
  });

  it('refuses a space whose device estimate or one df64 vector does not fit, naming the bytes', async () => {
    const fd = await readFcidump(data('H8_sto6g_R1.8_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep: 1 });
    const e = estimateGpuDirectBytes(fcidump, space, 3);
    const small = gpuDirectHamiltonian(gpu.ctx, { threads: 1, roots: 3, deviceBytes: e.total - 1 });
    const err = await small(fcidump, space).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(ResourceLimitError);
    expect((err as ResourceLimitError).bytesNeeded).toBe(e.total);
    expect((err as Error).message).toMatch(/device memory estimate: .* float32 Davidson .* df64 polish/);
    const fits = await gpuDirectHamiltonian(gpu.ctx, { threads: 1, roots: 3, deviceBytes: e.total })(fcidump, space);
    (fits.host as unknown as { dispose(): void }).dispose();
    const tiny = { limits: { maxStorageBufferBindingSize: 8 * space.size - 8, maxBufferSize: 2 ** 30 } } as GpuContext;
    await expect(checkGpuDirectFits(tiny, fcidump, space, { hostBytes: 2 ** 40 })).rejects.toThrow(/one df64 vector \(8 B per determinant\) in one storage binding/);
    await expect(checkGpuDirectFits(gpu.ctx, fcidump, space, { hostBytes: 1000 })).rejects.toThrow(ResourceLimitError);
  });
});

describe('device direct σ memory estimate', () => {
  it('N2 6-31G CAS(10e,16o) without point-group symmetry (C(16,5)² = 19 079 424 determinants) fits one 80 GB GPU; per-part bytes add up', () => {
    const strings = { count: 4368 };
    const space = { size: 4368 * 4368, alpha: strings, beta: strings, nalpha: 5, nbeta: 5 } as unknown as Parameters<typeof estimateGpuDirectBytes>[1];
    const fd = { norb: 16 } as Fcidump;
    for (const k of [1, 3, 7]) {
      const e = estimateGpuDirectBytes(fd, space, k);
      expect(e.determinants).toBe(19_079_424);
      expect(e.total).toBe(e.tables + e.integrals + Math.max(e.davidson, e.polish));
      // float32 Davidson: 2·(12 + 4(k − 1)) + 2k vectors of 4 B
      expect(e.davidson).toBe(4 * e.determinants * (2 * (12 + 4 * (k - 1)) + 2 * k));
      expect(e.largestBuffer).toBe(8 * e.determinants);
      expect(e.total).toBeLessThan(80e9);
    }
    // the 6-root run (k = 7) needs the most: about 17 GB, under a quarter of an H100
    expect(estimateGpuDirectBytes(fd, space, 7).total).toBeLessThan(20e9);
  });
});
