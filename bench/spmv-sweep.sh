#!/usr/bin/env bash
# Issue 20's SpMV sweep on the GPU machine in one call (about 4.5–5 minutes on an H100): dia-tiled
# with unroll = the stencil's diagonal count (5, 7) against 4, and with the diagonals' value
# blocks skewed (skew 1/4/16 × 256 bytes) on the banded and stencil matrices,
# and on the real H10 Hamiltonian (and, pass 1 only, the CI-like generator) sliced-ell-split's
# one-array layouts (interleave 1: (column, value) pairs at 8 B/entry; 16-bit offsets in groups of
# 4 slots at 6.1 B/entry) against its session-7 best (two arrays, parts 16, unroll 8) and
# csr-long's best, each against cuSPARSE timed in the same call on the same CSR
# (cusparse_anchor.py on the dumps). Pass 1 with Dawn's robustness on (the library default),
# pass 2 with it off (--unsafe: the kernels' indices are validated at upload); two rounds per
# pass, each a fresh upload (the spread between them is printed: session 7 saw 0.206 vs 0.322 ms).
#
# Pack (project root, after pnpm install):
#   bash ../shared/gpukit/pack.sh bench/spmv.ts --data ../shared/data/fcidump/H10_sto6g_C1_dice.FCIDUMP
# Run (device tool, carry [".gpukit"]):
#   bash .gpukit/enter.sh bash bench/spmv-sweep.sh $OUT
# Output under the directory given, two files: spmv-sweep.log (every step's log, the cuSPARSE
# anchor and the SM clock summary) and spmv-sweep.json (each pass's bench JSON and the anchor's
# lines); on stdout one SUMMARY line per kernel variant, matrix and pass and one BEST line per
# matrix and pass (ms, rounds, GB/s and % of copy, bytes per entry, floor at copy speed,
# cuSPARSE ms and ratio).
set -u
out=${1:-/tmp/spmv-sweep}
mkdir -p "$out" /tmp/spmv-j
log="$out/spmv-sweep.log"
: >"$log"
# SWEEP_FCIDUMP and SWEEP_EXTRA (e.g. --quick) only for a dry run of this script off the GPU machine
fd=${SWEEP_FCIDUMP:-.gpukit/data/H10_sto6g_C1_dice.FCIDUMP}
extra=${SWEEP_EXTRA:-}
app=.gpukit/app/spmv.mjs
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 200 >/tmp/spmv-j/clocks.csv 2>/dev/null &
clk=$!
# one JSON, rewritten after every step (a call cut short keeps what ran): each pass's bench output by name, the anchor's lines
combine() {
  node -e '
const fs = require("fs"); const d = "/tmp/spmv-j"; const o = { passes: {}, cusparse: [] };
for (const f of fs.readdirSync(d)) {
  if (f.endsWith(".json")) o.passes[f.slice(0, -5)] = JSON.parse(fs.readFileSync(`${d}/${f}`, "utf8"));
  if (f === "cusparse.jsonl") o.cusparse = fs.readFileSync(`${d}/${f}`, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}
fs.writeFileSync(process.argv[1], JSON.stringify(o));' "$out/spmv-sweep.json" >>"$log" 2>&1
}
step() { # name timeout command…: run, append its output to the log under a header, refresh the JSON
  local name=$1 limit=$2
  shift 2
  echo "== $name ($(date -u +%T))" >>"$log"
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "== $name exit $? ($(date -u +%T))" >>"$log"
  combine
}
stencils=banded,stencil2d,stencil3d,stencil27
step dump 40 node $app $extra --dump-only --dump /tmp/m --only $stencils,ci- --fcidump $fd
# the anchor reads NAME.rowptr/.cols/.vals when given NAME.csr
anchors=$(for f in /tmp/m/*.rowptr; do echo "${f%.rowptr}.csr"; done)
step cusparse 40 python3 .gpukit/cusparse_anchor.py $anchors --json /tmp/spmv-j/cusparse.jsonl
base="$extra --reps 20 --heat-ms 60 --no-variants --cusparse /tmp/spmv-j/cusparse.jsonl"
common="--rounds 2 $base"
# unroll 5/7 = the 5- and 7-point stencils' diagonal counts; skew 1/4/16: diagonal t's values t·skew·256 bytes later
dia="--only $stencils --kernels dia-tiled --grid dia-tiled:vec=0:rowsPerThread=4:unroll=4/5/7 --grid dia-tiled:vec=0:rowsPerThread=8:unroll=5
  --grid dia-tiled:vec=0:rowsPerThread=4:unroll=4:skew=1/4/16"
# sliceHeight first: the grid's first parameter varies slowest, so each slice height converts once
ci="--kernels sliced-ell-split,csr-long
  --grid sliced-ell-split:sliceHeight=16:parts=16:unroll=2/4:pack=1:interleave=1
  --grid sliced-ell-split:sliceHeight=32:parts=8/16:unroll=2/4:pack=1:interleave=1
  --grid sliced-ell-split:sliceHeight=32:parts=16:unroll=4/8:pack=0:interleave=1
  --grid sliced-ell-split:sliceHeight=32:parts=16:unroll=8:pack=0:interleave=0
  --grid csr-long:lanes=16:unroll=2:pack=1:interleave=1"
# the CI-like generator (not in determinant order; cuSPARSE 0.285 ms on the same seed in session 7, call 1): one round, no dump
cilike="--only cilike --kernels sliced-ell-split,csr-long --grid sliced-ell-split:sliceHeight=32:parts=16:unroll=2:pack=1:interleave=1
  --grid csr-long:lanes=32:unroll=2:pack=1:interleave=1"
step stencil-1 80 node $app $common $dia --out /tmp/spmv-j/stencil-1.json
step ci-1 75 node $app $common --only ci- --fcidump $fd $ci --out /tmp/spmv-j/ci-1.json
step cilike-1 40 node $app --rounds 1 $base $cilike --out /tmp/spmv-j/cilike-1.json
step stencil-2 80 node $app $common --unsafe $dia --out /tmp/spmv-j/stencil-2.json
step ci-2 75 node $app $common --unsafe --only ci- --fcidump $fd $ci --out /tmp/spmv-j/ci-2.json
kill $clk 2>/dev/null
awk -F', ' 'NR > 1 { n[$2]++ } END { for (c in n) print "SM clock", c, n[c], "samples" }' /tmp/spmv-j/clocks.csv 2>/dev/null | sort -k4 -nr | head -4 >>"$log"
grep -h '"spmv_ms"' /tmp/spmv-j/cusparse.jsonl 2>/dev/null | grep float32 | sed 's/^/CUSPARSE /' | cut -c1-160
awk '/^== /{ pass = $2 } /^SUMMARY|^BEST|WRONG|FAILED|Error/{ print pass ": " $0 }' "$log"
tail -4 "$log"
