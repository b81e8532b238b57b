#!/usr/bin/env bash
# plan-cli predict --seq-lengths from the command line (DynaPipe, issue 16):
# the bundled distributions by name, the three batchings in text and
# JSON, the errors of a bad distribution file (FILE:LINE) and of the
# options, with their exit statuses (plan-cli(1), EXIT STATUS), and the
# report without --seq-lengths left as it was.
# Usage: run-seqlen-tests.sh PLAN_CLI SOURCE_ROOT
# jq programs are in single quotes on purpose:
# shellcheck disable=SC2016
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"

plan=(--model gpt-1.7b --cluster selene --gpus 64 --pp 4 --micro-batch 4 --global-batch 2048 --seq-len 2048)
# predict ARGS...: $rc, $tmp/out, $tmp/err.
predict() { run_cmd predict "$@"; }
# fails NAME RC TEXT ARGS...: predict fails as fails_cmd (harness.sh) says.
fails() { local name=$1 want=$2 text=$3; shift 3; fails_cmd "$name" "$want" "$text" predict "$@"; }

for b in pad pack dynamic; do
	predict "${plan[@]}" --seq-lengths flan-mix --batching "$b" --format json
	cp "$tmp/out" "$tmp/$b.json"
	check "--batching $b on the bundled flan-mix: JSON with the batching fields" \
		'[ $rc -eq 0 ] && jq -e --arg b "$b" ".batching.mode == \$b and .effective_tokens_per_s > 0 and
			.padding_fraction >= 0 and .padding_fraction < 1 and .attention_waste >= 0" "$tmp/out" >/dev/null'
done
eff() { jq .effective_tokens_per_s "$tmp/$1.json"; }
check "effective tokens/s: dynamic > pack > pad" \
	'awk -v a="$(eff pad)" -v b="$(eff pack)" -v c="$(eff dynamic)" "BEGIN { exit !(c > b && b > a) }"'
check "the rest of the report is the plan's at full --seq-len" \
	'[ "$(jq .iteration_time_s "$tmp/pad.json")" = "$(jq .iteration_time_s "$tmp/dynamic.json")" ]'
predict "${plan[@]}" --seq-lengths "$root/datasets/pretrain-longtail.csv" --batching pack --pack-attention masked
check "text: data and batching lines, masked packing" \
	'[ $rc -eq 0 ] && grep -q "^data  .*truncated to --seq-len" "$tmp/out" &&
		grep -q "^batching        pack (masked attention)" "$tmp/out" && grep -q "attention waste 0.000" "$tmp/out"'
predict "${plan[@]}" --seq-lengths flan-mix
check "--batching defaults to pad" '[ $rc -eq 0 ] && grep -q "^batching        pad:" "$tmp/out"'

predict "${plan[@]}" --format json
check "without --seq-lengths the JSON has no batching fields" \
	'[ $rc -eq 0 ] && jq -e "has(\"batching\") or has(\"effective_tokens_per_s\") | not" "$tmp/out" >/dev/null'
predict "${plan[@]}"
check "without --seq-lengths the text has no batching lines" '[ $rc -eq 0 ] && ! grep -q "^batching" "$tmp/out"'

# Options.
fails "--batching without --seq-lengths" 2 "need --seq-lengths" "${plan[@]}" --batching dynamic
fails "--pack-attention without pack" 2 "applies to --batching pack" \
	"${plan[@]}" --seq-lengths flan-mix --pack-attention masked
fails "an unknown --batching" 2 "--batching" "${plan[@]}" --seq-lengths flan-mix --batching zigzag
fails "an unknown dataset" 3 "unknown dataset 'flan-mx'" "${plan[@]}" --seq-lengths flan-mx
fails "a missing file" 1 "no such file" "${plan[@]}" --seq-lengths "$tmp/none.csv"
fails "a folder" 1 "is a directory" "${plan[@]}" --seq-lengths "$tmp/"
fails "context parallelism" 2 "context parallelism" --model gpt-1.7b --cluster selene --gpus 64 --cp 2 \
	--global-batch 64 --seq-lengths flan-mix

# Bad files: FILE:LINE:COLUMN: what is wrong (the number's column), exit 3.
printf 'length,count\n128,4\nabc\n' >"$tmp/malformed.csv"
fails "a malformed line" 3 "malformed.csv:3:1: malformed line 'abc'" "${plan[@]}" --seq-lengths "$tmp/malformed.csv"
printf '# lengths\n100\n0\n' >"$tmp/zero.csv"
fails "a zero length" 3 "zero.csv:3:1: length must be positive" "${plan[@]}" --seq-lengths "$tmp/zero.csv"
printf 'length,count\n-12,3\n' >"$tmp/neg.csv"
fails "a negative length" 3 "neg.csv:2:1: length must be positive" "${plan[@]}" --seq-lengths "$tmp/neg.csv"
printf '99999999\n' >"$tmp/huge.csv"
fails "a length above the maximum" 3 "huge.csv:1:1: length 99999999 is above the maximum" \
	"${plan[@]}" --seq-lengths "$tmp/huge.csv"
printf '128,-1\n' >"$tmp/count.csv"
fails "a negative count" 3 "count.csv:1:5: count must be positive" "${plan[@]}" --seq-lengths "$tmp/count.csv"
: >"$tmp/empty.csv"
fails "an empty file" 3 "empty.csv: no sequence lengths" "${plan[@]}" --seq-lengths "$tmp/empty.csv"
printf 'length,count\n# none\n' >"$tmp/header.csv"
fails "a header alone" 3 "header.csv:2: no sequence lengths" "${plan[@]}" --seq-lengths "$tmp/header.csv"
printf '12\n1\000x\n' >"$tmp/nul.csv"
fails "a NUL byte" 3 "nul.csv:2:2: a NUL byte" "${plan[@]}" --seq-lengths "$tmp/nul.csv"
# Fewer sequences than one packed micro-batch holds: one part-full
# micro-batch, never a fraction of one (issue 28).
"$bin" predict --model gpt-1.7b --cluster dgx-h100 --gpus 8 --global-batch 8 --seq-lengths flan-mix --batching pack \
	--format json >"$tmp/pk.json" 2>"$tmp/err"
check "pack with less than a micro-batch of sequences: one micro-batch, the iteration at least its time" \
	'jq -e ".batching.microbatches == 1 and .batching.iteration_time_s >= .batching.max_microbatch_time_s" "$tmp/pk.json" >/dev/null'

# Issue 24 item 9: dynamic is never slower than pad or pack, at any
# --micro-batch (32 GPUs, pp 4, 16 sequences a replica: it lost to pad at
# micro-batch 1 while pad's bubble went at a typical micro-batch's pace).
small=(--model gpt-1.7b --cluster selene --gpus 32 --pp 4 --global-batch 128 --seq-lengths flan-mix --format json)
dyn=$("$bin" predict "${small[@]}" --batching dynamic | jq .effective_tokens_per_s)
worse=""
for mb in 1 2 4 8; do
	for b in pad pack; do
		v=$("$bin" predict "${small[@]}" --micro-batch "$mb" --batching "$b" | jq .effective_tokens_per_s)
		awk -v d="$dyn" -v v="$v" 'BEGIN { exit !(d >= v) }' || worse="$worse $b@$mb:$v"
	done
done
check "dynamic ($dyn effective tokens/s) >= pad and pack at micro-batch 1, 2, 4, 8${worse:+ (beaten by$worse)}" \
	'[ -n "$dyn" ] && [ -z "$worse" ]'

finish
