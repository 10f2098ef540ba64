/**
 * Session 7 hardening: a tuning cache entry with a non-integer kernel parameter (workgroupSize
 * 1.5 or 1e300, hand-edited or corrupted) passed validation; the value reached the WGSL text and
 * the cache hit failed as "WebGPU validation error … (a bug of gpusparse: please report it)"
 * before re-tuning. Now the entry is dropped at load with a warning naming the parameter.
 */
import { describe, expect, it } from 'vitest';
import { parseCacheText, validateEntry } from '../src/autotune/cache';

const entry = (params: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ kernel: 'csr-scalar', params, productMs: 0.1, conversionMs: 0, uploadMs: 1, method: 'timestamp', date: '2026-11-25T00:00:00Z', ...extra });

describe('tuning cache entries', () => {
  it('non-integer parameters are refused, naming them (were accepted)', () => {
    expect(validateEntry(entry({ workgroupSize: 1.5 }))).toBe('parameter workgroupSize expected an integer, got 1.5');
    expect(validateEntry(entry({ workgroupSize: 1e300 }))).toBe('parameter workgroupSize expected an integer, got 1e+300');
    expect(validateEntry(entry({ workgroupSize: 256 }))).toBeUndefined();
  });
  it('an infinite time (1e999 in the JSON) is refused; the file keeps its good entries', () => {
    const warnings: string[] = [];
    const text = `{"version":1,"entries":{"a":${JSON.stringify(entry({ workgroupSize: 256 }))},"b":${JSON.stringify(entry({ workgroupSize: 128 })).replace('"productMs":0.1', '"productMs":1e999')},"c":${JSON.stringify(entry({ workgroupSize: 2.5 }))}}}`;
    const m = parseCacheText(text, 'tune.json', (w) => warnings.push(w));
    expect([...m.keys()]).toEqual(['a']);
    expect(warnings.join('\n')).toMatch(/entry b in tune\.json: expected a finite productMs ≥ 0, got Infinity/);
    expect(warnings.join('\n')).toMatch(/entry c in tune\.json: parameter workgroupSize expected an integer, got 2\.5/);
  });
});
