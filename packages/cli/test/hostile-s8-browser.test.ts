// Session 8: the browser page's backend choice (examples/browser/compute.ts, the DOM-free half of
// the bundle's entry) in node with no WebGPU global and with broken ones. Every case must come
// back as the CPU backend with a reason a person can act on, never an uncaught TypeError, and
// the CPU run must still solve. createGpuContext itself must answer NoAdapterError.
import { afterEach, describe, expect, it } from 'vitest';
import { makeMatrix, openBackend, runDemo } from '../../../examples/browser/compute';
import { createGpuContext, NoAdapterError } from '@gpusparse/gpu';

const g = globalThis as { navigator?: unknown };
const had = Object.getOwnPropertyDescriptor(globalThis, 'navigator');

function setNavigator(v: unknown): void {
  Object.defineProperty(globalThis, 'navigator', { value: v, configurable: true, writable: true });
}

afterEach(() => {
  if (had) Object.defineProperty(globalThis, 'navigator', had);
  else delete g.navigator;
});

const adapterThat = (requestDevice: () => Promise<unknown>) => ({
  features: new Set<string>(),
  limits: {},
  info: { vendor: 'test' },
  requestDevice,
});

describe('the browser page without a working WebGPU', () => {
  it('no navigator at all: the CPU backend, saying navigator.gpu is missing; the CPU CG converges', async () => {
    setNavigator(undefined);
    const be = await openBackend();
    expect(be).toEqual({ kind: 'cpu', reason: expect.stringMatching(/navigator\.gpu is missing/) });
    const stages: string[] = [];
    const { summary } = await runDemo(be, makeMatrix({ kind: 'poisson2d', grid: 8 }), { tuneMs: 10, rtol: 1e-8, hostToo: false }, (s) => stages.push(s));
    expect(summary.backend).toBe('cpu');
    expect(summary.hostCg?.converged).toBe(true);
    expect(summary.hostCg!.relTrueResidual).toBeLessThan(1e-7);
  });
  const broken: Array<[string, unknown, RegExp]> = [
    ['navigator without gpu', {}, /navigator\.gpu is missing/],
    ['requestAdapter() returns null', { gpu: { requestAdapter: async () => null } }, /requestAdapter\(\) returned null/],
    ['requestAdapter() rejects', { gpu: { requestAdapter: async () => Promise.reject(new Error('blocked by policy')) } }, /blocked by policy/],
    ['gpu without requestAdapter', { gpu: {} }, /requestAdapter/],
    ['gpu is not an object', { gpu: 1 }, /requestAdapter/],
    ['requestDevice() rejects', { gpu: { requestAdapter: async () => adapterThat(() => Promise.reject(new Error('device lost at creation'))) } }, /device lost at creation/],
  ];
  for (const [what, nav, reason] of broken) {
    it(`${what}: the CPU backend with the reason, no throw`, async () => {
      setNavigator(nav);
      const be = await openBackend();
      expect(be.kind).toBe('cpu');
      expect(be.kind === 'cpu' ? be.reason : '').toMatch(reason);
    });
  }
  it('createGpuContext with a GPU whose requestAdapter returns null or throws is a NoAdapterError', async () => {
    const none = { requestAdapter: async () => null } as unknown as GPU;
    await expect(createGpuContext({ gpu: none })).rejects.toBeInstanceOf(NoAdapterError);
    const throws = { requestAdapter: async () => Promise.reject(new TypeError('x is undefined')) } as unknown as GPU;
    await expect(createGpuContext({ gpu: throws })).rejects.toThrow(/requestAdapter threw: x is undefined/);
  });
});
