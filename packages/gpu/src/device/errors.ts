/**
 * Error classes of the WebGPU runtime. Each names what was expected, what came, and what to do.
 * @module
 */
import { GpuSparseError } from '@gpusparse/formats';

/** The lavapipe (software Vulkan) install line printed when no adapter is found. */
export const LAVAPIPE_INSTALL =
  "echo 'deb http://deb.debian.org/debian bookworm-backports main' > /etc/apt/sources.list.d/bpo.list && apt-get update && apt-get install -y -t bookworm-backports mesa-vulkan-drivers";

/**
 * No WebGPU adapter could be obtained (no GPU, no Vulkan driver, or no `navigator.gpu`).
 * @example
 * try { await createGpuContext(); } catch (e) { if (e instanceof NoAdapterError) useHost(); }
 */
export class NoAdapterError extends GpuSparseError {
  constructor(readonly detail: string) {
    super(
      `WebGPU: expected an adapter, got none (${detail}). On Linux without a GPU install lavapipe (software Vulkan): ${LAVAPIPE_INSTALL}`,
    );
  }
}

/**
 * The device was lost (driver reset, out of memory, `destroy()`); every later call on the
 * context throws this so that callers can fall back to the host backend.
 */
export class DeviceLostError extends GpuSparseError {
  constructor(
    readonly reason: string,
    readonly detail: string,
  ) {
    super(`WebGPU device lost: expected a live device, got reason '${reason}' (${detail}); recreate the context or use the host backend`);
  }
}

/**
 * A WebGPU validation / out-of-memory / internal error reported by the implementation, with the
 * label of the shader module or pipeline it came from.
 */
export class GpuValidationError extends GpuSparseError {
  constructor(
    readonly label: string,
    readonly kind: string,
    readonly detail: string,
  ) {
    super(`WebGPU ${kind} error in '${label}': expected valid GPU work, got: ${detail}`);
  }
}
