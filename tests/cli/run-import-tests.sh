#!/usr/bin/env bash
# scripts/import-runs: a table of published runs (the columns of
# ../shared/validation/published-runs.csv, copied as
# tests/data/published-runs-table.csv) turned into validate's CSV with
# generated model and cluster profiles. On the 66 shared runs it must give
# what the hand-made tests/data/published-runs.csv gives, row by row; bad
# rows stop it with the row and the column; validate points a table at it.
# Usage: run-import-tests.sh PLAN_CLI SOURCE_ROOT
# jq programs are in single quotes on purpose:
# shellcheck disable=SC2016
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"
imp=$root/scripts/import-runs
table=$root/tests/data/published-runs-table.csv

"$imp" "$table" --out "$tmp/imp" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "import-runs on the 66 shared runs: exit 0, 66 runs, 3 clusters" \
	'[ $rc -eq 0 ] && grep -q "^import-runs: 66 runs, 21 models, 3 clusters" "$tmp/out" &&
	 [ "$(tail -n +2 "$tmp/imp/runs.csv" | wc -l)" -eq 66 ] && [ "$(wc -l <"$tmp/imp/inferred.txt")" -eq 66 ]'
"$bin" validate "$tmp/imp/runs.csv" --format json >"$tmp/imp.json" 2>"$tmp/err"
"$bin" validate "$root/tests/data/published-runs.csv" --format json >"$tmp/hand.json"
check "every row predicts as in the hand-made CSV (times within 1e-9, measurements within its rounding)" \
	'jq -e --slurpfile h "$tmp/hand.json" "[.rows, \$h[0].rows] | transpose |
		all(.[0].id == .[1].id and ((.[0].predicted_iteration_time_s - .[1].predicted_iteration_time_s) | fabs) <
		    1e-9 * .[1].predicted_iteration_time_s and ((.[0].measured_iteration_time_s - .[1].measured_iteration_time_s) | fabs) <
		    1e-5 * .[1].measured_iteration_time_s)" "$tmp/imp.json" >/dev/null'
check "the generated profiles say where they come from" \
	'grep -q "^# from B200-SXM (single 8-GPU node)" "$tmp"/imp/clusters/b200*.yaml &&
	 grep -q "^SMX-B200-llama3-70b-l12-tp8-pp1-dp1-mbc4: .*model: Llama-style" "$tmp/imp/inferred.txt" &&
	 grep -q "^NAR21-T2-3: .*framework deepspeed-2021 (source of 2021)" "$tmp/imp/inferred.txt"'

# validate given the table itself says what to do.
"$bin" validate "$table" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "validate on a published-runs table: exit 3, pointing at import-runs" \
	'[ $rc -eq 3 ] && [ ! -s "$tmp/out" ] && grep -q "a table of published runs .*scripts/import-runs" "$tmp/err"'

# Bad rows: the file, the row and the column, exit 1, nothing written over.
bad() {
	local name=$1 text=$2 sedexpr=$3
	{ head -1 "$table"; sed -n 2p "$table" | sed "$sedexpr"; } >"$tmp/bad.csv"
	"$imp" "$tmp/bad.csv" --out "$tmp/bad" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "$name" '[ $rc -eq 1 ] && grep -qF "$text" "$tmp/err"'
}
bad "an unknown GPU" "bad.csv:2: row 'NAR21-T1-1': column 'gpu': 'TPU-v4' is none of" 's/,A100-SXM4,/,TPU-v4,/'
bad "a network with no bandwidth" "column 'inter_node': no bandwidth in" 's/8x HDR InfiniBand 200 Gb\/s per node (compute)/InfiniBand/'
bad "a layer count that is not a number" "column 'layers': 'many' is not a number" 's/,24,2304,/,many,2304,/'
bad "nothing measured" "no iter_time_s, tokens_per_s_per_gpu or tflops_per_gpu" 's/,137,,,,/,,,,,/'
printf 'id,model,cluster\nx,gpt-1.7b,selene\n' >"$tmp/ours.csv"
"$imp" "$tmp/ours.csv" --out "$tmp/o" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "validate's own CSV is not a published-runs table" '[ $rc -eq 1 ] && grep -q "no column .layers. (not a published-runs table)" "$tmp/err"'
finish
