#!/usr/bin/env bash
# Issue 20, session 12: banded and stencil matrices at ≥ 70 % of the copy bandwidth, CI-like at ≥ 1.5× cuSPARSE.
# One H100 call, at most 440 s of steps (every step's limit is cut to what is left of that budget):
#   dump      banded 2·10^6 b9, 5-point 2000², 7-point 160³, 27-point 120³, CI-like 60 000 × ~1 000 → raw CSR
#   cusparse  cusparse_anchor.py on the five (float32/float64 cuSPARSE: the ratios of the spmv steps)
#   probe     bench/spmv-dia-probe.ts on the four banded / stencil matrices: dia-tiled, dia-vec4 (xvec 1 / 0 / 2),
#             each next to its no-x and store-only probes and vec4 copies of its own bytes — where each loses
#   dia       bench/spmv.ts on the four: dia-tiled (session 7's grid: rows 2/4 × unroll 4/8) and dia-vec4
#             (unroll 4/5/7/8; rows 2, xvec 0, tiles 4, workgroups of 128, x staged (xvec 2, wg 64/128): unroll 4/8), csr-adaptive
#   ci        bench/spmv.ts on CI-like: csr-long pack 1 interleave 1 (lanes 16/32/64 × unroll 2/4; lanes 32 in workgroups of 128;
#             lanes 32 with the Reference region's 6 144 columns of x staged), csr-stream pack 1,
#             sliced-ell-split pack 1 interleave 1 (parts 8 / 16)
#   ci-unsafe the CI-like grid with Dawn's robustness off (--unsafe): what the bounds checks cost where the upload
#             validated every index (round 1 of this call, 06:45 UTC, also ran the DIA kernels unsafe: no gain, 0–2 % slower)
# 1 s of warm-up, 150 ms of heat before each timing (longer while the SM clock is below 1 500 MHz), every case
# twice (two rounds, other cases in between), every kernel checked against the float64 product; the SM / memory
# clock is sampled every 100 ms for the whole call.
#
# Pack (project root, after pnpm install):
#   bash ../shared/gpukit/pack.sh bench/spmv.ts bench/spmv-dia-probe.ts
# Run (device tool, carry [".gpukit"], timeout_s 480):
#   bash .gpukit/enter.sh bash bench/spmv-bw20.sh $OUT
# Writes under the directory given: bw20.log (every step's output, then the CUSPARSE / PROBE / SUMMARY / BEST
# lines again) and bw20.json (each step's JSON, the anchor's lines and the clock CSV). Stdout: those lines.
# Dry run off the GPU machine (lavapipe; the anchor fails without CUDA):
#   BW_SCALE=10 BW_BUDGET=4000 BW_APP="npx tsx bench/spmv.ts" BW_PROBE="npx tsx bench/spmv-dia-probe.ts" BW_EXTRA=--quick bash bench/spmv-bw20.sh /tmp/dry
set -u
# the output directory, the steps' JSON / clock directory, the dumped matrices
out=${1:-/tmp/bw20} j=/tmp/bw20-j m=/tmp/bw20-m
log="$out/bw20.log" ck=/tmp/bw20-j/clocks.csv
app=${BW_APP:-node .gpukit/app/spmv.mjs} probe=${BW_PROBE:-node .gpukit/app/spmv-dia-probe.mjs} extra=${BW_EXTRA:-}
budget=${BW_BUDGET:-440} scale=${BW_SCALE:-1} # step limits × scale (a lavapipe dry run needs ~10)
mkdir -p "$out" $j $m && : >"$log"
. "$(dirname "$0")/lib/device-steps.sh" # step, clock_start, clock_histogram, combine_json
clock_start $ck
combine() { combine_json "$out/bw20.json" $j; }
step dump 40 $app $extra --dump-only --dump $m --only banded,stencil,cilike
csr() { for f in $m/$1*.rowptr; do [ -e "$f" ] && echo "${f%.rowptr}.csr"; done; }
dia="$(csr banded) $(csr stencil2d) $(csr stencil3d) $(csr stencil27)"
ci="$(csr cilike)"
step cusparse 25 python3 .gpukit/cusparse_anchor.py $dia $ci --json $j/cusparse.jsonl
step probe 65 $probe $extra --rounds 2 --reps 20 --heat-ms 150 --warm-ms 1000 --clock-log $ck --out $j/probe.json
common="$extra --no-generated --rounds 2 --reps 20 --heat-ms 150 --warm-ms 1000 --no-variants --cusparse $j/cusparse.jsonl --clock-log $ck"
tiled="--grid dia-tiled:rowsPerThread=2/4:unroll=4/8"
vec4="--grid dia-vec4:unroll=4/5/7/8 --grid dia-vec4:rowsPerThread=2:unroll=4/8 --grid dia-vec4:xvec=0:unroll=4/8 --grid dia-vec4:tiles=4:unroll=4/8 --grid dia-vec4:workgroupSize=128:unroll=4/8 --grid dia-vec4:xvec=2:workgroupSize=64/128:unroll=4/8"
step dia 120 $app $common $dia --kernels dia-tiled,dia-vec4,csr-adaptive $tiled $vec4 --out $j/dia.json
long="--grid csr-long:lanes=16/32/64:unroll=2/4:pack=1:interleave=1 --grid csr-long:lanes=32:unroll=2/4:pack=1:interleave=1:workgroupSize=128"
step ci 100 $app $common $ci --kernels csr-long,csr-stream,sliced-ell-split $long --grid csr-stream:pack=1 \
  --grid csr-long:lanes=32:unroll=2:pack=1:interleave=1:stage=6144 \
  --grid sliced-ell-split:parts=8/16 --out $j/ci.json
step ci-unsafe 90 $app $common --unsafe $ci --kernels csr-long,csr-stream $long --grid csr-stream:pack=1 --out $j/ci-unsafe.json
kill $clk 2>/dev/null
combine
clock_histogram $ck
{
  grep -h '"spmv_ms"' $j/cusparse.jsonl 2>/dev/null | grep float32 | sed 's/^/CUSPARSE /' | cut -c1-170
  awk '/^== /{ pass = $2 } /^PROBE|^SUMMARY|^BEST|^copy bandwidth|WRONG|FAILED|Error/{ print pass ": " $0 }' "$log"
  grep -h '^SM clock\|^== .*skipped' "$log"
  tail -3 "$log"
} | tee -a "$log.tmp"
cat "$log.tmp" >>"$log" && rm -f "$log.tmp"
