#!/usr/bin/env bash
# Nothing a user types runs as a command: gpusched-experiment packing --slurm-array writes
# array.sh and merge.sh; every user-supplied field that reaches them (the node and pod list
# paths, --workload, --out) is given each shell-special text in turn (a newline, quotes, $(),
# a backtick, ;, &, |, a backslash, a space), each carrying a command that would create a file
# named "pwned". Every array task and the merge are then run with bash, as Slurm would, from a
# scratch directory; the run must succeed, create no "pwned" anywhere, and write the tables
# with the workload name as one CSV field.
#
#   script-quoting.sh PROGRAM NODES.csv PODS.csv WORK
set -uo pipefail
program="$1" nodes="$2" pods="$3" work="$4"
rm -rf "${work}"
mkdir -p "${work}"

specials=(
  $'new\nline\ntouch pwned\n'
  "quote'touch pwned'"
  'double"quote;touch pwned;"'
  'dollar$(touch pwned)'
  'back`touch pwned`tick'
  'semi;touch pwned;colon'
  'amp&touch pwned&'
  'pipe|touch pwned|'
  'back\slash\;touch pwned'
  'spa ce ${HOME} $((1+1))'
  'com,ma,"csv"'
)

fail=0
i=0
for s in "${specials[@]}"; do
  i=$((i + 1))
  case_dir="${work}/${i}"
  mkdir -p "${case_dir}/in${s}dir" "${case_dir}/cwd"
  cp "${nodes}" "${case_dir}/in${s}dir/nodes${s}.csv"
  cp "${pods}" "${case_dir}/in${s}dir/pods${s}.csv"
  out="${case_dir}/out${s}"
  if ! (cd "${case_dir}/cwd" && "${program}" packing --nodes "${case_dir}/in${s}dir/nodes${s}.csv" \
          --pods "${case_dir}/in${s}dir/pods${s}.csv" --policy fgd --seeds 1-2 \
          --workload "w${s}" --no-timing --slurm-array --out "${out}") >"${case_dir}/gen.log" 2>&1; then
    echo "FAIL: case ${i}: --slurm-array failed:"
    cat "${case_dir}/gen.log"
    fail=1
    continue
  fi
  ok=1
  for task in 0 1; do
    (cd "${case_dir}/cwd" && SLURM_ARRAY_TASK_ID=${task} bash "${out}/slurm/array.sh") \
      >"${case_dir}/task${task}.log" 2>&1 || ok=0
  done
  (cd "${case_dir}/cwd" && bash "${out}/slurm/merge.sh") >"${case_dir}/merge.log" 2>&1 || ok=0
  if [[ ${ok} -ne 1 ]]; then
    echo "FAIL: case ${i}: a task or the merge failed:"
    cat "${case_dir}"/*.log "${out}/slurm/"*.out 2>/dev/null
    fail=1
  fi
  if [[ -n "$(find "${work}" -name pwned)" ]]; then
    echo "FAIL: case ${i}: a command in a user's text ran: $(find "${work}" -name pwned)"
    fail=1
  fi
  # The workload name is one CSV field, whatever it holds.
  if ! python3 - "${out}/analysis_allo_discrete.csv" "w${s}" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) == 3, rows
assert all(len(r) == len(rows[0]) for r in rows), rows
assert all(r[0] == sys.argv[2] for r in rows[1:]), (rows[1][0], sys.argv[2])
PY
  then
    echo "FAIL: case ${i}: the workload column of analysis_allo_discrete.csv is not one field"
    fail=1
  fi
done
if [[ ${fail} -ne 0 ]]; then exit 1; fi
echo "script-quoting: ${#specials[@]} hostile texts in every field; the scripts ran, nothing executed"
