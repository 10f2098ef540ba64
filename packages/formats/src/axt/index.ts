/**
 * AXT (seed 004 §2.3): entries and x values interleaved in tiles of THW lanes × TH steps, with
 * four variants chosen by (MODE, TH). One descriptor per variant; the generic entry points are
 * {@link axtFromCsr}, {@link axtToCsr}, {@link axtSpmvReference}, {@link axtStorageBytes}.
 * @module
 */
import { InvalidParameterError } from '../core/errors';
import type { CsrMatrix, FormatDescriptor } from '../core/types';
import { axtFromCsr, axtToCsr } from './layout';
import { axtSpmvReference } from './spmv-reference';
import { axtStorageBytes } from './storage';
import type { AxtComMatrix, AxtMatrix, AxtParams, AxtUncMatrix, AxtVariant } from './types';
import { axtVariant } from './types';

export * from './hdr';
export * from './layout';
export { axtComSlot } from './layout-com';
export * from './spmv-reference';
export * from './storage';
export * from './types';

function descriptor<M extends AxtMatrix>(name: string, variant: AxtVariant, defaults: AxtParams, rule: string): FormatDescriptor<M, AxtParams> {
  return {
    name,
    title: variant,
    source: `seed 004 §2.3 (axt-format.md), ${rule}`,
    defaultParams: defaults,
    fromCsr(a: CsrMatrix, params: Partial<AxtParams> = {}): M {
      const p: AxtParams = {
        thw: params.thw ?? defaults.thw,
        th: params.th ?? defaults.th,
        mode: params.mode ?? defaults.mode,
        bs: params.bs ?? defaults.bs,
      };
      const got = p.mode === 'UNC' || p.mode === 'COM' ? axtVariant(p.mode, p.th) : undefined;
      if (got !== variant) {
        const wrong = p.mode !== defaults.mode ? 'mode' : 'th';
        throw new InvalidParameterError(wrong, `${rule} for format '${name}' (use the matching axt* format for other values)`, wrong === 'mode' ? p.mode : p.th);
      }
      return axtFromCsr(a, p) as M;
    },
    toCsr: axtToCsr,
    spmvReference: axtSpmvReference,
    storageBytes: axtStorageBytes,
  };
}

/**
 * AXTUH1 (MODE = UNC, TH = 1; §2.3.1, Listings 3–4): one row per tile of THW entries, rwp[] per tile.
 * @example
 * const m = axtuh1Format.fromCsr(a, { thw: 16 }); axtuh1Format.spmvReference(m, x);
 */
export const axtuh1Format: FormatDescriptor<AxtUncMatrix, AxtParams> = descriptor('axtuh1', 'AXTUH1', { thw: 32, th: 1, mode: 'UNC', bs: 1024 }, 'mode UNC and th = 1');

/**
 * AXTUH (MODE = UNC, TH > 1; §2.3.2, Listings 5–6): one row per tile column, rwp[] per column.
 * @example
 * const m = axtuhFormat.fromCsr(a, { thw: 32, th: 8 });
 */
export const axtuhFormat: FormatDescriptor<AxtUncMatrix, AxtParams> = descriptor('axtuh', 'AXTUH', { thw: 32, th: 4, mode: 'UNC', bs: 1024 }, 'mode UNC and th ≥ 2');

/**
 * AXTCH1 (MODE = COM, TH = 1; §2.3.3, Listings 8–9): rows packed, block scans of BS slots, hdr[] per slot.
 * @example
 * const m = axtch1Format.fromCsr(a, { thw: 32, bs: 512 });
 */
export const axtch1Format: FormatDescriptor<AxtComMatrix, AxtParams> = descriptor('axtch1', 'AXTCH1', { thw: 32, th: 1, mode: 'COM', bs: 1024 }, 'mode COM and th = 1');

/**
 * AXTCH (MODE = COM, TH > 1; §2.3.4, Listings 10–11): rows packed column-major, scans down tile columns.
 * @example
 * const m = axtchFormat.fromCsr(a, { thw: 32, th: 16 });
 */
export const axtchFormat: FormatDescriptor<AxtComMatrix, AxtParams> = descriptor('axtch', 'AXTCH', { thw: 32, th: 4, mode: 'COM', bs: 1024 }, 'mode COM and th ≥ 2');
