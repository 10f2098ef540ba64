#!/usr/bin/env bash
# Issue 20, session 12: does merge-path CSR (csr-merge) take the power-law class past cuSPARSE?
# One H100 call, at most ~7.6 minutes (each step's limit is cut to what is left of POW_BUDGET = 455 s):
#   dump      the bench set's uniform 2·10^6 × 16 and power law 2·10^6 (2…20 000 entries per row,
#             alpha 2.2, seed 3 — the matrices of every earlier table) → raw CSR
#   cusparse  cusparse_anchor.py on both (float32 / float64), before the WGSL timings
#   spmv      bench/spmv.ts on the dumped files: every CSR-family kernel (csr-scalar, csr-vector,
#             csr-adaptive, csr-vec4 lanes 2 / 32, csr-long, csr-balanced, csr-stream lanes 4 / 8)
#             plus csr-merge (perThread 4 / 8 / 12 / 16 × workgroups 128 / 256, search and items unrolled,
#             long rows whole; perThread 8 / 16 × 256 with the subgroup scan; perThread 8 × 256 with the
#             loops kept — what Tint's loop guard costs — and with every row past one tile cut — what the
#             fix-up pass costs) and ell
#             (session 11's best on uniform) — 1 s of warm-up, 150 ms of heat before each timing (more
#             while the SM clock reads < 1 500 MHz), two rounds of 20 repetitions with the other cases
#             in between, each checked against the float64 product
#   cusparse2 the anchor again after the WGSL timings (cuSPARSE's own spread within the call)
# The SM / memory clock is sampled every 100 ms for the whole call; every SUMMARY line carries the
# clock of its case (CLOCK-LOW below 1 500 MHz).
#
# Pack (project root, after pnpm install):  bash /work/shared/gpukit/pack.sh bench/spmv.ts
# Run (device tool, carry [".gpukit"], timeout_s 480; the power law runs first):  bash .gpukit/enter.sh bash bench/spmv-powerlaw.sh $OUT
# Writes under the directory given: pow20.log (every step's output, then the summary lines),
# spmv.json (bench/spmv.ts), cusparse.jsonl / cusparse2.jsonl (the anchor) and clocks.csv.
# Dry run off the GPU machine (lavapipe, 1 % sizes; the anchor fails without CUDA):
#   POW_SCALE=10 POW_BUDGET=3000 POW_APP="npx tsx bench/spmv.ts" POW_EXTRA=--quick bash bench/spmv-powerlaw.sh /tmp/pow20
set -u
out=${1:-/tmp/pow20}
m=/tmp/pow20-m
mkdir -p "$out" $m
log="$out/pow20.log"
: >"$log"
app=${POW_APP:-node .gpukit/app/spmv.mjs}
extra=${POW_EXTRA:-}
budget=${POW_BUDGET:-455}
scale=${POW_SCALE:-1}
ck="$out/clocks.csv"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 100 >"$ck" 2>/dev/null &
clk=$!
# seconds a step may take: its limit × scale, at most what is left of the budget
left() { local want=$(($1 * scale)) rest=$((budget - SECONDS)); echo $((want < rest ? want : rest)); }
run() { # name limit command…: logged under a header; skipped once the budget is spent
  local name=$1 lim
  lim=$(left "$2")
  shift 2
  if ((lim < 5)); then printf '== %s skipped: budget spent (%s s)\n' "$name" "$SECONDS" >>"$log"; return; fi
  printf '== %s (limit %s s, %s)\n' "$name" "$lim" "$(date -u +%T)" >>"$log"
  timeout "$lim" "$@" >>"$log" 2>&1
  printf '== %s exit %s (%s, %s s)\n' "$name" "$?" "$(date -u +%T)" "$SECONDS" >>"$log"
}
run dump 60 $app $extra --dump-only --dump $m --only uniform,powerlaw
# power law first: if the call is cut short, the class this call is for has been timed
files=$(for f in $m/powerlaw*.rowptr $m/uniform*.rowptr; do [ -e "$f" ] && echo "${f%.rowptr}.csr"; done)
run cusparse 40 python3 .gpukit/cusparse_anchor.py $files --json "$out/cusparse.jsonl"
merge="--grid csr-merge:perThread=4/8/12/16:workgroupSize=128/256:chunkTiles=16:unrolled=1:scan=0 --grid csr-merge:perThread=8/16:workgroupSize=256:chunkTiles=16:unrolled=1:scan=1
  --grid csr-merge:perThread=8:workgroupSize=256:chunkTiles=16:unrolled=0:scan=0 --grid csr-merge:perThread=8:workgroupSize=256:chunkTiles=1:unrolled=1:scan=0"
csrs="--grid csr-vec4:lanes=2/32 --grid csr-stream:lanes=4/8:unroll=4:prefetch=0"
run spmv 340 $app $extra --no-generated $files --rounds 2 --reps 20 --heat-ms 150 --warm-ms 1000 --no-variants \
  --cusparse "$out/cusparse.jsonl" --clock-log "$ck" $merge $csrs \
  --kernels csr-scalar,csr-vector,csr-adaptive,csr-vec4,csr-long,csr-balanced,csr-stream,csr-merge,ell --out "$out/spmv.json"
run cusparse2 40 python3 .gpukit/cusparse_anchor.py $files --json "$out/cusparse2.jsonl"
kill $clk 2>/dev/null
{
  for f in cusparse cusparse2; do grep -h '"spmv_ms"' "$out/$f.jsonl" 2>/dev/null | grep float32 | sed "s/^/$f /" | cut -c1-160; done
  grep -h '^SUMMARY\|^BEST\|WRONG\|FAILED\|Error\|skipped' "$log"
  awk -F', ' 'NR > 1 { n[$2]++ } END { for (c in n) print "SM clock", c, n[c], "samples" }' "$ck" 2>/dev/null | sort -k4 -nr | head -6
  tail -2 "$log"
} >"$out/summary.tmp"
cat "$out/summary.tmp"
cat "$out/summary.tmp" >>"$log" && rm -f "$out/summary.tmp"
