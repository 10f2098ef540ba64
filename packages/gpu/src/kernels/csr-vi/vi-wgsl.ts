/**
 * WGSL shared by the csr-vi kernels (row layout `vi.kernel.ts`, sliced layout `vi-slice.kernel.ts`):
 * the row prologue (window shift and mask, the row's word range, its segment cursor) and the
 * statements of `n` words in flight — their loads, their columns from the segment cursor (the
 * positions one invocation visits only grow), their x gathers and table values, their sums.
 * @module
 */
import type { PipelineSpec } from '../../device/pipelines';
import { signature, type WgslBinding } from '../wgsl/index';

/** The pipeline of a csr-vi kernel's shader `text` (key: the text; bindings: their access letters). */
export function viPipelineSpec(label: string, text: string, bindings: readonly WgslBinding[]): PipelineSpec {
  return { key: text, label, bindings: signature(bindings), wgsl: () => text };
}

/**
 * Declares `sh`, `low`, the end `p1` of the row's word range (CSR positions), the cursor `h` /
 * `hlast` / `hend` / `hbase` over its segments, and the accumulators a0 … a(n − 1), for row `r`.
 */
export function viRowPrologue(n: number): string {
  return `let sh = u.count; // 32 − v: a word's column bits
    let low = (1u << sh) - 1u;
    let p1 = rowp[3u * r + 3u];
    var h = rowp[3u * r + 1u];
    let hlast = rowp[3u * r + 4u];
    var hend = 0u;
    var hbase = 0u;
    ${Array.from({ length: n }, (_, i) => `var a${i} = 0.0;`).join(' ')}`;
}

/**
 * The statements of `n` words: `addr(i)` is the WGSL address of word i in `packed`, `pos(i)` its
 * position in the row's CSR order (compared with the segment ends), both WGSL expressions.
 */
export function viWordSteps(n: number, addr: (i: number) => string, pos: (i: number) => string): string {
  const ix = Array.from({ length: n }, (_, i) => i);
  return [
    ...ix.map((i) => `let w${i} = packed[${addr(i)}];`),
    ...ix.map((i) => `while (${pos(i)} >= hend && h < hlast) { let g = segs[h]; hend = g.x; hbase = g.y; h++; }
      let c${i} = hbase + (w${i} & low);`),
    ...ix.map((i) => `let x${i} = x[c${i}];`),
    ...ix.map((i) => `let v${i} = vtab[w${i} >> sh];`),
    ...ix.map((i) => `a${i} = fma(v${i}, x${i}, a${i});`),
  ].join('\n      ');
}
