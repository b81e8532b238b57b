#!/usr/bin/env bash
# Input speed (a benchmark, not a test): how long plan-cli takes to reject
# oversized YAML files (the caps that tests/cli/run-cli-tests.sh checks by
# their messages), and to calibrate on 32 published runs with 10-fold
# cross-validation. Usage: bench-inputs.sh [PLAN_CLI] [SOURCE_ROOT]
set -euo pipefail
bin=$(realpath "${1:-build/plan-cli}")
cd "${2:-.}"
export PLAN_CLI_PATH=$PWD LC_ALL=C
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# timed LABEL RC CMD...: run CMD, print the seconds it took (and the exit
# status when it is not RC: then the figure is not the one meant).
timed() {
	local label=$1 want=$2 t0 t1 rc=0
	shift 2
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || rc=$?
	t1=$(date +%s.%N)
	echo "$label: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s$([ "$rc" -eq "$want" ] || echo " (exit $rc, expected $want)")"
}

big_yaml() { # LABEL PYTHON-EXPRESSION (the file's text)
	python3 -c "import sys; sys.stdout.write($2)" >"$tmp/big.yaml"
	timed "reject $1" 3 "$bin" predict --model "$tmp/big.yaml" --cluster selene --global-batch 8
}
big_yaml "50,000 nested flow lists" "'layers: ' + '[' * 50000 + ']' * 50000 + '\n'"
big_yaml "40,000 keys and a duplicate" "''.join('k%d: 1\n' % i for i in range(40000)) + 'k0: 2\n'"
big_yaml "100,001 values in one file" "'layers: [' + '1, ' * 100001 + ']\n'"
big_yaml "a YAML file over 4 MiB" "'# ' + 'x' * (5 << 20) + '\n'"

runs=tests/data/published-runs.csv
{ head -n 1 "$runs"; grep ',mosaicml-a100-40gb,' "$runs"; } >"$tmp/mosaic.csv"
timed "calibrate on $(($(wc -l <"$tmp/mosaic.csv") - 1)) runs, 10-fold cross-validation" 0 \
	"$bin" calibrate --runs "$tmp/mosaic.csv" --cluster mosaicml-a100-40gb \
	--fit gpu.gemm_efficiency_max,gpu.memory_efficiency --output "$tmp/cal.yaml"
