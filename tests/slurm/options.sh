#!/usr/bin/env bash
# gpusched-slurm's command line (include/gpusched/slurm/options.hpp) on the bad inputs an outside
# tester found: each is refused with exit status 2, a message naming the option (and the value
# or the other option), before any Slurm command runs. The fake clients of tests/slurm/fakebin
# (recorded JSON, read-only) log every call, so "before Slurm is asked" is checked, and the good
# command lines are run once each against them. No Slurm needed.
#
#   tests/slurm/options.sh GPUSCHED_SLURM_BINARY WORK_DIR
#
# Exit 0: passed; 1: failed.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${1:?usage: options.sh GPUSCHED_SLURM_BINARY WORK_DIR}"
work="${2:?usage: options.sh GPUSCHED_SLURM_BINARY WORK_DIR}"
rm -rf "${work}"
mkdir -p "${work}/a-directory"
work="$(cd "${work}" && pwd)"
export PATH="${here}/fakebin:/usr/bin:/bin"
export SLURM_CONF=/nonexistent
export FAKE_LOG="${work}/slurm-calls.log"

failures=0
# refused "EXPECTED TEXT" ARGS...: exit 2, stderr holds the text, no Slurm command ran, and the
# program ended (not a loop: killed after 10 s otherwise)
refused() {
  local want="$1"
  shift
  rm -f "${FAKE_LOG}"
  timeout 10 "${bin}" "$@" >"${work}/out" 2>"${work}/err"
  local rc=$?
  if [ "${rc}" -ne 2 ]; then
    echo "FAIL: gpusched-slurm $* exited ${rc}, not 2"; sed 's/^/    /' "${work}/err"
    failures=$((failures + 1)); return
  fi
  if ! grep -qF -- "${want}" "${work}/err"; then
    echo "FAIL: gpusched-slurm $*: stderr lacks: ${want}"; sed 's/^/    /' "${work}/err"
    failures=$((failures + 1)); return
  fi
  if [ -s "${FAKE_LOG}" ]; then
    echo "FAIL: gpusched-slurm $*: Slurm was asked before the refusal:"; cat "${FAKE_LOG}"
    failures=$((failures + 1)); return
  fi
  echo "  ok: refused: $*"
}
# accepted ARGS...: exit 0
accepted() {
  timeout 10 "${bin}" "$@" >"${work}/out" 2>"${work}/err"
  local rc=$?
  if [ "${rc}" -ne 0 ]; then
    echo "FAIL: gpusched-slurm $* exited ${rc}"; sed 's/^/    /' "${work}/err"
    failures=$((failures + 1)); return
  fi
  echo "  ok: accepted: $*"
}

# 88-94: --interval, whole decimal number within 0.1 to 86400 s
refused "--interval: '5abc' is not a number" --interval 5abc --dry-run
refused "--interval: '0x10' is not a number" --interval 0x10 --dry-run
refused "--interval: 'inf' is not a number" --interval inf --dry-run
refused "--interval: '1e-9' is below 0.1 s" --interval 1e-9 --dry-run
refused "--interval: 'nan' is not a number" --interval nan --dry-run
refused "--interval: 'abc' is not a number" --interval abc --dry-run
refused "--interval: '1e999' is out of range" --interval 1e999 --dry-run
refused "--interval: '86401' is above 86400 s" --interval 86401 --dry-run
refused "--interval: ' 5' is not a number" --interval ' 5' --dry-run
# 95, 102, 114: options that exclude each other, options given twice
refused "--once and --interval exclude each other" --once --interval 5 --dry-run
refused "--interval is given twice ('5', then '7')" --dry-run --interval 5 --interval 7
refused "--once is given twice" --once --once --dry-run
refused "--nodes is given twice ('a', then 'b')" gres-links --nodes a --nodes b --model pcie-8gpu
refused "--topo and --model exclude each other" gres-links --nodes a --topo x --model pcie-8gpu
# 100: a policy slot given twice
refused "--policy: the slot 'ordering' is given twice ('ordering=fifo', then 'ordering=drf')" \
  --once --dry-run --policy ordering=fifo,ordering=drf
# 96-99, 118: --timeout 1 to 3600 s, --grace 0 to 3600 s
refused "--timeout: 'nan' is not a number" --once --dry-run --timeout nan
refused "--timeout: 'inf' is not a number" --once --dry-run --timeout inf
refused "--timeout: '-1' is below 1 s" --once --dry-run --timeout -1
refused "--grace: '-5' is below 0 s" --once --dry-run --grace -5
refused "--grace: 'inf' is not a number" --once --dry-run --grace inf
refused "--grace: '3601' is above 3600 s" --once --dry-run --grace 3601
# 110: no control character in a value written into gres.conf
refused "--file-prefix: the value holds a newline (at character 12)" \
  gres-links --nodes gpu1 --model pcie-8gpu --file-prefix $'/dev/nvidia\nNodeName=evil Name=gpu File=/dev/sda'
refused "--nodes: the value holds a newline" gres-links --nodes $'gpu1\nNodeName=evil' --model pcie-8gpu
refused "--type: the value holds a carriage return" gres-links --nodes gpu1 --type $'a100\r' --model pcie-8gpu
# 111, 115: a directory given as a file is called one
refused "--topo: '${work}/a-directory' is a directory, not a file" \
  gres-links --nodes gpu1 --topo "${work}/a-directory"
refused "--topology: '${work}/a-directory' is a directory, not a file" \
  --once --dry-run --topology "${work}/a-directory"

# the good command lines still run (against the read-only fake clients, --dry-run)
accepted --once --dry-run --timeout 5 --grace 0 --policy ordering=fifo,admission=gang
accepted --dry-run --timeout 1e1 --grace 2.5
accepted gres-links --nodes 'gpu[1-4]' --type a100 --model dgx-a100 --file-prefix /dev/nvidia
if grep -q '^NodeName=gpu\[1-4\] Name=gpu Type=a100 File=/dev/nvidia7 ' "${work}/out" &&
  [ "$(grep -c '^NodeName=' "${work}/out")" -eq 8 ]; then
  echo "  ok: gres-links prints 8 lines"
else
  echo "FAIL: gres-links output:"; cat "${work}/out"; failures=$((failures + 1))
fi
accepted --help
grep -qF -- "--interval SECONDS      run a cycle every SECONDS until SIGTERM, no default (0.1 to 86400 s)" \
  "${work}/out" || { echo "FAIL: --help does not give --interval's range"; failures=$((failures + 1)); }

echo "gpusched-slurm options: ${failures} failure(s)"
[ "${failures}" -eq 0 ]
