#!/usr/bin/env bash
# The option tables (src/cli/options_table.c) against their documentation:
# for each command, the options plan-cli accepts (the hidden
# 'plan-cli --list-options') must be the options that plan-cli(1)'s
# OPTIONS section lists under "COMMAND ... options" (its .TP tags), and
# the README must name each. The sweep's axis options must be the study
# file's axes with dashes for underscores.
# Usage: run-options-tests.sh PLAN_CLI SOURCE_ROOT
set -u
bin=$(realpath "$1")
root=$2
cd "$root" || exit 1
. "$(dirname "$(realpath "$0")")/harness.sh"
export LC_ALL=C
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" --list-options >"$tmp/list" 2>"$tmp/err"
check "--list-options lists options" '[ $? -eq 0 ] && [ -s "$tmp/list" ] && [ ! -s "$tmp/err" ]'

# The option names of the .TP (and .TQ) tags in the .SS "CMD ... options"
# sections of OPTIONS, one a line, sorted; --help is left out (a global option).
man_options() {
	awk -v cmd="$1" '
		/^\.SH / { in_opts = ($2 == "OPTIONS"); sect = 0; next }
		/^\.SS / { s = $2; gsub(/\\/, "", s); sect = in_opts && s == cmd && $NF == "options"; next }
		sect && (/^\.TP/ || /^\.TQ/) { tag = 1; next }
		sect && tag { print; tag = 0 }
	' man/plan-cli.1 | sed 's/\\-/-/g' | grep -o -- '--[a-z][a-z0-9-]*' | grep -vx -- '--help' | sort -u
}

for cmd in predict optimize sweep validate calibrate fit-logs; do
	awk -v cmd="$cmd" '$1 == cmd { print $2 }' "$tmp/list" | sort -u >"$tmp/table.$cmd"
	man_options "$cmd" >"$tmp/man.$cmd"
	if [ ! -s "$tmp/table.$cmd" ]; then
		bad "$cmd: the table has options"
	elif diff "$tmp/table.$cmd" "$tmp/man.$cmd" >"$tmp/diff"; then
		ok "$cmd: plan-cli(1) OPTIONS lists the table's $(wc -l <"$tmp/table.$cmd") options"
	else
		bad "$cmd: the table (<) and plan-cli(1) OPTIONS (>) differ"
		diag "$(cat "$tmp/diff")"
	fi
	missing=""
	while IFS= read -r opt; do
		grep -qF -- "\`$opt" README.md || missing="$missing $opt"
	done <"$tmp/table.$cmd"
	check "$cmd: README names every option${missing:+ (missing:$missing)}" '[ -z "$missing" ]'
done

# Sweep axes: "sweep --OPT axis KEY" with OPT = KEY, dashes for underscores,
# and every axis a study file accepts (but 'reference', its own block).
awk '$1 == "sweep" && $3 == "axis" { print $2, $4 }' "$tmp/list" >"$tmp/axes"
check "sweep: each axis option is its study key with dashes" \
	'[ -s "$tmp/axes" ] && awk "{ k = \$2; gsub(/_/, \"-\", k); if (\"--\" k != \$1) exit 1 }" "$tmp/axes"'
printf 'axes:\n  zzzzzzzz: [a]\n' >"$tmp/study.yaml"
"$bin" sweep "$tmp/study.yaml" 2>&1 | sed -n 's/.*(valid: \(.*\))$/\1/p' | tr -d ' ' | tr ',' '\n' |
	grep -vx reference | sort >"$tmp/study-axes"
awk '{ print $2 }' "$tmp/axes" | sort >"$tmp/option-axes"
check "sweep: the axis options are the study's axes" \
	'[ -s "$tmp/study-axes" ] && diff "$tmp/study-axes" "$tmp/option-axes" >/dev/null'

finish
