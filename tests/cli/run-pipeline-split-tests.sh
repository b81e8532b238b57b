#!/usr/bin/env bash
# The framework's pipeline_split key (how it splits layers that pp x vpp
# do not divide: frameworks/pytorch-fsdp2.yaml says torchtitan's
# generate_split_points) applied on every surface as predict applies it
# (plan_complete's plan_fill.pp_split, issue 24 item 2): a sweep cell, a
# row of validate's runs CSV, calibrate's rows and a multimodal model's
# plans (monolithic and --submodule) each agree with predict on the
# same plan.
# Usage: run-pipeline-split-tests.sh PLAN_CLI SOURCE_ROOT
# jq programs are in single quotes on purpose:
# shellcheck disable=SC2016
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"

# GPT 3.6B has 30 layers: pp 4 does not divide them; torchtitan's split is 7,8,8,7.
plan=(--model gpt-3.6b --cluster selene --gpus 32 --pp 4 --global-batch 512 --framework pytorch-fsdp2)
"$bin" predict "${plan[@]}" --format json >"$tmp/predict.json" 2>"$tmp/err"
check "predict: 30 layers on pp 4 with pytorch-fsdp2 go as torchtitan splits them" \
	'jq -e ".plan.pp_split == \"torchtitan\" and .plan.stage_layers == [7,8,8,7]" "$tmp/predict.json" >/dev/null'
want=$(jq -r .iteration_time_s "$tmp/predict.json")
# same A B: A and B agree to 1e-8 (validate writes 10 significant digits).
same() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 1e-8 * b) }'; }

"$bin" sweep "${plan[@]}" --format json >"$tmp/sweep.json" 2>"$tmp/err"
got=$(jq -r '.cells[0].iteration_time_s' "$tmp/sweep.json" 2>/dev/null)
check "sweep: the cell takes the framework's split and predicts what predict does ($got vs $want)" \
	'jq -e ".cells[0].ok" "$tmp/sweep.json" >/dev/null && same "$got" "$want"'

# The framework named in a study's axes, as on the command line.
cat >"$tmp/study.yaml" <<'YAML'
name: split
mode: predict
axes:
  model: gpt-3.6b
  cluster: selene
  gpus: 32
  framework: [megatron-lm, pytorch-fsdp2]
plan:
  global_batch: 512
  pp: 4
YAML
"$bin" sweep "$tmp/study.yaml" --format json >"$tmp/study.json" 2>"$tmp/err"
got=$(jq -r '.cells[] | select(.framework == "pytorch-fsdp2") | .iteration_time_s' "$tmp/study.json" 2>/dev/null)
check "sweep --study: the pytorch-fsdp2 cell as predict, the megatron-lm one refused as predict refuses it" \
	'same "$got" "$want" && jq -e ".cells[] | select(.framework == \"megatron-lm\") | .ok | not" "$tmp/study.json" >/dev/null'

printf 'id,model,cluster,framework,gpus,pp,global_batch,measured_iteration_time_s\n' >"$tmp/runs.csv"
printf 'r1,gpt-3.6b,selene,pytorch-fsdp2,32,4,512,4.0\n' >>"$tmp/runs.csv"
"$bin" validate "$tmp/runs.csv" --format json >"$tmp/validate.json" 2>"$tmp/err"
got=$(jq -r '.rows[0].predicted_iteration_time_s' "$tmp/validate.json" 2>/dev/null)
check "validate: a runs CSV row with framework pytorch-fsdp2 predicts what predict does ($got vs $want)" \
	'same "$got" "$want"'
# (This ran calibrate with --model, which it has no option for, and passed
# on the empty output: jq 1.6's -e exits 0 on no input; strict-jq.sh.)
"$bin" calibrate --runs "$tmp/runs.csv" --cluster selene --fit gpu.gemm_efficiency_max \
	--output "$tmp/calib.yaml" --format json >"$tmp/calib.json" 2>"$tmp/err"
check "calibrate: the same row completes (the framework's split), no layer error" \
	'[ $? -eq 0 ] && ! grep -q "not divisible" "$tmp/err" && jq -e ".runs == 1" "$tmp/calib.json" >/dev/null'

# CLIP ViT-L/14: the text encoder's 12 layers on pp 5 (the image's 24 neither).
"$bin" predict --model clip-text-768 --seq-len 77 --cluster aws-p4d --global-batch 760 --pp 5 --gpus 40 \
	--framework pytorch-fsdp2 --format json >"$tmp/text.json" 2>"$tmp/err"
want=$(jq -r .iteration_time_s "$tmp/text.json")
"$bin" predict --model clip-vit-l14 --cluster aws-p4d --global-batch 760 --pp 5 --gpus 40 \
	--framework pytorch-fsdp2 --format json >"$tmp/mm.json" 2>"$tmp/err"
got=$(jq -r '.submodules[] | select(.name == "text") | .iteration_time_s' "$tmp/mm.json" 2>/dev/null)
check "multimodal, monolithic: each submodule split by the framework; text as predict of it alone ($got vs $want)" \
	'same "$got" "$want"'
"$bin" predict --model clip-vit-l14 --cluster aws-p4d --global-batch 760 --framework pytorch-fsdp2 \
	--submodule image:pp=1,gpus=8 --submodule text:pp=5,gpus=40 --format json >"$tmp/mm2.json" 2>"$tmp/err"
got=$(jq -r '.submodules[] | select(.name == "text") | .iteration_time_s' "$tmp/mm2.json" 2>/dev/null)
check "multimodal, --submodule text:pp=5: the framework's split, as predict ($got vs $want)" 'same "$got" "$want"'

finish
