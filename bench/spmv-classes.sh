#!/usr/bin/env bash
# Issue 20, session 10: the classes still behind or barely ahead of cuSPARSE — uniform random,
# power-law, CI-like (60 000 rows × ~1 000) and the real H10 Hamiltonian — with the new csr-stream
# kernel (single coalesced entries per lane, `unroll` in flight, prefetch of the next step; on CI
# rows also its 6-byte form, 16-bit column pairs) against
# each class's previous best in the same call, and cuSPARSE (cusparse_anchor.py on the same CSR).
# About 3–3.5 minutes on an H100 (step limits 50 + 25 + 45 + 65 + 55 s = 240 s at most; the CI-like
# generator alone takes 15–20 s to build). Every case runs twice
# (--rounds 2, each round a fresh upload, the other variants in between; the spread is printed).
# Question per class: does cuSPARSE's access pattern with loads in flight (csr-stream) beat the
# previous best — csr-adaptive on uniform (0.282 ms, cuSPARSE 0.366) and power-law (0.256, 0.286),
# csr-long on CI-like (0.417, 0.285), sliced-ell-split on H10 (0.240, 0.247)?
#
# Pack (project root, after pnpm install):
#   bash ../shared/gpukit/pack.sh bench/spmv.ts --data ../shared/data/fcidump/H10_sto6g_C1_dice.FCIDUMP
# Run (device tool, carry [".gpukit"], timeout_s 260):
#   bash .gpukit/enter.sh bash bench/spmv-classes.sh $OUT
# Output under the directory given, two files: spmv-classes.log (every step's log, the anchor, the
# SM clock summary) and spmv-classes.json (each step's bench JSON and the anchor's lines); on stdout
# the cuSPARSE float32 lines, one SUMMARY line per variant and matrix (ms, both rounds, % of copy,
# bytes per entry, cuSPARSE ms and ratio) and one BEST line per matrix.
# Dry run off the GPU machine (lavapipe; the anchor fails without CUDA):
#   SWEEP_APP="npx tsx bench/spmv.ts" SWEEP_FCIDUMP=../shared/data/fcidump/N2_sto3g_R1.1A_block2.FCIDUMP SWEEP_EXTRA=--quick bash bench/spmv-classes.sh /tmp/dry
set -u
out=${1:-/tmp/spmv-classes}
j=/tmp/spmv-classes-j
mkdir -p "$out" $j
log="$out/spmv-classes.log"
: >"$log"
fd=${SWEEP_FCIDUMP:-.gpukit/data/H10_sto6g_C1_dice.FCIDUMP}
extra=${SWEEP_EXTRA:-}
app=${SWEEP_APP:-node .gpukit/app/spmv.mjs}
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
fs.writeFileSync(process.argv[1], JSON.stringify(o));' "$out/spmv-classes.json" "$j" >>"$log" 2>&1
}
step() { # name timeout command…: run, append its output to the log under a header, refresh the JSON
  local name=$1 limit=$2
  shift 2
  echo "== $name ($(date -u +%T))" >>"$log"
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "== $name exit $? ($(date -u +%T))" >>"$log"
  combine
}
step dump 50 $app $extra --dump-only --dump /tmp/m-cls --only uniform,powerlaw,cilike,ci- --fcidump $fd
anchors=$(for f in /tmp/m-cls/*.rowptr; do echo "${f%.rowptr}.csr"; done)
step cusparse 25 python3 .gpukit/cusparse_anchor.py $anchors --json $j/cusparse.jsonl
common="$extra --rounds 2 --reps 20 --heat-ms 60 --no-variants --cusparse $j/cusparse.jsonl"
# short rows (16 per row; power-law 2…20 000): several rows per subgroup, 2–4 entries in flight
irregular="--only uniform,powerlaw --kernels csr-adaptive,csr-stream
  --grid csr-stream:lanes=4/8:unroll=2/4:prefetch=1 --grid csr-stream:lanes=4:unroll=4:prefetch=0"
# long rows: a subgroup or a workgroup per row, 4–8 entries in flight, prefetch on and off (pack 0:
# the CSR arrays, 8 B/entry); pack 1: csr-long's quad arrays read as 16-bit column pairs (6 B/entry)
long="--grid csr-stream:lanes=32:unroll=4/8:prefetch=1:pack=0 --grid csr-stream:lanes=256:unroll=4:prefetch=1:pack=0
  --grid csr-stream:lanes=32:unroll=4:prefetch=0:pack=0
  --grid csr-stream:lanes=32/256:unroll=2/4:prefetch=1:pack=1"
cilike="--only cilike --kernels csr-long,csr-stream --grid csr-long:lanes=32:unroll=2:pack=1:interleave=1 $long"
# H10 in determinant order: adjacent rows gather nearby columns at the same position (0.059 lines per
# entry for slot k of 32 rows against 0.327 along a row), so also 4–8 lanes per row (4–8 rows per
# subgroup walking in step) with the 6-byte pairs
h10="--only ci- --fcidump $fd --kernels csr-long,sliced-ell-split,csr-stream --grid csr-long:lanes=16:unroll=2:pack=1:interleave=1
  --grid sliced-ell-split:sliceHeight=32:parts=8:unroll=2:pack=1:interleave=1
  --grid csr-stream:lanes=32:unroll=4/8:prefetch=1:pack=0 --grid csr-stream:lanes=32:unroll=4:prefetch=0:pack=0
  --grid csr-stream:lanes=4/8/32:unroll=4:prefetch=1:pack=1 --grid csr-stream:lanes=32/256:unroll=2:prefetch=1:pack=1"
step irregular 45 $app $common $irregular --out $j/irregular.json
step cilike 65 $app $common $cilike --out $j/cilike.json
step h10 55 $app $common $h10 --out $j/h10.json
kill $clk 2>/dev/null
awk -F', ' 'NR > 1 { n[$2]++ } END { for (c in n) print "SM clock", c, n[c], "samples" }' $j/clocks.csv 2>/dev/null | sort -k4 -nr | head -4 >>"$log"
grep -h '"spmv_ms"' $j/cusparse.jsonl 2>/dev/null | grep float32 | sed 's/^/CUSPARSE /' | cut -c1-160
awk '/^== /{ pass = $2 } /^SUMMARY|^BEST|WRONG|FAILED|Error/{ print pass ": " $0 }' "$log"
tail -4 "$log"
