# What the one-call H100 scripts (bench/spmv-codegen.sh, bench/spmv-bw20.sh, bench/fci20.sh) share; source it after
# setting log (the log file), budget (seconds for all steps), scale (limit multiplier) and defining
# combine (refreshes the call's JSON after each step, usually with combine_json).
#   clock_start CSV            nvidia-smi samples the SM / memory clock every 100 ms into CSV (pid in $clk)
#   combine_json OUT DIR       one JSON from DIR: each NAME.json under passes, cusparse.jsonl, other
#                              NAME.jsonl under twins, clocks.csv (a call cut short keeps what ran)
#   step NAME LIMIT COMMAND…   run COMMAND within min(LIMIT·scale, what is left of the budget), its
#                              output under a '== NAME' header in $log, then combine
#   clock_histogram CSV        the six most sampled SM clocks of an nvidia-smi CSV, into $log
step() {
  local name=$1 limit=$(($2 * ${scale:-1})) left=$((budget - SECONDS))
  shift 2
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -lt 5 ]; then echo "== $name skipped: budget spent ($SECONDS s)" >>"$log"; return; fi
  echo "== $name (limit ${limit} s, $(date -u +%T))" >>"$log"
  timeout "$limit" "$@" >>"$log" 2>&1
  echo "== $name exit $? ($(date -u +%T), ${SECONDS} s)" >>"$log"
  combine
}
clock_histogram() {
  awk -F', ' 'NR > 1 { n[$2]++ } END { for (c in n) print "SM clock", c, n[c], "samples" }' "$1" 2>/dev/null | sort -k5 -nr | head -6 >>"$log"
}
clock_start() {
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 100 >"$1" 2>/dev/null &
  clk=$!
}
combine_json() {
  node -e '
const fs = require("fs"); const d = process.argv[2]; const o = { passes: {}, cusparse: [], twins: {}, clocks: "" };
const lines = (f) => fs.readFileSync(`${d}/${f}`, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
for (const f of fs.readdirSync(d)) {
  if (f.endsWith(".json")) o.passes[f.slice(0, -5)] = JSON.parse(fs.readFileSync(`${d}/${f}`, "utf8"));
  else if (f === "cusparse.jsonl") o.cusparse = lines(f);
  else if (f.endsWith(".jsonl")) o.twins[f.slice(0, -6)] = lines(f);
  else if (f === "clocks.csv") o.clocks = fs.readFileSync(`${d}/${f}`, "utf8");
}
fs.writeFileSync(process.argv[1], JSON.stringify(o));' "$1" "$2" >>"$log" 2>&1
}
