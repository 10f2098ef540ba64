#!/usr/bin/env bash
# Issue 20's SpMV sweep on the GPU machine in one call (about 6 minutes on an H100): the
# dia-tiled variants on the banded and stencil matrices and the CI kernels (csr-long's best,
# sliced-ell-split's grid) on the CI-like matrix and the real H10 Hamiltonian, each with Dawn's
# robustness on and off (--unsafe), two interleaved rounds, against cuSPARSE timed in the same
# call on the same CSR (cusparse_anchor.py on the dumps), with the SM clock logged.
#
# Pack (project root, after pnpm install):
#   bash ../shared/gpukit/pack.sh bench/spmv.ts --data ../shared/data/fcidump/H10_sto6g_C1_dice.FCIDUMP
# Run (device tool, carry [".gpukit"]):
#   bash .gpukit/enter.sh bash bench/spmv-sweep.sh $OUT
# Output under the directory given: clocks.csv, cusparse.jsonl, {stencil,ci}{,-unsafe}.{json,log},
# and on stdout one SUMMARY line per kernel variant and matrix and one BEST line per matrix and
# pass (ms, rounds, GB/s and % of copy, bytes per entry, floor at copy speed, cuSPARSE ms and ratio).
set -u
out=${1:-/tmp/spmv-sweep}
mkdir -p "$out"
fd=.gpukit/data/H10_sto6g_C1_dice.FCIDUMP
app=.gpukit/app/spmv.mjs
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 200 >"$out/clocks.csv" 2>/dev/null &
clk=$!
stencils=banded,stencil2d,stencil3d,stencil27
timeout 120 node $app --dump-only --dump /tmp/m --only $stencils,cilike,ci- --fcidump $fd >"$out/dump.log" 2>&1
timeout 120 python3 .gpukit/cusparse_anchor.py /tmp/m/*.csr --json "$out/cusparse.jsonl" >"$out/anchor.log" 2>&1
common="--rounds 2 --reps 20 --heat-ms 100 --no-variants --cusparse $out/cusparse.jsonl"
dia="--only $stencils --kernels dia-tiled,csr-adaptive --grid dia-tiled:vec=0/1:rowsPerThread=1/2/4:unroll=4/8"
ci="--only cilike,ci- --fcidump $fd --kernels csr-long,sliced-ell-split --grid csr-long:lanes=16/32:unroll=2:pack=1:interleave=1 --grid sliced-ell-split:pack=0/1:sliceHeight=32/64:parts=4/8/16:unroll=4/8"
for u in "" "--unsafe"; do
  tag=${u:+-unsafe}
  timeout 150 node $app $common $u $dia --out "$out/stencil$tag.json" >"$out/stencil$tag.log" 2>&1
  timeout 150 node $app $common $u $ci --out "$out/ci$tag.json" >"$out/ci$tag.log" 2>&1
done
kill $clk 2>/dev/null
cat "$out/anchor.log"
for f in stencil stencil-unsafe ci ci-unsafe; do
  echo "== $f (exit: see $f.log tail)"
  grep -h "^SUMMARY\|^BEST\|WRONG\|FAILED" "$out/$f.log" || tail -5 "$out/$f.log"
done
awk -F', ' 'NR > 1 { n[$2]++ } END { for (c in n) print "SM clock", c, n[c], "samples" }' "$out/clocks.csv" 2>/dev/null | sort -k4 -nr | head -4
