/**
 * Fixed costs of a host direct-σ CI run: float64Energies on a time-reversal direct operator does
 * one product on the half space (Qᵀ H Q) instead of one over the whole space, with the same
 * quotient and residual as the full product (also for vectors with a part of the other spin
 * parity); the sizing step samples no non-zeros of H for a factory that stores none.
 */
import { HostOperator } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { ciEnergies } from '../src/ci';
import { float64Energies } from '../src/ci-phases';
import type { CiEstimate } from '../src/memory-estimate';
import { directHamiltonian } from '../src/direct/ci';
import { buildCiSpace } from '../src/determinants/build';
import { directSigmaOperator } from '../src/direct/operator';
import { readFcidump } from '../src/fcidump/node';
import { data, randomVector } from './helpers/vectors';

describe('float64Energies with the time-reversal half space', () => {
  it.each([
    ['even', 1],
    ['odd', 6],
  ] as const)('N2/STO-3G, %s spins, irrep %i: half-space product, same E and ‖r‖ as the full product', async (parity, irrep) => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const { fcidump, space } = buildCiSpace(fd, 'fci', { irrep });
    const op = await directSigmaOperator(fcidump, space, { timeReversal: parity });
    const half = op.half!;
    const calls = { full: 0, half: 0 };
    // the same operator, counting which product runs (the full one through the object, the half one through `half`)
    const counted = {
      ...op,
      apply: (x: Float64Array, y: Float64Array) => {
        calls.full++;
        op.apply(x, y);
      },
      half: {
        ...half,
        apply: (x: Float64Array, y: Float64Array) => {
          calls.half++;
          half.apply(x, y);
        },
      },
    };
    const plain = HostOperator.fromFunction(space.size, space.size, (x, y) => op.apply(x, y), 'full product');
    // in the parity (as the solver's vectors), and with a part of the other parity (rounding, or any start)
    const clean = half.expand(randomVector(half.rows, 3));
    const mixed = half.expand(randomVector(half.rows, 4)).map((v, i) => v + 0.3 * randomVector(space.size, 5)[i]!);
    const got = float64Energies(counted, [clean.slice(), mixed.slice()], undefined, fd.ecore);
    expect(calls).toEqual({ full: 0, half: 2 });
    const want = float64Energies(plain, [clean.slice(), mixed.slice()], undefined, fd.ecore);
    for (let r = 0; r < 2; r++) {
      expect(Math.abs(got.energies[r]! - want.energies[r]!)).toBeLessThan(1e-12);
      expect(Math.abs(got.residualNorms[r]! - want.residualNorms[r]!)).toBeLessThan(1e-12 * Math.max(1, want.residualNorms[r]!));
    }
    expect(want.residualNorms[1]).toBeGreaterThan(1e-3); // a real residual, not a trivial agreement
    op.dispose();
  });
});

describe('sizing a direct run', () => {
  it('samples no non-zeros of H for the host direct σ (it stores none); the explicit run still does; same energy', async () => {
    const fd = await readFcidump(data('N2_sto3g_R1.1A_block2.FCIDUMP'));
    const run = async (direct: boolean) => {
      let est: CiEstimate | undefined;
      const r = await ciEnergies(fd, { irrep: 1, workers: 0, ...(direct ? { hamiltonian: directHamiltonian() } : {}), onProgress: (p) => void (p.stage === 'estimate' && (est = p.estimate)) });
      return { est: est!, e: r.energies[0]! };
    };
    const direct = await run(true);
    const explicit = await run(false);
    expect(direct.est.nnz.rowsSampled).toBe(0);
    expect(direct.est.nnz.method).toMatch(/not sampled/);
    expect(explicit.est.nnz.rowsSampled).toBeGreaterThan(0);
    expect(Math.abs(direct.e - explicit.e)).toBeLessThan(1e-8);
  });
});

describe('the package index on a CPU run', () => {
  it('does not load @gpusparse/gpu statically (its GPU factories load it on first call)', async () => {
    const { readFileSync, existsSync } = await import('node:fs');
    const { dirname, resolve } = await import('node:path');
    const { fileURLToPath } = await import('node:url');
    const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src');
    const seen = new Set<string>();
    const reached: string[] = [];
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      // static imports and re-exports that stay in the JavaScript (verbatimModuleSyntax: all but `import type` / `export type`)
      for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?[^'";]*?\s*from\s+'([^']+)'/gms)) {
        if (m[1] !== undefined) continue;
        const spec = m[2]!;
        if (spec === '@gpusparse/gpu') reached.push(file.slice(src.length + 1));
        if (!spec.startsWith('.')) continue;
        const base = resolve(dirname(file), spec);
        const next = [`${base}.ts`, `${base}/index.ts`].find((p) => existsSync(p));
        if (next) visit(next);
      }
    };
    visit(resolve(src, 'index.ts'));
    expect(seen.size).toBeGreaterThan(30); // the walk followed the index's modules
    expect(reached).toEqual([]);
    // the factories the CLI uses stay on the index (as lazy wrappers)
    const index = await import('../src/index');
    expect(typeof index.gpuDirectHamiltonian).toBe('function');
    expect(typeof index.gpuAutoHamiltonian).toBe('function');
    expect(() => index.gpuAutoHamiltonian({} as never, { products: 0 })).toThrow(/products/);
  });
});
