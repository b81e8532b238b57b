#!/usr/bin/env bash
# plan-cli calibrate from the command line: the fit on five MosaicML rows
# of tests/data/published-runs.csv, the written profiles read back by
# validate and predict with the reported error, and the errors with their
# exit statuses (plan-cli(1), EXIT STATUS).
# Usage: run-calibrate-tests.sh PLAN_CLI SOURCE_ROOT
# jq programs are in single quotes on purpose:
# shellcheck disable=SC2016
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"
runs=$root/tests/data/published-runs.csv

# cal ARGS...: run calibrate; $rc, $tmp/out, $tmp/err.
cal() { run_cmd calibrate "$@"; }
# fails NAME RC TEXT ARGS...: calibrate fails as fails_cmd (harness.sh) says.
fails() { local name=$1 want=$2 text=$3; shift 3; fails_cmd "$name" "$want" "$text" calibrate "$@"; }

# Every seventh MosaicML row from the first (5 rows: 70B to 125M, 16 to 128 GPUs), and the others.
head -1 "$runs" >"$tmp/train.csv"
grep '^MOSAIC' "$runs" | awk 'NR % 7 == 1' >>"$tmp/train.csv"
head -1 "$runs" >"$tmp/single.csv"
grep '^SMX-B200' "$runs" >>"$tmp/single.csv"

# The default keys for multi-node runs are gpu.gemm_efficiency_max and
# inter_node.efficiency; these five ZeRO-3 runs drive the second to its
# bound, and calibrate says so rather than writing a value they do not
# determine.
fails "the default keys: inter_node.efficiency runs to its upper bound on these runs" 2 \
	"these runs drive 'inter_node.efficiency' to its upper bound (1)" \
	--runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml"
cal --runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/cal.yaml" --format json \
	--fit gpu.gemm_efficiency_max,gpu.memory_efficiency
cp "$tmp/out" "$tmp/cal.json"
check "calibrate on 5 MosaicML rows exits 0 with JSON" '[ $rc -eq 0 ] && jq -e ".runs == 5" "$tmp/cal.json" >/dev/null'
check "the keys asked for, in order" \
	'jq -e "[.keys[].key] == [\"gpu.gemm_efficiency_max\", \"gpu.memory_efficiency\"]" "$tmp/cal.json" >/dev/null'
check "fitted values inside the schema bounds, finite standard errors, LOO cross-validation" \
	'jq -e "all(.keys[]; .value > 0 and .value <= 1 and (.std_error | type) == \"number\") and .cv_folds == 5 and (.cv_mape | type) == \"number\"" "$tmp/cal.json" >/dev/null'
check "the fit does not make the fitted runs worse" 'jq -e ".mape_after <= .mape_before" "$tmp/cal.json" >/dev/null'
check "the profile has a comment header with the fitted values and the MAPE" \
	'grep -q "^# runs: .*train.csv (5 runs)" "$tmp/cal.yaml" && grep -q "^#   gpu.gemm_efficiency_max: .* +/- " "$tmp/cal.yaml" &&
	 grep -q "^# MAPE on these runs: before" "$tmp/cal.yaml"'

# Round trip: the written profile in the cluster column, through validate and predict.
sed "s#,mosaicml-a100-40gb,#,$tmp/cal.yaml,#" "$tmp/train.csv" >"$tmp/train-cal.csv"
"$bin" validate "$tmp/train-cal.csv" --format json >"$tmp/val.json" 2>"$tmp/err"
check "validate with the written profile reproduces the after-fit MAPE" \
	'jq -e --slurpfile c "$tmp/cal.json" "(.mape - \$c[0].mape_after) | fabs < 1e-9" "$tmp/val.json" >/dev/null'
"$bin" predict --model mpt-70b --cluster "$tmp/cal.yaml" --gpus 128 --micro-batch 4 --global-batch 512 \
	--recompute full --zero 3 --flash-attention --framework llm-foundry --format json >"$tmp/pred.json" 2>"$tmp/err"
check "predict --cluster FILE gives the reported after-fit time of MOSAIC-18" \
	'jq -e --slurpfile c "$tmp/cal.json" ".iteration_time_s as \$t | (\$t - \$c[0].rows[0].predicted_after_s) | fabs < 1e-9 * \$t" "$tmp/pred.json" >/dev/null'

cal --runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/cal2.yaml" --fit gpu.gemm_efficiency_max --folds 2
check "text report: keys, MAPE before/after, cross-validated, per-run rows" \
	'[ $rc -eq 0 ] && grep -q "^gpu.gemm_efficiency_max " "$tmp/out" && grep -q "^MAPE before .*, after .*, cross-validated .* (2 folds)" "$tmp/out" &&
	 [ "$(grep -c "^MOSAIC-" "$tmp/out")" -eq 5 ]'

# Framework keys: the framework profile written too, and predict reads it.
cal --runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/cal3.yaml" \
	--fit gpu.gemm_efficiency_max,framework.overlap_slowdown --framework-output "$tmp/fw.yaml"
"$bin" predict --model mpt-7b --cluster "$tmp/cal3.yaml" --framework "$tmp/fw.yaml" --gpus 16 --global-batch 256 \
	--micro-batch 16 --zero 3 --flash-attention --recompute full >/dev/null 2>"$tmp/err"
prc=$?
check "a framework key writes --framework-output, which predict accepts" '[ $rc -eq 0 ] && [ $prc -eq 0 ] && grep -q "^overlap_slowdown: " "$tmp/fw.yaml"'

fails "no --output" 2 "--output FILE" --runs "$tmp/train.csv" --cluster mosaicml-a100-40gb
fails "an unknown key names the nearest" 2 "did you mean 'gpu.gemm_efficiency_max'?" \
	--runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" --fit gpu.gemm_effciency_max
fails "a framework key without --framework-output" 2 "--framework-output" \
	--runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" --fit framework.layer_overhead
head -2 "$tmp/train.csv" >"$tmp/one.csv"
fails "one run for two keys is underdetermined" 2 "1 run cannot determine 2 keys" \
	--runs "$tmp/one.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml"
fails "single-node runs cannot fit inter_node.efficiency" 2 "'inter_node.efficiency' changes no run's predicted time" \
	--runs "$tmp/single.csv" --cluster dgx-b200 --output "$tmp/x.yaml" --fit inter_node.efficiency
fails "runs of another cluster" 3 "not on --cluster 'selene'" \
	--runs "$tmp/train.csv" --cluster selene --output "$tmp/x.yaml"
fails "more folds than runs" 2 "" --runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" --folds 1
fails "a runs file that does not exist" 1 "no-such.csv" --runs "$tmp/no-such.csv" --cluster selene --output "$tmp/x.yaml"
fails "--format csv" 2 "text or json" --runs "$tmp/train.csv" --cluster selene --output "$tmp/x.yaml" --format csv
check "no profile written by a failed calibrate" '[ ! -e "$tmp/x.yaml" ]'

# One sweep, as docs/calibration.md reports it: calibrate on 5 of the 12 B200 rows,
# predict the other 7 with the written profile; held out within 6 %.
runs=$root/tests/data/published-runs.csv
head -1 "$runs" >"$tmp/b200-train.csv"
head -1 "$runs" >"$tmp/b200-test.csv"
for r in l12-tp1-pp2-dp4-mbc4 l12-tp8-pp1-dp1-mbc4 l12-tp4-pp1-dp2-mbc8 tp2-pp1-dp4-l12-mbc32 l12-tp8-pp1-dp1-mbc32; do
	grep "^SMX-B200-llama3-70b-$r," "$runs" >>"$tmp/b200-train.csv"
done
grep "^SMX-B200" "$runs" | grep -v -F -f <(tail -n +2 "$tmp/b200-train.csv" | cut -d, -f1 | sed 's/$/,/') >>"$tmp/b200-test.csv"
"$bin" calibrate --runs "$tmp/b200-train.csv" --cluster dgx-b200 --output "$tmp/b200.yaml" --format json >"$tmp/b200.json" 2>"$tmp/err"
check "calibrate on 5 B200 rows fits intra_node.efficiency alone" \
	'[ $? -eq 0 ] && jq -e ".runs == 5 and ([.keys[].key] == [\"intra_node.efficiency\"]) and .mape_after < .mape_before" "$tmp/b200.json" >/dev/null'
sed "s|,dgx-b200,|,$tmp/b200.yaml,|" "$tmp/b200-test.csv" >"$tmp/b200-test-cal.csv"
check "the 7 held-out B200 rows: 7 of them" '[ "$(tail -n +2 "$tmp/b200-test-cal.csv" | grep -c "b200.yaml")" -eq 7 ]'
"$bin" validate "$tmp/b200-test-cal.csv" --max-mape 6 >"$tmp/out" 2>"$tmp/err"
rc=$?
mape=$(grep -o "MAPE [0-9.]* %" "$tmp/out" | head -1)
check "held out, the calibrated profile is within 6 % MAPE ($mape)" '[ $rc -eq 0 ] && [ -n "$mape" ]'

# calibrate --nccl-tests and --gemm are fit-logs.
"$bin" calibrate --nccl-tests "$root/tests/data/nccl/all_reduce_perf-8xh100.log" --format json >"$tmp/a.json" 2>"$tmp/err"
"$bin" fit-logs --nccl-tests "$root/tests/data/nccl/all_reduce_perf-8xh100.log" --format json >"$tmp/b.json"
check "calibrate --nccl-tests LOG is fit-logs --nccl-tests LOG" '[ -s "$tmp/a.json" ] && [ ! -s "$tmp/err" ] && cmp -s "$tmp/a.json" "$tmp/b.json"'
"$bin" calibrate --gemm "$root/tests/data/gemm/h100-gemm.csv" --gpu h100-sxm5-80gb >"$tmp/a.txt" 2>"$tmp/err"
"$bin" fit-logs --gemm "$root/tests/data/gemm/h100-gemm.csv" --gpu h100-sxm5-80gb >"$tmp/b.txt"
check "calibrate --gemm CSV is fit-logs --gemm CSV" '[ -s "$tmp/a.txt" ] && cmp -s "$tmp/a.txt" "$tmp/b.txt"'
# Hostile input (issue 15): bad --fit lists, absurd measurements and outputs
# that are not regular files are errors, never a fit or a clobbered device.
five=$root/tests/data/mosaic-five.csv
fails "--fit with an empty item" 2 "--fit has an empty item in 'gpu.gemm_efficiency_max,,'" \
	--runs "$five" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" --fit gpu.gemm_efficiency_max,,
fails "--fit with a leading comma" 2 "empty item" --runs "$five" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" --fit ,gpu.gemm_efficiency_max
fails "--fit ','" 2 "empty item" --runs "$five" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" --fit ,
fails "--folds 1" 2 "--folds expects a whole number from 2" --runs "$five" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" --folds 1
fails "--folds 2^31" 2 "--folds expects" --runs "$five" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" --folds 2147483648
fails "--output a folder" 1 "$tmp: cannot write: Is a directory" --runs "$five" --cluster mosaicml-a100-40gb --fit gpu.gemm_efficiency_max --output "$tmp"
check "no PATH.tmpPID left beside the folder" '! ls "$tmp".tmp* >/dev/null 2>&1'
mkfifo "$tmp/fifo"
fails "--output a FIFO is not replaced" 1 "not a regular file" --runs "$five" --cluster mosaicml-a100-40gb --fit gpu.gemm_efficiency_max --output "$tmp/fifo"
check "the FIFO is still a FIFO" '[ -p "$tmp/fifo" ]'
fails "--output ''" 1 "an empty file name" --runs "$five" --cluster mosaicml-a100-40gb --fit gpu.gemm_efficiency_max --output ""
fails "--output in a missing folder" 1 "cannot write" --runs "$five" --cluster mosaicml-a100-40gb --fit gpu.gemm_efficiency_max --output "$tmp/no/such/x.yaml"
{ head -1 "$five"; sed -n 2p "$five" | sed 's/,21.7872,/,1e300,/'; sed -n '3,$p' "$five"; } >"$tmp/huge.csv"
fails "a measured time of 1e300 s" 3 "huge.csv:2: column 'measured_iteration_time_s' must be from" \
	--runs "$tmp/huge.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml"
{ head -1 "$five"; sed -n 2p "$five"; } >"$tmp/one.csv"
fails "one run, two keys" 2 "1 run cannot determine 2 keys" --runs "$tmp/one.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml"
{ head -1 "$five"; for i in 1 2 3; do sed -n 2p "$five" | sed "s/^MOSAIC-18/R$i/"; done; } >"$tmp/same.csv"
fails "identical runs cannot tell two keys apart" 2 "cannot tell them apart" --runs "$tmp/same.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml"
# Outputs are replaced atomically (issue 28): both profiles or neither,
# never one file named twice, a link's target updated, the mode kept.
fwfit=gpu.gemm_efficiency_max,framework.overlap_slowdown
echo "old cluster" >"$tmp/keep.yaml"
echo "old framework" >"$tmp/keep-fw.yaml"
fails "--output and --framework-output the same file" 2 "--output and --framework-output name the same file" \
	--runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --fit "$fwfit" --output "$tmp/keep.yaml" --framework-output "$tmp/keep.yaml"
check "the file named twice is untouched" '[ "$(cat "$tmp/keep.yaml")" = "old cluster" ]'
fails "the same file through ./ and .." 2 "name the same file" --runs "$tmp/train.csv" --cluster mosaicml-a100-40gb \
	--fit "$fwfit" --output "$tmp/new.yaml" --framework-output "$tmp/./sub/../new.yaml"
check "a refused pair creates neither file" '[ ! -e "$tmp/new.yaml" ]'
ln -s keep.yaml "$tmp/link.yaml"
fails "the same file through a symbolic link" 2 "name the same file" --runs "$tmp/train.csv" --cluster mosaicml-a100-40gb \
	--fit "$fwfit" --output "$tmp/keep.yaml" --framework-output "$tmp/link.yaml"
fails "a framework output that cannot be written" 1 "no/such/fw.yaml: cannot write" --runs "$tmp/train.csv" \
	--cluster mosaicml-a100-40gb --fit "$fwfit" --output "$tmp/keep.yaml" --framework-output "$tmp/no/such/fw.yaml"
check "... leaves the existing --output unchanged, no temporary file" \
	'[ "$(cat "$tmp/keep.yaml")" = "old cluster" ] && ! ls -a "$tmp" | grep -q "plan-cli-\|\.tmp"'
chmod 600 "$tmp/keep.yaml" "$tmp/keep-fw.yaml"
cal --runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --fit "$fwfit" --output "$tmp/link.yaml" --framework-output "$tmp/keep-fw.yaml"
check "a symbolic link as --output: still a link, its target written" \
	'[ $rc -eq 0 ] && [ -L "$tmp/link.yaml" ] && grep -q "^name: .*-calibrated" "$tmp/keep.yaml" && grep -q "^overlap_slowdown: " "$tmp/keep-fw.yaml"'
check "0600 outputs stay 0600" '[ "$(stat -c %a "$tmp/keep.yaml")" = 600 ] && [ "$(stat -c %a "$tmp/keep-fw.yaml")" = 600 ]'
check "no temporary file left beside them" '! ls -a "$tmp" | grep -q "plan-cli-\|\.tmp"'
finish
