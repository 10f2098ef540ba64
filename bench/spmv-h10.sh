#!/usr/bin/env bash
# Issue 20's H10 probe on the GPU machine in one call (about 2–2.5 minutes on an H100): the H10
# part of bench/spmv-sweep.sh with the session-8 second-wave variants of sliced-ell-split (groups of
# 4 slots with 16-bit offsets, the layout that won the first wave at 0.235–0.240 ms, cuSPARSE 0.247).
# Question: at 49 % of copy, is the kernel limited by its invocation count? slice 32, parts 8 starts
# 63 504 × 8 = 508 032 invocations, 1.9 waves of the H100's 132 SMs × 2 048; parts 4 is 0.94 of a
# wave with the same slots in flight per row at unroll 4 (parts · unroll · 4 = 64), parts 2 × unroll
# 4 half of that; slice 64 × parts 4 puts one slice per workgroup; workgroups of 128 halve the
# granule of the last wave. The first-wave winner runs again as the same-call baseline.
# Pass 1 with Dawn's robustness on (the library default), pass 2 off (--unsafe); two rounds each, each
# round a fresh upload (their spread is printed), cuSPARSE timed in the same call on the same CSR.
#
# Pack (project root, after pnpm install):
#   bash ../shared/gpukit/pack.sh bench/spmv.ts --data ../shared/data/fcidump/H10_sto6g_C1_dice.FCIDUMP
# Run (device tool, carry [".gpukit"]):
#   bash .gpukit/enter.sh bash bench/spmv-h10.sh $OUT
# Output under the directory given, two files: spmv-h10.log (every step's log, the anchor, the SM
# clock summary) and spmv-h10.json (each pass's bench JSON and the anchor's lines); on stdout the
# cuSPARSE line and one SUMMARY line per variant and pass, one BEST line per pass.
set -u
out=${1:-/tmp/spmv-h10}
mkdir -p "$out" /tmp/spmv-h10j
log="$out/spmv-h10.log"
: >"$log"
# SWEEP_FCIDUMP, SWEEP_EXTRA (e.g. --quick) and SWEEP_APP only for a dry run of this script off the GPU machine
fd=${SWEEP_FCIDUMP:-.gpukit/data/H10_sto6g_C1_dice.FCIDUMP}
extra=${SWEEP_EXTRA:-}
# SWEEP_APP: a command that runs bench/spmv.ts (dry runs from the source tree)
app=${SWEEP_APP:-node .gpukit/app/spmv.mjs}
j=/tmp/spmv-h10j
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 200 >$j/clocks.csv 2>/dev/null &
clk=$!
# one JSON, rewritten after every step (a call cut short keeps what ran)
combine() {
  node -e '
const fs = require("fs"); const d = process.argv[2]; const o = { passes: {}, cusparse: [] };
for (const f of fs.readdirSync(d)) {
  if (f.endsWith(".json")) o.passes[f.slice(0, -5)] = JSON.parse(fs.readFileSync(`${d}/${f}`, "utf8"));
  if (f === "cusparse.jsonl") o.cusparse = fs.readFileSync(`${d}/${f}`, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}
fs.writeFileSync(process.argv[1], JSON.stringify(o));' "$out/spmv-h10.json" "$j" >>"$log" 2>&1
}
step() { # name timeout command…: run, append its output to the log under a header, refresh the JSON
  local name=$1 limit=$2
  shift 2
  echo "== $name ($(date -u +%T))" >>"$log"
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "== $name exit $? ($(date -u +%T))" >>"$log"
  combine
}
step dump 40 $app $extra --dump-only --dump /tmp/m10 --only ci- --fcidump $fd
anchors=$(for f in /tmp/m10/*.rowptr; do echo "${f%.rowptr}.csr"; done)
step cusparse 40 python3 .gpukit/cusparse_anchor.py $anchors --json $j/cusparse.jsonl
common="$extra --rounds 2 --reps 20 --heat-ms 60 --no-variants --cusparse $j/cusparse.jsonl --only ci- --fcidump $fd"
# sliceHeight first: the grid's first parameter varies slowest, so each slice height converts once
grid="--kernels sliced-ell-split
  --grid sliced-ell-split:sliceHeight=32:parts=8:unroll=2:pack=1:interleave=1:workgroupSize=256/128
  --grid sliced-ell-split:sliceHeight=32:parts=4:unroll=2/4:pack=1:interleave=1:workgroupSize=256
  --grid sliced-ell-split:sliceHeight=32:parts=4:unroll=2:pack=1:interleave=1:workgroupSize=128
  --grid sliced-ell-split:sliceHeight=32:parts=2:unroll=4:pack=1:interleave=1:workgroupSize=256
  --grid sliced-ell-split:sliceHeight=64:parts=4:unroll=2:pack=1:interleave=1:workgroupSize=256"
step h10-1 70 $app $common $grid --out $j/h10-1.json
step h10-2 70 $app $common --unsafe $grid --out $j/h10-2.json
kill $clk 2>/dev/null
awk -F', ' 'NR > 1 { n[$2]++ } END { for (c in n) print "SM clock", c, n[c], "samples" }' $j/clocks.csv 2>/dev/null | sort -k4 -nr | head -4 >>"$log"
grep -h '"spmv_ms"' $j/cusparse.jsonl 2>/dev/null | grep float32 | sed 's/^/CUSPARSE /' | cut -c1-160
awk '/^== /{ pass = $2 } /^SUMMARY|^BEST|WRONG|FAILED|Error/{ print pass ": " $0 }' "$log"
tail -4 "$log"
