#!/usr/bin/env bash
# Black-box tests of the architecture keys: sliding-window attention
# (models/mistral-7b.yaml) and parallel attention + MLP blocks
# (models/gpt-j-6b.yaml), each against the same model without it, their
# Hugging Face import and their file:line:col errors.
# Usage: run-arch-tests.sh PLAN_CLI SOURCE_ROOT
# jq programs are in single quotes on purpose:
# shellcheck disable=SC2016
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$@"

plan=(--cluster selene --gpus 8 --zero 1 --global-batch 16 --format json)

# Mistral 7B v0.1 without its window block.
sed '/^sliding_window:/,$d' models/mistral-7b.yaml >"$tmp/mistral-global.yaml"
"$bin" predict --model mistral-7b "${plan[@]}" --tp 2 >"$tmp/win.json" 2>"$tmp/err"
check "mistral-7b predicts, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
"$bin" predict --model "$tmp/mistral-global.yaml" "${plan[@]}" --tp 2 >"$tmp/global.json"
# Model FLOPs: 32 layers x 2 s a (d_qk + d_v) x (1 - w / s) = 32 x 2 x 8192
# x 32 x 256 x 0.5 = 2,147,483,648 a token forward fewer; x 3 x 16 x 8192
# tokens = 844,424,930,131,968 an iteration.
check "a 4096-token window of 8192 takes 844,424,930,131,968 model FLOPs an iteration" \
	'jq -s -e "((.[1].model_flops_per_iteration - .[0].model_flops_per_iteration) - 844424930131968 | fabs)
		< 1e6" "$tmp/win.json" "$tmp/global.json" >/dev/null'
check "the window makes compute faster, memory the same (flash attention keeps O(s))" \
	'jq -s -e "(.[0].breakdown_s.compute < .[1].breakdown_s.compute) and
		(.[0].memory_bytes.activations == .[1].memory_bytes.activations)" "$tmp/win.json" "$tmp/global.json" >/dev/null'
"$bin" predict --model mistral-7b "${plan[@]}" --tp 2 --no-flash-attention >"$tmp/win-unfused.json" 2>/dev/null
"$bin" predict --model "$tmp/mistral-global.yaml" "${plan[@]}" --tp 2 --no-flash-attention >"$tmp/global-unfused.json" 2>/dev/null
check "unfused attention computes every score: the same compute with and without a window" \
	'jq -s -e ".[0].breakdown_s.compute == .[1].breakdown_s.compute" "$tmp/win-unfused.json" \
		"$tmp/global-unfused.json" >/dev/null'

# GPT-J 6B as a sequential block of two norms.
sed 's/^parallel_block: true/parallel_block: false/; s/^norms_per_layer: 1/norms_per_layer: 2/' \
	models/gpt-j-6b.yaml >"$tmp/gptj-seq.yaml"
"$bin" predict --model gpt-j-6b "${plan[@]}" --tp 4 >"$tmp/par.json" 2>"$tmp/err"
check "gpt-j-6b predicts, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
"$bin" predict --model "$tmp/gptj-seq.yaml" "${plan[@]}" --tp 4 >"$tmp/seq.json"
# 8 micro-batches of 28 layers: a sequential block 4 collectives a layer
# (2 forward, 2 backward) and the embedding's and output layer's 2:
# 8 x 114 = 912; a parallel block 2 a layer: 8 x 58 = 464.
check "TP: 464 collectives an iteration in parallel blocks, 912 in sequential ones" \
	'jq -s -e "((.[0].breakdown_s.tp_comm / .[0].details.tp_collective_s) - 464 | fabs) < 1e-6 and
		((.[1].breakdown_s.tp_comm / .[1].details.tp_collective_s) - 912 | fabs) < 1e-6" \
		"$tmp/par.json" "$tmp/seq.json" >/dev/null'
check "the same model FLOPs, fewer activations in the parallel block" \
	'jq -s -e "(.[0].model_flops_per_iteration == .[1].model_flops_per_iteration) and
		(.[0].memory_bytes.activations < .[1].memory_bytes.activations)" "$tmp/par.json" "$tmp/seq.json" >/dev/null'

# Import: Mistral 7B v0.1's config.json fields, and Qwen2's windows.
printf '%s' '{"model_type": "mistral", "num_hidden_layers": 32, "hidden_size": 4096,
 "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
 "max_position_embeddings": 32768, "intermediate_size": 14336, "sliding_window": 4096,
 "tie_word_embeddings": false}' >"$tmp/mistral.json"
"$bin" import "$tmp/mistral.json" >"$tmp/mistral.yaml" 2>"$tmp/err"
check "import writes Mistral's sliding_window block" \
	'[ $? -eq 0 ] && grep -q "^sliding_window:$" "$tmp/mistral.yaml" && grep -q "^  window: 4096$" "$tmp/mistral.yaml"'
"$bin" predict --model "$tmp/mistral.json" "${plan[@]}" --tp 2 --seq-len 8192 >"$tmp/imported.json"
check "the imported Mistral predicts as the bundled one" \
	'jq -s -e ".[0].iteration_time_s == .[1].iteration_time_s" "$tmp/imported.json" "$tmp/win.json" >/dev/null'

# Errors name the file, line and column.
printf 'name: m\nlayers: 4\nhidden: 1024\nheads: 8\nvocab: 1000\nseq_len: 512\nsliding_window:\n  window: 128\n  pattern: LQ\n' \
	>"$tmp/bad.yaml"
"$bin" predict --model "$tmp/bad.yaml" --cluster selene --global-batch 8 >"$tmp/out" 2>"$tmp/err"
check "a bad pattern: exit 3, file:line:col" \
	'[ $? -eq 3 ] && [ ! -s "$tmp/out" ] && grep -q "bad.yaml:9:12: sliding_window.pattern takes the letters L" "$tmp/err"'
finish
