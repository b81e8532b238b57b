#!/usr/bin/env bash
# docs/research/megatron-bridge-recipes.csv (issue 25, twentieth session):
# each Megatron-Bridge recipe row is one plan-cli command, run from the
# repository root. Its figures are those of the commit its section in
# docs/research/framework-data.md names and move with the cost model, so
# this checks only that every command still runs: a row recorded without an
# error predicts (exit 0, or 4 for a plan that does not fit) a finite,
# positive time and the fit the row records; a row recorded with an error
# still fails with that error's first words.
# Usage: run-recipe-table-tests.sh PLAN_CLI SOURCE_ROOT
# shellcheck disable=SC2016 # check expressions in single quotes
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"
csv=docs/research/megatron-bridge-recipes.csv
check "the recipe table has its 160 rows" '[ "$(($(wc -l <"$csv") - 1))" = 160 ]'
# recipe, command, fits, error: the CSV has no quoted commas in these columns.
runs=0 failed=""
while IFS=$'\x1f' read -r recipe cmd fits err; do
	read -ra words <<<"${cmd#plan-cli }"
	out=$("$bin" "${words[@]}" --format json 2>"$tmp/err"); rc=$?
	if [ -n "$err" ]; then
		grep -qF "${err:0:40}" "$tmp/err" || failed+="$recipe: expected '$err'"$'\n'
	elif [ $rc -ne 0 ] && [ $rc -ne 4 ]; then
		failed+="$recipe: exit $rc: $(head -c 200 "$tmp/err")"$'\n'
	elif ! jq -e --arg fits "$fits" '(.iteration_time_s > 0) and (.iteration_time_s < 1e9)
			and ((.fits | tostring) == ($fits | ascii_downcase))' <<<"$out" >/dev/null; then
		failed+="$recipe: time or fit differs from the table ($fits)"$'\n'
	fi
	runs=$((runs + 1))
done < <(python3 -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print("\x1f".join([r["recipe"], r["command"], r["fits"], r["error"]]))' "$csv")
check "every row's command runs as the table records it (${runs} rows)" '[ -z "$failed" ] || { printf "%s" "$failed"; false; }'
finish
