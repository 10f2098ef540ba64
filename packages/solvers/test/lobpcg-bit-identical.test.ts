import type { CsrMatrix, HostScalar, ScalarLike } from '@gpusparse/formats';
import { generators, HostOperator, HostVectorSpace } from '@gpusparse/formats';
import { describe, expect, it } from 'vitest';
import { lobpcg } from '../src/index';
import type { LobpcgOptions } from '../src/index';

/**
 * Golden record of LOBPCG on the host, taken from the code before lobpcgRun was split into
 * named steps (session 11, "no logic change"): the exact eigenvalue bits, iteration, matvec,
 * preconditioner and readback counts, the multiDot/combine/create/release counts and an FNV-1a
 * hash of every history value and of the returned eigenvectors. Any change of arithmetic, order
 * of operations or vector-space calls changes at least one of them.
 */
class CallCounter extends HostVectorSpace {
  multiDots = 0;
  combines = 0;
  creates = 0;
  releases = 0;
  override multiDot(xs: readonly Float64Array[], y: Float64Array): HostScalar[] {
    this.multiDots += xs.length + 1;
    return super.multiDot(xs, y);
  }
  override combine(c: readonly ScalarLike<HostScalar>[], xs: readonly Float64Array[], beta: ScalarLike<HostScalar>, y: Float64Array): void {
    this.combines += xs.length + 1;
    super.combine(c, xs, beta, y);
  }
  override create(n: number): Float64Array {
    this.creates++;
    return super.create(n);
  }
  override release(v: Float64Array): void {
    this.releases++;
    super.release(v);
  }
}

/** FNV-1a (32 bit) over the bytes of float64 values. */
function fnv(values: Iterable<number>): string {
  let h = 0x811c9dc5;
  const b = new Uint8Array(8);
  const d = new DataView(b.buffer);
  for (const v of values) {
    d.setFloat64(0, v, true);
    for (const byte of b) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** The exact bits of a float64, as 16 hex digits. */
function bits(v: number): string {
  const d = new DataView(new ArrayBuffer(8));
  d.setFloat64(0, v);
  return d.getBigUint64(0).toString(16).padStart(16, '0');
}

function diagonal(d: readonly number[]): CsrMatrix {
  const n = d.length;
  return { format: 'csr', rows: n, cols: n, rowPtr: Int32Array.from({ length: n + 1 }, (_, i) => i), colIdx: Int32Array.from({ length: n }, (_, i) => i), values: Float64Array.from(d) };
}

async function fingerprint(a: CsrMatrix, opts: LobpcgOptions<Float64Array>) {
  const space = new CallCounter();
  const r = await lobpcg(space, HostOperator.fromCsr(a), opts);
  return {
    reason: r.reason,
    iterations: r.iterations,
    values: r.values.map(bits),
    matvecs: r.stats.matvecs,
    precondApplies: r.stats.precondApplies,
    readbacks: r.stats.readbacks,
    multiDots: space.multiDots,
    combines: space.combines,
    creates: space.creates,
    releases: space.releases,
    history: fnv(r.history.flatMap((h) => [h.iteration, ...h.values, ...h.residualNorms])),
    vectors: fnv(r.vectors.flatMap((v) => [...v])),
  };
}

// a diagonal whose 3 smallest values form a cluster 1e-6 apart, then 2, 3, ...
const cluster = [1, 1 + 1e-6, 1 + 2e-6, ...Array.from({ length: 77 }, (_, i) => 2 + i)].reverse();
// Jacobi (exact inverse on a diagonal, shifted so it is not the exact solve of the eigenproblem)
const jacobi = HostOperator.fromCsr(diagonal(cluster.map((v) => 1 / (v + 0.5))));

const cases: [string, () => ReturnType<typeof fingerprint>, Awaited<ReturnType<typeof fingerprint>>][] = [
  ['1-D Laplacian n = 120, k = 4', () => fingerprint(generators.laplacian1d(120), { k: 4, tol: 1e-9, maxIterations: 3000 }),
    { reason: 'converged', iterations: 230, values: ['3f461680ffc085fe', '3f66158d0fad53f0', '3f78d675648b1579', '3f8611bda38f0c40'], matvecs: 616, precondApplies: 0, readbacks: 1098, multiDots: 38724, combines: 64774, creates: 7489, releases: 41650, history: 'cdee4422', vectors: '66e0cfd9' },
  ],
  ['diagonal with a cluster, k = 3, guard 2, Jacobi', () => fingerprint(diagonal(cluster), { k: 3, guard: 2, tol: 1e-10, maxIterations: 500, preconditioner: jacobi }),
    { reason: 'converged', iterations: 10, values: ['3ff0000000000001', '3ff000010c6f7a07', '3ff0000218def40c'], matvecs: 53, precondApplies: 45, readbacks: 49, multiDots: 3285, combines: 5410, creates: 541, releases: 3511, history: '938a5120', vectors: 'b26e4b7b' },
  ],
  ['2-D Laplacian 12², k = 4, guard 3 (soft-locking)', () => fingerprint(generators.poisson2d(12), { k: 4, guard: 3, tol: 1e-10, maxIterations: 500 }),
    { reason: 'converged', iterations: 49, values: ['3fbdc16d9f58609f', '3fd2618e33ce0861', '3fd2618e33ce086b', '3fdd52c0ffc5f918'], matvecs: 314, precondApplies: 0, readbacks: 253, multiDots: 30902, combines: 51732, creates: 3422, releases: 31983, history: 'f5420e62', vectors: '9598370e' },
  ],
  // session 14 (s14-harden-e): a run that does not converge then probes A's symmetry (eigen/symmetry-probe.ts):
  // 2 more products, 1 readback, 2 vectors created and 10 releases (4 vectors, 6 scalars); the run itself is unchanged
  ['2-D Laplacian 12², k = 4, stopped by maxIterations', () => fingerprint(generators.poisson2d(12), { k: 4, maxIterations: 7 }),
    { reason: 'max-iterations', iterations: 7, values: ['3fd36f418ad95276', '3fd5ba92aaa17f23', '3fe263cfde57dd8e', '3fe5d5659adb9677'], matvecs: 32 + 2, precondApplies: 0, readbacks: 27 + 1, multiDots: 976, combines: 1548, creates: 229 + 2, releases: 1121 + 10, history: '58360208', vectors: 'ea1da6fc' },
  ],
];

describe('lobpcg: bit-identical to the record taken before lobpcgRun was split', () => {
  for (const [name, run, golden] of cases) {
    it(name, async () => {
      const got = await run();
      expect(got).toEqual(golden);
    });
  }

  it('the guard case exercises soft-locking: fewer A·W products than block columns × iterations', () => {
    const soft = cases[2]![2];
    // nx = 7 initial products + 4 at the final check, then ≤ 7 per iteration before the last
    expect(soft.matvecs - 7 - 4).toBeLessThan(7 * (soft.iterations - 1));
  });
});
