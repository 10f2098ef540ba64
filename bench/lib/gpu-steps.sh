# Sourced by the one-call GPU scripts (bench/spmv-codegen.sh, bench/fci20.sh).
# step NAME LIMIT COMMAND…: run COMMAND within what is left of the call's budget (LIMIT × scale seconds
# at most), its output appended to the log under a header with the exit status, then `combine` (the
# caller's function that rewrites its JSON, so a call cut short keeps what ran). The caller sets
# log (file), budget (s; bash's SECONDS counts from the script's start) and optionally scale (default 1).
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
