#!/usr/bin/env bash
# No write through a planted link: for every file and folder a program writes under --out,
# plant a symbolic link at that name (and at <file>.partial) pointing outside --out, run the
# program again, and check that nothing outside --out changed. A link at a folder's name must be
# refused with a message that names the symbolic link; a link at a file's name is replaced by
# the file. The names come from a first, clean run, so every name the program writes is tried.
#
#   planted-links.sh WORK -- PROGRAM ARGS... (one ARG is the word OUT: the --out folder)
set -uo pipefail
work="$1"
shift
[[ "$1" == "--" ]] && shift
cmd=("$@")

fail=0
rm -rf "${work}"
mkdir -p "${work}"
victim_dir="${work}/victim-dir"
victim_file="${work}/victim-file"

run() { # run OUTDIR: the command with OUT replaced
  local out="$1" args=()
  for a in "${cmd[@]}"; do
    if [[ "${a}" == "OUT" ]]; then args+=("${out}"); else args+=("${a//OUT\//${out}/}"); fi
  done
  "${args[@]}" >"${work}/last.out" 2>&1
}
reset_victims() {
  rm -rf "${victim_dir}" "${victim_file}"
  mkdir -p "${victim_dir}"
  printf 'victim\n' >"${victim_file}"
}
victims_untouched() {
  [[ -z "$(ls -A "${victim_dir}")" ]] && [[ "$(cat "${victim_file}")" == "victim" ]]
}

if ! run "${work}/clean"; then
  echo "FAIL: the clean run failed:"
  cat "${work}/last.out"
  exit 1
fi
mapfile -t names < <(cd "${work}/clean" && find . -mindepth 1 | sed 's|^\./||' | sort)
if [[ ${#names[@]} -eq 0 ]]; then
  echo "FAIL: the clean run wrote nothing under --out"
  exit 1
fi

tried=0
for name in "${names[@]}"; do
  plants=("${name}")
  [[ -f "${work}/clean/${name}" ]] && plants+=("${name}.partial")
  for plant in "${plants[@]}"; do
    reset_victims
    out="${work}/planted"
    rm -rf "${out}"
    mkdir -p "$(dirname "${out}/${plant}")"
    if [[ -d "${work}/clean/${name}" ]]; then
      ln -s "${victim_dir}" "${out}/${plant}"
    else
      ln -s "${victim_file}" "${out}/${plant}"
    fi
    tried=$((tried + 1))
    run "${out}"
    rc=$?
    if ! victims_untouched; then
      echo "FAIL: a link at '${plant}' redirected a write outside --out"
      fail=1
      continue
    fi
    if [[ -d "${work}/clean/${name}" ]]; then
      if [[ ${rc} -eq 0 ]] || ! grep -q "symbolic link" "${work}/last.out"; then
        echo "FAIL: a link at the folder '${plant}': expected a refusal naming the link, got exit ${rc}:"
        cat "${work}/last.out"
        fail=1
      fi
    elif [[ "${plant}" == "${name}" ]]; then
      if [[ ${rc} -ne 0 || -L "${out}/${plant}" || ! -f "${out}/${plant}" ]]; then
        echo "FAIL: a link at the file '${plant}': expected it replaced by the file (exit ${rc}):"
        cat "${work}/last.out"
        fail=1
      fi
    elif [[ ${rc} -ne 0 ]]; then
      echo "FAIL: a link at the temporary '${plant}': the run failed (exit ${rc}):"
      cat "${work}/last.out"
      fail=1
    fi
  done
done
if [[ ${fail} -ne 0 ]]; then exit 1; fi
echo "planted-links: ${tried} links planted at ${#names[@]} names; none redirected a write"
