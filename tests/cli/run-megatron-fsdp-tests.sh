#!/usr/bin/env bash
# Megatron-FSDP as its own sharding (issue 24 item 6): the bundled
# megatron-fsdp profile prices --zero 3 as Megatron-Core's FSDP does
# (frameworks/megatron-fsdp.yaml): bf16 gradients, and the two persistent
# gradient units of fsdp_double_buffer beside the two gathered layers.
# Usage: run-megatron-fsdp-tests.sh PLAN_CLI SOURCE_ROOT
# jq programs are in single quotes on purpose:
# shellcheck disable=SC2016
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"

plan=(--model llama2-7b --cluster dgx-h100 --gpus 8 --global-batch 64 --format json)
for fw in megatron-lm megatron-fsdp; do
	for z in 1 3; do
		"$bin" predict "${plan[@]}" --framework "$fw" --zero "$z" >"$tmp/$fw-$z.json" 2>"$tmp/err"
	done
done

check "predict --framework megatron-fsdp --zero 3 runs and names the profile" \
	'jq -e ".framework == \"megatron-fsdp\"" "$tmp/megatron-fsdp-3.json" >/dev/null'
# Llama 2 7B's layer: 4 x 4096^2 (attention) + 3 x 4096 x 11008 (SwiGLU)
# + 2 x 4096 (RMSNorms) = 202,383,360 parameters; two gradient units of
# bf16 at tp 1: 2 x 2 x 202,383,360 = 809,533,440 bytes more "other".
check "zero 3: the double buffer adds two bf16 gradient units of a layer (809,533,440 bytes)" \
	'rel "$(mem megatron-fsdp-3 other)" "$(mem megatron-lm-3 other)" 809533440'
# Gradients sharded over 8 in bf16 rather than Megatron-LM's fp32:
# half of them, (4 - 2) / 8 of the 6,738,415,616 parameters less.
check "zero 3: bf16 gradients (--grad-reduce-in-bf16): half of megatron-lm's fp32 shard" \
	'rel "$(mem megatron-lm-3 gradients)" "$(mem megatron-fsdp-3 gradients)" "$(jq -r ".parameters / 4" "$tmp/megatron-lm-3.json")"'
check "zero 1: nothing gathered unit by unit, no buffers: other as megatron-lm's" \
	'[ "$(mem megatron-fsdp-1 other)" = "$(mem megatron-lm-1 other)" ]'

printf 'name: bad\nfsdp_double_buffer: maybe\n' >"$tmp/bad.yaml"
fails_cmd "a framework's fsdp_double_buffer must be a boolean, at file:line:col" 3 \
	"bad.yaml:2:21: 'fsdp_double_buffer' must be true or false, got 'maybe'" \
	predict --model llama2-7b --cluster dgx-h100 --gpus 8 --global-batch 64 --zero 3 --framework "$tmp/bad.yaml"
# The layers are Megatron-Core's TransformerLayer under FSDP too: --recompute
# selective runs the fused core attention's forward again (core_attn), as
# under megatron-lm; the same plan prices the same recompute time, and more
# than none.
sel=(--model llama3-8b --cluster dgx-h100 --gpus 8 --zero 3 --micro-batch 1 --global-batch 64
	--recompute selective --format json)
"$bin" predict "${sel[@]}" --framework megatron-lm >"$tmp/sel-lm.json" 2>/dev/null
"$bin" predict "${sel[@]}" --framework megatron-fsdp >"$tmp/sel-fsdp.json" 2>/dev/null
check "selective recompute: the core attention's forward again, as megatron-lm prices it" \
	'jq -e -n --slurpfile a "$tmp/sel-lm.json" --slurpfile b "$tmp/sel-fsdp.json" \
		"(\$b[0].breakdown_s.recompute > 0) and (\$a[0].breakdown_s.recompute == \$b[0].breakdown_s.recompute)" >/dev/null'
finish
