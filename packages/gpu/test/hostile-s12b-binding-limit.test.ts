/**
 * Session 12: matrices whose arrays pass one storage binding (NVIDIA: 2 GiB − 4 B), emulated on
 * lavapipe. `maxBindingBytes` only lowered the planning limit — a kernel binding more than it
 * still ran, as the device's own limit allowed — so a kernel that forgot to split could not be
 * caught below 2 GiB. A strict cap (`capBindings(bytes, true)`, what GPUSPARSE_MAX_BINDING_BYTES
 * asks for) also lowers the limit every binding is checked against: a binding past it is a
 * ResourceLimitError, as on a device with that limit. Every registered kernel, the tuner and the
 * df64 operator built in slices then either split (right products) or refuse up front.
 */
import { csrSpmv, generators as g, HostOperator, InvalidParameterError } from '@gpusparse/formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cg } from '../../solvers/src/index';
import { createGpuContext, Df64CsrOperator, Df64VectorSpace, envBindingCap, type GpuContext, gpuOperatorFromCsr, GpuVectorSpace, kernels, tunedOperator } from '../src/index';
import { checkKernel } from '../src/testing/conformance';

/** Above the fixed 262 kB buffers (BLAS-1 scalars, the df64 self-test); 1/7000 of NVIDIA's limit. */
const CAP = 300_000;
let ctx: GpuContext;
beforeAll(async () => {
  ctx = await createGpuContext();
  ctx.capBindings(CAP, true);
});
afterAll(() => ctx.dispose());

describe('GPUSPARSE_MAX_BINDING_BYTES', () => {
  it('unset or empty: none; an integer ≥ 256: that many bytes; anything else names the variable', () => {
    expect(envBindingCap({})).toBeUndefined();
    expect(envBindingCap({ GPUSPARSE_MAX_BINDING_BYTES: '' })).toBeUndefined();
    expect(envBindingCap({ GPUSPARSE_MAX_BINDING_BYTES: ' 1048576 ' })).toBe(1048576);
    for (const bad of ['1e6', '-5', '100', 'abc', '2GiB', '1.5']) {
      expect(() => envBindingCap({ GPUSPARSE_MAX_BINDING_BYTES: bad }), bad).toThrow(InvalidParameterError);
      expect(() => envBindingCap({ GPUSPARSE_MAX_BINDING_BYTES: bad }), bad).toThrow(/GPUSPARSE_MAX_BINDING_BYTES \(environment variable\): expected an integer number of bytes ≥ 256/);
    }
  });
  it('a strict cap lowers the limits bindings are checked against (a plain cap plans only)', async () => {
    expect(ctx.limits.maxStorageBufferBindingSize).toBe(CAP);
    expect(ctx.deviceLimits.maxStorageBufferBindingSize).toBe(CAP);
    const plain = await createGpuContext({ maxBindingBytes: CAP });
    expect(plain.deviceLimits.maxStorageBufferBindingSize).toBeGreaterThan(CAP);
    plain.dispose();
  });
});

describe('past the binding limit (strict 300 kB cap, arrays of 0.4–0.8 MB)', () => {
  const cases = [
    ['poisson2d(200)', g.poisson2d(200)],
    ['powerLaw(20000), rows up to 600', g.powerLaw(20_000, 20_000, { seed: 3, minLen: 2, maxLen: 600 })],
  ] as const;
  it('every registered kernel splits (the product within the conformance bound) or declares the matrix unsupported; none binds past the limit', async () => {
    const ran: string[] = [];
    for (const [name, a] of cases) {
      expect(4 * a.values.length).toBeGreaterThan(CAP);
      for (const k of kernels) {
        const got = await checkKernel(ctx, k, { ...k.defaults }, a, 1, 1, 0);
        expect(got ?? 'unsupported', `${k.id} on ${name}`).not.toMatch(/row/);
        if (got === '') ran.push(k.id);
      }
    }
    // all but none: every kernel of the registry splits these two matrices
    expect(new Set(ran).size).toBe(kernels.length);
  }, 600_000);
  it('the tuner picks a kernel that splits; CG with it converges to the float64 residual asked', async () => {
    const a = g.poisson2d(200);
    const op = await tunedOperator(ctx, a, { cache: false, expectedProducts: 200 });
    const space = new GpuVectorSpace(ctx);
    const ones = new Float64Array(a.rows).fill(1);
    const b = csrSpmv(a, ones);
    const r = await cg(space, op, space.fromArray(b), { rtol: 1e-5 });
    expect(r.converged).toBe(true);
    const x = await space.toArray(r.x);
    const ax = csrSpmv(a, Float64Array.from(x));
    let rr = 0;
    for (let i = 0; i < a.rows; i++) rr += (b[i]! - ax[i]!) ** 2;
    expect(Math.sqrt(rr) / Math.hypot(...b)).toBeLessThan(2e-5);
    op.dispose();
  }, 600_000);
});

describe('the df64 operator built in slices past the strict cap', () => {
  it('csr-vector on poisson2d(190) (0.72 MB per array): blocks, product to 1e-14 of float64', async () => {
    const c = ctx;
    const p = g.poisson2d(190);
    const a = { ...p, values: p.values.map((v) => v / 3) };
    const op = gpuOperatorFromCsr(c, a, { kernel: 'csr-vector' });
    const s = (await Df64VectorSpace.of(c))!;
    expect(s).toBeDefined();
    const dop = (await Df64CsrOperator.fromGpuOperatorSliced(s.d, op, a))!;
    expect(dop.blocks.length).toBeGreaterThan(1);
    const x = Float64Array.from({ length: a.cols }, (_, i) => 1 + Math.cos(i) / 7);
    const y = s.create(a.rows);
    dop.apply(s.fromArray(x), y);
    const ref = new Float64Array(a.rows);
    HostOperator.fromCsr(a).apply(x, ref);
    const got = await s.toArray(y);
    let err = 0;
    for (let i = 0; i < a.rows; i++) err = Math.max(err, Math.abs(got[i]! - ref[i]!));
    expect(err).toBeLessThan(1e-14 * 8);
    dop.dispose();
    op.dispose();
  }, 300_000);
});
