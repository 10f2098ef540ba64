/**
 * A progress bar on stderr, drawn only when stderr is a TTY (CI logs and pipes stay clean).
 * @module
 */

/** Progress reporter handed to long operations. */
export interface Progress {
  /** Report `done` of `total` units with an optional label. */
  update(done: number, total: number, label?: string): void;
  /** Clear the bar. */
  finish(message?: string): void;
}

/**
 * A progress bar on `stream` (default process.stderr); a no-op when the stream is not a TTY
 * or `enabled` is false.
 * @example
 * const p = progressBar('assembling');
 * p.update(50, 100); p.finish();
 */
export function progressBar(title: string, opts: { enabled?: boolean; stream?: NodeJS.WriteStream } = {}): Progress {
  const stream = opts.stream ?? process.stderr;
  const enabled = (opts.enabled ?? true) && Boolean(stream.isTTY);
  let last = 0;
  const t0 = Date.now();
  return {
    update(done, total, label) {
      if (!enabled) return;
      const now = Date.now();
      if (now - last < 80 && done < total) return;
      last = now;
      const frac = total > 0 ? Math.min(1, done / total) : 0;
      const width = 28;
      const fill = Math.round(frac * width);
      const secs = ((now - t0) / 1000).toFixed(1);
      stream.write(`\r${title} [${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${(frac * 100).toFixed(0).padStart(3)}% ${secs}s ${label ?? ''}\x1b[K`);
    },
    finish(message) {
      if (!enabled) return;
      stream.write(`\r\x1b[K${message ? `${message}\n` : ''}`);
    },
  };
}
