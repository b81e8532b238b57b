#!/usr/bin/env bash
# NVIDIA's 2025-26 recipe runs written as plan-cli plans (issue 25, sixth
# session; docs/research/framework-data.md, "nemorecipes"): the recipe
# Megatron-Bridge runs for Qwen3-30B-A3B on one DGX B200
# (src/megatron/bridge/perf_recipes/qwen/b200/qwen3_moe.py,
# qwen3_30b_a3b_pretrain_8gpu_b200_bf16_config: EP 8, micro-batch 4, global
# batch 512, 4096 tokens, no recomputation) fits, once the MoE layers keep
# one routed copy of their tokens (framework moe_weighted_activation), and
# the nemo profile keeps fp8 weights only (fp8_params); NeMo 25.09's Llama
# 3.1 405B GB200 fp8 recipe fits with its activation offloading
# (--activation-offload-layers).
# Usage: run-nemo-recipes-tests.sh PLAN_CLI SOURCE_ROOT
# jq programs are in single quotes on purpose:
# shellcheck disable=SC2016
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"

qwen=(--model qwen3-30b-a3b --cluster dgx-b200 --gpus 8 --ep 8 --etp 1 --micro-batch 4 --global-batch 512
	--seq-len 4096 --zero 1 --format json)
grep -v '^moe_weighted_activation' "$root/frameworks/nemo.yaml" | sed 's/^name: nemo$/name: nemo-two-copies/' \
	>"$tmp/two.yaml"
grep -v '^fp8_params' "$root/frameworks/nemo.yaml" | sed 's/^name: nemo$/name: nemo-bf16-weights/' \
	>"$tmp/bf16w.yaml"
"$bin" predict "${qwen[@]}" --framework nemo >"$tmp/one.json" 2>"$tmp/err"
echo $? >"$tmp/one.rc"
"$bin" predict "${qwen[@]}" --framework "$tmp/two.yaml" --allow-oom >"$tmp/two.json" 2>"$tmp/err2"

check "Megatron-Bridge's Qwen3-30B-A3B recipe on 8 B200s fits with --framework nemo (exit 0)" \
	'[ "$(cat "$tmp/one.rc")" = 0 ] && jq -e ".fits" "$tmp/one.json" >/dev/null'
# One routed copy fewer a layer: top-8 x 4 x 4096 tokens x 2048 x 2 bytes
# = 536,870,912 bytes, over 48 MoE layers and the one micro-batch in
# flight: 25,769,803,776 bytes.
check "moe_weighted_activation: one k s b h copy fewer a layer (25,769,803,776 bytes over 48 layers)" \
	'rel "$(mem two activations)" "$(mem one activations)" 25769803776'
check "with two routed copies (Megatron-Core 0.12) the same plan does not fit" \
	'jq -e ".fits | not" "$tmp/two.json" >/dev/null'
"$bin" predict "${qwen[@]}" --framework nemo --precision fp8 --fp8-recipe current >"$tmp/f8.json" 2>"$tmp/err3"
"$bin" predict "${qwen[@]}" --framework "$tmp/bf16w.yaml" --precision fp8 --fp8-recipe current --allow-oom \
	>"$tmp/f8b.json" 2>"$tmp/err4"
check "nemo keeps the fp8 weights only (fp8_params): fewer weight bytes than a 16-bit weight beside them" \
	'awk -v a="$(mem f8 weights)" -v b="$(mem f8b weights)" "BEGIN { exit !(a < b) }"'

# NeMo 25.09's Llama 3.1 405B on 128 GB200s in fp8 (model_configs_gb200.csv:
# TP 2, Megatron-FSDP, micro-batch 1, global batch 256, 8192 tokens,
# activation_offload_layers 95): without offloading it does not fit; with
# the 95 layers' activations in host memory it does, and over NVLink-C2C
# (the gb200 GPU's pcie_bandwidth, 150 GB/s) the copies hide behind the computation.
l405=(predict --model llama3.1-405b --cluster gb200-nvl72 --gpus 128 --tp 2 --micro-batch 1 --global-batch 256
	--seq-len 8192 --sequence-parallel --tp-overlap --precision fp8 --fp8-recipe delayed --framework megatron-fsdp
	--zero 3 --format json)
"$bin" "${l405[@]}" --allow-oom >"$tmp/o0.json" 2>"$tmp/err5"
"$bin" "${l405[@]}" --activation-offload-layers 95 >"$tmp/o95.json" 2>"$tmp/err6"
echo $? >"$tmp/o95.rc"
check "NeMo's Llama 3.1 405B GB200 fp8 recipe does not fit without its activation offloading" \
	'jq -e ".fits | not" "$tmp/o0.json" >/dev/null'
check "with --activation-offload-layers 95 it fits (exit 0), its copies hidden (breakdown_s.offload 0)" \
	'[ "$(cat "$tmp/o95.rc")" = 0 ] && jq -e ".fits and .breakdown_s.offload == 0 and .plan.activation_offload_layers == 95" "$tmp/o95.json" >/dev/null'
fails_cmd "--activation-offload-layers with pipeline parallelism is refused, as Megatron-Core refuses it" 2 \
	"--activation-offload-layers needs pp 1 (got 2)" \
	predict --model llama3-70b --cluster dgx-b200 --gpus 64 --pp 2 --global-batch 128 --activation-offload-layers 5

printf 'name: bad\nmoe_weighted_activation: 2\n' >"$tmp/bad.yaml"
fails_cmd "a framework's moe_weighted_activation must be a boolean, at file:line:col" 3 \
	"bad.yaml:2:26: 'moe_weighted_activation' must be true or false, got '2'" \
	predict "${qwen[@]}" --framework "$tmp/bad.yaml"
finish
