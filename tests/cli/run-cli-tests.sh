#!/usr/bin/env bash
# Black-box tests of the plan-cli command line: exit statuses, where output
# goes, the JSON/CSV formats, a golden text report, profile resolution.
#
# usage: run-cli-tests.sh PLAN_CLI SOURCE_ROOT
#
# Prints TAP (meson's protocol 'tap'): "ok N - NAME" / "not ok N - NAME",
# then the plan "1..N" and "# N passed, N failed"; a failed test's "not ok"
# line again on stderr with "# why" lines; the exit status is 1 when any
# test failed.
# Needs bash, coreutils and jq.
#
# The golden report tests/cli/golden/predict-gpt3-175b-selene.txt is the
# text output of
#   plan-cli predict --model gpt3-175b --cluster selene --tp 8 --pp 12 \
#       --dp 16 --micro-batch 1 --global-batch 1536 --recompute full \
#       --no-flash-attention
# After an intended change of the model or of the report layout, rewrite
# it and review the diff:
#   UPDATE_GOLDEN=1 tests/cli/run-cli-tests.sh build/plan-cli .
#   git diff tests/cli/golden/
# jq programs are in single quotes on purpose:
# shellcheck disable=SC2016
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 PLAN_CLI SOURCE_ROOT" >&2
	exit 2
fi
bin=$1
src=$2
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
src=$(cd "$src" && pwd) || exit 2
# A hang guard, not a speed check: far above what any command takes on a
# busy machine (or in the sanitizer build), so that it only stops a hang.
limit=${PLAN_CLI_TEST_TIMEOUT:-120}
golden=$src/tests/cli/golden/predict-gpt3-175b-selene.txt
runs_csv=$src/tests/data/published-runs.csv

if [ ! -x "$bin" ]; then
	echo "Bail out! $bin is not an executable"
	exit 2
fi
if ! command -v jq >/dev/null; then
	echo "Bail out! jq is needed"
	exit 2
fi

export LC_ALL=C
# Bundled names must resolve even from a build folder outside the tree.
export PLAN_CLI_PATH=$src
. "$(dirname "$(realpath "$0")")/strict-jq.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/plan-cli-cli.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

n=0
passed=0
failed=0
problems=()

# ---------------------------------------------------------------- helpers

# run CMD...: run with a time limit; sets $rc, $tmp/out and $tmp/err.
run() {
	# The subshell keeps bash's "Segmentation fault" notices off the report.
	(timeout -k 2 "$limit" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"; exit $?) 2>/dev/null
	rc=$?
	last_cmd="$*"
}

# cli ARGS...: run plan-cli.
cli() {
	run "$bin" "$@"
}

# A search's result must not depend on the machine's speed: optimize runs
# with --time-limit 3600 (the largest), not the default 2 s per MILP.
opt=(optimize --time-limit 3600)

fail() {
	problems+=("$*")
}

# finish NAME: report the problems gathered since the last finish.
finish() {
	n=$((n + 1))
	if [ ${#problems[@]} -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok $n - $1"
	else
		failed=$((failed + 1))
		echo "not ok $n - $1"
		# Why, on stderr (meson shows a failed TAP test's stderr).
		{
			echo "not ok $n - $1"
			for why in "${problems[@]}"; do
				echo "#   $why"
			done
			echo "#   command: ${last_cmd:-}"
			echo "#   exit status: ${rc:-}"
			if [ -s "$tmp/err" ]; then
				echo "#   stderr: $(head -c 400 "$tmp/err" | tr '\n' ' ')"
			fi
		} >&2
	fi
	problems=()
}

skip() {
	n=$((n + 1))
	passed=$((passed + 1))
	echo "ok $n - $1 # SKIP $2"
	problems=()
}

expect_rc() {
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		fail "no answer within $limit s"
	elif [ $rc -ge 128 ]; then
		fail "killed by signal $((rc - 128)): a crash"
	elif [ "$rc" -ne "$1" ]; then
		fail "exit status $rc, expected $1"
	fi
}

expect_stdout_empty() {
	[ -s "$tmp/out" ] && fail "stdout is not empty: $(head -c 200 "$tmp/out" | tr '\n' ' ')"
	return 0
}

expect_stderr_empty() {
	[ -s "$tmp/err" ] && fail "stderr is not empty"
	return 0
}

expect_stdout_nonempty() {
	[ -s "$tmp/out" ] || fail "stdout is empty"
	return 0
}

# One line on stderr, and it is the error.
expect_one_error_line() {
	local lines errors
	lines=$(wc -l <"$tmp/err")
	if [ -s "$tmp/err" ] && [ -n "$(tail -c 1 "$tmp/err")" ]; then
		lines=$((lines + 1)) # a last line without a newline
	fi
	errors=$(grep -c '^plan-cli: error: ' "$tmp/err")
	if [ "$lines" -ne 1 ] || [ "$errors" -ne 1 ]; then
		fail "stderr has $lines lines, $errors of them 'plan-cli: error: ...'; expected exactly one such line"
	fi
}

expect_err_has() {
	grep -qF -- "$1" "$tmp/err" || fail "stderr lacks: $1"
}

expect_out_has() {
	grep -qF -- "$1" "$tmp/out" || fail "stdout lacks: $1"
}

# expect_jq FILTER [DESCRIPTION]: FILTER must be true on stdout.
expect_jq() {
	jq -e "$1" "$tmp/out" >/dev/null 2>&1 || fail "${2:-jq check failed}: $1"
}

# An error: exit RC, nothing on stdout, one error line (with SUBSTRING unless empty).
error_case() { # RC NAME SUBSTRING ARGS...
	local want=$1 name=$2 sub=$3
	shift 3
	cli "$@"
	expect_rc "$want"
	expect_stdout_empty
	expect_one_error_line
	[ -n "$sub" ] && expect_err_has "$sub"
	finish "$name"
}

# A usage error: exit 2.
usage_error() { # NAME SUBSTRING ARGS...
	local name=$1
	shift
	error_case 2 "usage error: $name" "$@"
}

# Count the fields of one CSV line (RFC 4180: commas inside quotes do not count).
csv_fields() {
	awk '{
		sub(/\r$/, "")
		n = 1; q = 0
		for (i = 1; i <= length($0); i++) {
			c = substr($0, i, 1)
			if (c == "\"") q = !q
			else if (c == "," && !q) n++
		}
		print n
	}'
}

golden_args=(predict --model gpt3-175b --cluster selene --tp 8 --pp 12 --dp 16
	--micro-batch 1 --global-batch 1536 --recompute full --no-flash-attention)

# ---------------------------------------------------------- usage errors

usage_error "no command" ""
usage_error "unknown command" "unknown command 'frobnicate'" frobnicate
usage_error "unknown option" "'--bogus'" predict --bogus --model gpt3-175b --cluster selene --global-batch 1536
usage_error "unknown short option" "'-x'" predict -x
usage_error "missing option value" "'--model' needs a value" predict --model
usage_error "missing value at the end" "needs a value" predict --model gpt3-175b --cluster selene --global-batch
usage_error "missing --global-batch" "--global-batch" predict --model gpt3-175b --cluster selene
usage_error "--tp 0" "--tp" predict --model gpt3-175b --cluster selene --global-batch 1536 --tp 0
usage_error "fp8 on a GPU without fp8" "has none" predict --model gpt-1.7b --cluster aws-p3dn --gpus 8 --global-batch 64 --precision fp8
usage_error "an unknown precision" "valid: bf16, fp16, fp8, fp4" predict --model gpt-1.7b --cluster selene --global-batch 64 --precision fp6
usage_error "TP overlap without sequence parallelism" "needs sequence parallelism" predict --model gpt-1.7b --cluster selene --tp 8 --gpus 8 --global-batch 8 --tp-overlap
usage_error "fp8 gathers without fp8" "fp8 all-gathers need precision fp8 and ZeRO-3" predict --model llama2-7b --cluster dgx-h100 --gpus 64 --zero 3 --global-batch 64 --fp8-gather
usage_error "fp8 gathers without ZeRO-3" "(precision fp8, ZeRO 1)" predict --model llama2-7b --cluster dgx-h100 --gpus 64 --zero 1 --precision fp8 --global-batch 64 --fp8-gather
usage_error "CP without flash attention" "needs --flash-attention" predict --model llama2-7b --cluster dgx-h100 --gpus 64 --cp 8 --global-batch 64 --seq-len 65536 --no-flash-attention
usage_error "Ulysses with too few KV heads" "must be divisible by cp" predict --model llama3-70b --cluster dgx-h100 --gpus 256 --tp 8 --cp 2 --cp-method all-to-all --pp 4 --global-batch 64 --seq-len 32768 --sequence-parallel --flash-attention
usage_error "CP not dividing the sequence" "divisible by 2 x cp" predict --model llama2-7b --cluster dgx-h100 --gpus 48 --cp 3 --global-batch 48 --seq-len 4096 --flash-attention
usage_error "--pp above the stage limit" "from 1 to 256" predict --model gpt3-175b --cluster selene --global-batch 1536 --pp 512
usage_error "--tp abc" "'abc'" predict --model gpt3-175b --cluster selene --global-batch 1536 --tp abc
usage_error "--tp 8x" "'8x'" predict --model gpt3-175b --cluster selene --global-batch 1536 --tp 8x
usage_error "--tp -8" "'-8'" predict --model gpt3-175b --cluster selene --global-batch 1536 --tp -8
usage_error "--global-batch 0" "--global-batch" predict --model gpt3-175b --cluster selene --global-batch 0
usage_error "--zero 4" "--zero" predict --model gpt3-175b --cluster selene --global-batch 1536 --zero 4
usage_error "--recompute bogus" "unknown value 'bogus' for --recompute" predict --model gpt3-175b --cluster selene --global-batch 1536 --recompute bogus
usage_error "--format xml" "'xml'" predict --model gpt3-175b --cluster selene --global-batch 1536 --format xml
usage_error "unexpected argument" "'extra'" predict --model gpt3-175b --cluster selene --global-batch 1536 extra
usage_error "heads not divisible by tp" "attention heads (96) are not divisible by tp (5)" predict --model gpt3-175b --cluster selene --global-batch 1536 --tp 5
usage_error "global batch not divisible by dp x micro-batch" "global batch (1537)" predict --model gpt3-175b --cluster selene --tp 8 --pp 12 --dp 16 --global-batch 1537
usage_error "more --gpus than the cluster has" "5000" predict --model gpt3-175b --cluster selene --global-batch 1536 --gpus 5000
usage_error "tp x pp x dp more than the cluster has" "9600" predict --model gpt3-175b --cluster selene --global-batch 1536 --tp 8 --pp 12 --dp 100
usage_error "--gpus does not match tp x pp x dp" "gpus (1024) does not match tp x pp x dp (8 x 12 x 16 = 1536)" predict --model gpt3-175b --cluster selene --global-batch 1536 --tp 8 --pp 12 --dp 16 --gpus 1024
usage_error "cluster GPUs not divisible by tp x pp" "not divisible by tp x pp" predict --model gpt3-175b --cluster selene --global-batch 1536 --tp 8 --pp 3
usage_error "validate without a file" "" validate
usage_error "validate with two files" "" validate "$runs_csv" "$runs_csv"
usage_error "validate --max-mape abc" "'abc'" validate "$runs_csv" --max-mape abc
usage_error "validate --max-mape -1" "'-1'" validate "$runs_csv" --max-mape -1
usage_error "validate unknown option" "'--bogus'" validate "$runs_csv" --bogus
usage_error "profiles --schema bogus" "--schema" profiles --schema bogus
usage_error "profiles extra argument" "'extra'" profiles extra
usage_error "profiles unknown option" "unknown option '--bogus' for profiles (see 'plan-cli profiles --help')" \
	profiles --bogus

# ------------------------------------------------------- help and version

for args in "--help" "-h" "help"; do
	cli $args
	expect_rc 0
	expect_stderr_empty
	expect_out_has "usage: plan-cli"
	expect_out_has "predict"
	finish "plan-cli $args goes to stdout"
done

for cmd in predict validate profiles import; do
	cli $cmd --help
	expect_rc 0
	expect_stderr_empty
	expect_out_has "usage: plan-cli $cmd"
	finish "plan-cli $cmd --help goes to stdout"
done

cli predict --help
expect_out_has "--global-batch"
expect_out_has "--recompute"
finish "predict --help lists the options"

cli --version
expect_rc 0
expect_stderr_empty
version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$src/meson.build" | head -n 1)
if [ "$(head -n 1 "$tmp/out")" != "plan-cli $version" ]; then
	fail "first line is '$(head -c 100 "$tmp/out")', expected 'plan-cli $version' (meson.build)"
fi
sed -n 2p "$tmp/out" | grep -qx "profile search path:" || fail "no 'profile search path:' line"
# PLAN_CLI_PATH is set to the source tree above: it comes first.
[ "$(sed -n 3p "$tmp/out")" = "  $src" ] || fail "the first folder is not \$PLAN_CLI_PATH ($src)"
finish "--version prints 'plan-cli VERSION' and the profile search path"

usage_error "an option typo gets a suggestion" "unknown option '--modle' for predict; did you mean '--model'?" \
	predict --modle gpt3-175b --cluster selene --global-batch 8
usage_error "a typo with =VALUE gets one too" "did you mean '--global-batch'?" \
	predict --model gpt3-175b --cluster selene --globl-batch=8
usage_error "an option far from every name gets the help hint" "unknown option '--zzzzzz' for predict (see" \
	predict --zzzzzz

# MiCS is ZeRO-3 in groups: --mics-group alone runs, and says ZeRO 3.
cli predict --model gpt-7.5b --cluster aws-p3dn --gpus 512 --micro-batch 4 --global-batch 4096 \
	--recompute full --mics-group 8 --format json
expect_rc 0
expect_jq '.plan.zero == 3 and .plan.mics_group == 8' "ZeRO 3 in groups of 8"
cp "$tmp/out" "$tmp/mics-alone.json"
cli predict --model gpt-7.5b --cluster aws-p3dn --gpus 512 --micro-batch 4 --global-batch 4096 \
	--recompute full --mics-group 8 --zero 3 --format json
cmp -s "$tmp/out" "$tmp/mics-alone.json" || fail "--mics-group 8 alone differs from it with --zero 3"
finish "--mics-group alone means ZeRO-3 inside the groups"
cli predict --model gpt-7.5b --cluster aws-p3dn --gpus 512 --micro-batch 4 --global-batch 4096 \
	--tp 4 --recompute full --mics-group 8 --zero 1 --format json
expect_rc 0
expect_jq '.plan.zero == 1 and .plan.mics_group == 8' "ZeRO 1 in groups of 8"
finish "--mics-group with --zero 1 is ZeRO-1 inside the groups (InternEvo's zero1 = 8)"

# ------------------------------------------------------------------ JSON

cli "${golden_args[@]}" --format json
expect_rc 0
expect_stderr_empty
cp "$tmp/out" "$tmp/predict.json"
jq -e . "$tmp/out" >/dev/null 2>&1 || fail "stdout is not JSON"
finish "predict --format json is JSON"

for key in model cluster gpus plan parameters iteration_time_s \
	breakdown_s.compute breakdown_s.recompute breakdown_s.tp_comm breakdown_s.pp_comm \
	breakdown_s.pp_bubble breakdown_s.dp_comm breakdown_s.optimizer \
	memory_bytes.weights memory_bytes.gradients memory_bytes.optimizer \
	memory_bytes.activations memory_bytes.total memory_capacity_bytes fits \
	model_flops_per_iteration tflops_per_gpu mfu tokens_per_s; do
	path=$(printf '%s' "$key" | jq -R -c 'split(".")')
	jq -e --argjson p "$path" 'getpath($p) != null' "$tmp/predict.json" >/dev/null 2>&1 ||
		fail "missing key $key"
done
finish "predict --format json has every key"

cp "$tmp/predict.json" "$tmp/out"
expect_jq '.model == "gpt3-175b" and .cluster == "selene" and .gpus == 1536' "names and GPU count"
expect_jq '.plan.tp == 8 and .plan.pp == 12 and .plan.dp == 16 and .plan.micro_batch == 1 and .plan.global_batch == 1536' "the plan"
expect_jq '(.fits | type) == "boolean"' "fits is a boolean"
expect_jq '[.iteration_time_s, .parameters, .tflops_per_gpu, .mfu, .tokens_per_s,
	.model_flops_per_iteration, .memory_capacity_bytes] | all(type == "number")' "numbers are numbers"
expect_jq '[.. | numbers] | all(. >= 0)' "no negative number"
expect_jq '.iteration_time_s > 0 and .mfu > 0 and .mfu <= 1' "time positive, MFU in (0, 1]"
finish "predict --format json values have the right types"

expect_jq '([.breakdown_s[]] | add) as $s | ($s - .iteration_time_s) as $d
	| (if $d < 0 then -$d else $d end) <= 1e-9 * .iteration_time_s' "breakdown sum"
finish "breakdown_s sums to iteration_time_s (1e-9 relative)"

expect_jq '([.memory_bytes | to_entries[] | select(.key != "total") | .value] | add) as $s
	| ($s - .memory_bytes.total) as $d
	| (if $d < 0 then -$d else $d end) <= 1e-9 * .memory_bytes.total' "memory sum"
finish "memory_bytes parts sum to memory_bytes.total"

expect_jq '.parameters >= 174.5e9 and .parameters <= 174.7e9' "GPT-3 175B parameters"
finish "GPT-3 175B has 174.5e9 to 174.7e9 parameters"

# tokens/s = global batch x seq-len / time; TFLOP/s per GPU = model FLOPs /
# (GPUs x time); MFU = TFLOP/s per GPU / the A100 peak (312 TFLOPS).
expect_jq '(.plan.global_batch * .plan.seq_len / .iteration_time_s) as $t
	| ($t - .tokens_per_s) as $d | (if $d < 0 then -$d else $d end) <= 1e-6 * $t' "tokens_per_s"
expect_jq '(.model_flops_per_iteration / (.gpus * .iteration_time_s) / 1e12) as $t
	| ($t - .tflops_per_gpu) as $d | (if $d < 0 then -$d else $d end) <= 1e-6 * $t' "tflops_per_gpu"
expect_jq '(.tflops_per_gpu / 312) as $m
	| ($m - .mfu) as $d | (if $d < 0 then -$d else $d end) <= 1e-6 * $m' "mfu"
finish "tokens_per_s, tflops_per_gpu and mfu agree with each other"

# torchtitan's deepseek_v3_16b recipe (torchtitan/models/deepseek_v3/
# train_configs/deepseek_v3_16b.toml, 2026-04: 8 GPUs, EP 8, local batch 4,
# seq 4096, selective_ac_option 'op') on its 96 GB H100s: per-op SAC keeps
# the all-to-alls' outputs, not the experts' intermediates (memory.c,
# layer_activations_op_sac). With Korthikanti's selective figure, as before,
# it needed 105.7 GiB of 89.4.
cat >"$tmp/tt-dsv3-16b.yaml" <<'YAML'
name: tt-dsv3-16b
layers: 27
hidden: 2048
heads: 16
ffn_hidden: 10944
gated_mlp: true
vocab: 102400
seq_len: 4096
norm: rmsnorm
position_embedding: rotary
attention: mla
mla: {q_lora_rank: 0, kv_lora_rank: 512, qk_nope_head_dim: 128, qk_rope_head_dim: 64, v_head_dim: 128}
moe: {experts: 64, top_k: 6, expert_ffn_hidden: 1408, shared_experts: 2, first_dense_layers: 1, dropless: true}
YAML
sed -e 's/^gpu: h100-sxm5-80gb/gpu: h100-sxm5-96gb-hbm2e/' -e 's/^name: dgx-h100/name: tt-h100/' \
	"$src/clusters/dgx-h100.yaml" >"$tmp/tt-h100.yaml"
cli predict --model "$tmp/tt-dsv3-16b.yaml" --cluster "$tmp/tt-h100.yaml" --gpus 8 --zero 3 --ep 8 \
	--micro-batch 4 --global-batch 32 --recompute selective --framework pytorch-fsdp2 --format json
expect_rc 0
expect_jq '.fits == true and .memory_bytes.activations < 64424509440' "op SAC on MLA and MoE layers"
finish "torchtitan's DeepSeek-V3 16B recipe fits on 8 H100 96 GB with per-op SAC"

cli predict --model gpt3-175b --cluster selene --gpus 8 --global-batch 8 --format json
expect_rc 4
expect_jq '.fits == false' "fits"
# (3185.43 GiB without flash attention: the A100 runs it by default.)
expect_err_has "the plan needs 3005.43 GiB per GPU, more than the 80.00 GiB there are; the largest term is optimizer"
expect_err_has "alone or two together, fits; try 'plan-cli optimize'"
finish "a plan that does not fit: the report, exit 4, the largest term, and no change that fits"
# plan-cli reviewmem: Llama 2 7B, ZeRO-1 on 8 H100s. With dropout (before
# helper capdrop) 7,424 tokens a sequence needed 80.46 GiB of 80; dropout
# false drops the masks, 1 byte a hidden element for the embedding and two
# a layer: 65 x 4096 x 7424 B = 1.84 GiB, so 78.62 GiB, and the H100's
# memory is nvidia-smi's 81559 MiB = 79.65 GiB. Each 128 tokens more add
# 128 x (32 layers x 132,096 B, i.e. 32 h = 131,072 B, Korthikanti's 34 h
# less the two masks, and 1,024 B; + the loss's 6 B x 32,000 logits) =
# 565,641,216 B = 0.527 GiB: 7,808 tokens need 78.62 + 3 x 0.527 = 80.20
# GiB, 0.55 over, within the 1 GiB the GPU profile reserves
# (reserved_memory): a close call, said so; 7,936 tokens need 80.73 GiB,
# 1.08 over: not.
cli predict --model llama2-7b --cluster dgx-h100 --gpus 8 --global-batch 64 --zero 1 --seq-len 7808
expect_rc 4
expect_err_has "the plan needs 80.20 GiB per GPU, more than the 79.65 GiB there are"
expect_err_has "plan-cli: it is over by only 0.55 GiB, within the 1.00 GiB the GPU profile reserves"
finish "a plan over by less than the reserved memory: a close call, said so"
cli predict --model llama2-7b --cluster dgx-h100 --gpus 8 --global-batch 64 --zero 1 --seq-len 7936
expect_rc 4
expect_err_has "the plan needs 80.73 GiB per GPU"
grep -q "over by only" "$tmp/err" && fail "stderr has the close-call line at 1.08 GiB over"
finish "a plan over by more than the reserved memory: no close-call line"
cli predict --model gpt3-175b --cluster selene --gpus 8 --global-batch 8 --format json --allow-oom
expect_rc 0
expect_jq '.fits == false' "fits"
finish "--allow-oom: a plan that does not fit exits 0"
# Llama 2 7B on 1,024 H100s with the defaults (flash attention on, the H100
# runs it) needs 130.82 GiB (131.83 with dropout, less its masks: 65 x 4096
# x 4096 B = 1.02 GiB), most of it Adam's 12 bytes per parameter:
# ZeRO-2 is the fastest change that fits. (Without flash attention it
# needed 211.59 GiB and two changes.)
cli predict --model llama2-7b --cluster dgx-h100 --global-batch 1024
expect_rc 4
expect_out_has "DOES NOT FIT"
expect_out_has "flash attention on"
expect_err_has "the largest term is optimizer (75.31 GiB)"
grep -A1 "changes that fit, fastest first" "$tmp/err" | grep -q -- "--zero 2 " ||
	fail "the first hint is not --zero 2"
finish "a first run that does not fit names the cheapest changes that do"
# GPT-3 on Selene without recompute nor flash attention (as in 2021):
# 84.78 GiB; single changes fit, and each works (flash attention the
# fastest, sequence parallelism next: its backward re-gathers).
cli predict --model gpt3-175b --cluster selene --tp 8 --pp 12 --dp 16 --global-batch 1536 --no-flash-attention
expect_rc 4
hint=$(grep -A1 "changes that fit, fastest first" "$tmp/err" | sed -n '2{s/^  //;s/  .*//;p}')
said=$(grep -A1 "changes that fit, fastest first" "$tmp/err" | sed -n '2{s/.* \([0-9.]*\) s\/iteration.*/\1/;p}')
[ "$hint" = "--flash-attention" ] || fail "first hint '$hint', expected --flash-attention"
case $said in [0-9]*.[0-9]*) ;; *) fail "the hint gives no time: '$said'" ;; esac
# shellcheck disable=SC2086 # the hint is words
cli predict --model gpt3-175b --cluster selene --tp 8 --pp 12 --dp 16 --global-batch 1536 --no-flash-attention $hint --format json
expect_rc 0
expect_jq ".fits == true and ((.iteration_time_s - $said) | fabs) < 1e-4" "the hint's plan fits in the $said s it said"
finish "the first hint, applied, fits at the time it said"

# ------------------------------------------------------------------- CSV

cli "${golden_args[@]}" --format csv
expect_rc 0
expect_stderr_empty
grep -v '^\r\{0,1\}$' "$tmp/out" >"$tmp/predict.csv"
records=$(wc -l <"$tmp/predict.csv")
[ "$records" -eq 2 ] || fail "$records lines, expected a header and one record"
hf=$(sed -n 1p "$tmp/predict.csv" | csv_fields)
rf=$(sed -n 2p "$tmp/predict.csv" | csv_fields)
if [ "${hf:-0}" -lt 2 ] || [ "$hf" != "$rf" ]; then
	fail "header has $hf fields, the record $rf"
fi
finish "predict --format csv: a header and one record with as many fields"

col=$(sed -n 1p "$tmp/predict.csv" | tr -d '\r' | tr ',' '\n' | grep -nx 'iteration_time_s' | cut -d: -f1)
if [ -z "$col" ]; then
	fail "no iteration_time_s column"
else
	csv_time=$(sed -n 2p "$tmp/predict.csv" | tr -d '\r' | cut -d, -f"$col")
	jq -e --argjson c "${csv_time:-null}" '($c - .iteration_time_s) as $d
		| (if $d < 0 then -$d else $d end) <= 1e-6 * .iteration_time_s' \
		"$tmp/predict.json" >/dev/null 2>&1 ||
		fail "CSV iteration_time_s '$csv_time' differs from the JSON one"
fi
finish "predict --format csv agrees with --format json"

# --------------------------------------------------------------- golden

cli "${golden_args[@]}"
expect_rc 0
expect_stderr_empty
if [ "${UPDATE_GOLDEN:-0}" = 1 ] && [ $rc -eq 0 ]; then
	mkdir -p "${golden%/*}"
	cp "$tmp/out" "$golden"
	echo "# rewrote $golden"
elif [ ! -f "$golden" ]; then
	fail "no golden file $golden (make it with UPDATE_GOLDEN=1)"
elif ! diff -u "$golden" "$tmp/out" >"$tmp/diff"; then
	fail "text report differs from ${golden#"$src"/} (UPDATE_GOLDEN=1 rewrites it):"
	while IFS= read -r line; do fail "$line"; done <"$tmp/diff"
fi
finish "predict text report matches the golden file"
# The README's quick start shows that report: it must not go stale.
awk '/^The first command prints:/ { f = 1; next } f && /^```$/ { if (in_block) exit; in_block = 1; next } in_block' \
	"$src/README.md" >"$tmp/readme-report.txt"
cmp -s "$tmp/readme-report.txt" "$golden" ||
	fail "README.md's quick-start output differs from $golden: $(diff "$golden" "$tmp/readme-report.txt" | head -n 4 | tr '\n' ' ')"
finish "README's quick-start output is the golden report"

# ------------------------------------------------------------- profiles

cli profiles
expect_rc 0
expect_stderr_empty
grep -q '^  gpt3-175b ' "$tmp/out" || fail "gpt3-175b not listed"
grep -q '^  selene ' "$tmp/out" || fail "selene not listed"
finish "profiles lists gpt3-175b and selene"

cli profiles --schema model
expect_rc 0
expect_stderr_empty
expect_out_has "hidden"
finish "profiles --schema model"

mkdir -p "$tmp/path/models"
sed 's/^name: .*/name: custom/' "$src/models/gpt-1.7b.yaml" >"$tmp/path/models/custom.yaml"
run env PLAN_CLI_PATH="$tmp/path:$src" "$bin" predict --model custom --cluster selene \
	--gpus 32 --global-batch 32 --format json
expect_rc 0
expect_jq '.model == "custom"' "the custom profile"
finish "PLAN_CLI_PATH: --model custom resolves to DIR/models/custom.yaml"

run env PLAN_CLI_PATH="$tmp/path:$src" "$bin" profiles
expect_rc 0
grep -q "^  custom .*$tmp/path/models/custom.yaml" "$tmp/out" || fail "custom not listed with its path"
finish "PLAN_CLI_PATH: profiles lists the custom model"

mkdir -p "$tmp/shadow/models"
sed 's/^name: .*/name: shadowed/' "$src/models/gpt-1.7b.yaml" >"$tmp/shadow/models/gpt-1.7b.yaml"
run env PLAN_CLI_PATH="$tmp/shadow:$src" "$bin" predict --model gpt-1.7b --cluster selene \
	--gpus 32 --global-batch 32 --format json
expect_rc 0
expect_jq '.model == "shadowed"' "the PLAN_CLI_PATH copy"
finish "PLAN_CLI_PATH comes before the bundled profiles"

cp "$src/models/gpt3-175b.yaml" "$tmp/my-model.yaml"
cp "$src/clusters/selene.yaml" "$tmp/my-cluster.yaml"
cli predict --model "$tmp/my-model.yaml" --cluster "$tmp/my-cluster.yaml" --tp 8 --pp 12 --dp 16 \
	--micro-batch 1 --global-batch 1536 --recompute full --no-flash-attention --format json
expect_rc 0
expect_stderr_empty
jq -e --slurpfile a "$tmp/predict.json" '.iteration_time_s == $a[0].iteration_time_s' "$tmp/out" \
	>/dev/null 2>&1 || fail "a different prediction than by name"
finish "profiles given by path"

(cd "$tmp" && run "$bin" predict --model my-model.yaml --cluster my-cluster.yaml --tp 8 --pp 12 \
	--dp 16 --global-batch 1536 --recompute full --format json && [ $rc -eq 0 ]) ||
	fail "plan-cli predict --model my-model.yaml (in its folder) failed"
finish "a bare NAME.yaml is a path"

# A profile path that names no file is the mistake an unknown name is: exit 3 for both.
cli predict --model "$tmp/no-such-model.yaml" --cluster selene --global-batch 8
expect_rc 3
expect_stdout_empty
expect_one_error_line
expect_err_has "no-such-model.yaml: no such file"
finish "a profile path that does not exist exits 3, as an unknown profile name does"
cli predict --model gpt-1.7b --cluster "$tmp/no-such-cluster.yaml" --global-batch 8
expect_rc 3
finish "so does a cluster path"

cli predict --model gpt-3-175b --cluster selene --global-batch 8
expect_rc 3
expect_stdout_empty
expect_one_error_line
expect_err_has "did you mean 'gpt3-175b'?"
finish "an unknown profile name exits 3 with a suggestion"

# hidden 600000000 is within the schema's range, but the default
# ffn_hidden (4 x hidden) does not fit in an int: the profile must be
# rejected, not predicted with negative parameter counts.
printf '%s\n' 'name: huge' 'layers: 2' 'hidden: 600000000' 'heads: 1' 'vocab: 51200' \
	'seq_len: 2048' >"$tmp/huge.yaml"
cli predict --model "$tmp/huge.yaml" --cluster selene --gpus 8 --global-batch 8
expect_rc 3
expect_stdout_empty
expect_one_error_line
expect_err_has "huge.yaml:3:9:"
finish "a model whose default ffn_hidden overflows is rejected"

# -------------------------------------------------------- output errors

if [ -w /dev/full ]; then
	for f in text json csv; do
		run sh -c '"$@" >/dev/full' sh "$bin" "${golden_args[@]}" --format "$f"
		expect_rc 1
		expect_one_error_line
		finish "predict --format $f > /dev/full exits 1"
	done
	for f in text json csv; do
		run sh -c '"$@" >/dev/full' sh "$bin" validate "$runs_csv" --format "$f"
		expect_rc 1
		expect_one_error_line
		finish "validate --format $f > /dev/full exits 1"
	done
	# The sweep's writer says so, and cli_finish's flush of the rest
	# must not say it again (it did, for every format).
	for f in md csv json latex; do
		run sh -c '"$@" >/dev/full' sh "$bin" sweep "$src/studies/smile-routing.yaml" --format "$f"
		expect_rc 1
		expect_one_error_line
		finish "sweep --format $f > /dev/full exits 1, one error line"
	done
	for args in "profiles" "--help" "--version" "predict --help"; do
		# shellcheck disable=SC2086 # $args is split on purpose
		run sh -c '"$@" >/dev/full' sh "$bin" $args
		expect_rc 1
		expect_one_error_line
		finish "plan-cli $args > /dev/full exits 1"
	done
else
	skip "writing to /dev/full exits 1" "no /dev/full"
fi

# ------------------------------------------------------------- validate

rows=$(($(grep -c . "$runs_csv") - 1))
cli validate "$runs_csv" --format json
expect_rc 0
expect_stderr_empty
jq -e . "$tmp/out" >/dev/null 2>&1 || fail "stdout is not JSON"
expect_jq "(.rows | type) == \"array\" and (.rows | length) == $rows" "one row per run ($rows)"
expect_jq '(.mape | type) == "number" and .mape >= 0' "mape"
expect_jq '.rows | all(has("id") and has("error") and has("predicted_iteration_time_s"))' "row keys"
expect_jq '(([.rows[].error | if . < 0 then -. else . end] | add) / (.rows | length)) as $m
	| ($m - .mape) as $d | (if $d < 0 then -$d else $d end) <= 1e-9' "mape is the mean |error|"
finish "validate --format json has rows and mape"

# The summary by source: one entry per distinct source, rows adding up to
# the file's, each MAPE the mean |error| of its rows, Spearman in [-1, 1].
nsrc=$(python3 -c 'import csv,sys; print(len({r["source"] for r in csv.DictReader(open(sys.argv[1]))}))' "$runs_csv" 2>/dev/null || echo "")
cli validate "$runs_csv" --format json
expect_rc 0
[ -z "$nsrc" ] || expect_jq "(.sources | length) == $nsrc" "$nsrc sources"
expect_jq "([.sources[].rows] | add) == $rows" "the sources' rows add up to $rows"
expect_jq '. as $r | .sources | all(. as $g | [$r.rows[] | select(.source == $g.source) | .error | fabs]
	| ((add / length) - $g.mape | fabs) < 1e-9)' "each source's MAPE is the mean |error| of its rows"
expect_jq '.sources | all(.spearman == null or (.spearman >= -1 and .spearman <= 1))' "Spearman in [-1, 1]"
expect_jq '.sources | all(.mape >= 0 and .worst_abs_error >= .mape and (.bias | fabs) <= .mape + 1e-12)' \
	"worst >= MAPE >= |bias|"
cli validate "$runs_csv"
expect_rc 0
expect_out_has "by source"
expect_out_has "Spearman"
finish "validate summarises each source: MAPE, worst, bias and Spearman's rank correlation"

# A source of 400 two-byte characters: kept to its first 511 bytes at a
# character boundary (255 characters), valid JSON, and the text table cut
# at 41 characters with its columns in line.
long=$(printf '%0400d' 0 | sed 's/0/é/g')
printf 'id,model,cluster,tp,pp,dp,micro_batch,global_batch,measured_iteration_time_s,source\nA,gpt-1.7b,selene,1,1,8,1,8,1.0,%s\n' \
	"$long" >"$tmp/long-source.csv"
cli validate "$tmp/long-source.csv" --format json
expect_rc 0
expect_jq '.sources[0].source | length == 255' "the source cut at a character boundary, 255 characters"
cli validate "$tmp/long-source.csv"
expect_rc 0
expect_out_has "$(printf '%041d' 0 | sed 's/0/é/g')...    1 "
finish "validate keeps a long UTF-8 source whole characters, in JSON and in the table"

cli validate "$runs_csv" --format csv
expect_rc 0
grep -v '^\r\{0,1\}$' "$tmp/out" >"$tmp/validate.csv"
[ "$(wc -l <"$tmp/validate.csv")" -eq $((rows + 1)) ] || fail "expected a header and $rows records"
[ "$(csv_fields <"$tmp/validate.csv" | sort -u | wc -l)" -eq 1 ] || fail "records with different field counts"
finish "validate --format csv: a header and one record per run"

cli validate "$runs_csv" --max-mape 0.001
expect_rc 5
expect_one_error_line
expect_err_has "--max-mape"
expect_out_has "MAPE"
finish "validate --max-mape 0.001 exits 5 after printing the results"

cli validate "$runs_csv" --max-mape 1000
expect_rc 0
expect_stderr_empty
finish "validate --max-mape 1000 exits 0"

cli validate "$runs_csv" --max-error 0.001
expect_rc 5
expect_one_error_line
expect_err_has "--max-error"
finish "validate --max-error 0.001 exits 5"

# A row that cannot be predicted is named and left out; the others are
# still predicted and printed, and the exit status is 3.
printf 'id,model,cluster,tp,pp,dp,micro_batch,global_batch,recompute,measured_iteration_time_s\n%s\n%s\n%s\n' \
	'ok-1,gpt-1.7b,selene,1,1,32,16,512,full,1.5' 'r2,gpt-1.7b,selene,5,1,4,16,512,full,1.5' \
	'r3,gpt-2b,selene,1,1,32,16,512,full,1.5' >"$tmp/some-bad.csv"
cli validate "$tmp/some-bad.csv" --format json
expect_rc 3
expect_jq '(.rows | map(.id)) == ["ok-1"] and .rows_skipped == 2' "one row predicted, two skipped"
expect_err_has "row 3 ('r2'): attention heads (24) are not divisible by tp (5)"
expect_err_has "row 4 ('r3'): unknown model 'gpt-2b'"
expect_err_has "2 of 3 rows could not be predicted (above): left out of the MAPE"
finish "validate leaves out the rows it cannot predict, names them, predicts the others, exits 3"

# A row's error names the line its record starts on (and a profile's
# error the column of its cell): after a quoted cell
# over two lines, record 3 starts on line 4; the line break in the source
# cell prints as a space in the table.
printf 'id,model,cluster,tp,pp,dp,micro_batch,global_batch,recompute,measured_iteration_time_s,source\n%s\n%s\n%s\n' \
	'ok-1,gpt-1.7b,selene,1,1,32,16,512,full,1.5,"a note' 'over two lines"' \
	'r2,gpt-2b,selene,1,1,32,16,512,full,1.5,x' >"$tmp/two-line.csv"
cli validate "$tmp/two-line.csv"
expect_rc 3
expect_err_has "two-line.csv:4:4: row 3 ('r2'): unknown model 'gpt-2b'"
expect_out_has "a note over two lines "
finish "validate names a row by the line its record starts on; a line break in a source cell prints as a space"

cli validate "$tmp/no-such-runs.csv"
expect_rc 1
expect_stdout_empty
expect_one_error_line
expect_err_has "no-such-runs.csv"
finish "validate of a file that does not exist exits 1"

# Profile paths in a runs CSV are relative to the CSV's folder.
mkdir -p "$tmp/runs-dir/profiles"
cp "$src/models/gpt-1.7b.yaml" "$tmp/runs-dir/profiles/my-model.yaml"
cp "$src/clusters/selene.yaml" "$tmp/runs-dir/my-cluster.yaml"
printf 'id,model,cluster,tp,pp,dp,micro_batch,global_batch,measured_iteration_time_s\nr1,profiles/my-model.yaml,my-cluster.yaml,1,1,32,4,512,3.0\nr2,gpt-1.7b,selene,1,1,32,4,512,3.0\n' \
	>"$tmp/runs-dir/runs.csv"
run sh -c "cd / && exec '$bin' validate '$tmp/runs-dir/runs.csv' --format csv"
expect_rc 0
expect_stderr_empty
[ "$(grep -c '^"r[12]"' "$tmp/out")" -eq 2 ] && [ "$(cut -d, -f6 "$tmp/out" | sort -u | grep -vc predicted)" -eq 1 ] ||
	fail "the rows by path and by name differ: $(cat "$tmp/out")"
finish "a runs CSV's profile paths are relative to its folder (run from /; by path = by name)"

# The compressor, compress and dp_allreduce columns are predict's options.
printf 'id,model,cluster,gpus,tp,pp,dp,micro_batch,global_batch,compressor,compress,dp_allreduce,measured_iteration_time_s\nc1,gpt-1.7b,aws-p3-16xlarge,32,4,2,4,4,64,ae-100,tp+pp,,1.0\nc2,gpt-1.7b,selene,32,1,1,32,4,512,,,hierarchical,1.0\n' \
	>"$tmp/runs-dir/cmp.csv"
cli validate "$tmp/runs-dir/cmp.csv" --format json
expect_rc 0
a=$("$bin" predict --model gpt-1.7b --cluster aws-p3-16xlarge --gpus 32 --tp 4 --pp 2 --dp 4 --micro-batch 4 \
	--global-batch 64 --compressor ae-100 --compress tp,pp --format json | jq .iteration_time_s)
b=$("$bin" predict --model gpt-1.7b --cluster selene --gpus 32 --dp 32 --micro-batch 4 --global-batch 512 \
	--dp-allreduce hierarchical --format json | jq .iteration_time_s)
expect_jq "((.rows[0].predicted_iteration_time_s - $a) | fabs) <= 1e-6 * $a and ((.rows[1].predicted_iteration_time_s - $b) | fabs) <= 1e-6 * $b" \
	"the rows predict as predict --compressor ae-100 --compress tp,pp ($a) and --dp-allreduce hierarchical ($b)"
finish "runs CSV columns compressor, compress and dp_allreduce are predict's options"
printf 'id,model,cluster,tp,pp,dp,micro_batch,global_batch,compress,measured_iteration_time_s\nc1,gpt-1.7b,selene,1,1,32,4,512,tp,1.0\n' >"$tmp/runs-dir/bad.csv"
cli validate "$tmp/runs-dir/bad.csv"
expect_rc 3
expect_err_has "bad.csv:2:33: column 'compress' ('tp') needs a compressor in column 'compressor'"
finish "a compress cell without a compressor is an input error naming the row"

# ------------------------------------------------------------- reliability
# ------------------------------------------------------------- reliability

# Each count in range, their product beyond an int: a usage error naming
# the numbers, never an overflow (the sanitizer build reports one).
usage_error "dp x micro-batch beyond an int" "dp x micro-batch (32 x 100000000)" \
	predict --model gpt-1.7b --cluster selene --gpus 32 --micro-batch 100000000 --global-batch 100000000
usage_error "pp x vpp beyond a layer count" "pp x vpp (4 x 1000)" \
	predict --model gpt-1.7b --cluster selene --tp 8 --pp 4 --vpp 1000 --global-batch 32

# Rates below the profiles' minimum (1 kB/s) would make times infinite.
usage_error "--nic-bandwidth 1e-300bit/s" "--nic-bandwidth must be at least 1 kB/s, got '1e-300bit/s'" \
	predict --model gpt-1.7b --cluster selene --global-batch 32 --nic-bandwidth 1e-300bit/s
usage_error "--intra-bandwidth 999 B/s" "--intra-bandwidth must be at least 1 kB/s" \
	predict --model gpt-1.7b --cluster selene --global-batch 32 --intra-bandwidth "999 B/s"
cli predict --model gpt-1.7b --cluster selene --gpus 16 --tp 8 --global-batch 32 --nic-bandwidth "1 kB/s" --format json
expect_rc 0
expect_jq '.iteration_time_s > 0' "a finite time at the minimum"
finish "--nic-bandwidth at the minimum (1 kB/s) is accepted"
# --gpu and --power-limit (issue 25 item 1): the same cluster with another
# GPU, or its board held below rated power. By hand: the H100 SXM5's
# rated_power is 700 W, so 500 W gives a clock of (500/700)^(1/3) =
# 0.714286^(1/3) = 0.893904; the 96 GB HBM2e H100 holds 96 GB - 1 GiB
# reserved = 96e9 / 2^30 - 1 = 89.41 GiB (against the 80 GB part's 79.65).
h100=(--model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 8 --seq-len 8192 --framework pytorch-fsdp2
	--zero 3 --allow-oom --format json)
cli predict "${h100[@]}" --power-limit 500W
expect_rc 0
expect_jq '.gpu_power_limit_w == 500 and (.gpu_clock_factor - 0.893904 | fabs) < 1e-6' "500 W: clock 0.893904"
expect_jq '.gpu == "H100-SXM5-80GB"' "the cluster's GPU"
finish "--power-limit 500W holds the H100's clock at (500/700)^(1/3)"
cli predict "${h100[@]}"
expect_jq '.gpu_power_limit_w == 700 and .gpu_clock_factor == 1' "the rated 700 W, clock 1"
finish "without --power-limit the JSON reports the rated power and clock 1"
base=$(jq .iteration_time_s "$tmp/out")
cli predict "${h100[@]}" --power-limit "0.5 kW"
capped=$(jq .iteration_time_s "$tmp/out")
check "a power limit slows the step, by less than the clock ($capped vs $base s)" \
	"jq -en --argjson a '${capped:-0}' --argjson b '${base:-0}' '\$a > \$b and \$a < \$b / 0.893904' >/dev/null"
cli predict "${h100[@]}" --power-limit 5kW
expect_jq '.gpu_clock_factor == 1' "above rated: no boost"
expect_jq ".iteration_time_s == ${base:-0}" "the rated step"
finish "--power-limit above rated_power changes nothing"
cli predict "${h100[@]}" --gpu h100-sxm5-96gb-hbm2e
expect_rc 0
expect_jq '.gpu == "H100-SXM5-96GB-HBM2e" and .cluster == "dgx-h100"' "the GPU swapped, the cluster kept"
expect_jq '(.memory_capacity_bytes / 1073741824 * 100 | round) == 8941' "96 GB less 1 GiB reserved"
expect_jq '.gpu_power_limit_w == 500' "the profile's own 500 W limit"
finish "--gpu puts another GPU profile in the cluster"
cli predict --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 8 --seq-len 8192 --framework pytorch-fsdp2 \
	--zero 3 --allow-oom --power-limit 500W
expect_out_has "power limit 500 W of 700 W rated: compute-bound work at 0.894 x the rated clock"
finish "the text report names the power limit and the clock"
usage_error "--power-limit below a fifth of rated" \
	"--power-limit 100 W is below a fifth of GPU 'H100-SXM5-80GB''s rated_power (700 W)" \
	predict "${h100[@]}" --power-limit 100W
grep -v '^rated_power:' "$src/gpus/a100-sxm4-80gb.yaml" >"$tmp/no-power.yaml"
cli predict --model gpt-1.7b --cluster selene --gpus 32 --global-batch 32 --gpu "$tmp/no-power.yaml" --format json
expect_rc 0
expect_jq '.gpu_power_limit_w == 0 and .gpu_clock_factor == 1' "no power given: 0 W, clock 1"
finish "--gpu FILE: a GPU profile's YAML, here without rated_power"
usage_error "--power-limit on a GPU without rated_power" "--power-limit needs the GPU's rated_power" \
	predict --model gpt-1.7b --cluster selene --gpus 32 --global-batch 32 --gpu "$tmp/no-power.yaml" --power-limit 300W
usage_error "--power-limit without a unit" "--power-limit: missing unit in '500' (valid units: W kW)" \
	predict "${h100[@]}" --power-limit 500
usage_error "--power-limit past 100 kW" "--power-limit must be from 1 W to 100 kW, got '1e9 W'" \
	predict "${h100[@]}" --power-limit "1e9 W"
cli predict "${h100[@]}" --gpu nosuch-gpu
expect_rc 3
expect_err_has "unknown gpu 'nosuch-gpu' (bundled: a100-sxm4-40gb"
finish "--gpu with an unknown name lists the bundled GPUs (exit 3)"
for axis in nic-bandwidth intra-bandwidth; do
	cli sweep --model gpt-1.7b --cluster selene --gpus 32 --global-batch 32 --$axis "1e-300 bit/s,100 Gbit/s"
	expect_rc 3
	expect_stdout_empty
	expect_one_error_line
	expect_err_has "must be at least 1 kB/s, got '1e-300 bit/s'"
	finish "sweep --$axis below 1 kB/s is rejected"
done
printf '%s\n' 'name: slow-host' 'method: quantize' 'bits: 1' 'host_throughput: 1e-300 B/s' >"$tmp/slow-host.yaml"
cli predict --model gpt-1.7b --cluster selene --gpus 32 --global-batch 32 --compressor "$tmp/slow-host.yaml" \
	--compress dp --dp-compress-on cpu
expect_rc 3
expect_stdout_empty
expect_one_error_line
expect_err_has "slow-host.yaml:4:18: 'host_throughput' must be at least 1000 B/s"
finish "a compressor's host_throughput below 1 kB/s is rejected"

# The slowest rates and the lowest efficiencies the schemas accept: an
# iteration of centuries, an error naming the plan and the dominant term,
# never a number, whichever command meets them.
tiny=$src/tests/bad/cluster-slowest-implausible.yaml
cli "${opt[@]}" --model gpt-1.7b --cluster "$tiny" --gpus 32 --global-batch 32
expect_rc 2
expect_stdout_empty
expect_one_error_line
expect_err_has "is more than a year"
expect_err_has "plan tp "
finish "optimize on a cluster whose times pass a year names the plan"
for f in json csv; do
	cli sweep --model gpt-1.7b --cluster "$tiny" --gpus 8,32 --global-batch 32 --format $f
	expect_rc 0
	grep -qiE '(^|[^a-z])(inf|nan)([^a-z]|$)' "$tmp/out" && fail "stdout has inf or nan"
	[ $f = json ] && expect_out_has "is more than a year, mostly breakdown.compute"
	finish "sweep --format $f: cells whose times pass a year are errors, not numbers"
done

# Flash attention: on by default where the GPU runs it (A100), off on a
# V100; --flash-attention and --no-flash-attention say so whatever the GPU.
for c in "selene on" "aws-p3dn off"; do
	set -- $c
	cli predict --model gpt-1.7b --cluster "$1" --gpus 32 --global-batch 32 --allow-oom
	expect_rc 0
	expect_out_has "flash attention $2"
	finish "predict on $1: flash attention $2 by default"
done
cli predict --model gpt-1.7b --cluster selene --gpus 32 --global-batch 32 --no-flash-attention --format json
expect_rc 0
expect_jq '.plan.flash_attention == false' "--no-flash-attention"
finish "--no-flash-attention turns it off on an A100"
cli predict --model gpt-1.7b --cluster aws-p3dn --gpus 32 --global-batch 32 --flash-attention --allow-oom --format json
expect_rc 0
expect_jq '.plan.flash_attention == true' "--flash-attention"
finish "--flash-attention turns it on on a V100"
# Each framework's default kernel is no error on a V100, whose plans run
# unfused attention; naming one is (tests/bad/args-attention-kernel-volta).
for fw in megatron-lm deepspeed pytorch-fsdp2; do
	cli predict --model gpt-1.7b --cluster aws-p3dn --gpus 8 --global-batch 32 --zero 1 --framework "$fw"
	expect_rc 0
	expect_out_has "flash attention off"
	finish "predict on a V100 under $fw: the framework's kernel unused, no error"
done
cli "${opt[@]}" --model gpt-1.7b --cluster selene --gpus 32 --global-batch 32 --format json
expect_rc 0
expect_jq '.best.plan.flash_attention == true and (.best.predict_args | index("--flash-attention") != null)' "optimize"
finish "optimize on an A100 plans with flash attention and writes it into predict_args"

# meson devenv: the build's plan-cli on PATH, the source tree's profiles.
if command -v meson >/dev/null 2>&1 && [ -f "$(dirname "$bin")/meson-info/meson-info.json" ]; then
	run meson devenv -C "$(dirname "$bin")" sh -c 'realpath "$(command -v plan-cli)" && plan-cli profiles'
	expect_rc 0
	expect_out_has "$(realpath "$bin")"
	expect_out_has "gpt3-175b"
	finish "meson devenv runs the build's plan-cli with the bundled profiles"
else
	skip "meson devenv runs the build's plan-cli with the bundled profiles" "not a meson build folder"
fi

# A profile path as long as real ones are (here 300 characters; a value
# once had to fit in 63) names its profile in sweep, in a study file and
# on the command line alike.
long="$tmp/$(printf 'd%.0s' $(seq 1 120))/$(printf 'e%.0s' $(seq 1 120))"
mkdir -p "$long" && cp "$src/clusters/selene.yaml" "$long/selene.yaml"
cli sweep --model gpt-1.7b --cluster "$long/selene.yaml" --gpus 8,16 --global-batch 32 --format csv
expect_rc 0
expect_stderr_empty
expect_out_has "iteration_time_s"
finish "sweep --cluster takes a 300-character path"
printf 'axes:\n  model: [gpt-1.7b]\n  cluster: [%s]\n  gpus: [8]\n  global_batch: [32]\nbogus: 1\n' \
	"$long/selene.yaml" >"$long/study.yaml"
cli sweep "$long/study.yaml" --format csv
expect_rc 3
expect_err_has "$long/study.yaml:6:1: unknown"
finish "an error in a study at a 300-character path names the whole path"
sed -i '/^bogus/d' "$long/study.yaml"
cli sweep "$long/study.yaml" --format csv
expect_rc 0
expect_stderr_empty
expect_out_has "iteration_time_s"
finish "a study file names a cluster by a 300-character path"

# Worker threads that solved MILPs free GLPK's environment (LeakSanitizer).
cli sweep --mode optimize --threads 2 --model gpt-18.4b --cluster selene --gpus 64,128 --global-batch 512
expect_rc 0
expect_stderr_empty
expect_stdout_nonempty
finish "sweep --mode optimize --threads 2 leaks nothing"

# ----------------------------------------------------------- input files

# A file error: exit 1, one line naming the file.
file_error() { # NAME SUBSTRING ARGS...
	error_case 1 "$@"
}

mkfifo "$tmp/fifo.yaml" "$tmp/fifo.csv"
mkdir "$tmp/folder.yaml" "$tmp/folder.csv"
file_error "a FIFO as --model is refused at once" "fifo.yaml: not a regular file" \
	predict --model "$tmp/fifo.yaml" --cluster selene --global-batch 8
file_error "a folder as --cluster: 'is a directory'" "folder.yaml: is a directory" \
	predict --model gpt-1.7b --cluster "$tmp/folder.yaml" --global-batch 8
file_error "validate /dev/zero is refused at once" "/dev/zero: not a regular file" validate /dev/zero
file_error "a FIFO as the validate CSV is refused at once" "fifo.csv: not a regular file" validate "$tmp/fifo.csv"
file_error "a folder as the validate CSV: 'is a directory'" "folder.csv: is a directory" validate "$tmp/folder.csv"

# A FIFO (or a folder) named like a profile in a profile folder is no profile.
mkdir -p "$tmp/fifopath/models"
mkfifo "$tmp/fifopath/models/piped.yaml"
mkdir "$tmp/fifopath/models/folder.yaml"
run env PLAN_CLI_PATH="$tmp/fifopath:$src" "$bin" predict --model piped --cluster selene --global-batch 8
expect_rc 3
expect_stdout_empty
expect_one_error_line
expect_err_has "unknown model 'piped'"
finish "a profile name that resolves to a FIFO is an unknown name, not a hang"
run env PLAN_CLI_PATH="$tmp/fifopath:$src" "$bin" profiles
expect_rc 0
grep -q "piped\|folder" "$tmp/out" && fail "the FIFO or the folder is listed as a profile"
finish "profiles lists no FIFO or folder"

# Caps checked while parsing: each fails at its FILE:LINE:COL, the place
# that says where the parser stopped. How long that takes is a figure of
# bench/bench-inputs.sh, not a test (a machine under load is slow).
big_yaml() { # NAME SUBSTRING PYTHON-EXPRESSION (the file's text)
	local name=$1 sub=$2
	python3 -c "import sys; sys.stdout.write($3)" >"$tmp/big.yaml"
	cli predict --model "$tmp/big.yaml" --cluster selene --global-batch 8
	expect_rc 3
	expect_stdout_empty
	expect_one_error_line
	expect_err_has "$sub"
	finish "$name"
}
big_yaml "50,000 nested flow lists fail at the 33rd" "big.yaml:1:41: document nested more than 32 levels deep" \
	"'layers: ' + '[' * 50000 + ']' * 50000 + '\n'"
big_yaml "40,000 keys and a duplicate: found without comparing every pair" "big.yaml:40001:1: duplicate key 'k0'" \
	"''.join('k%d: 1\n' % i for i in range(40000)) + 'k0: 2\n'"
big_yaml "more than 100,000 values in one file" "more than 100000 values in one file" \
	"'layers: [' + '1, ' * 100001 + ']\n'"
big_yaml "a YAML file over 4 MiB" "big.yaml: larger than 4 MiB" \
	"'# ' + 'x' * (5 << 20) + '\n'"

# Spreadsheets write a byte-order mark: the header still has its 'id'.
{ printf '\357\273\277'; cat "$runs_csv"; } >"$tmp/bom.csv"
cli validate "$tmp/bom.csv" --format json
expect_rc 0
expect_stderr_empty
cp "$tmp/out" "$tmp/bom.json"
cli validate "$runs_csv" --format json
cmp -s "$tmp/out" "$tmp/bom.json" || fail "a different result with the byte-order mark"
finish "validate reads a CSV that starts with a UTF-8 byte-order mark"

# Hugging Face config.json files load as models, by path or hf:PATH, and print as profiles.
hf=$src/tests/data/hf
cli predict --model "hf:$hf/llama-3.1-8b.json" --cluster dgx-h100 --tp 4 --global-batch 1024 --format json
expect_rc 0
expect_stderr_empty
expect_jq '.parameters == 8030261248 and .model == "llama-3.1-8b" and .plan.seq_len == 4096' "Llama 3.1 8B from config.json"
finish "predict --model hf:PATH reads a Hugging Face config.json"
cli predict --model hf: --cluster dgx-h100 --gpus 8 --global-batch 8
expect_rc 3
expect_stdout_empty
expect_one_error_line
expect_err_has "model 'hf:' names no file: give hf:PATH"
finish "predict --model hf: with no path says so, not 'cannot open'"
for pair in opt-125m:125239296 opt-1.3b:1315758080 falcon-7b:6921720704 falcon-40b:41303293952; do
	cli predict --model "$hf/${pair%%:*}.json" --cluster dgx-h100 --gpus 8 --global-batch 8 --allow-oom --format json
	expect_rc 0
	expect_jq ".parameters == ${pair#*:}" "${pair%%:*} from config.json"
done
finish "predict --model reads OPT's and Falcon's config.json with their parameter counts"
cli import "$hf/qwen2.5-7b.json"
expect_rc 0
cp "$tmp/out" "$tmp/qwen.yaml"
expect_out_has "qkv_bias: true"
cli predict --model "$tmp/qwen.yaml" --cluster dgx-h100 --tp 4 --global-batch 1024 --format json
expect_rc 0
expect_jq '.parameters == 7615616512' "Qwen2.5 7B through the printed profile"
finish "import prints a model profile that loads with the same parameters"
# Nemotron-H: the imported profile has the bundled one's parameters.
for m in 8b 56b; do
	cli predict --model "nemotron-h-$m" --cluster dgx-h100 --gpus 8 --tp 8 --global-batch 8 --allow-oom --format json
	bundled=$(jq .parameters "$tmp/out")
	cli import "$hf/nemotron-h-$m-base-8k.json" --output "$tmp/nemotron-h-$m.yaml"
	expect_rc 0
	grep -q '^position_embedding: none' "$tmp/nemotron-h-$m.yaml" || fail "nemotron-h-$m: no position_embedding none"
	cli predict --model "$tmp/nemotron-h-$m.yaml" --cluster dgx-h100 --gpus 8 --tp 8 --global-batch 8 --allow-oom \
		--format json
	expect_rc 0
	expect_jq ".parameters == $bundled and .parameters > 0" "Nemotron-H $m through the imported profile"
done
finish "import of Nemotron-H 8B and 56B config.json gives the bundled profiles' parameters"
# Qwen3-Next: the imported profile predicts what the bundled one does, field for field.
cli predict --model qwen3-next-80b-a3b --cluster dgx-h100 --gpus 16 --tp 2 --ep 8 --global-batch 64 --allow-oom \
	--format json
jq -S . "$tmp/out" >"$tmp/q3n-bundled.json"
cli import "$hf/qwen3-next-80b-a3b.json" --output "$tmp/q3n.yaml"
expect_rc 0
cli predict --model "$tmp/q3n.yaml" --cluster dgx-h100 --gpus 16 --tp 2 --ep 8 --global-batch 64 --allow-oom \
	--format json
expect_rc 0
expect_jq '.parameters == 79674292992' "Qwen3-Next through the imported profile"
jq -S . "$tmp/out" | cmp -s - "$tmp/q3n-bundled.json" || fail "qwen3-next: the imported profile predicts otherwise"
finish "import of Qwen3-Next-80B-A3B's config.json predicts as the bundled qwen3-next-80b-a3b"
cli import "hf:$hf/gpt2.json" --output "$tmp/gpt2.yaml"
expect_rc 0
expect_stdout_empty
expect_stderr_empty
grep -qx "name: 'gpt2'" "$tmp/gpt2.yaml" || fail "no name line in the written file"
ls "$tmp"/gpt2.yaml.tmp* >/dev/null 2>&1 && fail "a temporary file was left"
finish "import --output writes the profile to a file, nothing to stdout"
cli import -o "$tmp/gpt2-o.yaml" "$hf/gpt2.json"
expect_rc 0
expect_stdout_empty
cmp -s "$tmp/gpt2.yaml" "$tmp/gpt2-o.yaml" || fail "-o FILE did not write what --output FILE writes"
finish "import -o FILE is --output FILE"
# Outputs are replaced atomically (issue 28): a link's target is written
# and the link kept; the mode of the file replaced is kept.
printf 'old\n' >"$tmp/gpt2-target.yaml"
chmod 600 "$tmp/gpt2-target.yaml"
ln -s gpt2-target.yaml "$tmp/gpt2-link.yaml"
cli import "$hf/gpt2.json" --output "$tmp/gpt2-link.yaml"
expect_rc 0
[ -L "$tmp/gpt2-link.yaml" ] || fail "the symbolic link was replaced by a file"
cmp -s "$tmp/gpt2.yaml" "$tmp/gpt2-target.yaml" || fail "the link's target was not written"
[ "$(stat -c %a "$tmp/gpt2-target.yaml")" = 600 ] || fail "the 0600 file came back $(stat -c %a "$tmp/gpt2-target.yaml")"
ls -a "$tmp" | grep -q '^\.plan-cli-' && fail "a temporary file was left"
finish "import --output through a symbolic link writes its target, keeps the link and the 0600 mode"
usage_error "import --output without its value" "option '--output' needs a value" import "$hf/gpt2.json" --output
usage_error "import: a near option name is suggested" "unknown option '--outpt' for import; did you mean '--output'?" \
	import "$hf/gpt2.json" --outpt x.yaml
error_case 1 "import --output into a missing folder" "nofolder/x.yaml: cannot write" \
	import "$hf/gpt2.json" --output "$tmp/nofolder/x.yaml"
usage_error "import takes one config.json" "unexpected argument" import "$hf/gpt2.json" "$hf/gpt2.json"
printf '{"model_type": "t5", "d_model": 512}\n' >"$tmp/t5.json"
error_case 3 "an unsupported model_type names the supported ones" \
	"t5.json:1:16: model_type 't5' is not supported (supported: llama," \
	predict --model "$tmp/t5.json" --cluster dgx-h100 --global-batch 8
printf '{"model_type": "llama",\n "hidden_size": 4096,,\n}\n' >"$tmp/broken.json"
error_case 3 "a broken config.json is reported at its line" "broken.json:2:" \
	import "$tmp/broken.json"
usage_error "import without a path" "import needs the path of a Hugging Face config.json" import
printf '{"model_type": "llama", "num_hidden_layers": 200000, "hidden_size": 64,\n "num_attention_heads": 2,
 "vocab_size": 10, "max_position_embeddings": 8, "intermediate_size": 128}\n' >"$tmp/deep.json"
error_case 3 "a value the profile refuses is not given the written YAML's line" \
	"deep.json: 'layers' must be at most 100000, got '200000' (in the model profile written from it" \
	import "$tmp/deep.json"
printf '{"model_type": "llava", "text_config": {"model_type": "llama"}}\n' >"$tmp/llava.json"
error_case 3 "a multimodal wrapper names its text_config" \
	"llava.json:1:40: a multimodal config: its language model is in field 'text_config' (model_type 'llama')" \
	predict --model "$tmp/llava.json" --cluster dgx-h100 --global-batch 8

# Builds and installs find their profiles without PLAN_CLI_PATH: a binary
# away from the tree (as an out-of-tree build is) falls back to the
# source tree it was configured from; a DESTDIR-staged install uses its
# own PREFIX/share/plan-cli.
mkdir -p "$tmp/elsewhere"
cp "$bin" "$tmp/elsewhere/plan-cli"
(cd "$tmp" && env -u PLAN_CLI_PATH timeout "$limit" "$tmp/elsewhere/plan-cli" profiles >"$tmp/out" 2>"$tmp/err")
rc=$?
expect_rc 0
grep -q "^  gpt3-175b  *$src/models/gpt3-175b.yaml$" "$tmp/out" || fail "gpt3-175b is not found in $src"
finish "a binary outside the tree finds the source tree's profiles"
builddir=$(dirname "$bin")
# ------------------------------------------- --recompute-layers (Slapo's ratio)
slapo=(--model gpt-1.7b --cluster dgx-h100 --tp 1 --pp 2 --gpus 2 --micro-batch 4 --global-batch 64 --allow-oom)
usage_error "--recompute-layers above a stage's layers" "stage 0 has 12 layers, so it cannot recompute 13" \
	predict "${slapo[@]}" --recompute-layers 13
usage_error "--recompute-layers with a list of the wrong length" "one entry per stage (pp 2), got 3" \
	predict "${slapo[@]}" --recompute-layers 1,2,3
usage_error "--recompute-layers with an empty entry" "expects a number or a comma-separated list" \
	predict "${slapo[@]}" --recompute-layers 1,,2
usage_error "--recompute-layers below 0" "a whole number from 0 to 30000" \
	predict "${slapo[@]}" --recompute-layers -1
usage_error "--recompute-layers not a number" "--recompute-layers" \
	predict "${slapo[@]}" --recompute-layers three
usage_error "--recompute-layers with interleaving" "needs vpp 1" \
	predict "${slapo[@]}" --vpp 2 --recompute-layers 3
usage_error "--recompute-layers beyond int" "a whole number from 0 to 30000, got '99999999999'" \
	predict "${slapo[@]}" --recompute-layers 99999999999
usage_error "--recompute-layers ','" "expects a number or a comma-separated list" \
	predict "${slapo[@]}" --recompute-layers ,
usage_error "--recompute-layers over --stage-layers' short stage" "stage 0 has 10 layers, so it cannot recompute 11" \
	predict "${slapo[@]}" --stage-layers 10,14 --recompute-layers 11,13

cli predict "${slapo[@]}" --recompute-layers 3,5 --format json
expect_rc 0
expect_jq '.plan.recompute_layers == [3,5] and .plan.stage_recompute == ["none","none"]' "a list, one per stage"
cli predict "${slapo[@]}" --recompute-layers 3
expect_out_has "recompute    full on the first 3,3 of 12,12 layers per stage; the others none"
finish "predict --recompute-layers: JSON plan.recompute_layers and a text line"

for pair in "0:none" "12:full"; do
	cli predict "${slapo[@]}" --recompute "${pair#*:}" --format json
	jq -c '[.iteration_time_s, .memory_bytes, .breakdown_s]' "$tmp/out" >"$tmp/mode"
	cli predict "${slapo[@]}" --recompute-layers "${pair%%:*}" --format json
	jq -c '[.iteration_time_s, .memory_bytes, .breakdown_s]' "$tmp/out" >"$tmp/layers"
	cmp -s "$tmp/mode" "$tmp/layers" || fail "--recompute-layers ${pair%%:*} differs from --recompute ${pair#*:}"
	finish "--recompute-layers ${pair%%:*} is --recompute ${pair#*:} exactly"
done

# ------------------------------------------- plan-cli recomp: --recompute-modules, -method, -num-layers
rmod=(--model gpt-1.7b --cluster dgx-h100 --tp 2 --pp 2 --gpus 8 --micro-batch 4 --global-batch 64 --allow-oom)
usage_error "--recompute-modules mla_up_proj without MLA" \
	"--recompute-modules mla_up_proj does not apply: model 'gpt-1.7b' has no multi-latent attention (MLA)" \
	predict "${rmod[@]}" --recompute selective --recompute-modules core_attn+mla_up_proj
usage_error "--recompute-modules moe_act on a dense model" "moe_act does not apply: model 'gpt-1.7b' is not an MoE model" \
	predict "${rmod[@]}" --recompute selective --recompute-modules moe_act
usage_error "--recompute-modules mlp where every layer is MoE" "every layer is MoE" \
	predict --model mixtral-8x7b --cluster dgx-h100 --tp 8 --gpus 8 --global-batch 8 --recompute selective \
	--recompute-modules mlp
usage_error "--recompute-modules with an unknown module" "unknown value 'attn' for --recompute-modules" \
	predict "${rmod[@]}" --recompute selective --recompute-modules core_attn+attn
usage_error "--recompute-method with an unknown method" "unknown value 'blocks' for --recompute-method" \
	predict "${rmod[@]}" --recompute full --recompute-method blocks
z3rec=(--model gpt-1.7b --cluster dgx-h100 --tp 2 --gpus 8 --micro-batch 4 --global-batch 64 --allow-oom)
usage_error "--recompute-method block under ZeRO-3 with a framework that regathers to recompute" \
	"under ZeRO stage 3 with framework 'deepspeed-2021', which gathers the weights again to recompute" \
	predict "${z3rec[@]}" --recompute full --recompute-method block --recompute-num-layers 2 --zero 3 \
	--framework deepspeed-2021
# Megatron-FSDP checkpoints on the weights its backward gathers: block
# recomputation under ZeRO-3 runs (NeMo 25.09's Llama 3 70B GB200 recipe,
# recompute_layers 20 with use_mcore_fsdp), and takes between none and full.
cli predict "${z3rec[@]}" --recompute full --recompute-method block --recompute-num-layers 2 --zero 3 \
	--framework megatron-fsdp --format json
expect_rc 0
blk=$(jq -r '.iteration_time_s' "$tmp/out")
cli predict "${z3rec[@]}" --recompute none --zero 3 --framework megatron-fsdp --format json
z3none=$(jq -r '.iteration_time_s' "$tmp/out")
cli predict "${z3rec[@]}" --recompute full --zero 3 --framework megatron-fsdp --format json
z3full=$(jq -r '.iteration_time_s' "$tmp/out")
awk -v b="$blk" -v x="$z3none" -v f="$z3full" 'BEGIN { exit !(x < b && b < f) }' ||
	fail "block under ZeRO-3 is not between none ($z3none s) and full ($z3full s): $blk s"
finish "--recompute-method block under ZeRO-3 (megatron-fsdp): runs, between no and full recomputation"

# Each module keeps less than Korthikanti's selective and costs more time;
# framework is the profile's own selective.
cli predict "${rmod[@]}" --recompute selective --format json
jq -c '[.iteration_time_s, .memory_bytes.activations]' "$tmp/out" >"$tmp/sel"
cli predict "${rmod[@]}" --recompute selective --recompute-modules framework --format json
jq -c '[.iteration_time_s, .memory_bytes.activations]' "$tmp/out" >"$tmp/fw"
cmp -s "$tmp/sel" "$tmp/fw" || fail "--recompute-modules framework differs from --recompute selective"
sel_act=$(jq '.[1]' "$tmp/sel")
cli predict "${rmod[@]}" --recompute selective --recompute-modules core_attn,layernorm,mlp --format json
expect_rc 0
expect_jq '.plan.recompute_modules == ["core_attn","layernorm","mlp"]' "plan.recompute_modules lists them"
expect_jq ".memory_bytes.activations < $sel_act and .breakdown_s.recompute > 0" "they keep less and recompute"
cli predict "${rmod[@]}" --recompute selective --recompute-modules core_attn,layernorm,mlp
expect_out_has "recompute    selective stages: modules core_attn+layernorm+mlp"
finish "predict --recompute-modules: the plan field, memory and time"

# optimize searches the listed sets; its predict_args predict the same again.
cli "${opt[@]}" --model gpt-1.7b --cluster dgx-h100 --gpus 8 --global-batch 64 --tp 2 --pp 2 --recompute selective \
	--recompute-modules core_attn,core_attn+mlp --format json
expect_rc 0
cp "$tmp/out" "$tmp/rm-opt.json"
expect_jq '.best.predict_args | index("--recompute-modules") != null' "predict_args name --recompute-modules"
mapfile -t args < <(jq -r '.best.predict_args[]' "$tmp/rm-opt.json")
cli predict "${args[@]}" --format json
best=$(jq '.best.iteration_time_s' "$tmp/rm-opt.json")
[ "$(jq '.iteration_time_s' "$tmp/out")" = "$best" ] || fail "predict_args give $(jq '.iteration_time_s' "$tmp/out"), optimize $best"
finish "optimize --recompute-modules core_attn,core_attn+mlp: the best plan predicts again"

# A runs CSV row with the new columns predicts as predict does.
cli predict "${rmod[@]}" --recompute full --recompute-method uniform --recompute-num-layers 3 --format json
t_uni=$(jq '.iteration_time_s' "$tmp/out")
printf 'id,model,cluster,gpus,tp,pp,micro_batch,global_batch,recompute,recompute_modules,recompute_method,recompute_num_layers,measured_iteration_time_s\nm,gpt-1.7b,dgx-h100,8,2,2,4,64,selective,core_attn+mlp,uniform,0,1\nu,gpt-1.7b,dgx-h100,8,2,2,4,64,full,framework,uniform,3,1\nb,gpt-1.7b,dgx-h100,8,2,2,4,64,full,,block,5,1\n' >"$tmp/rm.csv"
cli validate "$tmp/rm.csv" --format json
expect_rc 0
expect_jq "(.rows[1].predicted_iteration_time_s - $t_uni) | . * . < 1e-18" "the uniform row predicts as predict"
cli predict "${rmod[@]}" --recompute full --recompute-layers 5 --format json
t_blk=$(jq '.iteration_time_s' "$tmp/out")
cli validate "$tmp/rm.csv" --format json
expect_jq "(.rows[2].predicted_iteration_time_s - $t_blk) | . * . < 1e-18" "block 5 predicts as --recompute-layers 5"
finish "validate: recompute_modules, recompute_method and recompute_num_layers columns"

# llama2-7b on one 16 GiB V100 node, one stage: neither no nor selective
# recomputation fits, full does, and 25 of 32 layers in full (r 0.78) fit and
# are faster. (With dropout false, helper capdrop: no hidden-dropout masks,
# 2 s h bytes a layer less, so 25 layers in full fit where 28 were needed;
# plan-cli: 15.94 GiB at 25, 16.003 at 24. Without --max-pp 1 a two-stage
# plan, TP 4 PP 2 VPP 8 in full, now fits too, 16.31 -> 15.94 GiB, and wins.)
slapo_opt=(--model llama2-7b --cluster aws-p3-16xlarge --gpus 8 --global-batch 64 --max-zero 0 --max-pp 1 --format json)
cli "${opt[@]}" "${slapo_opt[@]}"
expect_rc 0
cp "$tmp/out" "$tmp/slapo.json"
expect_jq '.best.plan.recompute_layers == [25] and .best.stages[0].recompute == "selective"' \
	"optimize recomputes 25 of 32 layers in full"
expect_jq '.best.predict_args | index("--recompute-layers") != null' "predict_args name --recompute-layers"
mapfile -t args < <(jq -r '.best.predict_args[]' "$tmp/slapo.json")
cli predict "${args[@]}" --format json
best=$(jq '.best.iteration_time_s' "$tmp/slapo.json")
[ "$(jq '.iteration_time_s' "$tmp/out")" = "$best" ] || fail "predict_args give $(jq '.iteration_time_s' "$tmp/out"), optimize $best"
noargs=()
skip_next=0
for a in "${args[@]}"; do
	if [ "$a" = "--recompute-layers" ]; then skip_next=1; elif [ $skip_next = 1 ]; then skip_next=0
	else noargs+=("$a"); fi
done
cli predict "${noargs[@]}" --format json --allow-oom
expect_jq '.fits == false' "selective alone does not fit"
cli predict "${noargs[@]/selective/full}" --format json
expect_jq '.fits == true' "full fits"
awk -v full="$(jq '.iteration_time_s' "$tmp/out")" -v best="$best" 'BEGIN { exit !(best < full) }' ||
	fail "partial ($best s) is not faster than full ($(jq '.iteration_time_s' "$tmp/out") s)"
finish "optimize chooses part of a stage in full where full fits and selective does not, faster than full"

# --------------------------------------------- products of in-range values
# Each degree in its range, their product not (issue 28): an error, not a
# wrapped product (tp 65536 x cp 65536 x pp 256 x dp 2^24 is 2^64, 0 in 64 bits).
usage_error "a product of degrees past 2^31 GPUs" "tp x cp x pp (65536 x 65536 x 256) is more than 2147483647 GPUs" \
	predict --model gpt-1.7b --cluster dgx-h100 --global-batch 64 --tp 65536 --cp 65536 --pp 256 --dp 16777216
# A Young-Daly interval of 1e10 iterations (a 7 ms step, a GPU failing once
# in 1e12 hours) is refused, not cast to a negative int.
cli predict --model mpt-125m --cluster dgx-h100 --global-batch 1 --gpus 1 --seq-len 128 --checkpoint-to storage \
	--gpu-mtbf-hours 1e12
[ "$rc" -ne 0 ] || fail "exit status 0"
grep -q "Young-Daly checkpoint interval .* more than 2147483647: give --checkpoint-every" "$tmp/err" ||
	fail "no message naming the interval and --checkpoint-every"
grep -q -- "-2147483648" "$tmp/out" && fail "a negative interval printed"
finish "a Young-Daly interval past an int is an error naming --checkpoint-every"

# Checks a user expects (issue 26 item 6).
usage_error "a sequence longer than GPT-2's learned positions" "seq-len 8192 is longer than 'gpt2' has learned positions (1024)" \
	predict --model "hf:$src/tests/data/hf/gpt2.json" --cluster dgx-h100 --gpus 8 --global-batch 64 --seq-len 8192
usage_error "--moe-routing bilevel on a dense model, as --ep" "--moe-routing bilevel routes tokens to experts: it needs an MoE model" \
	predict --model gpt-1.7b --cluster dgx-h100 --gpus 8 --global-batch 64 --moe-routing bilevel
# plan-cli moeovl: an overlap with nothing to overlap, or on a dispatcher it
# is not priced on, is refused, not ignored.
usage_error "--moe-overlap lancet on a dense model" "--moe-overlap lancet overlaps the expert all-to-alls: it needs an MoE model and ep > 1" \
	predict --model gpt-1.7b --cluster dgx-h100 --gpus 8 --global-batch 64 --moe-overlap lancet
usage_error "--moe-overlap lancet on DeepEP" "framework 'megatron-lm-deepep', whose token dispatcher is deepep" \
	predict --model mixtral-8x7b --cluster dgx-h100 --gpus 16 --ep 8 --global-batch 64 --moe-overlap lancet \
	--framework megatron-lm-deepep
usage_error "--moe-overlap combined-1f1b on the allgather dispatcher" "whose token dispatcher is allgather_mask" \
	predict --model mixtral-8x7b --cluster dgx-h100 --gpus 16 --ep 8 --global-batch 64 --moe-overlap combined-1f1b \
	--framework megatron-core-0.6
usage_error "optimize: --moe-overlap lancet on DeepEP, said before the search" "whose token dispatcher is deepep" \
	optimize --model mixtral-8x7b --cluster dgx-h100 --gpus 16 --global-batch 64 --moe-overlap lancet \
	--framework megatron-lm-deepep
usage_error "no --gpus: the error says the plan took the whole cluster" \
	"(without --gpus the plan takes all 4480 GPUs of 'selene', so dp is 4480: give --gpus N)" \
	predict --model gpt-1.7b --cluster selene --global-batch 512
cli predict --model gpt-1.7b --cluster dgx-h100 --gpus 32 --global-batch 512 --seq-lengths "$src/datasets/flan-mix.csv" \
	--batching dynamic
expect_rc 0
[ "$(grep -n "^batched " "$tmp/out" | cut -d: -f1)" -lt "$(grep -n "^iteration time" "$tmp/out" | cut -d: -f1)" ] 2>/dev/null ||
	fail "no 'batched' line before 'iteration time'"
finish "--seq-lengths: the batched iteration comes before the one at --seq-len"

# ------------------------------------------------- one plan, every surface
# predict, a sweep cell and a validate row that gives only id, model,
# cluster, gpus, global_batch and the attributes set complete the plan the
# same way (plan_complete: dp from the GPUs, MiCS's ZeRO-3, the GPU's flash
# attention): the same time to 1e-9 (issue 23).
for grid in "tp=2 mics_group=8" "tp=4 pp=2 recompute=selective" "cp=2 tp=2 seq_len=8192" "zero=3 micro_batch=2"; do
	args=() header="id,model,cluster,gpus,global_batch" row="r,gpt-1.7b,dgx-h100,16,64"
	for kv in $grid; do
		args+=("--${kv%%=*}" "${kv#*=}")
		header="$header,${kv%%=*}" row="$row,${kv#*=}"
	done
	args=("${args[@]//_/-}")
	want=$("$bin" predict --model gpt-1.7b --cluster dgx-h100 --gpus 16 --global-batch 64 "${args[@]}" --format json |
		jq .iteration_time_s)
	swept=$("$bin" sweep --model gpt-1.7b --cluster dgx-h100 --gpus 16 --global-batch 64 "${args[@]}" --format json |
		jq '.cells[0].iteration_time_s')
	printf '%s,measured_iteration_time_s\n%s,1\n' "$header" "$row" >"$tmp/grid.csv"
	valid=$("$bin" validate "$tmp/grid.csv" --format json | jq '.rows[0].predicted_iteration_time_s')
	jq -en --argjson a "${want:-0}" --argjson b "${swept:-1}" --argjson c "${valid:-2}" \
		'$a > 0 and (($a - $b) | fabs) <= 1e-9 * $a and (($a - $c) | fabs) <= 1e-9 * $a' >/dev/null ||
		fail "predict $want s, sweep $swept s, validate $valid s"
	last_cmd="predict/sweep/validate ${args[*]}"
	finish "$grid: predict, sweep and a minimal validate row agree"
done


if command -v meson >/dev/null && [ -f "$builddir/meson-private/install.dat" ]; then
	meson install -C "$builddir" --destdir "$tmp/stage" --no-rebuild --quiet >/dev/null 2>&1 ||
		fail "meson install --destdir failed"
	staged=$(find "$tmp/stage" -path '*/bin/plan-cli' -type f | head -n 1)
	if [ -n "$staged" ]; then
		(cd "$tmp" && env -u PLAN_CLI_PATH timeout "$limit" "$staged" profiles >"$tmp/out" 2>"$tmp/err")
		rc=$?
		expect_rc 0
		grep -q "^  gpt3-175b  *$tmp/stage/.*/share/plan-cli/models/gpt3-175b.yaml$" "$tmp/out" ||
			fail "the staged install does not list its own models: $(grep gpt3-175b "$tmp/out")"
	else
		fail "no bin/plan-cli under the staged install"
	fi
	finish "a DESTDIR-staged install lists the profiles it installed"
else
	skip "a DESTDIR-staged install lists the profiles it installed" "no meson or no install data"
fi

echo "1..$n"
echo "# $passed passed, $failed failed"
[ $failed -eq 0 ]
