#!/usr/bin/env bash
# No write of the --slurm-array scripts or of their tasks goes through a link planted in OUT
# after the generator ran: at each name array.sh or merge.sh writes (OUT/slurm, OUT/cells, a
# task's OUT/cells/<i>, its log OUT/slurm/task-<i>.out, the merge's OUT/slurm/table.txt and
# OUT/slurm/merge.out) a symbolic link pointing outside OUT is planted, the script is run, and
# it must refuse (exit not 0, a message naming the symbolic link) with nothing outside OUT
# changed. A clean grid, run twice (a requeued task rewrites its log), must work.
#
#   slurm-array-links.sh EXPERIMENT NODES.csv PODS.csv WORK
set -uo pipefail
exp="$1" nodes="$2" pods="$3" work="$4"
rm -rf "${work}" && mkdir -p "${work}/cwd" || exit 1
fail=0
victim_dir="${work}/victim-dir" victim_file="${work}/victim-file"
reset_victims() {
  rm -rf "${victim_dir}" "${victim_file}"
  mkdir -p "${victim_dir}"
  printf 'victim\n' >"${victim_file}"
}
untouched() { [[ -z "$(ls -A "${victim_dir}")" && "$(cat "${victim_file}")" == "victim" ]]; }
generate() {  # generate OUT
  rm -rf "$1"
  "${exp}" packing --nodes "${nodes}" --pods "${pods}" --policy fgd --seeds 1-2 --no-timing \
    --slurm-array --out "$1" >/dev/null 2>&1
}
task() { (cd "${work}/cwd" && SLURM_ARRAY_TASK_ID="$2" bash "$1/slurm/array.sh"); }
merge() { (cd "${work}/cwd" && bash "$1/slurm/merge.sh"); }

out="${work}/clean"
generate "${out}" || { echo "FAIL: the generator failed"; exit 1; }
for round in 1 2; do
  task "${out}" 0 && task "${out}" 1 && merge "${out}" || { echo "FAIL: clean grid, round ${round}"; fail=1; }
done
grep -q "06-FGD" "${out}/slurm/table.txt" || { echo "FAIL: clean grid: no table"; fail=1; }

# plant NAME KIND(dir|file) STAGE(task|merge)
plant() {
  local name="$1" kind="$2" stage="$3" rc log
  reset_victims
  out="${work}/planted"
  generate "${out}" || { echo "FAIL: the generator failed"; fail=1; return; }
  if [[ "${stage}" == merge ]]; then task "${out}" 0 && task "${out}" 1 || { fail=1; return; }; fi
  rm -rf "${out:?}/${name}"
  if [[ "${kind}" == dir ]]; then ln -s "${victim_dir}" "${out}/${name}"; else ln -s "${victim_file}" "${out}/${name}"; fi
  log="${work}/last.log"
  if [[ "${stage}" == task ]]; then
    { task "${out}" 0; rc0=$?; task "${out}" 1; rc=$((rc0 || $?)); } >"${log}" 2>&1
  else
    merge "${out}" >"${log}" 2>&1
    rc=$?
  fi
  [[ -f "${out}/slurm/merge.out" && ! -L "${out}/slurm/merge.out" ]] && cat "${out}/slurm/merge.out" >>"${log}"
  if ! untouched; then
    echo "FAIL: a link at '${name}' redirected a write outside OUT"
    fail=1
  elif [[ ${rc} -eq 0 ]] || ! grep -q "${name}.* is a symbolic link" "${log}"; then
    echo "FAIL: a link at '${name}': expected a refusal naming the link, got exit ${rc}:"
    head -5 "${log}"
    fail=1
  else
    echo "ok   link at ${name} (${stage})"
  fi
}
plant cells/0 dir task
plant cells/1 dir task
plant cells dir task
plant slurm/task-0.out file task
plant slurm/task-1.out file task
plant slurm/table.txt file merge
plant slurm/merge.out file merge
# The program itself, run as a cell, refuses a link at its --out (whoever runs it).
reset_victims
mkdir -p "${work}/own"
ln -s "${victim_dir}" "${work}/own/0"
out_msg=$("${exp}" packing --nodes "${nodes}" --pods "${pods}" --policy fgd --seeds 1 \
  --no-timing --cell 0 --out "${work}/own/0" 2>&1)
rc=$?
if [[ ${rc} -eq 0 ]] || ! untouched || ! grep -q "symbolic link" <<<"${out_msg}"; then
  echo "FAIL: --cell --out LINK: exit ${rc}: ${out_msg}"
  fail=1
else
  echo "ok   --cell --out refuses a link"
fi
exit "${fail}"
