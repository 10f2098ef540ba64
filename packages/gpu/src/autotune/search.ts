/**
 * The search of one tuning run: candidates timed in order of calibrated promise within the
 * budget (reserving what choosing still costs), finalists re-timed, then verification in
 * objective order with fallback to the next best.
 * @module
 */
import type { CsrMatrix, SparseMatrix } from '@gpusparse/formats';
import type { GpuContext } from '../device/context';
import type { AnySpmvKernel, DeviceMatrix } from '../kernels/types';
import { type Candidate, enumerateCandidates, type PruneRules } from './candidates';
import { retimeFinalists } from './finalists';
import { ConversionCache, measureCandidate, type TuneVectors, verifyProduct } from './measure';
import type { profileMatrix } from './profile';
import type { Trial, TuningReport } from './report';
import { type AutotuneOptions, type Held, medianOf, OPTIMISM, SCOUT_RANGE, TuningError } from './types';

/**
 * Time the candidates within the budget, then verify by objective; returns the accepted trial
 * (its upload kept in `held` when asked). Cost: see {@link autotune}.
 * @example const win = await timeCandidates(ctx, a, opts, rules, kernels, profile, v, report, held, performance.now());
 */
export async function timeCandidates(
  ctx: GpuContext,
  a: CsrMatrix,
  opts: AutotuneOptions,
  rules: PruneRules,
  ks: readonly AnySpmvKernel[],
  profile: ReturnType<typeof profileMatrix>,
  v: TuneVectors,
  report: TuningReport,
  held: Held,
  start: number,
): Promise<Trial> {
  const fraction = opts.fraction ?? 0.1;
  const nnz = report.nnz;
  const guessProducts = opts.expectedProducts ?? 1000;
  const list = enumerateCandidates(a, profile, ks, rules, guessProducts, opts.candidates);
  if (list.length === 0) throw new TuningError(`autotune: expected at least one candidate, got none (candidates ${JSON.stringify(opts.candidates)})`);
  const trials: Trial[] = list.map((c) => ({ kernel: c.kernel.id, params: c.params, status: c.pruned ? 'pruned' : 'budget', reason: c.pruned?.reason, predicted: c.predicted, estimatedBytes: c.estimatedBytes }));
  report.trials.push(...trials);
  report.pruned = trials.filter((t) => t.status === 'pruned').length;
  let products = opts.expectedProducts ?? 0;
  report.budgetMs = opts.budgetMs !== undefined ? fraction * opts.budgetMs : Number.POSITIVE_INFINITY;
  const reps = opts.reps ?? 10;
  const warmup = opts.warmup ?? 2;
  const conv = new ConversionCache(a, 4 * (12 * nnz + 4 * a.rows) + 2 ** 20);
  const objective = (t: Trial) => (t.conversionMs ?? 0) + (t.uploadMs ?? 0) + products * t.ms!;
  let convPerByte = 0;
  let uploadPerByte = 0;
  let lastMs = 0;
  const seenConv = new Set<string>();
  // what choosing still costs, reserved inside the budget: re-timing the finalists (uploads and
  // 2 rounds of warmup + reps products each) and verifying the best (one upload, one product)
  const finalists = Math.max(0, Math.floor(opts.finalists ?? 3));
  const closing = (): number => {
    const top = trials.filter((t) => t.status === 'timed').sort((x, y) => objective(x) - objective(y)).slice(0, Math.max(finalists, 1));
    let ms = 0;
    for (const t of top) ms += (finalists > 1 ? t.uploadMs! + 2 * (reps + warmup) * t.ms! : 0);
    return ms + (top[0] ? top[0].uploadMs! + top[0].ms! + report.statsMs : 0);
  };
  // timing order: first one scout per kernel (its most promising variant) when its static
  // prediction is within SCOUT_RANGE of the best — the model's factors differ most between
  // kernels, so each kernel family gets measured once — then the calibrated objective
  // products · (ms per unit of work) · work + conversion (unless shared and done) + upload, where
  // ms per unit of work is the median measured for the candidate's kernel, or — for a kernel not
  // timed yet — the median over all kernels times OPTIMISM (explore untried kernels early)
  const pending = list.map((_, i) => i).filter((i) => !(list[i]!.pruned && (list[i]!.pruned!.hard || !opts.exhaustive)));
  const msPerWork: number[] = [];
  const perKernel = new Map<string, number[]>();
  const scouts = new Set<number>();
  const bestPredicted = pending.length ? Math.min(...pending.map((i) => list[i]!.predicted)) : 0;
  const scouted = new Set<string>();
  // the matrix is already CSR: one variant of every CSR kernel (no conversion; the most
  // promising first) is scouted before any other format, whatever the static model predicts,
  // so the budget always covers the baselines every other format has to beat (on an H200 the
  // model ranked DIA, HM and CSR-adaptive first on the 2-D and 3-D stencils, DIA's 0.8 s
  // conversion used the budget, and CSR-scalar — never timed — was 14 % faster than DIA)
  const csrScouts: number[] = [];
  for (const i of pending) {
    const c = list[i]!;
    if (c.kernel.format !== 'csr' || scouted.has(c.kernel.id)) continue;
    scouted.add(c.kernel.id);
    scouts.add(i);
    csrScouts.push(i);
  }
  for (const i of csrScouts.reverse()) pending.unshift(...pending.splice(pending.indexOf(i), 1));
  for (const i of pending) {
    const c = list[i]!;
    if (scouted.has(c.kernel.id) || c.predicted > SCOUT_RANGE * bestPredicted) continue;
    scouted.add(c.kernel.id);
    scouts.add(i);
  }
  let handled = 0;
  while (pending.length > 0) {
    let pick = pending.findIndex((i) => scouts.has(i));
    const scouting = pick >= 0;
    if (!scouting) pick = 0;
    const kWork = msPerWork.length ? medianOf(msPerWork) : 0;
    const kOf = (c: Candidate) => {
      const own = perKernel.get(c.kernel.id);
      return own ? medianOf(own) : OPTIMISM * kWork;
    };
    const costOf = (c: Candidate) => ({ conv: seenConv.has(c.conversionKey) ? 0 : convPerByte * c.estimatedBytes, upload: uploadPerByte * c.estimatedBytes, product: kOf(c) * c.work });
    if (kWork > 0 && !scouting) {
      let best = Number.POSITIVE_INFINITY;
      pending.forEach((i, k) => {
        const e = costOf(list[i]!);
        const score = e.conv + e.upload + Math.max(1, products) * e.product;
        if (score < best) [best, pick] = [score, k];
      });
    }
    const i = pending.splice(pick, 1)[0]!;
    const c = list[i]!;
    const t = trials[i]!;
    handled++;
    const spent = performance.now() - start;
    if (report.timed > 0 && !opts.exhaustive) {
      const e = costOf(c);
      const need = e.conv + e.upload + (reps + warmup) * (e.product || lastMs);
      if (spent + need + closing() > report.budgetMs) {
        t.reason = `budget: needs ~${need.toFixed(1)} ms, ${Math.max(0, report.budgetMs - spent).toFixed(1)} ms left`;
        continue;
      }
    }
    try {
      const { meas, handle } = await measureCandidate(ctx, conv, c, v, { reps, warmup });
      handle.dispose();
      Object.assign(t, {
        status: 'timed',
        ms: meas.medianMs,
        minMs: meas.minMs,
        gflops: (2 * nnz) / (meas.medianMs * 1e6),
        bytes: meas.storageBytes,
        deviceBytes: meas.deviceBytes,
        conversionMs: meas.conversionMs,
        uploadMs: meas.uploadMs,
      });
      report.timed++;
      report.method = meas.method;
      if (!seenConv.has(c.conversionKey) && c.estimatedBytes > 0) convPerByte = Math.max(convPerByte, meas.conversionMs / c.estimatedBytes);
      seenConv.add(c.conversionKey);
      uploadPerByte = Math.max(uploadPerByte * 0.5, meas.uploadMs / Math.max(1, c.estimatedBytes));
      lastMs = meas.medianMs;
      if (c.work > 0) {
        msPerWork.push(meas.medianMs / c.work);
        perKernel.set(c.kernel.id, [...(perKernel.get(c.kernel.id) ?? []), meas.medianMs / c.work]);
      }
      if (report.timed === 1) {
        // the first product time turns the caller's statement into a budget and a product count
        if (products === 0) products = opts.budgetMs !== undefined ? Math.max(1, Math.round(opts.budgetMs / meas.medianMs)) : 1000;
        if (opts.budgetMs === undefined) report.budgetMs = fraction * products * meas.medianMs;
        (report as { expectedProducts: number }).expectedProducts = products;
      }
    } catch (e) {
      if (ctx.isLost) throw e;
      Object.assign(t, { status: 'error', error: (e as Error).message });
    }
    opts.onProgress?.({ phase: 'trial', done: handled, total: list.length, spentMs: performance.now() - start, budgetMs: report.budgetMs, trial: t });
  }
  const byObjective = () => {
    for (const t of trials) if (t.status === 'timed') t.objectiveMs = objective(t);
    return list.map((c, i) => ({ c, t: trials[i]! })).filter((p) => p.t.status === 'timed').sort((p, q) => p.t.objectiveMs! - q.t.objectiveMs!);
  };
  if (finalists > 1 && report.timed > 1 && (opts.exhaustive || performance.now() - start + closing() <= report.budgetMs)) {
    await retimeFinalists(ctx, conv, byObjective().slice(0, finalists), v, { reps, warmup, rounds: 2 });
    for (const t of trials) if (t.status === 'timed') t.gflops = (2 * nnz) / (t.ms! * 1e6);
  }
  const ranked = byObjective();
  for (const { c, t } of ranked) {
    opts.onProgress?.({ phase: 'verify', done: report.trials.length, total: report.trials.length, spentMs: performance.now() - start, budgetMs: report.budgetMs, trial: t });
    const { m } = conv.get(c);
    let handle: DeviceMatrix | undefined;
    try {
      const h = c.kernel.upload(ctx, m as SparseMatrix, c.params);
      handle = h;
      const res = await verifyProduct(ctx, a, c, m, h, v);
      Object.assign(t, { verified: res.ok, maxErrOverBound: res.maxErrOverBound });
      if (!res.ok) t.error = `verification failed: error/bound ${res.maxErrOverBound.toExponential(2)} at row ${res.row}`;
    } catch (e) {
      if (ctx.isLost) throw e;
      Object.assign(t, { verified: false, error: `verification failed: ${(e as Error).message}` });
    }
    if (t.verified && handle) {
      if (held.keep) held.handle = handle;
      else handle?.dispose();
      report.winner = { kernel: t.kernel, params: { ...t.params }, ms: t.ms!, objectiveMs: t.objectiveMs, gflops: t.gflops };
      conv.clear();
      return t;
    }
    handle?.dispose();
    report.rejected++;
  }
  conv.clear();
  const why = trials.filter((t) => t.error).slice(0, 3).map((t) => `${t.kernel}: ${t.error}`).join('; ');
  throw new TuningError(`autotune: expected a candidate that runs and passes verification on this ${a.rows}×${a.cols} matrix, got none (${report.timed} timed, ${report.rejected} rejected${why ? `; ${why}` : ''})`);
}

