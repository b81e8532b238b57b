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

# The default keys are those the runs determine (issue 26): on these five
# single- and multi-node ZeRO-3 runs no run uses NVLink alone, and the
# network's effect is mostly the GEMMs', so both are left out and said so.
cal --runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/def.yaml" --format json
check "the default keys: the GEMM and memory efficiencies, the network levels left out with the reason" \
	'[ $rc -eq 0 ] && jq -e "[.keys[].key] == [\"gpu.gemm_efficiency_max\", \"gpu.memory_efficiency\"] and
	 ([.left_out[].key] == [\"intra_node.efficiency\", \"inter_node.efficiency\"]) and
	 (.left_out[0].why | test(\"^not determined by these runs .*; kept at 0.75$\")) and
	 (.left_out[1].why | test(\"^not determined apart from gpu.gemm_efficiency_max\"))" "$tmp/out" >/dev/null'
cal --runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/def.yaml"
check "text: the keys left out, one line each" \
	'[ $rc -eq 0 ] && grep -q "^left out of the default keys:" "$tmp/out" &&
	 grep -q "^  intra_node.efficiency: not determined by these runs (.*); kept at 0.75$" "$tmp/out" &&
	 grep -q "^# left out: inter_node.efficiency: " "$tmp/def.yaml"'
cal --runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/cal.yaml" --format json \
	--fit gpu.gemm_efficiency_max,gpu.memory_efficiency
cp "$tmp/out" "$tmp/cal.json"
check "calibrate on 5 MosaicML rows exits 0 with JSON" '[ $rc -eq 0 ] && jq -e ".runs == 5" "$tmp/cal.json" >/dev/null'
check "the keys asked for, in order" \
	'jq -e "[.keys[].key] == [\"gpu.gemm_efficiency_max\", \"gpu.memory_efficiency\"]" "$tmp/cal.json" >/dev/null'
check "fitted values inside the schema bounds, finite standard errors, LOO cross-validation" \
	'jq -e "all(.keys[]; .value > 0 and .value <= 1 and (.std_error | type) == \"number\") and .cv_folds == 5 and (.cv_mape | type) == \"number\"" "$tmp/cal.json" >/dev/null'
# The fit minimises the squared relative errors (calibrate.c), not their
# mean absolute value: the MAPE may rise a little where the squares fall.
check "the fit does not make the fitted runs worse" \
	'jq -e "([.rows[].error_after | . * .] | add) <= ([.rows[].error_before | . * .] | add)" "$tmp/cal.json" >/dev/null'
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
cal --runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" --fit gpu.gemm_effciency_max
check "an unknown key names the nearest, then every valid key, none cut off" \
	'[ $rc -eq 2 ] && [ ! -e "$tmp/x.yaml" ] && [ "$(wc -l <"$tmp/err")" -eq 2 ] &&
	 grep -qx "plan-cli: error: unknown key .gpu.gemm_effciency_max. for --fit; did you mean .gpu.gemm_efficiency_max.?" "$tmp/err" &&
	 grep -q "^plan-cli: valid keys for --fit: gpu.peak_flops, .*, inter_node.efficiency, .*, framework.loss_bwd_bytes$" "$tmp/err"'

fails "a wave-model whole number is refused with its reason" 2 "fit it to GEMM timings with plan-cli fit-logs --gemm" \
	--runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" --fit gpu.sm_count
fails "a choice is refused with its reason" 2 "'framework.cuda_graphs' is a choice, not a number" \
	--runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" --fit framework.cuda_graphs \
	--framework-output "$tmp/x-fw.yaml"
fails "a framework key without --framework-output" 2 "--framework-output" \
	--runs "$tmp/train.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" --fit framework.layer_overhead
head -2 "$tmp/train.csv" >"$tmp/one.csv"
fails "one run for two keys is underdetermined" 2 "1 run cannot determine 2 keys" \
	--runs "$tmp/one.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" --fit gpu.gemm_efficiency_max,gpu.memory_efficiency
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
check "calibrate on 5 single-node B200 rows fits NVLink, leaves out the unused inter-node network and the uncertain memory efficiency" \
	'[ $? -eq 0 ] && jq -e ".runs == 5 and ([.keys[].key] | index(\"intra_node.efficiency\")) and
	 ([.left_out[].key] | sort == [\"gpu.memory_efficiency\", \"inter_node.efficiency\"]) and
	 (.left_out[] | select(.key == \"gpu.memory_efficiency\") | .why | test(\"not determined\")) and .mape_after < .mape_before" "$tmp/b200.json" >/dev/null'
sed "s|,dgx-b200,|,$tmp/b200.yaml,|" "$tmp/b200-test.csv" >"$tmp/b200-test-cal.csv"
check "the 7 held-out B200 rows: 7 of them" '[ "$(tail -n +2 "$tmp/b200-test-cal.csv" | grep -c "b200.yaml")" -eq 7 ]'
"$bin" validate "$tmp/b200-test-cal.csv" --max-mape 6 >"$tmp/out" 2>"$tmp/err"
rc=$?
mape=$(grep -o "MAPE [0-9.]* %" "$tmp/out" | head -1)
check "held out, the calibrated profile is within 6 % MAPE ($mape)" '[ $rc -eq 0 ] && [ -n "$mape" ]'

# Issue 26 item 4: six Llama 2 7B runs on dgx-h100 (8 to 128 GPUs) all
# 15 % slower than plan-cli's own predictions, and four other plans alike.
# The default keys fitted on the six must predict the four within 1 %
# (a fit that recovers the uniform slowdown): before, the one default key
# inter_node.efficiency went to 0.33 and left them 2 to 13 % off.
# mkruns FILE ROWS...: ROW is "id gpus tp pp dp micro global recompute zero";
# measured = 1.15 x validate's prediction (validate predicts as calibrate).
mkruns() {
	local f=$1 row
	shift
	echo "id,model,cluster,gpus,tp,pp,vpp,dp,micro_batch,global_batch,seq_len,recompute,sequence_parallel,zero,dp_overlap,flash_attention,framework,measured_iteration_time_s,measured_tflops_per_gpu,measured_memory_gib,flop_convention,source" >"$f.in"
	for row in "$@"; do
		set -- $row
		echo "$1,llama2-7b,dgx-h100,$2,$3,$4,1,$5,$6,$7,4096,$8,false,$9,true,true,megatron-lm,1,,,,synthetic" >>"$f.in"
	done
	"$bin" validate "$f.in" --format json | jq -r '.rows[] | "\(.id),\(.predicted_iteration_time_s * 1.15)"' >"$f.t"
	head -1 "$f.in" >"$f"
	tail -n +2 "$f.in" | while IFS= read -r line; do
		id=${line%%,*}
		t=$(grep "^$id," "$f.t" | cut -d, -f2)
		echo "${line%,1,,,,synthetic},$t,,,,synthetic" >>"$f"
	done
}
mkruns "$tmp/slow.csv" "R1 8 1 1 8 1 64 none 1" "R2 16 2 1 8 1 128 selective 1" "R3 32 1 2 16 2 256 none 1" \
	"R4 64 2 2 16 1 512 selective 1" "R5 96 4 1 24 2 384 none 1" "R6 128 1 1 128 1 1024 full 3"
mkruns "$tmp/slow-held.csv" "H1 8 2 1 4 2 64 selective 1" "H2 32 4 2 4 1 256 none 1" "H3 64 1 1 64 1 512 full 3" \
	"H4 128 2 4 16 1 1024 selective 1"
check "the synthetic runs: 6 and 4 rows, all 15 % slower" \
	'[ "$(grep -c ",synthetic$" "$tmp/slow.csv")" -eq 6 ] && [ "$(grep -c ",synthetic$" "$tmp/slow-held.csv")" -eq 4 ] &&
	 "$bin" validate "$tmp/slow.csv" --format json | jq -e "all(.rows[]; (.error + 0.130435) | fabs < 1e-5)" >/dev/null'
cal --runs "$tmp/slow.csv" --cluster dgx-h100 --output "$tmp/slow.yaml" --format json
cp "$tmp/out" "$tmp/slow.json"
check "the default keys on the slow runs: the GEMM throughput fitted, the fit recovers them" \
	'[ $rc -eq 0 ] && jq -e "(.keys[0].key == \"gpu.peak_flops\") and .mape_after < 0.02" "$tmp/slow.json" >/dev/null'
sed "s|,dgx-h100,|,$tmp/slow.yaml,|" "$tmp/slow-held.csv" >"$tmp/slow-held-cal.csv"
"$bin" validate "$tmp/slow-held-cal.csv" --format json >"$tmp/held.json"
check "the four held-out plans within 1 % with the calibrated profile" \
	'jq -e "(.rows | length) == 4 and all(.rows[]; .error | fabs < 0.01)" "$tmp/held.json" >/dev/null'

# The same runs 1/0.65 times faster than predicted: the network cannot be
# that fast (efficiency at most 1), so both levels run to their bound and
# are left out, and the GEMM throughput alone is fitted. (At 1/0.6 the
# GEMMs alone, with the network at its profile values, would need a peak
# above the fp8 peak: see below.)
awk -F, 'BEGIN { OFS = "," } NR == 1 { print; next } { $18 = $18 / 1.15 * 0.65; print }' "$tmp/slow.csv" >"$tmp/fast.csv"
cal --runs "$tmp/fast.csv" --cluster dgx-h100 --output "$tmp/fast.yaml"
check "keys that run to their bound are left out and said so; the others refitted" \
	'[ $rc -eq 0 ] && grep -q "^gpu.peak_flops " "$tmp/out" &&
	 grep -q "^  intra_node.efficiency: ran to its upper bound 1 on these runs, where they no longer determine it; kept at 0.75$" "$tmp/out" &&
	 grep -q "^  inter_node.efficiency: ran to its upper bound 1 on these runs" "$tmp/out"'
# A key left out is kept at its profile value, as the report says: in the
# written profile and in the fit of the others (before, it kept the last
# value the fit had tried, 1 here, and "MAPE before" was taken with it:
# 51.3 % against the rows' own 53.8 %, 1/0.65 - 1).
check "the left-out keys are written at their profile values, 0.75 and 0.85" \
	'[ "$(grep -c "^  efficiency: 0.75$" "$tmp/fast.yaml")" -eq 1 ] && [ "$(grep -c "^  efficiency: 0.85$" "$tmp/fast.yaml")" -eq 1 ]'
check "MAPE before is the rows' own error, 53.85 %" 'grep -q "^MAPE before 53.85 %" "$tmp/out"'

# At 1/0.6 the GEMMs alone would need a peak above dgx-h100's fp8 peak,
# 1979 TFLOPS, which gpu_check refuses: the fit searched up to the schema
# maximum, found 2006 TFLOPS and then could not write the profile. The
# fp8 peak now bounds the search (calib_keys.c), so the fit reports the
# bound it ran to, and neither writes nor half-writes a profile.
awk -F, 'BEGIN { OFS = "," } NR == 1 { print; next } { $18 = $18 / 1.15 * 0.6; print }' "$tmp/slow.csv" >"$tmp/faster.csv"
fails "gpu.peak_flops is bounded by the fp8 peak, 1979 TFLOPS" 2 \
	"these runs drive 'gpu.peak_flops' to its upper bound (1.979e+15)" \
	--runs "$tmp/faster.csv" --cluster dgx-h100 --output "$tmp/faster.yaml" --fit gpu.peak_flops
check "no profile written" '[ ! -e "$tmp/faster.yaml" ]'
cal --runs "$tmp/faster.csv" --cluster dgx-h100 --output "$tmp/faster.yaml"
check "the default keys: no fitted peak above the fp8 peak (the profile would not load back)" \
	'! grep -q "would not load back" "$tmp/err"'

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
fails "a measured time of 1e300 s" 3 "huge.csv:2:98: column 'measured_iteration_time_s' must be from" \
	--runs "$tmp/huge.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml"
{ head -1 "$five"; sed -n 2p "$five"; } >"$tmp/one.csv"
fails "one run, two keys" 2 "1 run cannot determine 2 keys" --runs "$tmp/one.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" \
	--fit gpu.gemm_efficiency_max,gpu.memory_efficiency
{ head -1 "$five"; for i in 1 2 3; do sed -n 2p "$five" | sed "s/^MOSAIC-18/R$i/"; done; } >"$tmp/same.csv"
fails "identical runs cannot tell two keys apart" 2 "cannot tell them apart" --runs "$tmp/same.csv" --cluster mosaicml-a100-40gb --output "$tmp/x.yaml" \
	--fit gpu.gemm_efficiency_max,gpu.memory_efficiency
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
