/**
 * What the diagonal SpGEMM products on the device share: a prepared product (operands, C's
 * structure and the work tables uploaded once; `encode` records C = A·B; `read` returns C's
 * values) and the binding-size check.
 * @module
 */
import { NotSupportedError } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { PipelineEntry } from '../device/pipelines';
import type { GpuBuf } from '../memory/buffers';
import { readF32 } from '../memory/readback';
import { Uniforms } from '../memory/recorder';

/**
 * A product C = A·B prepared on the device. C's structure (its diagonals) was fixed on the host
 * before any arithmetic; `encode` fills C's values (one dispatch, no wait), `read` waits and
 * returns them (float32 widened to float64), `dispose` returns every buffer to the pool.
 */
export interface DeviceProduct<C> {
  /** C's structure with zero values (the host-side template filled by {@link DeviceProduct.result}). */
  readonly template: C;
  /** Multiply–adds the kernel performs (its work, fill included): 2·this = flops. */
  readonly multiplyAdds: number;
  /** Bytes of all device arrays of the product. */
  readonly deviceBytes: number;
  /** Record C = A·B into the context's batch. */
  encode(): void;
  /** Wait for the device and return C's values in the template's layout. */
  read(): Promise<Float64Array>;
  /** C with the values of {@link DeviceProduct.read} (present where the value is non-zero). */
  result(): Promise<C>;
  dispose(): void;
}

/**
 * Throw NotSupportedError when an array of `elems` 4-byte words exceeds one binding: the
 * products are not split over bindings (the operands of seed 002's sizes fit an H100's binding).
 * @example checkBinding(ctx, 'hmSpgemmGpu C values', c.values.length)
 */
export function checkBinding(ctx: GpuContext, where: string, elems: number): void {
  const bytes = elems * 4;
  if (bytes > ctx.limits.maxStorageBufferBindingSize) {
    throw new NotSupportedError(`${where}: needs ${bytes} bytes in one binding, more than maxStorageBufferBindingSize = ${ctx.limits.maxStorageBufferBindingSize} on this device (use smaller matrices or the CPU reference)`);
  }
}

/** Everything a single-dispatch product needs to record and read itself. */
export interface ProductParts<C> {
  readonly ctx: GpuContext;
  readonly template: C;
  readonly pipeline: PipelineEntry;
  readonly buffers: readonly GpuBuf[];
  /** The output buffer (also in `buffers`). */
  readonly out: GpuBuf;
  readonly outElems: number;
  readonly uniforms: Uniforms;
  readonly groups: number;
  readonly multiplyAdds: number;
  /** Build C from its values (sets `present` where non-zero). */
  withValues(values: Float64Array): C;
}

/**
 * The {@link DeviceProduct} of a product recorded as one dispatch. O(1).
 * @example return deviceProduct({ ctx, template, pipeline, buffers, out, ... });
 */
export function deviceProduct<C>(p: ProductParts<C>): DeviceProduct<C> {
  let deviceBytes = 0;
  for (const b of p.buffers) deviceBytes += b.bytes;
  const read = () => readF32(p.ctx, p.out, p.outElems);
  return {
    template: p.template,
    multiplyAdds: p.multiplyAdds,
    deviceBytes,
    encode: () => p.ctx.recorder.dispatch(p.pipeline, p.buffers, p.uniforms, p.groups),
    read,
    result: async () => p.withValues(await read()),
    dispose() {
      for (const b of p.buffers) b.dispose();
    },
  };
}

/** A fresh uniform block with the given u32 words from index 0. */
export function uniformWords(words: readonly number[]): Uniforms {
  const u = new Uniforms();
  words.forEach((w, i) => {
    u.u[i] = w;
  });
  return u;
}

/**
 * The `present` bit mask (one bit per slot) and count of the non-zero slots of a product's values:
 * what the device result reports as stored (an exact cancellation to 0 is not stored). O(slots).
 * @example nonZeroMask(Float64Array.of(0, 2, 0)) // { present: [0b10], nnz: 1 }
 */
export function nonZeroMask(values: Float64Array): { present: Uint32Array; nnz: number } {
  const present = new Uint32Array(Math.ceil(values.length / 32));
  let nnz = 0;
  for (let s = 0; s < values.length; s++) {
    if (values[s] === 0) continue;
    present[s >>> 5]! |= 1 << (s & 31);
    nnz++;
  }
  return { present, nnz };
}
