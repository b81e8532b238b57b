#!/usr/bin/env bash
# --framework-set KEY=VALUE and 'base:' in a framework file (issue 25,
# twentieth session): a profile changed on the command line, or by a file
# naming its base, predicts byte for byte what a copy of the profile with
# those keys changed predicts; optimize's predict_args carry the pairs, so
# its plan predicts again to the same time; the pairs reach validate's and
# sweep's frameworks too. The errors are in tests/bad/args-framework-set-*
# and tests/bad/framework-base-*.
# Usage: run-framework-set-tests.sh PLAN_CLI SOURCE_ROOT
# shellcheck disable=SC2016 # jq programs and check expressions in single quotes
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"
plan=(--model llama3-8b --cluster dgx-h100 --tp 2 --pp 1 --gpus 8 --global-batch 64 --zero 1)
sets=(--framework-set reduce_bytes=2 --framework-set cuda_graphs=layer)

# COPY: nemo.yaml with the two keys changed; BASED: the same by 'base: nemo'
# (no name: it inherits nemo's).
sed -e 's/^reduce_bytes: 4$/reduce_bytes: 2/' -e 's/^cuda_graphs: none$/cuda_graphs: layer/' \
	frameworks/nemo.yaml >"$tmp/copy.yaml"
printf 'base: nemo\nreduce_bytes: 2\ncuda_graphs: layer\n' >"$tmp/based.yaml"
check "the copy changes both keys" '[ "$(cmp -l frameworks/nemo.yaml "$tmp/copy.yaml" | wc -l)" -gt 0 ] &&
	grep -q "^reduce_bytes: 2$" "$tmp/copy.yaml" && grep -q "^cuda_graphs: layer$" "$tmp/copy.yaml"'

for fmt in text json csv; do
	"$bin" predict "${plan[@]}" --framework nemo "${sets[@]}" --format $fmt >"$tmp/set.$fmt" 2>&1
	"$bin" predict "${plan[@]}" --framework "$tmp/copy.yaml" --format $fmt >"$tmp/copy.$fmt" 2>&1
	"$bin" predict "${plan[@]}" --framework "$tmp/based.yaml" --format $fmt >"$tmp/based.$fmt" 2>&1
	"$bin" predict "${plan[@]}" --framework nemo --format $fmt >"$tmp/plain.$fmt" 2>&1
	check "predict --format $fmt: --framework-set is byte-identical to the edited copy" \
		'cmp "$tmp/set.$fmt" "$tmp/copy.$fmt"'
	check "predict --format $fmt: a 'base: nemo' file is byte-identical to the edited copy" \
		'cmp "$tmp/based.$fmt" "$tmp/copy.$fmt"'
	check "predict --format $fmt: the pairs change the prediction" '! cmp -s "$tmp/set.$fmt" "$tmp/plain.$fmt"'
done

# Pairs apply in order: the last one of a key wins.
"$bin" predict "${plan[@]}" --framework nemo --framework-set reduce_bytes=8 "${sets[@]}" >"$tmp/order.text" 2>&1
check "pairs apply in order, the last of a key winning" 'cmp "$tmp/order.text" "$tmp/set.text"'

# Units, and the pair's key set on a file's framework as on a bundled one.
"$bin" predict "${plan[@]}" --framework "$tmp/copy.yaml" --framework-set "iteration_overhead=20 ms" \
	--format json >"$tmp/unit.json" 2>/dev/null
"$bin" predict "${plan[@]}" --framework "$tmp/copy.yaml" --format json >"$tmp/nounit.json" 2>/dev/null
check "a quantity with its unit (iteration_overhead=20 ms) adds 20 ms" \
	'awk -v a="$(jq -r .iteration_time_s "$tmp/unit.json")" -v b="$(jq -r .iteration_time_s "$tmp/nounit.json")" \
		"BEGIN { d = a - b - 0.020; exit !(d < 1e-9 && d > -1e-9) }"'

# Round trip: optimize's predict_args carry the pairs, and predict again to its time.
opt=(--model gpt-1.7b --cluster selene --gpus 8 --global-batch 32)
"$bin" optimize "${opt[@]}" --framework nemo "${sets[@]}" --format json >"$tmp/opt.json" 2>/dev/null
check "optimize: predict_args carry the --framework-set pairs, in order" \
	'jq -e "[.best.predict_args[]] | index(\"reduce_bytes=2\") < index(\"cuda_graphs=layer\")" "$tmp/opt.json" >/dev/null'
check "optimize: the best plan's predict_args predict its time again" '
	mapfile -t args < <(jq -r ".best.predict_args[]" "$tmp/opt.json")
	a=$("$bin" predict "${args[@]}" --format json 2>/dev/null | jq -r .iteration_time_s)
	b=$(jq -r .best.iteration_time_s "$tmp/opt.json")
	awk -v a="$a" -v b="$b" "BEGIN { exit !(a > 0 && b > 0 && (a - b) / b < 1e-9 && (b - a) / b < 1e-9) }"'

# validate: the runs CSV's framework column is changed too.
five=tests/data/mosaic-five.csv
"$bin" validate "$five" --format csv >"$tmp/v0.csv" 2>/dev/null
"$bin" validate "$five" --format csv --framework-set "iteration_overhead=1 s" >"$tmp/v1.csv" 2>/dev/null
check "validate: --framework-set reaches the runs CSV's frameworks" '! cmp -s "$tmp/v0.csv" "$tmp/v1.csv"'
# The bundled megatron-bridge profile is 'base: nemo' with the perf recipes'
# eight changes (frameworks/megatron-bridge.yaml): it predicts what nemo with
# those eight pairs predicts, the profile's name aside.
mb=(--framework-set reduce_bytes=2 --framework-set grad_check_bytes=0 --framework-set loss_syncs=0
	--framework-set host_syncs=2 --framework-set step_bytes=12
	--framework-set loss_fwd_bytes=8 --framework-set loss_bwd_bytes=14 --framework-set loss_logit_memory=6)
"$bin" predict "${plan[@]}" --framework megatron-bridge --format json 2>/dev/null | jq 'del(.framework)' >"$tmp/mb.json"
"$bin" predict "${plan[@]}" --framework nemo "${mb[@]}" --format json 2>/dev/null | jq 'del(.framework)' >"$tmp/mbset.json"
check "megatron-bridge is nemo with its eight keys set" '[ -s "$tmp/mb.json" ] && cmp "$tmp/mb.json" "$tmp/mbset.json"'
# By hand: the last stage keeps 2 bytes a logit where nemo keeps 4. At tp 2
# a rank holds s b V / t = 8192 x 1 x 128256 / 2 logits (llama3-8b, micro-
# batch 1): 2 x 525,336,576 = 1,050,673,152 bytes fewer.
"$bin" predict "${plan[@]}" --framework nemo --framework-set loss_logit_memory=2 --format json 2>/dev/null >"$tmp/ll2.json"
"$bin" predict "${plan[@]}" --framework nemo --format json 2>/dev/null >"$tmp/ll4.json"
check "loss_logit_memory 4 -> 2: 2 s b V / t bytes fewer (1,050,673,152)" \
	'[ "$(jq -n --slurpfile a "$tmp/ll4.json" --slurpfile b "$tmp/ll2.json" "\$a[0].memory_bytes.total - \$b[0].memory_bytes.total")" = 1050673152 ]'
finish
