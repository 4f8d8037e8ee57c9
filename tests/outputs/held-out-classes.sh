#!/usr/bin/env bash
# Program-level checks of the bad-input classes of issue #43 that unit tests cannot reach:
# an option given twice or contradicting another (command line and config file), a NUL in a
# config-file path, a --seeds range ending at 2^64-1, an interval trigger behind a very long
# job, a piped trace's run.json digest, --merge of a cell made with another --tune, and the
# outside tester's cases (repeated or empty list items, does-nothing notes, undefined
# statistics, NUL bytes in error messages, dangling --out links, options twice).
#
#   held-out-classes.sh EXPERIMENT REPLAY NODES.csv PODS.csv TIRESIAS.csv WORK
set -uo pipefail
exp="$1" rep="$2" nodes="$3" pods="$4" trace="$5" work="$6"
rm -rf "${work}" && mkdir -p "${work}" && cd "${work}" || exit 1
fail=0
expect() {  # expect NAME RC-WANTED REGEX -- command...
  local name="$1" want="$2" re="$3"
  shift 4
  local out rc
  out=$(timeout 120 "$@" 2>&1)
  rc=$?
  if [[ ${rc} -ne ${want} ]] || ! grep -Eq -- "${re}" <<<"${out}"; then
    echo "FAIL ${name}: rc ${rc} (want ${want}); output:"
    echo "${out}" | head -5
    fail=1
  else
    echo "ok   ${name}"
  fi
}
T="tiresias:${trace}"
expect twice-on-command-line 2 "--seed is given 2 times on the command line" -- \
  "${rep}" --trace "${T}" --seed 1 --seed 2 --quiet
printf 'seed = 3\n\nseed = 4\n' >twice.cfg
expect twice-in-config 2 "twice.cfg:3: field 'seed': given twice in this file \(first at line 1\)" -- \
  "${rep}" --config twice.cfg --trace "${T}" --quiet
printf 'policy = ordering=fifo\ncompare = a:ordering=fifo;b:ordering=drf\n' >excl.cfg
expect excludes-in-config 2 "excl.cfg:2: .*--compare and --policy exclude each other.*line 1" -- \
  "${rep}" --config excl.cfg --trace "${T}" --quiet
expect excludes-on-command-line 2 "--policy excludes --compare" -- \
  "${rep}" --policy ordering=fifo --compare a:ordering=fifo --trace "${T}"
expect two-config-files 2 "--config is given 2 times" -- \
  "${rep}" --config twice.cfg --config excl.cfg --trace "${T}"
printf 'policy = ordering=fifo\nrepair-hours = 3\n' >over.cfg
expect command-line-overrides-config 0 "note: --repair-hours \(over.cfg:2\) does nothing" -- \
  "${rep}" --config over.cfg --compare 'a:ordering=fifo;b:ordering=drf' --trace "${T}" \
  --cluster 2x4 --quiet
printf 'trace = %s\0junk\n' "${T}" >nul.cfg
expect nul-in-config-path 2 "nul.cfg:1: field 'trace': --trace: the value holds a NUL byte" -- \
  "${rep}" --config nul.cfg
expect seeds-up-to-2^64 0 "18446744073709551615" -- \
  "${exp}" packing --nodes "${nodes}" --pods "${pods}" --policy fgd \
  --seeds 18446744073709551614-18446744073709551615 --no-timing
printf 'job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n0,8,0,1,x,100000000,1\n1,8,10,1,x,100,1\n' >long.csv
expect interval-trigger-alone 0 "cycles +1$" -- \
  "${rep}" --trace tiresias:long.csv --cluster 1x8 --trigger 1 --limit 1 \
  --policy ordering=fifo,preemption=none
expect interval-trigger-behind 0 "stopped at the cycle limit \(--max-cycles 1000\)" -- \
  "${rep}" --trace tiresias:long.csv --cluster 1x8 --trigger 1 --max-cycles 1000 \
  --policy ordering=fifo,preemption=none
# --max-cycles is bounded on both sides: 0 ("no limit") and 2^64-1 would let the run follow a
# 1e8 s job at --trigger 1 (outside cases 120, 174, 175).
expect max-cycles-zero 2 "--max-cycles: 0 is not a limit \(give 1 to 1000000000" -- \
  "${rep}" --trace tiresias:long.csv --cluster 1x8 --trigger 1 --max-cycles 0 \
  --policy ordering=fifo,preemption=none
expect max-cycles-huge 2 "--max-cycles: '18446744073709551615' is too large \(at most 1000000000\)" -- \
  "${rep}" --trace tiresias:long.csv --cluster 1x8 --trigger 1 --max-cycles 18446744073709551615
expect max-cycles-past-1e9 2 "--max-cycles: '1000000000001' is too large" -- \
  "${rep}" --trace tiresias:long.csv --cluster 1x8 --max-cycles 1000000000001
# A device is not an input (its stream would not end), and a control byte a user typed is
# printed escaped in every message (third outside try, cases 16, 17, 21, 52).
expect config-device 2 "/dev/zero:0: field 'file': is a device, not a file or a pipe" -- \
  "${rep}" --config /dev/zero --trace tiresias:long.csv --cluster 1x8
expect trace-device 2 "/dev/zero:0: field 'file': is a device, not a file or a pipe" -- \
  "${rep}" --trace tiresias:/dev/zero --cluster 1x8
expect nodes-device 1 "is a device, not a file or a pipe" -- \
  "${exp}" packing --nodes /dev/zero --pods "${pods}" --policy fgd --seeds 1 --no-timing
expect tenant-escape-escaped 2 "no tenant '.x1b.2Jred' in the trace" -- \
  "${rep}" --trace tiresias:long.csv --cluster 1x8 --tenant $'\e[2Jred'
printf 'tenant = \033[2Jred\n' >esc.cfg
expect tenant-escape-config 2 "no tenant '.x1b.2Jred' in the trace" -- \
  "${rep}" --config esc.cfg --trace tiresias:long.csv --cluster 1x8
if "${rep}" --trace tiresias:long.csv --cluster 1x8 --tenant $'\e[2Jred' 2>&1 | grep -q $'\e'; then
  echo "FAIL tenant-escape: a raw ESC byte reached the terminal"; fail=1
else
  echo "ok   tenant-escape-no-raw-byte"
fi
head -c 100000 /dev/zero | tr '\0' 'k' >longkey.cfg
expect config-long-key 2 "longkey.cfg:1: field 'key': 'kkkkkkkkkkkkkkkkkkkkkkkk...' \(100000 bytes\) is not an option" -- \
  "${rep}" --config longkey.cfg --trace tiresias:long.csv --cluster 1x8
want=$(sha256sum <"${trace}" | cut -d' ' -f1)
"${rep}" --trace tiresias:/dev/stdin --cluster 2x4 --out piped --quiet <"${trace}" >/dev/null 2>&1
expect piped-trace-digest 0 "\"sha256\": \"${want}\", \"bytes\": $(wc -c <"${trace}")" -- cat piped/run.json
"${exp}" packing --nodes "${nodes}" --pods "${pods}" --policy fgd --seeds 1 --tune 1.5 \
  --cell 0 --out cells/0 >/dev/null 2>&1
expect merge-refuses-another-tune 1 "field 'tune': the cell was made with --tune 1.5, this grid has --tune 1.3" -- \
  "${exp}" packing --nodes "${nodes}" --pods "${pods}" --policy fgd --seeds 1 --tune 1.3 \
  --merge cells --no-timing
# A list option takes each item once: a repeated value would run (and weigh) its cells twice,
# an empty item is a typo (outside cases 66, 68, 70, 146, 147, 148).
P=(packing --nodes "${nodes}" --pods "${pods}" --no-timing)
expect seeds-value-twice 2 "--seeds: seed 1 is given twice in '1,1'" -- "${exp}" "${P[@]}" --policy fgd --seeds 1,1
expect seeds-empty-item 2 "--seeds: empty item in '1,,2'" -- "${exp}" "${P[@]}" --policy fgd --seeds 1,,2
expect seeds-ranges-overlap 2 "--seeds: seed 2 is given twice in '1-3,2-4'" -- "${exp}" "${P[@]}" --policy fgd --seeds 1-3,2-4
expect policy-twice 2 "--policy: 06-FGD is given twice in 'fgd,fgd'" -- "${exp}" "${P[@]}" --seeds 1 --policy fgd,fgd
expect policy-all-and-one 2 "--policy: 06-FGD is given twice in 'all,fgd' \('all' and 'fgd'" -- "${exp}" "${P[@]}" --seeds 1 --policy all,fgd
expect policy-alias-twice 2 "--policy: 06-FGD is given twice in 'fgd,fgd-best-fit'" -- "${exp}" "${P[@]}" --seeds 1 --policy fgd,fgd-best-fit
expect policy-empty-item 2 "--policy: empty item in 'fgd,'" -- "${exp}" "${P[@]}" --seeds 1 --policy fgd,
expect mig-policy-twice 2 "mig: --policy: MIG-Aware is given twice" -- \
  "${exp}" mig --nodes "${nodes}" --pods "${pods}" --seeds 1 --no-timing --policy mig-aware,mig-aware
expect mig-seeds-twice 2 "mig: --seeds: seed 3 is given twice" -- \
  "${exp}" mig --nodes "${nodes}" --pods "${pods}" --seeds 3,3 --no-timing
expect replay-compare-empty-item 2 "--compare: empty composition \(item 2\)" -- \
  "${rep}" --trace "${T}" --cluster 2x4 --compare 'a:ordering=fifo;;b:ordering=drf' --quiet
expect replay-policy-empty-item 2 "policy 'ordering=fifo,,packing=best-fit': empty item" -- \
  "${rep}" --trace "${T}" --cluster 2x4 --policy 'ordering=fifo,,packing=best-fit' --quiet
# A setting that does nothing in this run says so, on standard error and in run.json (outside
# cases 136, 139, 140, 141), and stays quiet when it does something.
prior="$(dirname "${trace}")/../tiresias/yarn-gput1000.csv"
expect note-gittins-prior 0 "note: --gittins-prior \(the command line\) does nothing in this run: no composition has ordering=2d-gittins" -- \
  "${rep}" --trace "${T}" --cluster 2x4 --gittins-prior "${prior}" --quiet --out notes136
expect note-in-run-json 0 "\"notes\": \[\"--gittins-prior .*does nothing" -- cat notes136/run.json
expect note-graceful-preemption 0 "note: --graceful-preemption .*no composition preempts" -- \
  "${rep}" --trace "${T}" --cluster 2x4 --graceful-preemption --policy preemption=none --quiet
expect note-restore-cost 0 "note: --restore-cost-s .*no job restarts" -- \
  "${rep}" --trace "${T}" --cluster 2x4 --restore-cost-s 60 --policy preemption=none --quiet
expect note-cpu-per-gpu 0 "note: --cpu-per-gpu .*has its own CPU figure" -- \
  "${rep}" --trace "openb:$(dirname "${nodes}")/replay-pods.csv" --cluster "openb:${nodes}" \
  --cpu-per-gpu 7 --quiet
expect_quiet() {  # expect_quiet NAME -- command...: exit 0 and no note
  local name="$1" out rc
  shift 2
  out=$(timeout 120 "$@" 2>&1)
  rc=$?
  if [[ ${rc} -ne 0 ]] || grep -q "note:" <<<"${out}"; then
    echo "FAIL ${name}: rc ${rc}, want 0 and no note; output:"
    echo "${out}" | head -5
    fail=1
  else
    echo "ok   ${name}"
  fi
}
expect_quiet no-note-gittins-used -- "${rep}" --trace "${T}" --cluster 2x4 --gittins-prior "${prior}" \
  --policy ordering=2d-gittins --quiet
expect_quiet no-note-graceful-used -- "${rep}" --trace "${T}" --cluster 2x4 --graceful-preemption --quiet
expect_quiet no-note-restore-with-failures -- "${rep}" --trace "${T}" --cluster 2x4 --restore-cost-s 60 \
  --policy preemption=none --node-mtbf-hours 100 --quiet
expect_quiet no-note-cpu-homogeneous -- "${rep}" --trace "openb:$(dirname "${nodes}")/replay-pods.csv" \
  --cluster 2x4 --cpu-per-gpu 7 --quiet
# An error message quoting a value that holds a NUL byte is printed whole, the NUL as \0
# (outside cases 165, 167).
printf 'se\0ed = 3\n' >nulkey.cfg
expect nul-in-config-key 2 "nulkey.cfg:1: field 'se\\\\0ed': unknown option --se\\\\0ed" -- \
  "${rep}" --config nulkey.cfg --trace "${T}" --cluster 2x4 --quiet
printf 'job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n0,1\0,0,606,vgg19,164,30\n' >nulfield.csv
expect nul-in-trace-field 2 "nulfield.csv:2: field 'num_gpu': '1\\\\0' is not an integer" -- \
  "${rep}" --trace tiresias:nulfield.csv --cluster 2x4 --quiet
# A run of no jobs (--limit 0): every statistic of an empty set is undefined (null in JSON,
# empty in CSV), never 0 or 1 (outside case 127).
"${rep}" --trace "${T}" --cluster 2x4 --limit 0 --out nojobs --quiet >/dev/null 2>&1
for f in allocation fragmentation_mean jain jain_over_time goodput; do
  expect "no-jobs-${f}-is-null" 0 "\"${f}\": null" -- cat nojobs/default/summary.json
done
expect no-jobs-csv-empty 0 "^default,0,0,0,0,,,,,,,,,,0,0,0,0,0,,,,,," -- cat nojobs/summary.csv
# An option given twice to packing or mig is named with its values (outside cases 51, 55,
# 56); a dangling link at --out is named as a link (outside case 39).
expect packing-tune-twice 2 "packing: --tune is given 2 times \('1.2', '1.4'\): give it once" -- \
  "${exp}" "${P[@]}" --policy fgd --seeds 1 --tune 1.2 --tune 1.4
expect packing-cell-twice 2 "packing: --cell is given 2 times \('0', '1'\)" -- \
  "${exp}" "${P[@]}" --policy fgd --seeds 1-2 --cell 0 --cell 1 --out twice
expect mig-workload-twice 2 "mig: --workload is given 2 times \('a', 'b'\)" -- \
  "${exp}" mig --nodes "${nodes}" --pods "${pods}" --seeds 1 --workload a --workload b
ln -s "${work}/no-such-folder" dangling
expect dangling-out-link 2 "dangling:0: field '--out': is a symbolic link to '${work}/no-such-folder', which is not a folder" -- \
  "${rep}" --trace "${T}" --cluster 2x4 --out dangling --quiet
[[ -e "${work}/no-such-folder" ]] && { echo "FAIL dangling-out-link: the link's target was made"; fail=1; }
exit "${fail}"
