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
 * A WebGPU validation or internal error reported for one operation (shader module, pipeline,
 * bind group, submit), with the label of what it came from. The runtime checks sizes and
 * limits before it touches the device, so reaching this is a bug of gpusparse, not bad input:
 * it is deliberately not a GpuSparseError, and the CLI maps it to exit code 70 (internal).
 * Out-of-memory errors are reported as `ResourceLimitError` instead (exit code 5).
 */
export class GpuValidationError extends Error {
  constructor(
    readonly label: string,
    readonly kind: string,
    readonly detail: string,
  ) {
    super(`WebGPU ${kind} error in '${label}': expected valid GPU work, got: ${detail} (a bug of gpusparse: please report it with this message)`);
    this.name = 'GpuValidationError';
  }
}

/**
 * GPU work recorded on a buffer after its `dispose()`. A disposed buffer goes back to the
 * context's pool and may already hold another vector, so the work would silently read or
 * overwrite that one: the recorder refuses it. It is a bug of the calling code (a vector or
 * operator used after it was freed), not bad input: not a GpuSparseError, CLI exit code 70.
 */
export class UseAfterDisposeError extends Error {
  constructor(
    readonly where: string,
    readonly bufferId: number,
    readonly bufferLabel: string,
  ) {
    super(`${where}: expected a live GPU buffer, got buffer ${bufferId} ('${bufferLabel}') after its dispose() (it may already hold other data; use the vector or operator only before disposing it)`);
    this.name = 'UseAfterDisposeError';
  }
}
