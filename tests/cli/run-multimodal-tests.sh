#!/usr/bin/env bash
# predict and optimize on a multimodal model (DistMM, Huang et al. NSDI
# 2024): the per-submodule and monolithic outputs, their JSON keys against
# plan-cli(1), and the bad inputs that are usage errors.
# Usage: run-multimodal-tests.sh PLAN_CLI SOURCE_ROOT
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"
base=(--model clip-vit-l14 --cluster aws-p4d --global-batch 768)
per=(--submodule image:tp=1,dp=12,micro-batch=16 --submodule text:gpus=4,micro-batch=16)
# optimize with --time-limit 3600 (the largest), not the default 2 s per
# MILP: a busy machine makes the search slower, never different.
opt=(optimize --time-limit 3600)

"$bin" predict "${base[@]}" "${per[@]}" >"$tmp/out" 2>"$tmp/err"
check "predict --submodule: exit 0, nothing on stderr" '[ $? -eq 0 ] && [ ! -s "$tmp/err" ]'
check "predict --submodule: per-submodule rows and the batch-sync" \
	'grep -q "per-submodule plans (DistMM)" "$tmp/out" && grep -q "^image .* 12  tp 1 x pp 1 x dp 12" "$tmp/out" &&
	 grep -q "^text .*  4  tp 1 x pp 1 x dp 4" "$tmp/out" && grep -q "^batch-sync" "$tmp/out"'

"$bin" predict "${base[@]}" --gpus 16 --micro-batch 16 >"$tmp/mono" 2>"$tmp/err"
check "predict monolithic: every submodule on all 16 GPUs" \
	'[ $? -eq 0 ] && grep -q "monolithic plan" "$tmp/mono" && [ "$(grep -c " 16  tp 1 x pp 1 x dp 16" "$tmp/mono")" -eq 2 ]'

"$bin" predict "${base[@]}" "${per[@]}" --format json >"$tmp/json" 2>"$tmp/err"
check "predict --format json is JSON with submodules and batch_sync_s" \
	'[ $? -eq 0 ] && jq -e ".mode == \"per-submodule\" and (.submodules | length) == 2 and .batch_sync_s > 0 and
	 .iteration_time_s == .compute_s + .batch_sync_s and .submodules[0].prediction.plan.dp == 12" "$tmp/json" >/dev/null'
# Every key of the multimodal JSON is named in plan-cli(1).
missing=""
for k in $(jq -r '(keys[]), (.submodules[0] | keys[]), (.submodules[0].plan | keys[])' "$tmp/json" | sort -u); do
	grep -qE "^\.BR? \"?$k([ \"]|$)" man/plan-cli.1 || missing="$missing $k"
done
check "plan-cli(1) names every key of the multimodal JSON${missing:+ (missing:$missing)}" '[ -z "$missing" ]'

"$bin" "${opt[@]}" "${base[@]}" --gpus 16 >"$tmp/opt" 2>"$tmp/err"
check "optimize: per-submodule, monolithic, speedup and timing" \
	'[ $? -eq 0 ] && grep -q "^per-submodule (DistMM)" "$tmp/opt" && grep -q "^monolithic" "$tmp/opt" &&
	 grep -q "^speedup " "$tmp/opt" && grep -q "^search .* searches in" "$tmp/opt"'
args=$(sed -n 's/^predict_args *//p' "$tmp/opt")
# shellcheck disable=SC2086
"$bin" predict $args >"$tmp/back" 2>"$tmp/err"
check "optimize's predict_args run in predict" '[ $? -eq 0 ] && grep -q "per-submodule plans" "$tmp/back"'
"$bin" "${opt[@]}" "${base[@]}" --gpus 16 --format json >"$tmp/opt.json" 2>"$tmp/err"
check "optimize --format json" \
	'[ $? -eq 0 ] && jq -e ".speedup > 0 and .per_submodule.gpus <= 16 and .monolithic.gpus == 16 and .seconds >= 0" "$tmp/opt.json" >/dev/null'

# optimize's predict_args name the plan it timed: predict gives back the
# same iteration time (the MiCS groups and other choices included), on 64
# GPUs where the search picks MiCS for both encoders.
"$bin" "${opt[@]}" "${base[@]}" --gpus 64 --format json >"$tmp/opt64.json" 2>"$tmp/err"
"$bin" "${opt[@]}" "${base[@]}" --gpus 64 >"$tmp/opt64" 2>"$tmp/err"
args=$(sed -n 's/^predict_args *//p' "$tmp/opt64")
# shellcheck disable=SC2086
"$bin" predict $args --format json >"$tmp/back64.json" 2>"$tmp/err"
check "predict of optimize's predict_args times what optimize timed ($args)" \
	'[ $? -eq 0 ] && jq -e --slurpfile o "$tmp/opt64.json" \
	 "(.iteration_time_s - \$o[0].per_submodule.iteration_time_s | fabs) < 1e-9 * .iteration_time_s" \
	 "$tmp/back64.json" >/dev/null'
# The spec's other keys: uneven stages and recompute per stage ('/'
# between stages), interleaving, sequence parallelism (off: 77 and 257
# tokens split by no TP degree), a flat MiCS gather across two nodes.
"$bin" predict "${base[@]}" --submodule image:tp=1,pp=2,dp=8,stage-layers=10/14,stage-recompute=full/none,vpp=1 \
	--submodule text:dp=16,sp=0,mics=16,mics-flat=1 --format json >"$tmp/keys.json" 2>"$tmp/err"
check "stage-layers, stage-recompute, sp, mics and mics-flat in --submodule" \
	'[ $? -eq 0 ] && jq -e ".submodules[0].plan.pp == 2 and .submodules[0].plan.recompute == \"per-stage\" and
	 .submodules[1].plan.dp == 16 and .submodules[1].plan.mics_group == 16 and
	 .submodules[1].prediction.plan.mics_hierarchical == false" "$tmp/keys.json" >/dev/null'
# On 2 GiB GPUs the search recomputes a few layers in full (Slapo's
# layers, recompute-layers=k/k/...): predict_args carry them, and predict
# times the plan optimize timed.
cat >"$tmp/small.yaml" <<'YAML'
name: small-p4d
nodes: 64
gpus_per_node: 8
gpu:
  base: a100-sxm4-40gb
  memory: 2 GiB
  reserved_memory: 0.2 GiB
intra_node:
  bandwidth: 300 GB/s
inter_node:
  nics_per_node: 4
  nic_bandwidth: 100 Gbit/s
YAML
"$bin" "${opt[@]}" --model clip-vit-l14 --cluster "$tmp/small.yaml" --gpus 16 --global-batch 768 >"$tmp/opt-small" 2>"$tmp/err"
"$bin" "${opt[@]}" --model clip-vit-l14 --cluster "$tmp/small.yaml" --gpus 16 --global-batch 768 --format json \
	>"$tmp/opt-small.json" 2>"$tmp/err"
args=$(sed -n 's/^predict_args *//p' "$tmp/opt-small")
# shellcheck disable=SC2086
"$bin" predict $args --format json >"$tmp/back-small.json" 2>"$tmp/err"
check "recompute-layers in predict_args: predict times what optimize timed on 2 GiB GPUs" \
	'case $args in *recompute-layers=*) ;; *) false ;; esac && jq -e --slurpfile o "$tmp/opt-small.json" \
	 "(.iteration_time_s - \$o[0].per_submodule.iteration_time_s | fabs) < 1e-9 * .iteration_time_s and .fits" \
	 "$tmp/back-small.json" >/dev/null'
"$bin" predict "${base[@]}" --submodule image:tp=1,pp=2,dp=8,stage-layers=10/14 --submodule text:dp=16 \
	--format json >"$tmp/uneven.json" 2>"$tmp/err"
"$bin" predict "${base[@]}" --submodule image:tp=1,pp=2,dp=8 --submodule text:dp=16 \
	--format json >"$tmp/even.json" 2>"$tmp/err"
check "uneven stages change the image encoder's time" \
	'jq -e --slurpfile e "$tmp/even.json" ".submodules[0].iteration_time_s != \$e[0].submodules[0].iteration_time_s" \
	 "$tmp/uneven.json" >/dev/null'

usage() { # NAME SUBSTRING ARGS...
	local name=$1 want=$2
	shift 2
	"$bin" "$@" >"$tmp/u.out" 2>"$tmp/u.err"
	local rc=$?
	check "usage error: $name (status 2, '$want')" \
		'[ $rc -eq 2 ] && grep -qF -- "$want" "$tmp/u.err" && [ "$(wc -l <"$tmp/u.err")" -eq 1 ]'
}
usage "a submodule left out" "submodule 'text' has no GPUs" predict "${base[@]}" --submodule image:dp=8
usage "a submodule with no GPUs" "submodule 'text' has no GPUs" predict "${base[@]}" --submodule image:dp=8 --submodule text:tp=1
usage "a key given twice" "--submodule image: 'dp' is given twice" \
	predict "${base[@]}" --submodule image:dp=8,dp=4 --submodule text:dp=8
usage "an empty item" "--submodule image: an empty item in 'image:tp=1,,dp=8'" \
	predict "${base[@]}" --submodule image:tp=1,,dp=8 --submodule text:dp=8
usage "a trailing comma" "an empty item" predict "${base[@]}" --submodule image:dp=8, --submodule text:dp=8
usage "dp=0" "out of range (a submodule with no GPUs?)" predict "${base[@]}" --submodule image:dp=8 --submodule text:dp=0
usage "unknown submodule name" "unknown submodule 'imgae' of clip-vit-l14 (valid: image, text)" \
	predict "${base[@]}" --submodule imgae:dp=8 --submodule text:dp=8
usage "groups beyond the cluster" "the submodules' GPU groups take 768 GPUs, more than the 512 there are" \
	predict "${base[@]}" --submodule image:dp=384 --submodule text:dp=384
usage "groups beyond --gpus" "more than the 16 there are (--gpus)" \
	predict "${base[@]}" --gpus 16 --submodule image:dp=12 --submodule text:dp=8
usage "--submodule on a transformer" "--submodule needs a multimodal model (kind: multimodal); 'gpt-1.7b' is a transformer" \
	predict --model gpt-1.7b --cluster aws-p4d --global-batch 64 --submodule image:dp=8
usage "a submodule given twice" "--submodule image is given twice" \
	predict "${base[@]}" --submodule image:dp=8 --submodule image:dp=8
usage "an unknown key" "unknown key 'tpp' (valid: tp, pp, dp, gpus, micro-batch, recompute, zero, vpp, sp, mics, mics-flat, stage-layers, stage-recompute, recompute-layers)" predict "${base[@]}" --submodule image:tpp=2 --submodule text:dp=8
usage "stage-recompute with more entries than stages" "need one entry per stage (pp 2)" \
	predict "${base[@]}" --submodule image:pp=2,dp=8,stage-recompute=full/none/none --submodule text:dp=16
usage "recompute-layers with more entries than stages" "need one entry per stage (pp 2)" \
	predict "${base[@]}" --submodule image:pp=2,dp=8,recompute-layers=1/2/3 --submodule text:dp=16
usage "mics-flat without mics" "mics-flat says how a MiCS group gathers: give mics=G too" \
	predict "${base[@]}" --submodule image:dp=8,mics-flat=1 --submodule text:dp=8
usage "mics with another ZeRO stage" "mics=8 is ZeRO-3 in groups; it does not go with zero=2" \
	predict "${base[@]}" --submodule image:dp=8,mics=8,zero=2 --submodule text:dp=8
usage "an empty stage in stage-layers" "expects entries separated by '/'" \
	predict "${base[@]}" --submodule image:pp=2,dp=4,stage-layers=10//14 --submodule text:dp=8
usage "a bad stage-recompute name" "'most'" \
	predict "${base[@]}" --submodule image:pp=2,dp=4,stage-recompute=full/most --submodule text:dp=8
usage "--format csv" "a multimodal prediction is text or json" predict "${base[@]}" "${per[@]}" --format csv
usage "--seq-len" "give their own tokens per sample" predict "${base[@]}" "${per[@]}" --seq-len 77

"$bin" sweep --model clip-vit-l14 --cluster aws-p4d --gpus 8 --global-batch 64 >"$tmp/s.out" 2>"$tmp/s.err"
check "sweep refuses a multimodal profile at its kind key (file:line:col)" \
	'[ $? -eq 3 ] && grep -q "clip-vit-l14.yaml:[0-9]*:[0-9]*: a multimodal model (kind: multimodal)" "$tmp/s.err"'
finish
