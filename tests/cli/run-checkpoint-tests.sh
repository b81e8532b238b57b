#!/usr/bin/env bash
# Black-box tests of the checkpoint options (Gemini, SOSP 2023):
# predict --checkpoint-to, its text section and JSON object, the usage
# errors, a report without it unchanged, and optimize --objective goodput.
# Usage: run-checkpoint-tests.sh PLAN_CLI SOURCE_ROOT
# jq programs are in single quotes on purpose:
# shellcheck disable=SC2016
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$@"

# Gemini's setting: a 145.6B GPT, ZeRO-3 on 16 p4d.24xlarge.
gemini=(--model gpt-145.6b --cluster aws-p4d-16 --zero 3 --micro-batch 2 --global-batch 256
	--recompute full --flash-attention)

# usage NAME SUBSTRING ARGS...: exit 2, nothing on stdout, one error line with SUBSTRING.
usage() {
	local name=$1 sub=$2
	shift 2
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	check "usage error: $name" '[ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		grep -q "^plan-cli: error: " "$tmp/err" && grep -qF -- "$sub" "$tmp/err"'
}

"$bin" predict "${gemini[@]}" >"$tmp/plain.txt" 2>"$tmp/err"
check "without --checkpoint-to: no checkpoints section" \
	'[ $? -eq 0 ] && ! grep -q "^checkpoints" "$tmp/plain.txt"'
"$bin" predict "${gemini[@]}" --format json >"$tmp/plain.json"
check "without --checkpoint-to: no checkpoint object" '! jq -e "has(\"checkpoint\")" "$tmp/plain.json" >/dev/null'

"$bin" predict "${gemini[@]}" --checkpoint-to cpu --failures-per-day 2 >"$tmp/cpu.txt" 2>"$tmp/err"
check "--checkpoint-to cpu exits 0, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
check "the report is the same, a checkpoints section added at the end" \
	'[ "$(head -n "$(wc -l <"$tmp/plain.txt")" "$tmp/cpu.txt")" = "$(cat "$tmp/plain.txt")" ] &&
	 grep -q "^checkpoints  to CPU memory (Gemini) every 1 iteration, 2 copies (local + 1 peer), 16 machines$" "$tmp/cpu.txt" &&
	 grep -q "^  goodput " "$tmp/cpu.txt"'

"$bin" predict "${gemini[@]}" --checkpoint-to cpu --failures-per-day 2 --format json >"$tmp/cpu.json"
check "JSON: the checkpoint object's keys" \
	'jq -e ".checkpoint | (.to == \"cpu\") and .every_iterations == 1 and .replicas == 2 and .machines == 16 and
		(has(\"size_bytes_per_machine\") and has(\"time_s\") and has(\"overhead_per_iteration_s\") and
		 has(\"recovery_cpu_s\") and has(\"recovery_storage_s\") and has(\"wasted_fraction\") and
		 has(\"goodput_tokens_per_s\"))" "$tmp/cpu.json" >/dev/null'
check "JSON: the prediction itself is unchanged" \
	'[ "$(jq -S "del(.checkpoint)" "$tmp/cpu.json")" = "$(jq -S . "$tmp/plain.json")" ]'
check "p4d: CPU checkpoints every iteration cost at most 5 % of it" \
	'jq -e ".checkpoint.overhead_fraction <= 0.05" "$tmp/cpu.json" >/dev/null'
check "p4d: recovery from CPU memory 10x faster than from 20 Gbit/s storage" \
	'jq -e ".checkpoint.recovery_storage_s >= 10 * .checkpoint.recovery_cpu_s" "$tmp/cpu.json" >/dev/null'
check "goodput is below the throughput, the two-machine probability 1 - 8/120" \
	'jq -e "(.checkpoint.goodput_tokens_per_s < .tokens_per_s) and
		((.checkpoint.cpu_recovery_probability_two - 14 / 15) | fabs) < 1e-12" "$tmp/cpu.json" >/dev/null'

# Goodput: CPU beats storage at every failure rate above one a day.
for f in 1.5 3 10 30; do
	c=$("$bin" predict "${gemini[@]}" --checkpoint-to cpu --failures-per-day "$f" --format json |
		jq .checkpoint.goodput_tokens_per_s)
	s=$("$bin" predict "${gemini[@]}" --checkpoint-to storage --failures-per-day "$f" --format json |
		jq .checkpoint.goodput_tokens_per_s)
	check "goodput at $f failures a day: cpu $c > storage $s tokens/s" \
		"jq -en --argjson c '${c:-0}' --argjson s '${s:-0}' '\$c > \$s' >/dev/null"
done

"$bin" predict "${gemini[@]}" --checkpoint-to storage --storage-bandwidth "20 Gbit/s" --gpu-mtbf-hours 1000 \
	--format json >"$tmp/st.json"
check "storage: no replicas, the failure rate from the GPU MTBF (128 x 24 / 1000)" \
	'jq -e ".checkpoint | (has(\"replicas\") | not) and ((.failures_per_day - 3.072) | fabs) < 1e-12 and
		.every_iterations >= 1 and .optimal_interval_s > 0" "$tmp/st.json" >/dev/null'
"$bin" predict "${gemini[@]}" --checkpoint-to storage --checkpoint-every 10 --storage-bandwidth "20 Gbit/s" \
	--format json >"$tmp/st10.json"
check "storage: --checkpoint-every 10 stalls a tenth of the save per iteration" \
	'jq -e ".checkpoint | .every_iterations == 10 and
		((.overhead_per_iteration_s - .to_storage_s / 10) | fabs) < 1e-9" "$tmp/st10.json" >/dev/null'
"$bin" predict --model gpt-145.6b --cluster "$root/tests/data/p4d-storage.yaml" --zero 3 --micro-batch 2 \
	--global-batch 256 --recompute full --flash-attention --checkpoint-to storage --format json >"$tmp/key.json"
check "the cluster's storage_bandwidth key (2 GB/s) sets the storage time" \
	'jq -e "((.checkpoint.to_storage_s - .checkpoint.size_bytes_total / 2e9) | fabs) < 1e-6" "$tmp/key.json" >/dev/null'

usage "an unknown target" "--checkpoint-to" predict "${gemini[@]}" --checkpoint-to disk
usage "zero replicas" "--checkpoint-replicas" predict "${gemini[@]}" --checkpoint-to cpu --checkpoint-replicas 0
usage "more replicas than machines" "17 checkpoint replicas need as many machines; the plan uses 16" \
	predict "${gemini[@]}" --checkpoint-to cpu --checkpoint-replicas 17
usage "replicas with storage" "needs --checkpoint-to cpu" \
	predict "${gemini[@]}" --checkpoint-to storage --checkpoint-replicas 2
usage "a negative failure rate" "--failures-per-day expects a number from 1e-6 to 1e12, got '-1'" \
	predict "${gemini[@]}" --checkpoint-to cpu --failures-per-day -1
usage "a zero MTBF" "--gpu-mtbf-hours expects a number from 1e-6 to 1e12" \
	predict "${gemini[@]}" --checkpoint-to cpu --gpu-mtbf-hours 0
usage "a GPU MTBF of 1e-300 h (7.68e+302 failures a day)" "--gpu-mtbf-hours expects a number from 1e-6 to 1e12, got '1e-300'" \
	predict "${gemini[@]}" --checkpoint-to cpu --gpu-mtbf-hours 1e-300
usage "1e300 failures a day: the range, not 'positive'" "--failures-per-day expects a number from 1e-6 to 1e12, got '1e300'" \
	predict "${gemini[@]}" --checkpoint-to storage --failures-per-day 1e300
usage "both a rate and an MTBF" "not both" \
	predict "${gemini[@]}" --checkpoint-to cpu --failures-per-day 2 --gpu-mtbf-hours 1000
usage "a checkpoint option without a target" "--checkpoint-every needs --checkpoint-to cpu or storage" \
	predict "${gemini[@]}" --checkpoint-every 4
usage "every 0 iterations" "--checkpoint-every" predict "${gemini[@]}" --checkpoint-to cpu --checkpoint-every 0
usage "a bandwidth without a unit" "--storage-bandwidth" \
	predict "${gemini[@]}" --checkpoint-to storage --storage-bandwidth 20
printf 'name: bad\nnodes: 2\ngpus_per_node: 8\ngpu: a100-sxm4-40gb\nintra_node:\n  bandwidth: 300 GB/s\ninter_node:\n  nics_per_node: 4\n  nic_bandwidth: 100 Gbit/s\nrestart_time: 0 s\n' >"$tmp/bad.yaml"
"$bin" predict --model gpt-1.7b --cluster "$tmp/bad.yaml" --global-batch 16 >"$tmp/out" 2>"$tmp/err"
check "a cluster's restart_time of 0 is invalid input (3), with its line" \
	'[ $? -eq 3 ] && grep -qF "bad.yaml:10:" "$tmp/err" && grep -qF "restart_time" "$tmp/err"'

# optimize --objective goodput: the list is sorted by goodput, and on slow
# NICs with 4 copies (and unfused attention) the fastest plan is not the best.
# (--time-limit 3600, the largest: a busy machine makes the search slower, never different.)
slow=(--model gpt-7.5b --cluster aws-p4d-16 --global-batch 512 --nic-bandwidth "10 Gbit/s" --max-pp 8
	--max-micro-batch 2 --max-vpp 1 --no-flash-attention --time-limit 3600)
"$bin" optimize "${slow[@]}" --format json >"$tmp/time.json"
"$bin" optimize "${slow[@]}" --objective goodput --checkpoint-to cpu --checkpoint-replicas 4 \
	--failures-per-day 5 --format json >"$tmp/good.json" 2>"$tmp/err"
check "optimize --objective goodput exits 0" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
check "the top list is sorted by goodput, best first, each with its checkpoint object" \
	'jq -e "[.top[].checkpoint.goodput_tokens_per_s] as \$g | \$g == (\$g | sort | reverse) and
		.best.checkpoint.goodput_tokens_per_s == \$g[0] and (.top | length) == 5" "$tmp/good.json" >/dev/null'
check "goodput re-ranks: the best plan is slower than the fastest" \
	'[ "$(jq ".best.iteration_time_s > $(jq .best.iteration_time_s "$tmp/time.json")" "$tmp/good.json")" = true ]'
mapfile -t args < <(jq -r '.best.predict_args[]' "$tmp/good.json")
got=$("$bin" predict "${args[@]}" --format json | jq .checkpoint.goodput_tokens_per_s)
check "the best plan's predict_args carry the checkpoints: the same goodput" \
	"[ \"$got\" = \"$(jq .best.checkpoint.goodput_tokens_per_s "$tmp/good.json")\" ]"
usage "optimize --objective goodput without a target" "--objective goodput needs --checkpoint-to" \
	optimize "${slow[@]}" --objective goodput
usage "optimize --checkpoint-to without --objective goodput" "--checkpoint-to needs --objective goodput" \
	optimize "${slow[@]}" --checkpoint-to cpu
finish
