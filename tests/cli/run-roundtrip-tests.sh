#!/usr/bin/env bash
# Every output loads back (issue 28, item 7): each command that writes a
# file runs on bundled inputs, writing into a folder whose name has spaces
# and non-ASCII letters, and each output is read back by the reader that
# consumes it: profiles by predict, runs CSVs by validate, shards by
# sweep --merge, plans by predict (their predict_args), JSON by jq, CSV by
# an RFC 4180 parser (python3's csv, where python3 is installed).
# Usage: run-roundtrip-tests.sh PLAN_CLI SOURCE_ROOT
# jq programs are in single quotes on purpose:
# shellcheck disable=SC2016
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"
d="$tmp/out dir é ü"
mkdir -p "$d"
have_py=false
command -v python3 >/dev/null 2>&1 && have_py=true
five=$root/tests/data/mosaic-five.csv
base=(--model gpt-1.7b --cluster selene --gpus 8 --global-batch 32)

# json_ok NAME FILE: FILE is one JSON document.
json_ok() {
	# shellcheck disable=SC2034 # read by check's expression
	local file=$2
	check "$1: valid JSON" 'jq -e . "$file" >/dev/null'
}
# csv_ok NAME FILE [MIN_ROWS]: FILE parses as RFC 4180 CSV, every record
# with the header's field count, at least MIN_ROWS records after it.
csv_ok() {
	# shellcheck disable=SC2034 # file, min: read by check's expression
	local file=$2 min=${3:-1}
	if ! $have_py; then
		skipped "$1: CSV parses (no python3)"
		return
	fi
	check "$1: CSV parses, every record as wide as the header" 'python3 - "$file" "$min" <<"PY"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="", encoding="utf-8")))
assert len(rows) >= 1 + int(sys.argv[2]), len(rows)
assert all(len(r) == len(rows[0]) for r in rows), [len(r) for r in rows]
PY'
}
# predict_time ARGS...: the iteration time predict gives, on stdout.
predict_time() { "$bin" predict "$@" --format json 2>/dev/null | jq -r '.iteration_time_s'; }
# close A B: two positive numbers within 1e-6 relative.
close() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > 0 && b > 0 && (a - b) / b < 1e-6 && (b - a) / b < 1e-6) }'; }

# predict: JSON and CSV.
"$bin" predict "${base[@]}" --format json >"$d/predict é.json" 2>"$tmp/err"
json_ok "predict --format json" "$d/predict é.json"
"$bin" predict "${base[@]}" --format csv >"$d/predict é.csv" 2>"$tmp/err"
csv_ok "predict --format csv" "$d/predict é.csv"

# optimize: the JSON's best plan and the plans of --all (CSV and JSON)
# predict again to the time they give; the model a path with spaces and
# non-ASCII letters, which predict_args quotes for the shell.
cp models/gpt-1.7b.yaml "$d/my model é.yaml"
run_cmd optimize --model "$d/my model é.yaml" "${base[@]:2}" --all "$d/all plans é.csv" --format json
cp "$tmp/out" "$d/optimize.json"
json_ok "optimize --format json" "$d/optimize.json"
check "optimize: the best plan's predict_args predict its time" '
	mapfile -t args < <(jq -r ".best.predict_args[]" "$d/optimize.json")
	close "$(predict_time "${args[@]}")" "$(jq -r .best.iteration_time_s "$d/optimize.json")"'
csv_ok "optimize --all FILE.csv" "$d/all plans é.csv" 2
if $have_py; then
	check "optimize --all CSV: the first three fitting plans' predict_args (shell words) predict their times" '
		python3 - "$d/all plans é.csv" >"$tmp/plans" <<"PY"
import csv, sys
fits = [r for r in csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8")) if r["status"] == "fits"]
for r in fits[:3]:
    print(r["iteration_time_s"], r["predict_args"])
PY
		[ -s "$tmp/plans" ] && while read -r t words; do
			eval "args=($words)"
			close "$(predict_time "${args[@]}")" "$t" || { echo "$t: $words"; exit 1; }
		done <"$tmp/plans"'
else
	skipped "optimize --all CSV: predict_args (no python3)"
fi
run_cmd optimize "${base[@]}" --all "$d/all plans é.json"
json_ok "optimize --all FILE.json" "$d/all plans é.json"

# sweep: every table format, shards merged back to the whole sweep.
study=tests/data/study-small.yaml
for f in md csv latex json; do
	"$bin" sweep "$study" --format "$f" >"$d/sweep é.$f" 2>"$tmp/err"
	check "sweep --format $f writes a table" '[ -s "$d/sweep é.$f" ] && [ ! -s "$tmp/err" ]'
done
json_ok "sweep --format json" "$d/sweep é.json"
csv_ok "sweep --format csv" "$d/sweep é.csv" 8
check "sweep --format md: every table row as wide as the header" \
	'awk -F"|" "/^\\|/ { if (!w) w = NF; if (NF != w) exit 1 }" "$d/sweep é.md"'
check "sweep --format latex: the tabular opens and closes" \
	'grep -q "begin{tabular}" "$d/sweep é.latex" && grep -q "end{tabular}" "$d/sweep é.latex"'
for i in 1 2 3; do
	"$bin" sweep "$study" --shard "$i/3" --format json >"$d/shard $i é.json" 2>"$tmp/err"
done
run_cmd sweep "$study" --merge "$d/shard 1 é.json" "$d/shard 2 é.json" "$d/shard 3 é.json" --format json
# The merged figures are derived again from the shards' printed times:
# equal to 1e-9 (the JSON's 12 digits), not to the last bit.
check "sweep --shard: the shards merge back to the whole sweep" \
	'[ $rc -eq 0 ] && jq -e -n --slurpfile a "$tmp/out" --slurpfile b "$d/sweep é.json" "
		def near(x; y): if (x | type) == \"number\" and (y | type) == \"number\"
			then ((x - y) | fabs) <= 1e-9 * ([(x | fabs), (y | fabs), 1e-300] | max) else x == y end;
		(\$a[0].cells | length) == (\$b[0].cells | length) and
		([\$a[0].cells, \$b[0].cells] | transpose | all(.[0] as \$x | .[1] as \$y |
			(\$x | keys) == (\$y | keys) and all(\$x | keys[]; near(\$x[.]; \$y[.]))))" >/dev/null'
if command -v gnuplot >/dev/null 2>&1; then
	run_cmd sweep "$study" --plot "$d/plot é.svg"
	check "sweep --plot: an SVG document" '[ $rc -eq 0 ] && grep -q "</svg>" "$d/plot é.svg" && [ "$(ls "$d" | grep -c "plot é")" -eq 1 ]'
else
	skipped "sweep --plot: gnuplot is not installed"
fi

# validate: text, JSON, CSV.
run_cmd validate "$five" --format json
cp "$tmp/out" "$d/validate é.json"
json_ok "validate --format json" "$d/validate é.json"
run_cmd validate "$five" --format csv
cp "$tmp/out" "$d/validate é.csv"
csv_ok "validate --format csv" "$d/validate é.csv" 5

# calibrate: the cluster and framework profiles it writes load (predict
# with them gives the time calibrate reported after the fit for a run).
run_cmd calibrate --runs "$five" --cluster mosaicml-a100-40gb --fit gpu.gemm_efficiency_max,framework.layer_overhead \
	--output "$d/cluster é.yaml" --framework-output "$d/frame work é.yaml" --format json
cp "$tmp/out" "$d/calibrate é.json"
json_ok "calibrate --format json" "$d/calibrate é.json"
run_cmd predict --model mpt-7b --cluster "$d/cluster é.yaml" --framework "$d/frame work é.yaml" \
	--gpus 8 --global-batch 64 --allow-oom --format json
check "calibrate --output and --framework-output load back (predict uses them)" \
	'[ $rc -eq 0 ] && jq -e ".iteration_time_s > 0" "$tmp/out" >/dev/null'

# fit-logs: the GPU profile (--gemm) and the link block (--nccl-tests).
run_cmd fit-logs --gemm tests/data/gemm/h100-gemm.csv --gpu h100-sxm5-80gb --output "$d/gpu é.yaml"
printf 'name: t\nnodes: 1\ngpus_per_node: 8\ngpu: %s\nintra_node: {bandwidth: 450 GB/s}\ninter_node: {nics_per_node: 8, nic_bandwidth: 400 Gbit/s}\n' \
	"$d/gpu é.yaml" >"$d/gpu cluster é.yaml"
run_cmd predict "${base[@]:0:2}" --cluster "$d/gpu cluster é.yaml" --gpus 8 --global-batch 32 --format json
check "fit-logs --gemm --output loads back as a GPU profile" '[ $rc -eq 0 ] && jq -e ".iteration_time_s > 0" "$tmp/out" >/dev/null'
run_cmd fit-logs --nccl-tests tests/data/nccl/all_reduce_perf-2x8xh100.log --output "$d/link é.yaml"
{
	printf 'name: t\nnodes: 2\ngpus_per_node: 8\ngpu: h100-sxm5-80gb\nintra_node: {bandwidth: 450 GB/s}\n'
	grep -v '^#' "$d/link é.yaml"
} >"$d/link cluster é.yaml"
run_cmd predict "${base[@]:0:2}" --cluster "$d/link cluster é.yaml" --gpus 16 --global-batch 32 --format json
check "fit-logs --nccl-tests --output loads back in a cluster" '[ $rc -eq 0 ] && jq -e ".iteration_time_s > 0" "$tmp/out" >/dev/null'
run_cmd fit-logs --gemm tests/data/gemm/h100-gemm.csv --gpu h100-sxm5-80gb --format json
json_ok "fit-logs --format json" "$tmp/out"

# import: a Hugging Face config into a model profile that predict loads.
for hf in llama-3.1-8b gpt2 mixtral-8x7b; do
	run_cmd import "tests/data/hf/$hf.json" --output "$d/$hf é.yaml"
	run_cmd predict --model "$d/$hf é.yaml" --cluster selene --gpus 8 --global-batch 32 --allow-oom --format json
	check "import --output $hf loads back as a model" '[ $rc -eq 0 ] && jq -e ".iteration_time_s > 0" "$tmp/out" >/dev/null'
done

# profiles: every profile listed loads, by the name it is listed under.
"$bin" profiles >"$d/profiles é.txt" 2>"$tmp/err"
check "profiles: every listed model, cluster and framework loads by its name" '
	bad=""
	while read -r kind name; do
		case $kind in
		models) a=(--model "$name" --cluster selene) ;;
		clusters) a=(--model gpt-1.7b --cluster "$name") ;;
		frameworks) a=(--model gpt-1.7b --cluster selene --framework "$name") ;;
		*) continue ;;
		esac
		"$bin" predict "${a[@]}" --gpus 8 --global-batch 32 --allow-oom >/dev/null 2>"$tmp/perr"
		if grep -q "cannot open\|unknown\|:[0-9]*:[0-9]*:" "$tmp/perr"; then
			bad="$bad $kind/$name"
		fi
	done < <(awk "/^[a-z]+:\$/ { k = \$1; sub(/:/, \"\", k); next } { print k, \$1 }" "$d/profiles é.txt")
	[ -z "$bad" ] || { echo "do not load:$bad"; false; }'

# scripts/import-runs: the runs CSV it writes validates (a few rows).
if $have_py; then
	head -n 8 tests/data/shared-runs.csv >"$d/shared é.csv"
	scripts/import-runs "$d/shared é.csv" --out "$d/imported é" >/dev/null 2>"$tmp/err"
	run_cmd validate "$d/imported é/runs.csv" --format json
	check "scripts/import-runs: the runs CSV validates, every run" \
		'{ [ $rc -eq 0 ] || [ $rc -eq 4 ]; } && jq -e ".rows | length == 7" "$tmp/out" >/dev/null'
else
	skipped "scripts/import-runs: no python3"
fi

finish
