#!/usr/bin/env bash
# Issue 20's SpMV sweep on the GPU machine in one call (about 6–8 minutes on an H100): the
# dia-tiled variants on the banded and stencil matrices and the CI kernels (csr-long's best,
# sliced-ell-split's grid) on the CI-like matrix and the real H10 Hamiltonian, each with Dawn's
# robustness on and off (--unsafe), two interleaved rounds, against cuSPARSE timed in the same
# call on the same CSR (cusparse_anchor.py on the dumps), with the SM clock logged.
#
# Pack (project root, after pnpm install):
#   bash ../shared/gpukit/pack.sh bench/spmv.ts --data ../shared/data/fcidump/H10_sto6g_C1_dice.FCIDUMP
# Run (device tool, carry [".gpukit"]):
#   bash .gpukit/enter.sh bash bench/spmv-sweep.sh $OUT
# Output under the directory given: clocks.csv, cusparse.jsonl, {stencil,ci}{,-unsafe}.{json,log}, cilike.{json,log},
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
# the anchor reads NAME.rowptr/.cols/.vals when given NAME.csr (no .csr file exists: list them from the rowptr files)
anchors=$(for f in /tmp/m/*.rowptr; do echo "${f%.rowptr}.csr"; done)
timeout 120 python3 .gpukit/cusparse_anchor.py $anchors --json "$out/cusparse.jsonl" >"$out/anchor.log" 2>&1
common="--rounds 2 --reps 20 --heat-ms 100 --no-variants --cusparse $out/cusparse.jsonl"
dia="--only $stencils --kernels dia-tiled,csr-adaptive --grid dia-tiled:vec=0/1:rowsPerThread=1/2/4:unroll=4/8"
ci="--fcidump $fd --kernels csr-long,sliced-ell-split --grid csr-long:lanes=16/32:unroll=2:pack=1:interleave=1 --grid sliced-ell-split:pack=0/1:parts=4/8/16:unroll=4/8"
# safe passes first (robustness on: the library default), then robustness off; the CI-like
# generator only in the safe pass (its rows are not in determinant order)
timeout 120 node $app $common $dia --out "$out/stencil.json" >"$out/stencil.log" 2>&1
timeout 170 node $app $common --only ci- $ci --out "$out/ci.json" >"$out/ci.log" 2>&1
timeout 100 node $app $common --only cilike $ci --out "$out/cilike.json" >"$out/cilike.log" 2>&1
timeout 120 node $app $common --unsafe $dia --out "$out/stencil-unsafe.json" >"$out/stencil-unsafe.log" 2>&1
timeout 110 node $app $common --unsafe --only ci- $ci --out "$out/ci-unsafe.json" >"$out/ci-unsafe.log" 2>&1
kill $clk 2>/dev/null
cat "$out/anchor.log"
for f in stencil ci cilike stencil-unsafe ci-unsafe; do
  echo "== $f (exit: see $f.log tail)"
  grep -h "^SUMMARY\|^BEST\|WRONG\|FAILED" "$out/$f.log" || tail -5 "$out/$f.log"
done
awk -F', ' 'NR > 1 { n[$2]++ } END { for (c in n) print "SM clock", c, n[c], "samples" }' "$out/clocks.csv" 2>/dev/null | sort -k4 -nr | head -4
