/**
 * A progress bar on stderr when it is a TTY; in a log or a pipe, a line every few seconds once an
 * operation has run that long (short runs stay clean).
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
 * A progress bar on `stream` (default process.stderr) when it is a TTY. When it is not (a log, a
 * pipe) and `lines` is not false, a plain line `title [elapsed] pct% label` once the operation has
 * run `intervalMs` (default 5000, or GPUSPARSE_PROGRESS_INTERVAL_MS) and then one per interval, so
 * a 40 s `bench` or a long `solve` in a CI log shows it is alive. A no-op when `enabled` is false.
 * @example
 * const p = progressBar('assembling');
 * p.update(50, 100); p.finish();
 */
export function progressBar(title: string, opts: { enabled?: boolean; stream?: NodeJS.WriteStream; lines?: boolean; intervalMs?: number } = {}): Progress {
  const stream = opts.stream ?? process.stderr;
  const enabled = (opts.enabled ?? true) && Boolean(stream.isTTY);
  const lines = (opts.enabled ?? true) && !stream.isTTY && opts.lines !== false ? progressLines(title, stream, opts.intervalMs) : undefined;
  let last = 0;
  const t0 = Date.now();
  return {
    update(done, total, label) {
      lines?.(done, total, label);
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

/** The interval of log lines: `intervalMs`, else GPUSPARSE_PROGRESS_INTERVAL_MS, else 5000 ms. */
function progressInterval(intervalMs: number | undefined): number {
  const envMs = Number(process.env.GPUSPARSE_PROGRESS_INTERVAL_MS);
  return intervalMs ?? (process.env.GPUSPARSE_PROGRESS_INTERVAL_MS !== undefined && Number.isFinite(envMs) && envMs >= 0 ? envMs : 5000);
}

/** A progress bar's stand-in off a terminal: a line once `interval` has passed, then one per interval. */
function progressLines(title: string, stream: NodeJS.WriteStream, intervalMs: number | undefined): (done: number, total: number, label?: string) => void {
  const interval = progressInterval(intervalMs);
  const t0 = Date.now();
  let last = t0;
  return (done, total, label) => {
    const now = Date.now();
    if (now - last < interval) return;
    last = now;
    const pct = total > 0 ? `${((Math.min(1, done / total)) * 100).toFixed(0)}% ` : '';
    stream.write(`${title} [${((now - t0) / 1000).toFixed(1)}s] ${pct}${label ?? ''}\n`);
  };
}

/** Stage lines for logs: what {@link stageLog} returns. */
export interface StageLog {
  /** A new stage: always printed. */
  stage(text: string): void;
  /** Progress within a stage: the first report of each `key` is printed, then one per interval. */
  tick(key: string, text: string): void;
}

/**
 * Progress as one line per stage with the elapsed time, on `stream` (default process.stderr)
 * when it is NOT a TTY (a log file or a pipe, where {@link progressBar} draws nothing), so a
 * user watching a log of a long run sees what it is doing. Ticks within a stage are throttled
 * to one per `intervalMs` (default 5000, or GPUSPARSE_PROGRESS_INTERVAL_MS).
 * @example
 * const log = stageLog('ci');
 * log.stage('read FCIDUMP'); log.tick('assembly', 'rows 1000/5000');
 */
export function stageLog(title: string, opts: { enabled?: boolean; stream?: NodeJS.WriteStream; intervalMs?: number } = {}): StageLog {
  const stream = opts.stream ?? process.stderr;
  const enabled = (opts.enabled ?? true) && !stream.isTTY;
  const interval = progressInterval(opts.intervalMs);
  const t0 = Date.now();
  const last = new Map<string, number>();
  const write = (text: string) => stream.write(`${title} [${((Date.now() - t0) / 1000).toFixed(1)}s] ${text}\n`);
  return {
    stage(text) {
      if (enabled) write(text);
    },
    tick(key, text) {
      if (!enabled) return;
      const now = Date.now();
      const prev = last.get(key);
      if (prev !== undefined && now - prev < interval) return;
      last.set(key, now);
      write(text);
    },
  };
}
