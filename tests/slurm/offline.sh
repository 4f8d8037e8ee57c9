#!/usr/bin/env bash
# gpusched-slurm against fake Slurm clients (no Slurm needed): squeue and sinfo print recorded
# JSON (tests/data/slurm/), scontrol and scancel log their arguments and succeed, or fail when
# their command line matches FAKE_FAIL.
#
#   tests/slurm/offline.sh GPUSCHED_SLURM_BINARY WORK_DIR SCENARIO
#
# Scenarios: json (with --json, stdout is JSON lines only, the human text on stderr).
# Exit 0: passed; 1: failed; 77: skipped (no python3 to read the JSON lines).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="${here}/../data/slurm"
bin="${1:?usage: offline.sh GPUSCHED_SLURM_BINARY WORK_DIR SCENARIO}"
work="${2:?usage: offline.sh GPUSCHED_SLURM_BINARY WORK_DIR SCENARIO}"
scenario="${3:?usage: offline.sh GPUSCHED_SLURM_BINARY WORK_DIR SCENARIO}"
rm -rf "${work}"
mkdir -p "${work}/bin"
work="$(cd "${work}" && pwd)"

failures=0
check() { # check DESCRIPTION COMMAND...
  local what="$1"
  shift
  if "$@"; then echo "  ok: ${what}"; else echo "FAIL: ${what}"; failures=$((failures + 1)); fi
}

# fake_clients SQUEUE_JSON SINFO_JSON PARTITIONS_TEXT: the four clients in WORK/bin
# (scontrol answers `show partition` with PARTITIONS_TEXT)
fake_clients() {
  cat >"${work}/bin/squeue" <<SH
#!/bin/sh
cat '$1'
SH
  cat >"${work}/bin/sinfo" <<SH
#!/bin/sh
cat '$2'
SH
  local c
  for c in scontrol scancel; do
    cat >"${work}/bin/${c}" <<SH
#!/bin/sh
case "\$*" in *"show partition"*) cat '$3'; exit 0 ;; esac
echo "${c} \$*" >>'${work}/commands.log'
if [ -n "\${FAKE_FAIL:-}" ]; then
  case "${c} \$*" in \${FAKE_FAIL}) echo "${c}: error: fake failure" >&2; exit 1 ;; esac
fi
exit 0
SH
  done
  chmod +x "${work}/bin/"*
}

# json_lines FILE: every line of FILE is a JSON object with an "event"
json_lines() {
  python3 - "$1" <<'PY'
import json, sys
n = 0
for k, line in enumerate(open(sys.argv[1]), 1):
    try:
        o = json.loads(line)
    except ValueError as e:
        sys.exit(f"line {k} is not JSON ({e}): {line!r}")
    if not isinstance(o, dict) or "event" not in o:
        sys.exit(f"line {k} is not an object with an event: {line!r}")
    n += 1
if n == 0:
    sys.exit("no JSON lines")
PY
}

# events FILE EVENT: the number of lines of that event
events() { python3 -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["event"] == sys.argv[2]))' "$1" "$2"; }

scenario_json() {
  head -n1 "${data}/scontrol-partitions.txt" >"${work}/partitions.txt" # gpu: n[1-4]
  fake_clients "${data}/squeue-mixed.json" "${data}/sinfo-drained.json" "${work}/partitions.txt"
  PATH="${work}/bin:${PATH}" "${bin}" --once --json --policy ordering=fifo,admission=gang \
    >"${work}/out.json" 2>"${work}/err.txt"
  local rc=$?
  echo "--- stdout"; cat "${work}/out.json"; echo "--- stderr"; cat "${work}/err.txt"
  check "exit status 0 (${rc})" test "${rc}" = 0
  check "stdout is JSON lines only" json_lines "${work}/out.json"
  local e
  for e in decision issue command; do
    check "${e}s are objects" test "$(events "${work}/out.json" "${e}")" -gt 0
  done
  check "no plain 'run:' line on stdout" bash -c "! grep -q '^run: ' '${work}/out.json'"
  check "the human text is on stderr" grep -q '^run: scontrol release ' "${work}/err.txt"
  check "every command that ran is reported ok" \
    test "$(grep -c '"status":"ok"' "${work}/out.json")" = "$(wc -l <"${work}/commands.log")"
  check "jobs are named as strings" grep -q '"job":"[0-9]' "${work}/out.json"
  # --dry-run: the commands as objects, nothing run
  rm -f "${work}/commands.log"
  PATH="${work}/bin:${PATH}" "${bin}" --once --json --dry-run >"${work}/dry.json" 2>"${work}/dry.txt"
  check "--dry-run: JSON lines only" json_lines "${work}/dry.json"
  check "--dry-run: commands as objects with dry_run true" grep -q '"dry_run":true' "${work}/dry.json"
  check "--dry-run: no 'would run:' line on stdout" bash -c "! grep -q 'would run' '${work}/dry.json'"
  check "--dry-run: nothing ran" test ! -e "${work}/commands.log"
  # a release that fails: the error is an object too, and the node list is taken back
  PATH="${work}/bin:${PATH}" FAKE_FAIL='scontrol release*' "${bin}" --once --json \
    --policy ordering=fifo,admission=gang >"${work}/fail.json" 2>"${work}/fail.txt"
  rc=$?
  check "a failed command: exit status 1 (${rc})" test "${rc}" = 1
  check "a failed command: JSON lines only" json_lines "${work}/fail.json"
  check "a failed command: reported failed" grep -q '"status":"failed"' "${work}/fail.json"
  check "a failed command: its error is an object" grep -q '"event":"error"' "${work}/fail.json"
  # Slurm not answering: one error object, exit 1
  printf '#!/bin/sh\necho "squeue: error: Unable to contact slurm controller" >&2\nexit 1\n' \
    >"${work}/bin/squeue"
  PATH="${work}/bin:${PATH}" "${bin}" --once --json >"${work}/down.json" 2>"${work}/down.txt"
  rc=$?
  check "controller down: exit status 1 (${rc})" test "${rc}" = 1
  check "controller down: JSON lines only" json_lines "${work}/down.json"
  check "controller down: the error names squeue" \
    bash -c "grep '\"event\":\"error\"' '${work}/down.json' | grep -q 'squeue --json'"
}

command -v python3 >/dev/null || { echo "SKIPPED: python3 is needed to read the JSON lines"; exit 77; }
echo "== scenario ${scenario}"
"scenario_${scenario//-/_}"
if ((failures > 0)); then echo "offline ${scenario}: ${failures} failure(s)"; exit 1; fi
echo "offline ${scenario}: passed"
