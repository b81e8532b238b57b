#!/usr/bin/env bash
# The option tables (each command's rows, beside its code in src/cli/)
# against their documentation: for each command of 'plan-cli --help' (the
# table of commands in src/cli/main.c), the options plan-cli accepts (the
# hidden 'plan-cli --list-options') must be the options that the
# command's page, plan-cli-COMMAND(1), lists in its OPTIONS section under
# "COMMAND ... options" (its .TP tags), and
# the user documentation (README.md and docs/*.md: the README gives one
# example a command, docs/commands.md every option) must name each. The
# sweep's axis options must be the study file's axes with dashes for
# underscores. Then the parser: whole names
# only (no prefix of one), the names an unknown option may mean, both
# --name VALUE and --name=VALUE, operands before, between and after the
# options, and "--".
# Usage: run-options-tests.sh PLAN_CLI SOURCE_ROOT
set -u
bin=$(realpath "$1")
root=$2
cd "$root" || exit 1
. "$(dirname "$(realpath "$0")")/harness.sh"
export LC_ALL=C PLAN_CLI_PATH=$root
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" --list-options >"$tmp/list" 2>"$tmp/err"
check "--list-options lists options" '[ $? -eq 0 ] && [ -s "$tmp/list" ] && [ ! -s "$tmp/err" ]'

# Every command, as 'plan-cli --help' lists them.
"$bin" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' >"$tmp/commands"
check "plan-cli --help lists the commands, import and profiles among them" \
	'grep -qx predict "$tmp/commands" && grep -qx import "$tmp/commands" && grep -qx profiles "$tmp/commands"'
mapfile -t commands <"$tmp/commands"

# The option names of the .TP (and .TQ) tags in the .SS "CMD ... options"
# sections of OPTIONS in man/plan-cli-CMD.1, one a line, sorted; --help is
# left out (a global option, in plan-cli(1)).
man_options() {
	awk -v cmd="$1" '
		/^\.SH / { in_opts = ($2 == "OPTIONS"); sect = 0; next }
		/^\.SS / { s = $2; gsub(/\\/, "", s); sect = in_opts && s == cmd && $NF == "options"; next }
		sect && (/^\.TP/ || /^\.TQ/) { tag = 1; next }
		sect && tag { print; tag = 0 }
	' "man/plan-cli-$1.1" | sed 's/\\-/-/g' | grep -o -- '--[a-z][a-z0-9-]*' | grep -vx -- '--help' | sort -u
}

for cmd in "${commands[@]}"; do
	awk -v cmd="$cmd" '$1 == cmd { print $2 }' "$tmp/list" | sort -u >"$tmp/table.$cmd"
	man_options "$cmd" >"$tmp/man.$cmd"
	if [ ! -s "$tmp/table.$cmd" ]; then
		bad "$cmd: the table has options"
	elif diff "$tmp/table.$cmd" "$tmp/man.$cmd" >"$tmp/diff"; then
		ok "$cmd: plan-cli-$cmd(1) OPTIONS lists the table's $(wc -l <"$tmp/table.$cmd") options"
	else
		bad "$cmd: the table (<) and plan-cli-$cmd(1) OPTIONS (>) differ"
		diag "$(cat "$tmp/diff")"
	fi
	missing=""
	while IFS= read -r opt; do
		cat README.md docs/*.md | grep -qF -- "\`$opt" || missing="$missing $opt"
	done <"$tmp/table.$cmd"
	check "$cmd: README.md or docs/ names every option${missing:+ (missing:$missing)}" '[ -z "$missing" ]'
done

# Sweep axes: "sweep --OPT axis KEY" with OPT = KEY, dashes for underscores,
# and every axis a study file accepts (but 'reference', its own block, and
# the three the command line gives as switches: --sequence-parallel,
# --flash-attention/--no-flash-attention, --tp-overlap).
awk '$1 == "sweep" && $3 == "axis" { print $2, $4 }' "$tmp/list" >"$tmp/axes"
check "sweep: each axis option is its study key with dashes" \
	'[ -s "$tmp/axes" ] && awk "{ k = \$2; gsub(/_/, \"-\", k); if (\"--\" k != \$1) exit 1 }" "$tmp/axes"'
printf 'axes:\n  zzzzzzzz: [a]\n' >"$tmp/study.yaml"
"$bin" sweep "$tmp/study.yaml" 2>&1 | sed -n 's/.*(valid: \(.*\))$/\1/p' | tr -d ' ' | tr ',' '\n' |
	grep -vxE 'reference|sequence_parallel|flash_attention|tp_overlap' | sort >"$tmp/study-axes"
awk '{ print $2 }' "$tmp/axes" | sort >"$tmp/option-axes"
check "sweep: the axis options are the study's axes" \
	'[ -s "$tmp/study-axes" ] && diff "$tmp/study-axes" "$tmp/option-axes" >/dev/null'


# Whole names only: each option's name less its last letter is an unknown
# option (getopt_long took it for the option), whose error names it.
for cmd in "${commands[@]}"; do
	refused=""
	while IFS= read -r opt; do
		cut=${opt%?}
		grep -qx -- "$cut" "$tmp/table.$cmd" && continue
		"$bin" "$cmd" "$cut" 1 >"$tmp/out" 2>"$tmp/err"
		rc=$?
		[ $rc -eq 2 ] && [ ! -s "$tmp/out" ] &&
			grep -qF -- "unknown option '$cut' for $cmd; did you mean " "$tmp/err" &&
			grep -qF -- "'$opt'" "$tmp/err" || refused="$refused $cut"
	done <"$tmp/table.$cmd"
	check "$cmd: a name less its last letter is refused, naming the option${refused:+ (not:$refused)}" \
		'[ -z "$refused" ]'
done

gpt=(--model gpt3-175b --cluster selene --pp 12 --dp 16 --micro-batch 1 --recompute full
	--no-flash-attention)
fails_cmd "a prefix is not an option: '--glob 8'" 2 \
	"unknown option '--glob' for predict; did you mean '--global-batch'?" predict "${gpt[@]}" --tp 8 --glob 1536
fails_cmd "--tp without its value before another option" 2 \
	"option '--tp' needs a value, not the option '--tp-overlap'" predict "${gpt[@]}" --global-batch 1536 --tp --tp-overlap
fails_cmd "--tp without its value at the end" 2 "option '--tp' needs a value" \
	predict "${gpt[@]}" --global-batch 1536 --tp
fails_cmd "an incomplete name: every option it begins" 2 \
	"unknown option '--t' for predict; did you mean one of '--tp', '--tp-overlap'?" predict --t 8
fails_cmd "a typo: every option within two edits, nearest first" 2 \
	"unknown option '--tpp' for predict; did you mean one of '--tp', '--pp', '--vpp', '--dp', '--ep', '--etp', '--cp', '--gpu'?" \
	predict --tpp 8
fails_cmd "the begun names come before the near ones" 2 \
	"unknown option '--max-t' for optimize; did you mean one of '--max-tp', '--max-pp', '--max-cp'?" \
	optimize --max-t 8
fails_cmd "a short name two edits from every option gets no guess" 2 \
	"unknown option '--xy' for predict (see 'plan-cli predict --help')" predict --xy 8
fails_cmd "=VALUE on an option that takes none" 2 "option '--tp-overlap' takes no value" \
	predict "${gpt[@]}" --global-batch 1536 --tp-overlap=yes
fails_cmd "an operand after -- is not an option" 2 "unexpected argument '--tp'" \
	predict "${gpt[@]}" --global-batch 1536 -- --tp 8

# --name=VALUE reads as --name VALUE; operands may come before, between or
# after the options (moved behind them in order), and after "--".
run_cmd predict "${gpt[@]}" --tp 8 --global-batch 1536 --format json
cp "$tmp/out" "$tmp/spaced.json"
run_cmd predict --model=gpt3-175b --cluster=selene --pp=12 --dp=16 --micro-batch=1 --recompute=full \
	--no-flash-attention --tp=8 --global-batch=1536 --format=json
check "predict: --name=VALUE as --name VALUE" \
	'[ $rc -eq 0 ] && [ -s "$tmp/out" ] && cmp -s "$tmp/out" "$tmp/spaced.json"'

runs=tests/data/published-runs.csv
run_cmd validate --format json "$runs"
cp "$tmp/out" "$tmp/validate.json"
same=1
for args in "$runs --format json" "--format=json $runs" "--format json -- $runs"; do
	# shellcheck disable=SC2086
	run_cmd validate $args
	[ $rc -eq 0 ] && [ -s "$tmp/out" ] && cmp -s "$tmp/out" "$tmp/validate.json" || same=0
done
check "validate: the CSV before, after or after -- the options" '[ $same -eq 1 ]'

study=tests/data/study-small.yaml
run_cmd sweep "$study" --nic-bandwidth "25 Gbit/s" --tp 2,4 --format csv
cp "$tmp/out" "$tmp/sweep.csv"
run_cmd sweep "$study" --tp=2,4 --format=csv --nic-bandwidth="25 Gbit/s"
check "sweep STUDY with axes as --name=VALUE" \
	'[ $rc -eq 0 ] && [ "$(wc -l <"$tmp/out")" -gt 2 ] && cmp -s "$tmp/out" "$tmp/sweep.csv"'
"$bin" sweep "$study" --shard 1/2 --format json >"$tmp/part1.json" &&
	"$bin" sweep "$study" --shard 2/2 --format json >"$tmp/part2.json"
run_cmd sweep "$study" --format csv --merge "$tmp/part1.json" "$tmp/part2.json"
cp "$tmp/out" "$tmp/merged.csv"
same=1
for order in "--merge $tmp/part1.json --format csv $tmp/part2.json" \
	"--merge $tmp/part1.json $tmp/part2.json --format=csv" "--merge --format csv -- $tmp/part1.json $tmp/part2.json"; do
	# shellcheck disable=SC2086
	run_cmd sweep "$study" $order
	[ $rc -eq 0 ] && [ -s "$tmp/out" ] && cmp -s "$tmp/out" "$tmp/merged.csv" || same=0
done
check "sweep --merge: the shards before, between, after the options and after --" \
	'[ -s "$tmp/merged.csv" ] && [ $same -eq 1 ]'

log=tests/data/nccl/all_reduce_perf-8xh100.log
run_cmd fit-logs --nccl-tests "$log" --level intra --format json
cp "$tmp/out" "$tmp/fit.json"
run_cmd fit-logs "$log" --level=intra --format=json --nccl-tests
check "fit-logs: the log before the options, --name=VALUE" \
	'[ $rc -eq 0 ] && [ -s "$tmp/out" ] && cmp -s "$tmp/out" "$tmp/fit.json"'

finish
