#!/usr/bin/env bash
# A pipeline stage (or virtual stage) of no transformer layer, the
# embedding or the output layer and loss alone, as Megatron-Core's
# --pipeline-model-parallel-layout writes it ("E|t*11|t*11|t*10L"):
# predict takes --stage-layers 0,11,11,10, every figure finite; sweep
# cells and validate rows predict what predict does; the schedules and
# interleaved lists with empty chunks run; the bad layouts are in
# tests/bad/args-stage-layers-*.
# Usage: run-empty-stage-tests.sh PLAN_CLI SOURCE_ROOT
# jq programs are in single quotes on purpose:
# shellcheck disable=SC2016
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"

plan=(--model llama3-8b --cluster dgx-h100 --gpus 8 --pp 4 --dp 2 --global-batch 64)
# same A B: A and B agree to 1e-8 (validate writes 10 significant digits).
same() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 1e-8 * b) }'; }
# finite FILE: a JSON report whose numbers are all finite (predict also
# refuses a plan with a figure that is not: estimate_finite).
finite() { jq -e '[.. | numbers | select(isnan or isinfinite or fabs > 1e300)] | length == 0' "$1" >/dev/null; }

"$bin" predict "${plan[@]}" --stage-layers 0,11,11,10 >"$tmp/text" 2>"$tmp/err"
check "predict --stage-layers 0,11,11,10: the embedding alone on stage 0 (exit 0)" \
	'[ $? -eq 0 ] && grep -q "^stages       0, 11, 11, 10  (layers)" "$tmp/text"'
"$bin" predict "${plan[@]}" --stage-layers 0,11,11,10 --format json >"$tmp/first.json" 2>"$tmp/err"
check "predict --format json: the layout, every figure finite, another stage sets the pace and peaks" \
	'finite "$tmp/first.json" && jq -e ".plan.stage_layers == [0,11,11,10] and
		.details.bottleneck_stage != 0 and .details.memory_stage != 0 and .iteration_time_s > 0" \
		"$tmp/first.json" >/dev/null'
want=$(jq -r .iteration_time_s "$tmp/first.json")

"$bin" predict "${plan[@]}" --stage-layers 11,11,10,0 --format json --allow-oom >"$tmp/last.json" 2>"$tmp/err"
check "predict --stage-layers 11,11,10,0: the output layer and loss alone on stage 3, finite" \
	'[ $? -eq 0 ] && finite "$tmp/last.json" && jq -e ".details.memory_stage == 0" "$tmp/last.json" >/dev/null'

"$bin" sweep "${plan[@]}" --stage-layers 0/11/11/10 --format json >"$tmp/sweep.json" 2>"$tmp/err"
got=$(jq -r '.cells[0].iteration_time_s' "$tmp/sweep.json" 2>/dev/null)
check "sweep: the cell 0/11/11/10 predicts what predict does ($got vs $want)" 'same "$got" "$want"'

printf 'id,model,cluster,framework,gpus,pp,dp,global_batch,stage_layers,measured_iteration_time_s\n' >"$tmp/runs.csv"
printf 'r1,llama3-8b,dgx-h100,megatron-lm,8,4,2,64,"0,11,11,10",9.0\n' >>"$tmp/runs.csv"
"$bin" validate "$tmp/runs.csv" --format json >"$tmp/validate.json" 2>"$tmp/err"
got=$(jq -r '.rows[0].predicted_iteration_time_s' "$tmp/validate.json" 2>/dev/null)
check "validate: a runs CSV row with stage_layers \"0,11,11,10\" predicts what predict does ($got vs $want)" \
	'same "$got" "$want"'

# Empty virtual stages (interleaved, and the V schedules' chunks), DualPipe's mirrored empty ends, recomputation.
for extra in "--vpp 2 --stage-layers 0,5,5,5,5,5,7,0" "--vpp 2 --pp-schedule zb-v --stage-layers 0,5,5,5,5,5,7,0" \
	"--vpp 2 --pp-schedule dualpipev --stage-layers 0,5,5,5,5,5,7,0" "--pp-schedule dualpipe --stage-layers 0,16,16,0" \
	"--pp-schedule zb-h1 --stage-layers 0,11,11,10" "--recompute full --stage-layers 0,16,16,0" \
	"--recompute-layers 0,2,2,0 --stage-layers 0,11,11,10"; do
	# shellcheck disable=SC2086
	"$bin" predict "${plan[@]}" $extra --format json --allow-oom >"$tmp/x.json" 2>"$tmp/err"
	check "predict $extra: exit 0, every figure finite" '[ $? -eq 0 ] && finite "$tmp/x.json"'
done

finish
