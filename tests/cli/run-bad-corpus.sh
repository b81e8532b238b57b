#!/usr/bin/env bash
# Run every invalid input of tests/bad/ through plan-cli and check the error.
#
# usage: run-bad-corpus.sh PLAN_CLI SOURCE_ROOT
#
# Each case is one file tests/bad/NAME with its expectation in NAME.expect:
#   line 1  the exit status plan-cli must return
#   line 2  a fixed string (grep -F) that stderr must contain; include
#           FILE:LINE:COLUMN where the tool reports a location
# The command depends on the prefix of NAME:
#   model-*    predict --model FILE --cluster selene --global-batch 8
#   cluster-*  predict --model gpt-1.7b --cluster FILE --global-batch 32
#   gpu-*      the same with a cluster whose gpu is FILE (a GPU profile)
#   framework-* predict --model gpt-1.7b --cluster selene --global-batch 32 --framework FILE
#   runs-*     validate FILE
#   study-*    sweep FILE
#   nccl-*     fit-logs --nccl-tests FILE
#   gemm-*     fit-logs --gemm FILE --gpu h100-sxm5-80gb
#   seqlen-*   predict --model gpt-1.7b --cluster selene --gpus 8 --global-batch 32 --seq-lengths FILE
#   hf-*       import FILE (a Hugging Face config.json)
#   args-*     the command line FILE holds, one argument a line (lines
#              starting '#' are comments; @SRC@ stands for SOURCE_ROOT):
#              an option value or a combination of options that plan-cli
#              must refuse
# Besides the status and the message, every case checks that stdout is
# empty and that stderr is exactly one line, starting "plan-cli: error: ".
# A case that runs longer than $PLAN_CLI_TEST_TIMEOUT seconds (default 120,
# a hang guard far above any case's time on a busy machine) fails.
# Output, TAP (meson's protocol 'tap'): "ok N - NAME" / "not ok N - NAME",
# then the plan "1..N" and "# N passed, N failed"; a failed case's "not ok"
# line again on stderr with "# why" lines; the exit status is 1 when any
# case failed.
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 PLAN_CLI SOURCE_ROOT" >&2
	exit 2
fi
bin=$1
src=$2
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
src=$(cd "$src" && pwd) || exit 2
dir=$src/tests/bad
limit=${PLAN_CLI_TEST_TIMEOUT:-120}

if [ ! -x "$bin" ]; then
	echo "Bail out! $bin is not an executable"
	exit 2
fi
if [ ! -d "$dir" ]; then
	echo "Bail out! no folder $dir"
	exit 2
fi

export LC_ALL=C
# Bundled names (selene, gpt-1.7b) must resolve even from a build folder
# outside the source tree.
export PLAN_CLI_PATH="$src${PLAN_CLI_PATH:+:$PLAN_CLI_PATH}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/plan-cli-bad.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

n=0
passed=0
failed=0

report() { # NAME, then the problems found (none: ok)
	local name=$1
	shift
	n=$((n + 1))
	if [ $# -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok $n - $name"
		return
	fi
	failed=$((failed + 1))
	echo "not ok $n - $name"
	# Why, on stderr (meson shows a failed TAP test's stderr).
	{
		echo "not ok $n - $name"
		for why in "$@"; do
			echo "#   $why"
		done
	} >&2
}

for file in "$dir"/*; do
	[ -f "$file" ] || continue
	name=${file##*/}
	case $name in
	*.expect) [ -f "${file%.expect}" ] || report "$name" "no input file for this expectation"; continue ;;
	model-*) args=(predict --model "$file" --cluster selene --global-batch 8) ;;
	cluster-*) args=(predict --model gpt-1.7b --cluster "$file" --global-batch 32) ;;
	gpu-*) # a GPU profile, named by path from a cluster
		printf 'name: c\nnodes: 4\ngpus_per_node: 8\ngpu: %s\nintra_node: {bandwidth: 300 GB/s}\ninter_node: {nics_per_node: 8, nic_bandwidth: 200 Gbit/s}\n' \
			"$file" >"$tmp/gpu-cluster.yaml"
		args=(predict --model gpt-1.7b --cluster "$tmp/gpu-cluster.yaml" --global-batch 32) ;;
	framework-*) args=(predict --model gpt-1.7b --cluster selene --global-batch 32 --framework "$file") ;;
	runs-*) args=(validate "$file") ;;
	study-*) args=(sweep "$file") ;;
	nccl-*) args=(fit-logs --nccl-tests "$file") ;;
	gemm-*) args=(fit-logs --gemm "$file" --gpu h100-sxm5-80gb) ;;
	seqlen-*) args=(predict --model gpt-1.7b --cluster selene --gpus 8 --global-batch 32 --seq-lengths "$file") ;;
	hf-*) args=(import "$file") ;;
	args-*) mapfile -t args < <(grep -v '^#' "$file")
		args=("${args[@]//@SRC@/$src}") ;;
	*) report "$name" "unknown prefix: name a case model-*, cluster-*, gpu-*, framework-*, runs-*, study-*, nccl-*, gemm-*, seqlen-*, hf-* or args-*"; continue ;;
	esac
	if [ ! -f "$file.expect" ]; then
		report "$name" "missing $name.expect"
		continue
	fi
	want_rc=$(sed -n 1p "$file.expect")
	want_msg=$(sed -n 2p "$file.expect")
	problems=()
	case $want_rc in
	'' | *[!0-9]*) report "$name" "line 1 of $name.expect is not an exit status: '$want_rc'"; continue ;;
	esac
	if [ -z "$want_msg" ]; then
		report "$name" "line 2 of $name.expect (the expected message) is empty"
		continue
	fi

	# The subshell keeps bash's "Segmentation fault" notices off the report.
	(timeout -k 2 "$limit" "$bin" "${args[@]}" </dev/null >"$tmp/out" 2>"$tmp/err"; exit $?) 2>/dev/null
	rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		problems+=("no answer within $limit s (killed; exit $rc)")
	elif [ $rc -ge 128 ]; then
		problems+=("killed by signal $((rc - 128)) (exit $rc): a crash")
	elif [ "$rc" != "$want_rc" ]; then
		problems+=("exit status $rc, expected $want_rc")
	fi
	if [ -s "$tmp/out" ]; then
		problems+=("stdout is not empty: $(head -c 200 "$tmp/out" | tr '\n' ' ')")
	fi
	lines=$(wc -l <"$tmp/err")
	if [ -s "$tmp/err" ] && [ "$(tail -c 1 "$tmp/err" | od -An -c | tr -d ' ')" != '\n' ]; then
		lines=$((lines + 1)) # a last line without a newline
	fi
	errors=$(grep -c '^plan-cli: error: ' "$tmp/err")
	if [ "$lines" -ne 1 ] || [ "$errors" -ne 1 ]; then
		problems+=("stderr has $lines lines, $errors of them 'plan-cli: error: ...'; expected exactly one such line")
	fi
	if ! grep -qF -- "$want_msg" "$tmp/err"; then
		problems+=("stderr lacks: $want_msg")
	fi
	if [ ${#problems[@]} -gt 0 ]; then
		problems+=("stderr was: $(head -c 400 "$tmp/err" | sed "s|$dir/||g" | tr '\n' ' ')")
		problems+=("command: plan-cli ${args[*]}")
	fi
	report "$name" ${problems[@]+"${problems[@]}"}
done

if [ $n -eq 0 ]; then
	echo "Bail out! no cases in $dir"
	exit 2
fi
echo "1..$n"
echo "# $passed passed, $failed failed"
[ $failed -eq 0 ]
