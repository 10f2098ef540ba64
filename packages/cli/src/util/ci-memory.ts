/**
 * Memory figures for `gpusparse ci`: the device memory of a WebGPU adapter (WebGPU does not
 * report it: a declared size, or one read from the adapter's name, else unknown), and the
 * `--dry-run` report of the estimate.
 * @module
 */
import type { AvailableMemory, CiEstimate } from '@gpusparse/chem';
import { formatBytes } from '@gpusparse/formats';
import { out } from './context';
import { formatTable } from './table';

/** Memory of known data-centre GPUs by name (bytes), for adapters whose name omits the size. */
const KNOWN: [RegExp, number][] = [
  [/H200/i, 141e9],
  [/H100/i, 80e9],
  [/A100/i, 40e9],
  [/L40/i, 48e9],
];

/**
 * Device memory: `declaredGb` (--device-memory), else GPUSPARSE_DEVICE_MEMORY_GB, else a size
 * in the adapter's name ('NVIDIA H100 80GB HBM3' → 80 GB) or a known model; undefined when
 * none applies (the device stage is then not checked; per-buffer limits still are).
 */
export function deviceMemoryOf(adapterName: string, declaredGb?: number): AvailableMemory | undefined {
  const env = Number(process.env.GPUSPARSE_DEVICE_MEMORY_GB);
  if (declaredGb !== undefined) return { bytes: declaredGb * 1e9, source: `--device-memory ${declaredGb} GB` };
  if (Number.isFinite(env) && env > 0) return { bytes: env * 1e9, source: `GPUSPARSE_DEVICE_MEMORY_GB=${env}` };
  const m = /(\d+)\s*GB/i.exec(adapterName);
  if (m) return { bytes: Number(m[1]) * 1e9, source: `adapter name '${adapterName}'` };
  for (const [re, bytes] of KNOWN) if (re.test(adapterName)) return { bytes, source: `${formatBytes(bytes)} assumed for '${adapterName}'` };
  return undefined;
}

/** Print the estimate of `ci --dry-run` (text form). */
export function printEstimate(file: string, label: string, e: CiEstimate, backend: string): void {
  out(`${file}: ${label}; backend ${backend}`);
  out(`determinants ${e.determinants} (exact; ${e.alphaStrings} α × ${e.betaStrings} β strings)`);
  out(`H non-zeros ≈ ${e.nnz.nnz} ± ${Math.round(e.nnz.stderr)} (${e.nnz.perRow.toFixed(1)} per row, longest sampled row ${e.nnz.maxRow}; ${e.nnz.method})`);
  out(formatTable(['stage', 'host', 'device', 'what'], e.stages.map((s) => [s.stage, formatBytes(s.host), formatBytes(s.device), s.what])));
  out(`peak host ${formatBytes(e.peakHost)}, available ${formatBytes(e.host.bytes)} (${e.host.source})`);
  out(`peak device ${formatBytes(e.peakDevice)}, available ${e.device ? `${formatBytes(e.device.bytes)} (${e.device.source})` : 'unknown (not checked)'}`);
}
