/**
 * Node-only: how much memory this process may still allocate, for the checks that refuse an
 * input before its arrays are allocated (ResourceLimitError names this figure as "available").
 * @module
 */
import { freemem, totalmem } from 'node:os';

/**
 * Bytes the process can still allocate: the host's available memory (`os.freemem`, which is
 * MemAvailable on Linux), lowered to the cgroup limit minus the resident set when the process
 * runs in a container with a smaller limit. O(1).
 * @example
 * if (bytesNeeded > availableMemoryBytes()) throw new ResourceLimitError('ELL table', bytesNeeded, availableMemoryBytes());
 */
export function availableMemoryBytes(): number {
  let avail = freemem();
  const constrained = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.();
  if (constrained !== undefined && constrained > 0 && constrained < totalmem()) {
    avail = Math.min(avail, constrained - process.memoryUsage.rss());
  }
  return Math.max(0, avail);
}
