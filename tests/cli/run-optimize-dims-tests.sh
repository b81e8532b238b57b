#!/usr/bin/env bash
# optimize searches expert TP and the pipeline schedules by default (issue
# 24 items 1-3): exactly, so its best plan is the best of the searches
# that fix the dimension to each of its values in turn; the schedules
# are those the framework runs (its pipeline_schedules key).
# Usage: run-optimize-dims-tests.sh PLAN_CLI SOURCE_ROOT
# jq programs are in single quotes on purpose:
# shellcheck disable=SC2016
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"

# best NAME ARGS...: optimize's best iteration time into $tmp/NAME.json; prints it.
best() {
	local name=$1
	shift
	"$bin" optimize "$@" --format json >"$tmp/$name.json" 2>"$tmp/$name.err"
	jq -r '.best.iteration_time_s // empty' "$tmp/$name.json"
}
# least A B...: the smallest of the numbers.
least() { printf '%s\n' "$@" | sort -g | head -n 1; }
# same A B: equal to 1e-12.
same() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 1e-12 * b) }'; }

# Mixtral 8x7B on 64 H100s with TP 2 or 4: splitting the experts less
# than the dense layers (etp 1) wins here.
moe=(--model mixtral-8x7b --cluster dgx-h100 --gpus 64 --global-batch 256 --tp 2,4)
all=$(best all "${moe[@]}")
as_tp=$(best as-tp "${moe[@]}" --etp 0)
one=$(best one "${moe[@]}" --etp 1)
two=$(best two "${moe[@]}" --etp 2)
check "optimize searches etp: its best ($all s) is the best of --etp 0, 1, 2 ($as_tp, $one, $two)" \
	'[ -n "$all" ] && same "$all" "$(least "$as_tp" "$one" "$two")"'
check "... and here better than the experts split as the dense layers, with etp 1 in its plan" \
	'awk -v a="$all" -v b="$as_tp" "BEGIN { exit !(a < b) }" && jq -e ".best.plan.etp == 1" "$tmp/all.json" >/dev/null'
check "... the same plan predict gives" \
	'mapfile -t args < <(jq -r ".best.predict_args[]" "$tmp/all.json") &&
	 "$bin" predict "${args[@]}" --format json >"$tmp/p.json" && same "$(jq .iteration_time_s "$tmp/p.json")" "$all"'

# GPT 18.4B on 64 H100s, pp 2, 4 or 8: Megatron-Core runs 1F1B alone,
# torchtitan (pytorch-fsdp2) also ZB-V and DualPipeV.
dense=(--model gpt-18.4b --cluster dgx-h100 --gpus 64 --global-batch 512 --pp 2,4,8)
mg=$(best mg "${dense[@]}" --framework megatron-lm)
mg1=$(best mg1 "${dense[@]}" --framework megatron-lm --pp-schedule 1f1b)
check "megatron-lm: optimize tries 1F1B alone ($mg s, as --pp-schedule 1f1b: $mg1)" \
	'[ -n "$mg" ] && same "$mg" "$mg1" && jq -e ".best.plan.pp_schedule == \"1f1b\"" "$tmp/mg.json" >/dev/null'
tt=$(best tt "${dense[@]}" --framework pytorch-fsdp2)
tt1=$(best tt1 "${dense[@]}" --framework pytorch-fsdp2 --pp-schedule 1f1b)
ttz=$(best ttz "${dense[@]}" --framework pytorch-fsdp2 --pp-schedule zb-v,dualpipev)
check "pytorch-fsdp2: optimize searches its schedules; best ($tt s) of 1f1b ($tt1) and zb-v/dualpipev ($ttz)" \
	'[ -n "$tt" ] && same "$tt" "$(least "$tt1" "$ttz")" && awk -v a="$tt" -v b="$tt1" "BEGIN { exit !(a < b) }"'
check "... no schedule the framework does not run (zb-h1, dualpipe)" \
	'jq -e "[.top[].plan.pp_schedule] | all(. != \"zb-h1\" and . != \"dualpipe\")" "$tmp/tt.json" >/dev/null'

finish
