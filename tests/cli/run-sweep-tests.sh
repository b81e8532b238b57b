#!/usr/bin/env bash
# Black-box tests of `plan-cli sweep`. Usage: run-sweep-tests.sh PLAN_CLI SOURCE_ROOT
# UPDATE_GOLDEN=1 rewrites tests/cli/golden/sweep-small.* from the current binary.
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"
study=tests/data/study-small.yaml

# Golden output of every format.
for f in md csv latex json; do
	ext=$f
	[ "$f" = latex ] && ext=tex
	"$bin" sweep "$study" --format "$f" >"$tmp/out.$ext" 2>"$tmp/err"
	if [ -n "${UPDATE_GOLDEN:-}" ]; then
		cp "$tmp/out.$ext" "tests/cli/golden/sweep-small.$ext"
	fi
	check "golden $f" 'diff -u "tests/cli/golden/sweep-small.$ext" "$tmp/out.$ext" >"$tmp/diff" && [ ! -s "$tmp/err" ]'
	[ -s "$tmp/diff" ] && head -20 "$tmp/diff"
done

# CSV round-trips through a CSV parser: 9 records of 7 fields, numbers intact.
check "CSV parses (RFC 4180) with the same cells as JSON" 'python3 - "$tmp/out.csv" "$tmp/out.json" <<"PY"
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
cells = json.load(open(sys.argv[2]))["cells"]
assert len(rows) == 1 + len(cells) == 9, len(rows)
assert all(len(r) == len(rows[0]) == 7 for r in rows)
for r, c in zip(rows[1:], cells):
    assert abs(float(r[3]) - c["iteration_time_s"]) <= 1e-8 * c["iteration_time_s"], (r, c)
PY'

# LaTeX compiles in a document with booktabs, where pdflatex exists.
if command -v pdflatex >/dev/null 2>&1; then
	printf '\\documentclass{article}\n\\usepackage{booktabs,graphicx}\n\\begin{document}\n\\input{table}\n\\end{document}\n' >"$tmp/doc.tex"
	cp "$tmp/out.tex" "$tmp/table.tex"
	check "LaTeX table compiles" '(cd "$tmp" && pdflatex -interaction=nonstopmode -halt-on-error doc.tex >/dev/null 2>&1) && [ -s "$tmp/doc.pdf" ]'
else
	skipped "LaTeX compile: pdflatex is not installed (apt-get install texlive-latex-recommended)"
fi
check "LaTeX escapes % and &" 'grep -q "50\\\\% \\\\& more" "$tmp/out.tex"'

# Plots, where gnuplot exists.
if command -v gnuplot >/dev/null 2>&1; then
	for e in svg png pdf; do
		"$bin" sweep "$study" --plot "$tmp/plot.$e" 2>"$tmp/err"
		check "plot .$e is written" '[ -s "$tmp/plot.$e" ] && [ ! -s "$tmp/err" ]'
	done
	check "svg names the axes" 'grep -q "NIC bandwidth (Gbit/s)" "$tmp/plot.svg" && grep -q "Iteration time (s)" "$tmp/plot.svg"'
	# Every numeric metric gets a panel; cells that do not fit get open markers and a legend line.
	"$bin" sweep --model gpt-1.7b,gpt-18.4b --cluster selene --gpus 8,16 --global-batch 64 \
		--metric iteration_time,mfu,fits,plan --plot "$tmp/multi.svg" 2>"$tmp/err"
	check "a plot of two numeric metrics has two panels" '[ ! -s "$tmp/err" ] && grep -q "Iteration time (s)" "$tmp/multi.svg" && grep -q "MFU (%)" "$tmp/multi.svg"'
	check "cells that do not fit are marked in the plot" 'grep -q "open: does not fit" "$tmp/multi.svg"'
	"$bin" sweep --model gpt-1.7b --cluster selene --gpus 8,16 --global-batch 64 --plot "$tmp/fit.svg" 2>"$tmp/err"
	check "no legend line for non-fitting cells when every cell fits" '[ -s "$tmp/fit.svg" ] && ! grep -q "does not fit" "$tmp/fit.svg"'
	"$bin" sweep --model gpt-1.7b --cluster selene --gpus 8,16 --global-batch 64 --metric fits,plan --plot "$tmp/none.svg" >/dev/null 2>"$tmp/err"
	check "a plot of fits and plan alone is refused, saying why" '[ $? -eq 2 ] && grep -q "needs a numeric metric" "$tmp/err" && [ ! -e "$tmp/none.svg" ]'
else
	skipped "plots: gnuplot is not installed"
fi
"$bin" sweep "$study" --plot "$tmp/plot.gif" >/dev/null 2>"$tmp/err"
check "--plot .gif is a usage error" '[ $? -eq 2 ] && grep -q "svg, .png or .pdf" "$tmp/err"'

# A plot onto a FIFO or a folder is refused (the rename would replace it); the FIFO stays one.
mkfifo "$tmp/fifo.svg" && mkdir "$tmp/dir.svg"
for t in fifo dir; do
	"$bin" sweep "$study" --plot "$tmp/$t.svg" >/dev/null 2>"$tmp/err"
	rc=$?
	check "--plot onto a $t: exit 1, refused" '[ $rc -eq 1 ] && grep -qE "cannot write: (not a regular file|[Ii]s a directory)" "$tmp/err"'
done
check "the FIFO is still a FIFO" '[ -p "$tmp/fifo.svg" ]'

# A plot into a missing folder: one line, gnuplot never runs (exit 1).
"$bin" sweep "$study" --plot "$tmp/no-such-folder/plot.svg" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "--plot into a missing folder: one error line" '[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF "no-such-folder/plot.svg: cannot write: No such file or directory" "$tmp/err"'

# gnuplot stand-ins: one that fails saying 300 lines, one that hangs until interrupted.
mkdir "$tmp/fakebin" "$tmp/plots"
printf '#!/bin/sh\ncat >/dev/null\nseq 300 | sed "s/^/gnuplot says /"\nexit 1\n' >"$tmp/fakebin/gnuplot"
chmod +x "$tmp/fakebin/gnuplot"
PATH="$tmp/fakebin:$PATH" "$bin" sweep "$study" --plot "$tmp/plots/plot.svg" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a failing gnuplot: one error line quoting it, no file left" '[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF "gnuplot failed (status 1): gnuplot says 1" "$tmp/err" && [ -z "$(ls -A "$tmp/plots")" ]'
# (it writes half a plot where it is told to, then interrupts plan-cli, its
# parent: the signal comes while gnuplot runs, however slow the machine;
# it then exits 0, so that a plan-cli that ignored the signal would keep
# the half plot)
printf '#!/bin/sh\nsed -n "s/^set output \\"\\(.*\\)\\"$/\\1/p" | while read -r f; do echo half >"$f"; done\nkill -INT $PPID\nexit 0\n' >"$tmp/fakebin/gnuplot"
PATH="$tmp/fakebin:$PATH" timeout 120 "$bin" sweep "$study" --plot "$tmp/plots/plot.svg" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "SIGINT during --plot leaves neither the plot nor a temporary file" '[ $rc -eq 130 ] && [ -z "$(ls -A "$tmp/plots")" ]'
# A gnuplot that outlives the signal: it sends SIGTERM to plan-cli, then
# keeps rewriting its file (for at most 300 rounds). plan-cli stops it and
# waits for it before removing the temporary file, so neither survives.
printf '#!/bin/sh\necho $$ >"%s"\nf=$(sed -n "s/^set output \\"\\(.*\\)\\"$/\\1/p")\necho half >"$f"\nkill -TERM $PPID\nround=0\nwhile [ $round -lt 300 ]; do echo half >"$f"; round=$((round + 1)); sleep 1; done\n' \
	"$tmp/gnuplot.pid" >"$tmp/fakebin/gnuplot"
PATH="$tmp/fakebin:$PATH" timeout 600 "$bin" sweep "$study" --plot "$tmp/plots/plot.svg" >"$tmp/out" 2>"$tmp/err"
rc=$?
gpid=$(cat "$tmp/gnuplot.pid" 2>/dev/null)
check "SIGTERM during --plot stops gnuplot, leaves no file" '[ $rc -eq 143 ] && [ -n "$gpid" ] && ! kill -0 "$gpid" 2>/dev/null && [ -z "$(ls -A "$tmp/plots")" ]'
[ -n "$gpid" ] && kill "$gpid" 2>/dev/null

# Shards merge into the whole.
for i in 1 2 3; do
	"$bin" sweep "$study" --shard "$i/3" --format json >"$tmp/part$i.json"
done
"$bin" sweep "$study" --merge "$tmp/part1.json" "$tmp/part2.json" "$tmp/part3.json" --format md >"$tmp/merged.md"
check "3 shards merge into the same table" 'diff -u "$tmp/out.md" "$tmp/merged.md"'
check "a shard holds a third of the cells" '[ "$(jq ".cells | length" "$tmp/part1.json")" -eq 3 ]'
# A shard is input like any other: every value is checked (exit 3, one line naming the file).
bad_shard() { # name, jq edit of part1.json, expected substring
	jq "$2" "$tmp/part1.json" >"$tmp/$1.json"
	"$bin" sweep "$study" --merge "$tmp/$1.json" "$tmp/part2.json" "$tmp/part3.json" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	want=$3
	check "bad shard $1" '[ $rc -eq 3 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF -- "$want" "$tmp/err"'
}
bad_shard negative-time '.cells[0].iteration_time_s = -1' "negative-time.json: cell 0: 'iteration_time_s' is missing or out of range"
bad_shard string-time '.cells[1].iteration_time_s = "2.5"' "'iteration_time_s' is missing or out of range"
bad_shard zero-gpus '.cells[0].gpus = 0' "'gpus' is missing or out of range"
bad_shard negative-mfu '.cells[0].mfu = -0.5' "'mfu' is missing or out of range"
bad_shard huge-time '.cells[0].iteration_time_s = 1e308' "'iteration_time_s' is missing or out of range"
bad_shard mfu-above-8 '.cells[0].mfu = 8.5' "'mfu' is missing or out of range"
bad_shard cell-out-of-range '.cells[0].cell = 99' "'cell' must be a cell number from 0 to 7"
bad_shard cell-not-a-number '.cells[0].cell = "0"' "'cell' must be a cell number"
bad_shard ok-not-boolean '.cells[0].ok = 1' "'ok' is missing or out of range"
bad_shard plan-not-string '.cells[0].plan = 3' "'plan' is missing or out of range"

# Only regular files are read: a FIFO never blocks, a folder is named as one
# (exit 1). (timeout 120: a hang guard, not a speed check.)
mkfifo "$tmp/fifo.yaml"
timeout 120 "$bin" sweep "$tmp/fifo.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a FIFO as the study: exit 1 at once" '[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF "fifo.yaml: not a regular file" "$tmp/err"'
timeout 120 "$bin" sweep "$study" --merge "$tmp/fifo.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a FIFO as a --merge shard: exit 1 at once" '[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] && grep -qF "fifo.yaml: not a regular file" "$tmp/err"'
mkdir "$tmp/dir.yaml"
timeout 120 "$bin" sweep "$tmp/dir.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a folder as the study: exit 1, 'is a directory'" '[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF "dir.yaml: is a directory" "$tmp/err"'
"$bin" sweep "$study" --threads 1 --format md >"$tmp/one.md"
check "one thread gives the same table" 'diff -u "$tmp/out.md" "$tmp/one.md"'

# Axes on the command line.
"$bin" sweep --model gpt-1.7b,gpt-18.4b --cluster selene --gpus 32,256 --tp 8 --global-batch 512 \
	--metric iteration_time,mfu --format csv >"$tmp/inline.csv" 2>"$tmp/err"
check "inline axes: 4 cells" '[ $? -eq 0 ] && [ "$(wc -l <"$tmp/inline.csv")" -eq 5 ]'
"$bin" sweep "$study" --model gpt-1.7b --format json >"$tmp/override.json"
check "a command-line axis replaces the study's" '[ "$(jq ".cells | length" "$tmp/override.json")" -eq 4 ]'

# Optimize cells.
"$bin" sweep --mode optimize --model gpt-1.7b --cluster selene --gpus 8,16 --global-batch 64 \
	--metric iteration_time,plan --format json >"$tmp/opt.json" 2>"$tmp/err"
check "optimize cells report their plan" 'jq -e "[.cells[].plan | length > 0] | all" "$tmp/opt.json" >/dev/null'

# The GEMM wave loss (issue 25): predict's details.gemm_wave_loss_s, per
# cell, in JSON always and in a table as the gemm_wave_loss metric; a shard
# without the key (an older plan-cli) leaves the metric empty.
"$bin" predict --model gpt-1.7b --cluster selene --gpus 64 --tp 8 --global-batch 1536 --format json \
	>"$tmp/wl-predict.json" 2>"$tmp/err"
"$bin" sweep --model gpt-1.7b --cluster selene --gpus 64,128 --tp 8 --global-batch 1536 --format json \
	>"$tmp/wl.json" 2>"$tmp/err"
check "sweep JSON: gemm_wave_loss_s is predict's details.gemm_wave_loss_s" \
	'w=$(jq ".details.gemm_wave_loss_s" "$tmp/wl-predict.json") && [ "$(jq ".cells[0].gemm_wave_loss_s" "$tmp/wl.json")" = "$w" ] && jq -e "$w > 0 and .cells[1].gemm_wave_loss_s > 0" "$tmp/wl.json" >/dev/null'
"$bin" sweep --model gpt-1.7b --cluster selene --gpus 64,128 --tp 8 --global-batch 1536 \
	--metric iteration_time,gemm_wave_loss --format csv >"$tmp/wl.csv" 2>"$tmp/err"
check "sweep CSV: the gemm_wave_loss metric is a gemm_wave_loss_s column" \
	'[ "$(head -1 "$tmp/wl.csv" | tr -d "\r")" = "\"gpus\",\"iteration_time_s\",\"gemm_wave_loss_s\"" ] && [ "$(sed -n 2p "$tmp/wl.csv" | cut -d, -f3 | tr -d "\"\r")" = "$(printf "%.9g" "$(jq ".details.gemm_wave_loss_s" "$tmp/wl-predict.json")")" ]'
jq "del(.cells[].gemm_wave_loss_s)" "$tmp/wl.json" >"$tmp/wl-old.json"
"$bin" sweep --model gpt-1.7b --cluster selene --gpus 64,128 --tp 8 --global-batch 1536 --merge "$tmp/wl-old.json" \
	--metric iteration_time,gemm_wave_loss --format csv >"$tmp/wl-old.csv" 2>"$tmp/err"
check "a shard without gemm_wave_loss_s merges with the metric empty" \
	'[ $? -eq 0 ] && [ "$(sed -n 2p "$tmp/wl-old.csv" | cut -d, -f3 | tr -d "\r")" = "\"\"" ]'
jq ".cells[0].gemm_wave_loss_s = -1" "$tmp/wl.json" >"$tmp/wl-bad.json"
"$bin" sweep --model gpt-1.7b --cluster selene --gpus 64,128 --tp 8 --global-batch 1536 --merge "$tmp/wl-bad.json" \
	>"$tmp/out" 2>"$tmp/err"
check "bad shard: a negative gemm_wave_loss_s" \
	'[ $? -eq 3 ] && grep -qF "'"'"'gemm_wave_loss_s'"'"' is missing or out of range" "$tmp/err"'
"$bin" sweep --mode optimize --model gpt-1.7b --cluster selene --gpus 8 --global-batch 64 \
	--metric plan,gemm_wave_loss --format csv >"$tmp/wl-opt.csv" 2>"$tmp/err"
check "optimize cells: the best plan's wave loss" \
	'[ $? -eq 0 ] && [ -n "$(sed -n 2p "$tmp/wl-opt.csv" | cut -d, -f3 | tr -d "\"\r")" ]'

# Bad studies: one line, file:line:col, exit 3.
bad_study() { # name, expected substring, yaml
	printf '%s' "$3" >"$tmp/$1.yaml"
	"$bin" sweep "$tmp/$1.yaml" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	want=$2
	check "bad study $1" '[ $rc -eq 3 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF -- "$want" "$tmp/err"'
}
bad_study unknown-key "$tmp/unknown-key.yaml:2:1: unknown key 'axis'; did you mean 'axes'?" $'name: x\naxis:\n  model: [a]\n'
bad_study unknown-axis "unknown-axis.yaml:3:3: unknown axis 'modle'; did you mean 'model'?" $'name: x\naxes:\n  modle: [a]\n'
bad_study unknown-metric "unknown-metric.yaml:4:11: unknown metric 'speed'; did you mean 'speedup'?" $'axes:\n  model: gpt-1.7b\n  cluster: selene\nmetrics: [speed]\n'
bad_study zip-length "zip-length.yaml:4:3: zipped axis 'tp' has 1 values, the others 2" $'axes:\n  model: gpt-1.7b\n  gpus: [8, 16]\n  tp: [1]\n  cluster: selene\nzip: [gpus, tp]\n'
bad_study bad-yaml "bad-yaml.yaml:3:1: invalid YAML" $'axes:\n  model: [a\n'
bad_study no-model "the study names no model" $'axes:\n  cluster: selene\n'
bad_study bad-mode "bad-mode.yaml:1:7: unknown value 'fast' for 'mode'" $'mode: fast\n'
"$bin" sweep "$tmp/nonexistent.yaml" >/dev/null 2>"$tmp/err"
check "a missing study file exits 1" '[ $? -eq 1 ]'
"$bin" sweep --model gpt-1.7b --cluster selene --global-batch 8 --shard 4/3 >/dev/null 2>"$tmp/err"
check "--shard 4/3 is a usage error" '[ $? -eq 2 ]'
"$bin" sweep --model gpt-1.7b --cluster selene --gpus 32 --global-batch 512 --zero 3 \
	--framework megatron-lm,pytorch-fsdp,deepspeed-2021 --format csv >"$tmp/fw.csv" 2>"$tmp/err"
check "a framework axis: one row each, a framework column" '[ $? -eq 0 ] && [ "$(wc -l <"$tmp/fw.csv")" -eq 4 ] && head -1 "$tmp/fw.csv" | grep -q "^\"framework\"" && grep -q "deepspeed-2021" "$tmp/fw.csv"'
"$bin" sweep --model gpt-1.7b --cluster selene --global-batch 8 --framework nosuch >/dev/null 2>"$tmp/err"
check "an unknown framework names the bundled ones" '[ $? -ne 0 ] && grep -q "megatron-lm" "$tmp/err"'

# Profiles given as paths are shown by name in tables and legends; CSV keeps the value given.
"$bin" sweep --model "$root/models/gpt-1.7b.yaml,gpt-3.6b" --cluster selene --gpus 32 --global-batch 512 \
	--recompute full >"$tmp/paths.md" 2>"$tmp/err"
check "a model given as a path is named in the table" '[ $? -eq 0 ] && grep -q "^| gpt-1.7b |" "$tmp/paths.md" && ! grep -q "models/" "$tmp/paths.md"'
"$bin" sweep --model "$root/models/gpt-1.7b.yaml,gpt-3.6b" --cluster selene --gpus 32 --global-batch 512 \
	--recompute full --format csv >"$tmp/paths.csv" 2>"$tmp/err"
check "CSV keeps the path given" 'grep -qF "\"$root/models/gpt-1.7b.yaml\"" "$tmp/paths.csv"'

# A cell that does not fit is marked in Markdown and LaTeX unless a Fits column says so.
"$bin" sweep --model gpt-1.7b,gpt-18.4b --cluster selene --gpus 32 --global-batch 512 >"$tmp/fit.md" 2>"$tmp/err"
check "a cell that does not fit is marked in Markdown" 'grep -q "^| gpt-18.4b | 20.221 † |$" "$tmp/fit.md" && grep -q "^| gpt-1.7b | 2.116 |$" "$tmp/fit.md" && grep -q "^† does not fit" "$tmp/fit.md"'
"$bin" sweep --model gpt-1.7b,gpt-18.4b --cluster selene --gpus 32 --global-batch 512 --format latex >"$tmp/fit.tex" 2>"$tmp/err"
check "and in LaTeX, with a note under the table" 'grep -qF "20.221\$^\\dagger\$" "$tmp/fit.tex" && grep -qF "does not fit in the GPU" "$tmp/fit.tex"'
"$bin" sweep --model gpt-1.7b,gpt-18.4b --cluster selene --gpus 32 --global-batch 512 --metric iteration_time,fits >"$tmp/fit2.md" 2>"$tmp/err"
check "no mark beside a Fits column" '! grep -q "†" "$tmp/fit2.md"'

# Optimize cells on two threads (their MILPs taking turns in GLPK) find what one thread finds.
o=(--mode optimize --model gpt-1.7b,gpt-7.5b --cluster selene --gpus 32,64,128 --global-batch 512 --format csv)
"$bin" sweep "${o[@]}" --threads 1 >"$tmp/o1.csv" 2>"$tmp/err1"
"$bin" sweep "${o[@]}" --threads 2 >"$tmp/o2.csv" 2>"$tmp/err2"
check "sweep --mode optimize: --threads 2 gives --threads 1's table" \
	'[ -s "$tmp/o1.csv" ] && [ ! -s "$tmp/err2" ] && cmp -s "$tmp/o1.csv" "$tmp/o2.csv"'

# Flash attention: each cell's GPU decides unless the study says (A100: on), as in predict.
"$bin" sweep --model gpt-1.7b --cluster selene,aws-p3dn --gpus 32 --global-batch 512 --format csv >"$tmp/fa.csv" 2>"$tmp/err"
for c in selene aws-p3dn; do
	want=$("$bin" predict --model gpt-1.7b --cluster $c --gpus 32 --global-batch 512 --allow-oom --format json 2>/dev/null | jq .iteration_time_s)
	got=$(grep "^\"$c\"" "$tmp/fa.csv" | cut -d, -f2 | tr -d '"')
	check "a sweep cell on $c uses the GPU's flash-attention default, as predict ($got vs $want s)" \
		"jq -en --argjson a '${got:-0}' --argjson b '${want:-1}' '((\$a - \$b) | fabs) <= 1e-6 * \$b' >/dev/null"
done
printf 'axes:\n  model: gpt-1.7b\n  cluster: selene\n  gpus: 32\nplan:\n  global_batch: 512\n  flash_attention: false\n' >"$tmp/nofa.yaml"
got=$("$bin" sweep "$tmp/nofa.yaml" --format csv 2>"$tmp/err" | tail -1 | tr -d '"\r' | awk -F, '{print $NF}')
want=$("$bin" predict --model gpt-1.7b --cluster selene --gpus 32 --global-batch 512 --no-flash-attention --format json | jq .iteration_time_s)
check "flash_attention: false in a study turns it off ($got vs $want s)" \
	"jq -en --argjson a '${got:-0}' --argjson b '${want:-1}' '((\$a - \$b) | fabs) <= 1e-6 * \$b' >/dev/null"
got2=$("$bin" sweep --model gpt-1.7b --cluster selene --gpus 32 --global-batch 512 --no-flash-attention --format csv 2>"$tmp/err" | tail -1 | tr -d '"\r' | awk -F, '{print $NF}')
check "sweep --no-flash-attention is the study's flash_attention: false ($got2 vs $got s)" '[ -n "$got2" ] && [ "$got2" = "$got" ]'
printf 'axes:\n  model: gpt-1.7b\n  cluster: selene\n  gpus: 32\nplan:\n  global_batch: 512\n  flash_attention: false\n  tp: 2\n' >"$tmp/sw.yaml"
got3=$("$bin" sweep "$tmp/sw.yaml" --flash-attention --sequence-parallel --tp-overlap --format csv 2>"$tmp/err" | tail -1 | tr -d '"\r' | awk -F, '{print $NF}')
want3=$("$bin" predict --model gpt-1.7b --cluster selene --gpus 32 --global-batch 512 --tp 2 --flash-attention \
	--sequence-parallel --tp-overlap --format json | jq .iteration_time_s)
check "sweep's switches override the study's: flash on, SP, TP overlap, as predict ($got3 vs $want3 s)" \
	"jq -en --argjson a '${got3:-0}' --argjson b '${want3:-1}' '((\$a - \$b) | fabs) <= 1e-6 * \$b' >/dev/null"

# A cell predict would refuse says why, as predict does; it is not "does not fit".
"$bin" sweep --model gpt-1.7b --cluster dgx-h100 --gpus 32 --global-batch 64 --pp 2 --vpp 1,5 >"$tmp/out" 2>"$tmp/err"
check "a cell that cannot run gives predict's reason, not 'does not fit'" \
	'[ $? -eq 0 ] && grep -q "| 5 | cannot run: layers (24) are not divisible by pp x vpp (2 x 5); --pp-split" "$tmp/out" && ! grep -q "does not fit" "$tmp/out"'
# MiCS implies ZeRO-3 in a cell as in predict.
"$bin" sweep --model gpt-1.7b --cluster dgx-h100 --gpus 32 --global-batch 64 --mics-group 8 --format json >"$tmp/out" 2>"$tmp/err"
check "--mics-group 8 alone: a MiCS cell (ZeRO-3), as predict --mics-group 8" \
	'jq -e ".cells[0].ok and .cells[0].fits and (.cells[0].plan | test(\"MiCS\"))" "$tmp/out" >/dev/null'

# A '|' in a cell's text is escaped in the Markdown table: a cluster
# profile named with one keeps the row's columns (one more '|' would add
# a cell).
cp "$root/clusters/selene.yaml" "$tmp/a|b.yaml"
"$bin" sweep --model gpt-1.7b --cluster "$tmp/a|b.yaml,selene" --gpus 32 --global-batch 64 --format md >"$tmp/out" 2>"$tmp/err"
check "Markdown: a '|' in a cell is written '\\|'" \
	'[ $? -eq 0 ] && grep -qF "| a\\|b |" "$tmp/out" && [ "$(sed -n 3p "$tmp/out" | sed "s/\\\\|//g" | tr -cd "|" | wc -c)" -eq "$(sed -n 1p "$tmp/out" | tr -cd "|" | wc -c)" ]'

# Paper metrics (issue 26): tokens/s per GPU, days to train on
# train_tokens and their GPU-hours; each from the cell's own figures:
# days = tokens / (tokens/s) / 86400, GPU-hours = days x 24 x GPUs.
"$bin" sweep --model gpt-1.7b --cluster dgx-h100 --gpus 8,16 --global-batch 64 --train-tokens 3e11 \
	--metric tokens_per_s_per_gpu,train_days,gpu_hours --format json >"$tmp/tt.json" 2>"$tmp/err"
check "tokens_per_s_per_gpu, train_days and gpu_hours in JSON agree with tokens_per_s" \
	'[ $? -eq 0 ] && jq -e ".train_tokens == 3e11 and (.cells | length) == 2 and all(.cells[];
		((.tokens_per_s_per_gpu - .tokens_per_s / .gpus) | fabs) < 1e-9 * .tokens_per_s_per_gpu and
		((.train_days - 3e11 / .tokens_per_s / 86400) | fabs) < 1e-9 * .train_days and
		((.gpu_hours - .train_days * 24 * .gpus) | fabs) < 1e-9 * .gpu_hours)" "$tmp/tt.json" >/dev/null'
"$bin" sweep --model gpt-1.7b --cluster dgx-h100 --gpus 8,16 --global-batch 64 --train-tokens 3e11 \
	--metric train_days,gpu_hours --format csv >"$tmp/tt.csv" 2>"$tmp/err"
check "CSV: train_days and gpu_hours columns" '[ $? -eq 0 ] && head -1 "$tmp/tt.csv" | grep -qF \"gpus\",\"train_days\",\"gpu_hours\"'
fails_cmd "train_days without train_tokens" 3 "the metric 'train_days' needs the tokens to train on" \
	sweep --model gpt-1.7b --cluster dgx-h100 --gpus 8 --global-batch 64 --metric train_days
fails_cmd "--train-tokens 0" 2 "--train-tokens expects a number of tokens from 1 to" \
	sweep --model gpt-1.7b --cluster dgx-h100 --gpus 8 --global-batch 64 --train-tokens 0
printf 'axes:\n  model: gpt-1.7b\n  cluster: selene\n  gpus: 32\nplan:\n  global_batch: 512\ntrain_tokens: lots\n' >"$tmp/tt.yaml"
fails_cmd "a study's train_tokens that is not a number: file:line:col" 3 "tt.yaml:7:15: 'train_tokens' must be a number" \
	sweep "$tmp/tt.yaml"

# Weak- and strong-scaling efficiency from the first cell that fits: the
# 8- and 16-GPU cells of Llama 2 70B at TP 8 do not fit, the 32-GPU one
# is the reference (100 %).
"$bin" sweep --model llama2-70b --cluster dgx-h100 --gpus 8,16,32,64 --global-batch 64 --tp 8 --zero 1 \
	--recompute full --format json >"$tmp/ws.json" 2>"$tmp/err"
check "scaling efficiency from the first cell that fits (32 GPUs)" \
	'jq -e "[.cells[].fits] == [false, false, true, true] and .cells[2].weak_scaling_efficiency == 1 and
		.cells[2].strong_scaling_efficiency == 1 and .cells[3].weak_scaling_efficiency < 1 and
		.cells[0].weak_scaling_efficiency > 1" "$tmp/ws.json" >/dev/null'
# The plan column names every degree: CP (and its method), EP, SP.
"$bin" sweep --model llama2-7b --cluster dgx-h100 --gpus 16 --global-batch 64 --tp 2 --cp 2 --sequence-parallel \
	--metric plan --format csv >"$tmp/cp.csv" 2>"$tmp/err"
check "the plan column names CP and SP" '[ $? -eq 0 ] && tail -1 "$tmp/cp.csv" | grep -q "tp 2 pp 1 dp 4 cp 2 ring mb 1 none sp"'

# Log axes (issue 26): by default where the values span a decade (time
# over global batches of 64-4096: both axes), linear where they do not.
if command -v gnuplot >/dev/null 2>&1; then
	for l in auto xy none; do
		"$bin" sweep --model gpt-1.7b --cluster selene --gpus 32 --global-batch 64,256,1024,4096 \
			--plot "$tmp/log-$l.svg" --plot-log "$l" 2>"$tmp/err"
	done
	for l in auto none; do
		"$bin" sweep --model gpt-1.7b --cluster selene --gpus 32 --global-batch 64,128 \
			--plot "$tmp/lin-$l.svg" --plot-log "$l" 2>"$tmp/err"
	done
	check "--plot-log auto: log axes over a decade, linear within one" \
		'cmp -s "$tmp/log-auto.svg" "$tmp/log-xy.svg" && ! cmp -s "$tmp/log-auto.svg" "$tmp/log-none.svg" &&
		 cmp -s "$tmp/lin-auto.svg" "$tmp/lin-none.svg"'
else
	skipped "log axes: gnuplot is not installed"
fi
fails_cmd "--plot-log: an unknown value lists the valid ones" 2 "auto, none, x, y, xy" \
	sweep "$study" --plot-log z

# LaTeX that fits the column (issue 26): compact headers, \small, and a
# tabular shrunk to the line when wider; pdflatex, where it exists, finds
# no overfull box in an article for any bundled study (their natural
# widths were 354-987 pt for a 345 pt line).
"$bin" sweep "$root/studies/megatron-weak-scaling.yaml" --format latex >"$tmp/w.tex" 2>"$tmp/err"
check "latex: shrunk to the line when wider, compact headers" \
	'grep -qF "\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%" "$tmp/w.tex" &&
	 grep -qF "Time (s)" "$tmp/w.tex" && grep -qF "booktabs,graphicx" "$tmp/w.tex"'
"$bin" sweep "$root/studies/megatron-weak-scaling.yaml" --format latex --latex-fit page >"$tmp/p.tex" 2>"$tmp/err"
check "latex --latex-fit page: table*" 'grep -qF "\begin{table*}" "$tmp/p.tex" && grep -qF "\end{table*}" "$tmp/p.tex"'
"$bin" sweep "$root/studies/megatron-weak-scaling.yaml" --format latex --latex-fit none >"$tmp/n.tex" 2>"$tmp/err"
check "latex --latex-fit none: natural width, long headers" \
	'! grep -q resizebox "$tmp/n.tex" && grep -qF "Iteration time (s)" "$tmp/n.tex"'
if command -v pdflatex >/dev/null 2>&1 && kpsewhich booktabs.sty >/dev/null 2>&1; then
	overfull=""
	for st in "$root"/studies/*.yaml; do
		"$bin" sweep "$st" --format latex >"$tmp/tab.tex" 2>/dev/null || continue
		printf '\\documentclass{article}\\usepackage{booktabs,graphicx}\\begin{document}\n\\input{tab}\n\\end{document}\n' \
			>"$tmp/doc.tex"
		(cd "$tmp" && pdflatex -interaction=nonstopmode doc.tex >doc.out 2>&1)
		grep -q "Overfull \\\\hbox" "$tmp/doc.out" && overfull="$overfull $(basename "$st")"
		grep -q "^! " "$tmp/doc.out" && overfull="$overfull $(basename "$st")(error)"
	done
	check "latex: every bundled study's table fits an article's line${overfull:+ (not:$overfull)}" '[ -z "$overfull" ]'
else
	skipped "latex width: pdflatex or booktabs is not installed"
fi

# JSON keeps one type per field: a failed cell's gpus is a number too.
"$bin" sweep --model gpt-1.7b --cluster dgx-h100 --gpus 32,48 --global-batch 64 --pp 2 --vpp 1,5 --format json \
	>"$tmp/types.json" 2>"$tmp/err"
check "sweep JSON: gpus is a number in every cell, failed ones too" \
	'jq -e "([.cells[] | .gpus | type] | unique) == [\"number\"] and ([.cells[].ok] | index(false)) != null" "$tmp/types.json" >/dev/null'

# The power_limit axis (predict's --power-limit): each cell's GPU held at its
# limit. By hand, the H100 SXM5's rated 700 W: 350 W gives a clock of
# (350/700)^(1/3) = 0.7937, so the step slows, by less than 1/0.7937 = 1.26x
# (memory-bound work keeps its speed); 5 kW is above rated: the rated step.
pl=(sweep --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 8 --zero 3 --recompute selective)
"$bin" "${pl[@]}" --power-limit "350 W,700W,5kW" --format json >"$tmp/pl.json" 2>"$tmp/err"
check "sweep --power-limit: three cells, slower at 350 W by less than the clock, 5 kW as 700 W" \
	'jq -e "[.cells[].iteration_time_s] as [\$a, \$b, \$c] | \$a > \$b and \$a < \$b / 0.7937 and \$c == \$b
		and [.cells[].power_limit] == [\"350 W\", \"700W\", \"5kW\"]" "$tmp/pl.json" >/dev/null'
"$bin" "${pl[@]}" --power-limit 350W --format json >"$tmp/one.json" 2>/dev/null
"$bin" predict --model llama3-8b --cluster dgx-h100 --gpus 8 --global-batch 8 --zero 3 --recompute selective \
	--power-limit 350W --format json >"$tmp/pred.json" 2>/dev/null
check "a sweep cell at 350 W predicts as predict --power-limit 350W" \
	'[ "$(jq .cells[0].iteration_time_s "$tmp/one.json")" = "$(jq .iteration_time_s "$tmp/pred.json")" ]'
printf 'name: pl\naxes:\n  model: llama3-8b\n  cluster: dgx-h100\n  zero: [1, 3]\nplan:\n  power_limit: 10 W\n  gpus: 8\n  global_batch: 8\n' \
	>"$tmp/pl.yaml"
fails_cmd "a study's power_limit below a fifth of rated: file:line:col" 3 \
	"pl.yaml:7:16: cell 0: 'power_limit' 10 W is below a fifth of GPU 'H100-SXM5-80GB''s rated_power (700 W)" \
	sweep "$tmp/pl.yaml"
fails_cmd "sweep --power-limit without a unit" 3 "'power_limit': missing unit in '500' (valid units: W kW)" \
	"${pl[@]}" --power-limit 500

finish
