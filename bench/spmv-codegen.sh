#!/usr/bin/env bash
# Issue 20, session 11: is the WGSL path's code generation what keeps our CI-row kernels at 29–48 % of
# copy where cuSPARSE moves 72–75 %? And clean (warm, clock-logged) figures for the gather-bound classes.
# One H100 call, at most 235 s (every step's limit is cut to what is left of that budget):
#   dump      uniform 2·10^6 × 16, power law 2·10^6, CI-like 60 000 × ~1 000, H10 STO-6G → raw CSR
#   cusparse  cusparse_anchor.py on the four (float32/float64 cuSPARSE; the WGSL steps' ratios)
#   twin-ci   bench/spmv_cuda_twin.py: CUDA twins of csr-stream (pack 0, lanes 32, unroll 4),
#             csr-long (pack 1, interleave 1, lanes 32, unroll 2) and sliced-ell-split (pack 0, interleave 0,
#             slices of 32, parts 8, unroll 2) on CI-like and H10, each in four load
#             forms (plain, clamp = Dawn's robustness, ldg = read-only cache, int = signed indices), next
#             to cuSPARSE in the same process
#   ci        bench/spmv.ts on the same two matrices (robustness on, the library default): csr-long as
#             twinned, sliced-ell-split (H10's best, pack 1 interleave 1; and pack 0 interleave 0 as twinned), csr-stream lanes 32 unroll 4 with u32 / i32 indices
#             and workgroups of 256 / 128
#   irregular bench/spmv.ts on uniform and power law: csr-adaptive, csr-vec4 (lanes 2 / 32), csr-stream
#             (lanes 4 unroll 4; lanes 8 unroll 4 prefetch), ell, sell — 1 s of warm-up, 150 ms of heat
#             before each timing, the SM clock of each case on its SUMMARY line (CLOCK-LOW < 1 500 MHz)
#   ci-unsafe bench/spmv.ts --unsafe (Dawn robustness off) on CI-like and H10: csr-long and csr-stream
#   twin-irr  the stream twin (lanes 4 and 8, unroll 4; plain and ldg) on uniform and power law
# Every case runs twice (two rounds, other cases in between); every kernel and twin is checked against
# the float64 product. The SM / memory clock is sampled every 100 ms for the whole call.
#
# Pack (project root, after pnpm install):
#   bash ../shared/gpukit/pack.sh bench/spmv.ts --data ../shared/data/fcidump/H10_sto6g_C1_dice.FCIDUMP
# Run (device tool, carry [".gpukit"], timeout_s 260):
#   bash .gpukit/enter.sh bash bench/spmv-codegen.sh $OUT
# Writes two files under the directory given: spmv20.log (every step's output, then the TWIN /
# SUMMARY / BEST lines again) and spmv20.json (each step's JSON, the anchor's and twins' lines, and
# the raw clock CSV). Stdout: the CUSPARSE, TWIN, SUMMARY and BEST lines and the clock summary.
# Dry run off the GPU machine (lavapipe; the anchor and the twins fail without CUDA):
#   SWEEP_SCALE=10 SWEEP_BUDGET=3000 SWEEP_APP="npx tsx bench/spmv.ts" SWEEP_FCIDUMP=../shared/data/fcidump/N2_sto3g_R1.1A_block2.FCIDUMP SWEEP_EXTRA=--quick bash bench/spmv-codegen.sh /tmp/dry
set -u
out=${1:-/tmp/spmv20}
j=/tmp/spmv20-j
m=/tmp/spmv20-m
mkdir -p "$out" $j $m
log="$out/spmv20.log"
: >"$log"
fd=${SWEEP_FCIDUMP:-.gpukit/data/H10_sto6g_C1_dice.FCIDUMP}
extra=${SWEEP_EXTRA:-}
app=${SWEEP_APP:-node .gpukit/app/spmv.mjs}
budget=${SWEEP_BUDGET:-235}
scale=${SWEEP_SCALE:-1} # step limits × scale (a lavapipe dry run needs ~10)
ck=$j/clocks.csv
. "$(dirname "$0")/lib/device-steps.sh" # step, clock_start, clock_histogram, combine_json
clock_start $ck
combine() { combine_json "$out/spmv20.json" $j; }
step dump 45 $app $extra --dump-only --dump $m --only uniform,powerlaw,cilike,ci- --fcidump $fd
csr() { for f in $m/$1*.rowptr; do [ -e "$f" ] && echo "${f%.rowptr}.csr"; done; }
ci="$(csr cilike) $(csr ci-)"
irr="$(csr uniform) $(csr powerlaw)"
step cusparse 20 python3 .gpukit/cusparse_anchor.py $ci $irr --json $j/cusparse.jsonl
step twin-ci 60 python3 bench/spmv_cuda_twin.py $ci --twins stream:32:4,long:32:2,split:8:2 --forms plain,clamp,ldg,int --rounds 2 --reps 20 --warm-ms 1000 --clock-log $ck --json $j/twin-ci.jsonl
common="$extra --no-generated --rounds 2 --reps 20 --heat-ms 150 --warm-ms 1000 --no-variants --cusparse $j/cusparse.jsonl --clock-log $ck"
long="--grid csr-long:lanes=32:unroll=2:pack=1:interleave=1"
stream="--grid csr-stream:lanes=32:unroll=4:prefetch=0:pack=0:index=0/1:workgroupSize=256 --grid csr-stream:lanes=32:unroll=4:prefetch=0:pack=0:index=0:workgroupSize=128"
step ci 50 $app $common $ci --kernels csr-long,sliced-ell-split,csr-stream $long $stream \
  --grid sliced-ell-split:sliceHeight=32:parts=8:unroll=2:pack=1:interleave=1 --grid sliced-ell-split:sliceHeight=32:parts=8:unroll=2:pack=0:interleave=0 --out $j/ci.json
step irregular 50 $app $common $irr --kernels csr-adaptive,csr-vec4,csr-stream,ell,sell --grid csr-vec4:lanes=2/32 \
  --grid csr-stream:lanes=4:unroll=4:prefetch=0 --grid csr-stream:lanes=8:unroll=4:prefetch=1 --out $j/irregular.json
step ci-unsafe 30 $app $common --unsafe $ci --kernels csr-long,csr-stream $long \
  --grid csr-stream:lanes=32:unroll=4:prefetch=0:pack=0:index=0/1 --out $j/ci-unsafe.json
step twin-irr 25 python3 bench/spmv_cuda_twin.py $irr --twins stream:4:4,stream:8:4 --forms plain,ldg --rounds 2 --reps 20 --warm-ms 500 --clock-log $ck --json $j/twin-irr.jsonl
kill $clk 2>/dev/null
combine
clock_histogram $ck
{
  grep -h '"spmv_ms"' $j/cusparse.jsonl 2>/dev/null | grep float32 | sed 's/^/CUSPARSE /' | cut -c1-170
  # TWIN lines: the clock-annotated copy when the twin step got that far, else the lines it printed per matrix
  awk 'function flush() { if (!ann) for (i = 1; i <= n; i++) print pass ": " pre[i]; n = 0; ann = 0 }
    /^== /{ flush(); pass = $2 } /^clock-annotated:/{ ann = 1 } /^TWIN/{ if (ann) print pass ": " $0; else pre[++n] = $0 }
    /^SUMMARY|^BEST|WRONG|FAILED|Error/ && !/^TWIN/{ print pass ": " $0 } END { flush() }' "$log"
  grep -h '^SM clock\|^== .*skipped' "$log"
  tail -3 "$log"
} | tee -a "$log.tmp"
cat "$log.tmp" >>"$log" && rm -f "$log.tmp"
