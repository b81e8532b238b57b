#!/usr/bin/env bash
# predict and optimize on a multimodal model (DistMM, Huang et al. NSDI
# 2024): the per-submodule and monolithic outputs, their JSON keys against
# plan-cli-predict(1), and the bad inputs that are usage errors.
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
	'[ $? -eq 0 ] && jq -e "(.iteration_time_s - .compute_s - .batch_sync_s) as \$d |
	 .mode == \"per-submodule\" and (.submodules | length) == 2 and .batch_sync_s > 0 and
	 \$d < 1e-9 and \$d > -1e-9 and .submodules[0].prediction.plan.dp == 12" "$tmp/json" >/dev/null'
# Each submodule's prediction has its GEMM wave loss, as predict's (issue 25).
check "predict --format json: each submodule's prediction has details.gemm_wave_loss_s" \
	'jq -e "[.submodules[].prediction.details.gemm_wave_loss_s] | length == 2 and all(. >= 0)" "$tmp/json" >/dev/null'
# Every key of the multimodal JSON is named in plan-cli-predict(1).
missing=""
for k in $(jq -r '(keys[]), (.submodules[0] | keys[]), (.submodules[0].plan | keys[])' "$tmp/json" | sort -u); do
	grep -qE "^\.BR? \"?$k([ \"]|$)" man/plan-cli-predict.1 || missing="$missing $k"
done
check "plan-cli-predict(1) names every key of the multimodal JSON${missing:+ (missing:$missing)}" '[ -z "$missing" ]'

"$bin" "${opt[@]}" "${base[@]}" --gpus 16 >"$tmp/opt" 2>"$tmp/err"
check "optimize: per-submodule, monolithic, speedup and timing" \
	'[ $? -eq 0 ] && grep -q "^per-submodule (DistMM)" "$tmp/opt" && grep -q "^monolithic" "$tmp/opt" &&
	 grep -q "^speedup " "$tmp/opt" && grep -q "^search .* searches in" "$tmp/opt"'
args=$(sed -n 's/^predict_args *//p' "$tmp/opt")
# shellcheck disable=SC2086
"$bin" predict $args >"$tmp/back" 2>"$tmp/err"
check "optimize's predict_args run in predict" '[ $? -eq 0 ] && grep -qE "per-submodule plans|monolithic plan" "$tmp/back"'
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
# On 2.2 GiB GPUs the search recomputes a few layers in full (Slapo's
# layers, recompute-layers=k/k/...): predict_args carry them, and predict
# times the plan optimize timed. (2 GiB until plan-cli memloss: with
# Megatron's 6 bytes a logit at the loss the search at 2 GiB finds a
# plan without them; 2.1 to 2.5 GiB all recompute a few layers.)
cat >"$tmp/small.yaml" <<'YAML'
name: small-p4d
nodes: 64
gpus_per_node: 8
gpu:
  base: a100-sxm4-40gb
  memory: 2.2 GiB
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
check "recompute-layers in predict_args: predict times what optimize timed on 2.2 GiB GPUs" \
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

# Every plan attribute is a --submodule item, by its name with dashes or
# underscores (booleans as true/false, yes/no or 1/0), the old names
# (sp, mics, mics-flat) beside them.
"$bin" predict "${base[@]}" \
	--submodule image:tp=2,dp=4,micro_batch=8,precision=fp16,zero=1,dp-overlap=no,recompute=selective \
	--submodule text:gpus=8,mics=8,mics-flat=true,sequence_parallel=false,flash-attention=0 \
	--format json >"$tmp/attrs.json" 2>"$tmp/err"
check "any plan attribute in --submodule: micro_batch, precision, dp-overlap, flash-attention, ..." \
	'[ $? -eq 0 ] && jq -e ".submodules[0].prediction.plan as \$i | .submodules[1].prediction.plan as \$t |
	 \$i.tp == 2 and \$i.micro_batch == 8 and \$i.precision == \"fp16\" and \$i.zero == 1 and
	 \$i.dp_overlap == false and \$i.recompute == \"selective\" and \$i.flash_attention and
	 \$t.dp == 8 and \$t.zero == 3 and \$t.mics_hierarchical == false and \$t.flash_attention == false" \
	 "$tmp/attrs.json" >/dev/null'

# Every plan optimize lists, given back to predict, costs what optimize
# said (to 1e-9): the per-submodule split by its predict_args (its time
# and each submodule's), and the monolithic side by its predict_args
# (--monolithic: each submodule on all the GPUs, in turn).
# mm_predict_again FILE NAME: one check naming the plans that do not.
mm_predict_again() {
	local sides=0 wrong=""
	local -a words shared
	mapfile -t words < <(jq -r '.per_submodule.predict_args[]' "$1")
	"$bin" predict "${words[@]}" --allow-oom --format json >"$tmp/again.json" 2>"$tmp/again.err"
	jq -e --slurpfile o "$1" '[.iteration_time_s, .submodules[].iteration_time_s] as $a |
		[$o[0].per_submodule | .iteration_time_s, .submodules[].iteration_time_s] as $b |
		[range($a | length)] | all(($a[.] - $b[.] | fabs) <= 1e-9 * $b[.])' "$tmp/again.json" >/dev/null ||
		wrong="$wrong per-submodule"
	sides=$((sides + 1))
	if jq -e '.monolithic != null' "$1" >/dev/null; then
		# The options the submodules share: predict_args before the first --submodule.
		mapfile -t words < <(jq -r '.monolithic.predict_args[]' "$1")
		"$bin" predict "${words[@]}" --allow-oom --format json >"$tmp/again.json" 2>"$tmp/again.err"
		jq -e --slurpfile o "$1" '[.iteration_time_s, .submodules[].iteration_time_s] as $a |
			[$o[0].monolithic | .iteration_time_s, .submodules[].iteration_time_s] as $b |
			[range($a | length)] | all(($a[.] - $b[.] | fabs) <= 1e-9 * $b[.])' "$tmp/again.json" >/dev/null ||
			wrong="$wrong monolithic"
		sides=$((sides + 1))
	fi
	check "$2: the plans of all $sides sides predicted again${wrong:+, not:$wrong}" \
		'[ "$sides" -eq 2 ] && [ -z "$wrong" ]'
}
mm_problems=(
	"clip-vit-l14 on 16 GPUs|--model clip-vit-l14 --cluster aws-p4d --global-batch 768 --gpus 16"
	"clip-vit-l14 on 64 GPUs (MiCS)|--model clip-vit-l14 --cluster aws-p4d --global-batch 768 --gpus 64"
	"clip-vit-g14 on 32 GPUs (uneven stages)|--model clip-vit-g14 --cluster aws-p4d --global-batch 1024 --gpus 32"
	"2.2 GiB GPUs (Slapo's layers)|--model clip-vit-l14 --cluster $tmp/small.yaml --global-batch 768 --gpus 16"
	"no flash attention, hierarchical all-reduce, a framework|--model clip-vit-l14 --cluster dgx-h100 --global-batch 512 --gpus 32 --no-flash-attention --dp-allreduce hierarchical --framework deepspeed-2021"
)
for prob in "${mm_problems[@]}"; do
	# shellcheck disable=SC2086 # the options are words
	"$bin" "${opt[@]}" ${prob#*|} --format json >"$tmp/mm.json" 2>"$tmp/err"
	mm_predict_again "$tmp/mm.json" "${prob%%|*}"
done
check "optimize's predict_args write the options the submodules share (--dp-allreduce, --framework)" \
	'jq -e ".per_submodule.predict_args | index(\"--dp-allreduce\") and index(\"--framework\") and
	 (map(select(. == \"--submodule\")) | length) == 2" "$tmp/mm.json" >/dev/null'

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
usage "dp=0" "--submodule text:dp expects a whole number from 1 to" predict "${base[@]}" --submodule image:dp=8 --submodule text:dp=0
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
usage "a misspelt key" "--submodule image: unknown key 'tpp'; did you mean 'tp'?" \
	predict "${base[@]}" --submodule image:tpp=2 --submodule text:dp=8
usage "an unknown key" "unknown key 'foo' (valid: gpus, tp, pp, dp, vpp, micro-batch, sequence-parallel, flash-attention, zero, mics-group," \
	predict "${base[@]}" --submodule image:foo=2 --submodule text:dp=8
usage "the valid keys name the old ones too" "mics-hierarchical; also sp, mics, mics-flat)" \
	predict "${base[@]}" --submodule image:foo=2 --submodule text:dp=8
usage "stage-recompute with more entries than stages" "need one entry per stage (pp 2)" \
	predict "${base[@]}" --submodule image:pp=2,dp=8,stage-recompute=full/none/none --submodule text:dp=16
usage "recompute-layers with more entries than stages" "one entry per stage (pp 2), got 3" \
	predict "${base[@]}" --submodule image:pp=2,dp=8,recompute-layers=1/2/3 --submodule text:dp=16
usage "mics-flat without mics" "mics-flat says how a MiCS group gathers: give mics=G too" \
	predict "${base[@]}" --submodule image:dp=8,mics-flat=1 --submodule text:dp=8
usage "mics with another ZeRO stage" "mics=8 is ZeRO-3 in groups; it does not go with zero=2" \
	predict "${base[@]}" --submodule image:dp=8,mics=8,zero=2 --submodule text:dp=8
usage "an empty stage in stage-layers" "expects entries separated by '/'" \
	predict "${base[@]}" --submodule image:pp=2,dp=4,stage-layers=10//14 --submodule text:dp=8
usage "a bad stage-recompute name" "'most'" \
	predict "${base[@]}" --submodule image:pp=2,dp=4,stage-recompute=full/most --submodule text:dp=8
# What is not one submodule's own is refused, saying why.
usage "global-batch in --submodule" "global-batch is not a submodule's own: every submodule sees the same samples" \
	predict "${base[@]}" --submodule image:dp=8,global-batch=64 --submodule text:dp=8
usage "seq_len in --submodule" "seq_len is not a submodule's own: a submodule's tokens per sample are its profile's" \
	predict "${base[@]}" --submodule image:dp=8,seq_len=64 --submodule text:dp=8
usage "dp-allreduce in --submodule" "dp-allreduce is not a submodule's own: one DP all-reduce prices every submodule" \
	predict "${base[@]}" --submodule image:dp=8,dp-allreduce=hierarchical --submodule text:dp=8
usage "compress in --submodule" "compress is not a submodule's own: it needs a compressor" \
	predict "${base[@]}" --submodule image:dp=8,compress=tp --submodule text:dp=8
usage "an attribute given by its old name and its own" "'sequence-parallel' is given twice (as 'sp' before)" \
	predict "${base[@]}" --submodule image:dp=8,sp=1,sequence-parallel=true --submodule text:dp=8
usage "a bad boolean" "--submodule image:sp expects true or false, got '2'" \
	predict "${base[@]}" --submodule image:dp=8,sp=2 --submodule text:dp=8
usage "--format csv" "a multimodal prediction is text or json" predict "${base[@]}" "${per[@]}" --format csv
usage "--seq-len" "give their own tokens per sample" predict "${base[@]}" "${per[@]}" --seq-len 77
usage "--checkpoint-to, refused not dropped" "--checkpoint-to does not apply to a multimodal model" \
	predict "${base[@]}" "${per[@]}" --checkpoint-to cpu
usage "--seq-lengths, refused not dropped" "--seq-lengths does not apply to a multimodal model" \
	predict "${base[@]}" "${per[@]}" --seq-lengths flan-mix
usage "optimize --objective goodput, refused not dropped" "do not apply to a multimodal model" \
	optimize --model clip-vit-l14 --cluster dgx-h100 --gpus 16 --global-batch 256 --objective goodput \
	--checkpoint-to cpu

"$bin" sweep --model clip-vit-l14 --cluster aws-p4d --gpus 8 --global-batch 64 >"$tmp/s.out" 2>"$tmp/s.err"
check "sweep refuses a multimodal profile at its kind key (file:line:col)" \
	'[ $? -eq 3 ] && grep -q "clip-vit-l14.yaml:[0-9]*:[0-9]*: a multimodal model (kind: multimodal)" "$tmp/s.err"'
# Where the split loses, optimize leads with the monolithic plan and its
# predict_args (issue 26: a split 0.81-0.85x as fast was recommended).
"$bin" "${opt[@]}" --model clip-vit-l14 --cluster selene --gpus 8 --global-batch 1024 >"$tmp/lose" 2>"$tmp/err"
check "optimize: the monolithic plan first where it is faster" \
	'[ $? -eq 0 ] && head -n 3 "$tmp/lose" | grep -q "^monolithic" &&
	 grep -q "^speedup  *0\.[0-9]*x per-submodule over monolithic: the monolithic plan is faster" "$tmp/lose" &&
	 grep -q "^predict_args .* --monolithic" "$tmp/lose"'
args=$(sed -n 's/^predict_args *//p' "$tmp/lose")
# shellcheck disable=SC2086
"$bin" predict $args >"$tmp/back" 2>"$tmp/err"
check "its predict_args give the monolithic plan back" \
	'[ $? -eq 0 ] && grep -q "monolithic plan" "$tmp/back" && [ "$(grep -c "     8  tp 1 x pp 1 x dp 8" "$tmp/back")" -eq 2 ]'
"$bin" "${opt[@]}" --model clip-vit-l14 --cluster selene --gpus 8 --global-batch 1024 --format json >"$tmp/lose.json"
check "JSON: best is monolithic, speedup below 1" \
	'jq -e ".best == \"monolithic\" and .speedup < 1 and (.monolithic.predict_args | index(\"--monolithic\"))" "$tmp/lose.json" >/dev/null'
mm_predict_again "$tmp/lose.json" "clip-vit-l14 on 8 GPUs (monolithic wins)"
fails_cmd "--monolithic: the submodules' GPUs differ" 2 "--monolithic: submodule 'text' takes 4 GPUs where the one before takes 8" \
	predict --model clip-vit-l14 --cluster selene --gpus 8 --global-batch 1024 --monolithic \
	--submodule image:tp=1,dp=8 --submodule text:tp=1,dp=4
fails_cmd "--monolithic on a transformer" 2 "--monolithic needs a multimodal model" \
	predict --model gpt-1.7b --cluster selene --gpus 8 --global-batch 64 --monolithic

finish
