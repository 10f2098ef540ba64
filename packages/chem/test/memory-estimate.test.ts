import { ResourceLimitError } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { readFcidump } from '../src/fcidump/node';
import { dataFile } from '../../../testdata/index';
import { cpuMs } from '../../../scripts/test/cpu-time';
import {
  assembleHamiltonian,
  buildCiSpace,
  ciEnergies,
  countSpace,
  estimateCi,
  estimateCiEnergies,
  estimateNnz,
  fciSpace,
  prepareCiSpace,
  truncatedSpace,
} from '../src/index';

const file = (name: string) => dataFile('fcidump', name);

describe('determinant counting without building the space', () => {
  it('counts FCI sectors exactly, per irrep', () => {
    const orbsym = Int32Array.of(1, 2, 3, 4, 5, 6, 7, 8, 1, 3);
    for (const irrep of [1, 2, 5, 8]) {
      const built = fciSpace(10, 4, 3, { orbsym, irrep }).size;
      const counted = countSpace({ norb: 10, nalpha: 4, nbeta: 3, irreps: Array.from(orbsym, (s) => s - 1), target: irrep - 1 }).determinants;
      expect(counted).toBe(built);
    }
    expect(countSpace({ norb: 18, nalpha: 5, nbeta: 5, irreps: new Array(18).fill(0), target: 0 }).determinants).toBe(8568 * 8568);
  });

  it('counts truncated CI spaces exactly, per level and irrep', () => {
    const orbsym = Int32Array.of(1, 2, 1, 3, 4, 1, 2, 3, 4, 1, 1);
    const reference = { alpha: [0, 1, 2, 3], beta: [0, 1, 2] };
    for (const level of [1, 2, 3]) {
      for (const irrep of [undefined, 1, 3]) {
        const opts = irrep === undefined ? {} : { orbsym, irrep };
        const built = truncatedSpace(11, level, reference, opts).size;
        const irreps = irrep === undefined ? new Array(11).fill(0) : Array.from(orbsym, (s) => s - 1);
        const counted = countSpace({ norb: 11, nalpha: 4, nbeta: 3, irreps, target: irrep === undefined ? 0 : irrep - 1, level, reference }).determinants;
        expect(counted).toBe(built);
      }
    }
  });

  it('samples determinants that belong to the space', () => {
    const orbsym = Int32Array.of(1, 2, 3, 4, 5, 6, 7, 8, 1, 3);
    const c = countSpace({ norb: 10, nalpha: 4, nbeta: 3, irreps: Array.from(orbsym, (s) => s - 1), target: 4 });
    let x = 1;
    const rand = () => ((x = (x * 48271) % 2147483647) / 2147483647);
    for (let i = 0; i < 200; i++) {
      const d = c.sample(rand);
      expect(d.alpha.length).toBe(4);
      expect(d.beta.length).toBe(3);
      let g = 0;
      for (const p of [...d.alpha, ...d.beta]) g ^= orbsym[p]! - 1;
      expect(g).toBe(4);
    }
  });
});

describe('sampled nnz of H', () => {
  for (const [name, spec, opts] of [
    ['H8_sto6g_R1.8_block2.FCIDUMP', 'fci', {}],
    ['Hubbard1D_L8_U2_block2.FCIDUMP', 'fci', {}],
    ['Ne_ccpvdz_hande.FCIDUMP', { kind: 'ci', level: 3 }, { irrep: 1 }],
    ['He2_dice.FCIDUMP', 'fci', { irrep: 1 }],
  ] as const) {
    it(`is within 6 % (and 4 standard errors) of the assembled count: ${name}`, async () => {
      const fd = await readFcidump(file(name));
      const prepared = prepareCiSpace(fd, spec, opts);
      const { space, fcidump } = buildCiSpace(fd, spec, opts, prepared);
      const h = await assembleHamiltonian(fcidump, space, { workers: 0 });
      const counted = countSpace({
        norb: fcidump.norb,
        nalpha: prepared.nalpha,
        nbeta: prepared.nbeta,
        irreps: prepared.irrep === undefined ? new Array(fcidump.norb).fill(0) : Array.from(fcidump.orbsym, (s) => s - 1),
        target: (prepared.irrep ?? 1) - 1,
        ...(prepared.kind === 'ci' ? { level: prepared.level!, reference: prepared.reference } : {}),
      });
      expect(counted.determinants).toBe(space.size);
      const e = estimateNnz(fcidump, counted);
      expect(Math.abs(e.nnz - h.stats.nnz) / h.stats.nnz).toBeLessThan(0.06);
      expect(Math.abs(e.nnz - h.stats.nnz)).toBeLessThanOrEqual(4 * e.stderr + 1);
    });
  }
});

describe('memory sizing and refusal', () => {
  it('sizes the 2.4·10^6-determinant N2 CAS(10e,16o) Ag sector in well under a second (host peak > 24 GB)', async () => {
    const t = cpuMs(); // CPU time: a loaded machine's wait is not work
    const e = await estimateCiEnergies(file('N2_631g_cas10e16o_block2_NOREF.FCIDUMP'), { irrep: 1, backend: 'host', nroots: 1, workers: 0 });
    expect(cpuMs() - t).toBeLessThan(3000);
    expect(e.estimate.determinants).toBe(2388528);
    expect(e.estimate.nnz.nnz).toBeGreaterThan(1.2e9);
    expect(e.estimate.nnz.nnz).toBeLessThan(1.5e9);
    expect(e.estimate.peakHost).toBeGreaterThan(24e9);
    const n2 = await readFcidump(file('N2_631g_cas10e16o_block2_NOREF.FCIDUMP'));
    const dev = estimateCi(prepareCiSpace(n2, 'fci', { irrep: 1 }), { backend: 'device', kSolve: 7, workers: 0, chunked: { chunkNnz: 1 << 24 } }, { host: { bytes: 128e9, source: 'test' }, device: { bytes: 80e9, source: 'test' } });
    // float32 CSR on the device: 8 bytes per non-zero (+ vectors)
    expect(dev.peakDevice).toBeGreaterThan(8 * 1.2e9);
    expect(dev.peakDevice).toBeLessThan(80e9);
    // the df64 polish on the device: no float64 H on the host (12 B/nnz less at the peak), and
    // 4 B/nnz of low parts plus df64 vectors on the device
    const df = estimateCi(prepareCiSpace(n2, 'fci', { irrep: 1 }), { backend: 'device', kSolve: 7, workers: 0, chunked: { chunkNnz: 1 << 24 }, polish: 'device' }, { host: { bytes: 128e9, source: 'test' }, device: { bytes: 80e9, source: 'test' } });
    expect(df.peakHost).toBeLessThan(dev.peakHost - 12 * 1.2e9);
    expect(df.peakHost).toBeLessThan(24e9);
    expect(df.peakDevice).toBeGreaterThan(12 * 1.2e9);
    expect(df.peakDevice).toBeLessThan(80e9);
    expect(df.stages.map((x) => x.stage)).toEqual(['space', 'assembly', 'solve', 'polish']);
    expect(df.stages.at(-1)!.what).toMatch(/df64/);
    // measured on the H100 (2026-11-25, 15 workers + the main thread, 2^24-non-zero chunks): peak
    // resident 10.7 GB; the estimate must not be below what the run used
    const h100 = estimateCi(prepareCiSpace(n2, 'fci', { irrep: 1 }), { backend: 'device', kSolve: 7, workers: 15, chunked: { chunkNnz: 1 << 24 }, polish: 'device' }, { host: { bytes: 128e9, source: 'test' }, device: { bytes: 80e9, source: 'test' } });
    expect(h100.peakHost).toBeGreaterThan(10.7e9);
  });

  it('refuses a run that does not fit before building the space, naming bytes and what to change', async () => {
    const fd = await readFcidump(file('He2_dice.FCIDUMP'));
    const all = await estimateCiEnergies(fd, { backend: 'host', workers: 0 });
    const ag = await estimateCiEnergies(fd, { irrep: 1, backend: 'host', workers: 0 });
    expect(ag.estimate.peakHost).toBeLessThan(all.estimate.peakHost / 2);
    const limit = Math.sqrt(ag.estimate.peakHost * all.estimate.peakHost);
    const t = cpuMs();
    const err = await ciEnergies(fd, { memory: { hostBytes: limit }, workers: 0 }).catch((e) => e);
    expect(cpuMs() - t).toBeLessThan(2000);
    expect(err).toBeInstanceOf(ResourceLimitError);
    expect(err.bytesAvailable).toBe(limit);
    expect(err.bytesNeeded).toBe(all.estimate.peakHost);
    expect(err.message).toMatch(/host memory at stage/);
    expect(err.message).toMatch(/irrep/);
    // the same run with its irrep selected fits and runs
    const r = await ciEnergies(fd, { irrep: 1, memory: { hostBytes: limit }, workers: 0 });
    expect(r.energies[0]).toBeCloseTo(-5.76217597349, 8);
  });

  it('refuses on the device side with the device figure', async () => {
    const fd = await readFcidump(file('H8_sto6g_R1.8_block2.FCIDUMP'));
    const p = prepareCiSpace(fd, 'fci', {});
    const e = estimateCi(p, { backend: 'device', kSolve: 2, workers: 0 }, { host: { bytes: 1e12, source: 'test' }, device: { bytes: 1000, source: 'test device' } });
    const { checkCiMemory } = await import('../src/memory-estimate');
    expect(() => checkCiMemory(e, p, { backend: 'device', kSolve: 2, workers: 0 })).toThrow(/device memory at stage .*test device/);
  });
});
