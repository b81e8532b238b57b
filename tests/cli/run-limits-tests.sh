#!/usr/bin/env bash
# Black-box tests of the limits that keep a command's work bounded (issue
# 28): the sweep's cell cap (max_cells, --max-cells). Each refusal comes
# before any cell runs, so every case here takes milliseconds.
# Usage: run-limits-tests.sh PLAN_CLI SOURCE_ROOT
# shellcheck disable=SC2016 # check's expressions are in single quotes on purpose
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"

# 8 x 10 x 20 x 8 x 20 = 256000 predict cells: over the default 100000.
# shellcheck disable=SC2054 # the commas are the axes' lists
big=(--model gpt-7.5b --cluster selene --tp 1,2,3,4,5,6,7,8 --pp 1,2,3,4,5,6,7,8,9,10
	--dp 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20 --micro-batch 1,2,3,4,5,6,7,8
	--global-batch 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20)
fails_cmd "a predict sweep over 100000 cells is refused" 3 \
	"the study has 256000 cells (model 1 x cluster 1 x tp 8 x pp 10 x dp 20 x micro_batch 8 x global_batch 20), more than the 100000 a sweep in predict mode takes by default: give max_cells (or --max-cells)" \
	sweep "${big[@]}"
# 1002 optimize cells: over the optimize default of 1000.
gpus=$(seq -s, 8 8 4008)
fails_cmd "an optimize sweep over 1000 cells is refused" 3 \
	"the study has 1002 cells (model 1 x cluster 1 x gpus 501 x global_batch 2), more than the 1000 a sweep in optimize mode takes" \
	sweep --mode optimize --model gpt-1.7b --cluster selene --gpus "$gpus" --global-batch 512,1024
fails_cmd "--max-cells below the cells refuses, naming zipped axes together" 3 \
	"studies/megatron-weak-scaling.yaml: the study has 10 cells (zip(model, gpus, tp, pp, vpp, micro_batch, global_batch, reference) 10 x cluster 1), more than the max_cells of 9" \
	sweep studies/megatron-weak-scaling.yaml --max-cells 9
run_cmd sweep studies/megatron-weak-scaling.yaml --max-cells 10 --format csv
check "--max-cells equal to the cells runs them" '[ $rc -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 11 ]'
for v in 0 -1 10000001 1e3 x; do
	fails_cmd "--max-cells $v is refused" 2 "--max-cells expects a whole number of cells from 1 to 10000000, got '$v'" \
		sweep studies/megatron-weak-scaling.yaml --max-cells "$v"
done

# The study key: its value is range-checked at FILE:LINE:COL, and the cap
# refusal points at it.
{ sed '/^metrics:/d' studies/megatron-weak-scaling.yaml; echo "max_cells: 3"; } >"$tmp/capped.yaml"
fails_cmd "max_cells in the study refuses at its line and column" 3 \
	"$tmp/capped.yaml:$(grep -c '' "$tmp/capped.yaml"):12: the study has 10 cells" sweep "$tmp/capped.yaml"
run_cmd sweep "$tmp/capped.yaml" --max-cells 10 --format csv
check "--max-cells overrides the study's max_cells" '[ $rc -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 11 ]'
for v in 0 20000000 ten; do
	{ cat studies/megatron-weak-scaling.yaml; echo "max_cells: $v"; } >"$tmp/bad-cap.yaml"
	fails_cmd "max_cells: $v is refused at its line and column" 3 \
		"$tmp/bad-cap.yaml:$(grep -c '' "$tmp/bad-cap.yaml"):12: 'max_cells' must be a whole number of cells from 1 to 10000000, got '$v'" \
		sweep "$tmp/bad-cap.yaml"
done
# 16 axes, 14 of 512 values: 2^126 cells overflow a long; still one clear refusal.
huge=()
for a in tp pp dp cp ep vpp micro-batch global-batch seq-len gpus mics-group nic-bandwidth intra-bandwidth framework; do
	huge+=("--$a" "$(seq -s, 1 512)")
done
fails_cmd "2^126 cells are counted without overflow" 3 "the study has 8.50705917302346e+37 cells" sweep --model gpt-1.7b --cluster selene "${huge[@]}"

# sweep --merge: a shard's iteration time below 1 us (issue 28: 1e-320 s
# was merged, with a speed-up of 1e-20) is refused, naming the cell.
"$bin" sweep tests/data/study-small.yaml --shard 1/1 --format json >"$tmp/whole.json" 2>/dev/null
for t in 1e-320 1e-7; do
	jq ".cells[1].iteration_time_s = $t" "$tmp/whole.json" >"$tmp/tiny.json"
	fails_cmd "--merge refuses a shard's iteration time of $t s" 3 \
		"tiny.json: cell 1: 'iteration_time_s' is missing or out of range" \
		sweep tests/data/study-small.yaml --merge "$tmp/tiny.json"
done
jq ".cells[1].iteration_time_s = 1e-6" "$tmp/whole.json" >"$tmp/micro.json"
run_cmd sweep tests/data/study-small.yaml --merge "$tmp/micro.json" --format csv
check "--merge takes an iteration time of 1 us" '[ $rc -eq 0 ]'

finish
