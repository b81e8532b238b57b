#!/usr/bin/env bash
# Lint every man page (groff -man -ww -z prints nothing) and run the
# EXAMPLES of each (jq's habit: documented examples are tests).
#
# In a page's EXAMPLES section, every line of a .nf block that starts
# with "plan-cli " is a command: it is run from the source tree with
# PLAN_CLI (words split at spaces, no quoting) and must exit 0. A
# command followed by the comment line
#     .\" example-output
# has its standard output in the next .nf ... .fi block, as roff source:
# the output with every "\" written "\e", every "-" written "\-" and a
# line that starts with "." or "'" preceded by "\&". The output must be
# the same, byte for byte, after two normalisations: trailing blanks are
# dropped (editors trim them from the page), and the time a search took,
# the last figure of optimize's "search: ..., 0.036 s" line, reads
# "N s" on both sides (it is wall-clock time).
#
# When the model changes on purpose, rewrite the expected outputs with
#     tests/man-test.sh build/plan-cli . --update
# and read the diff of man/ before committing it.
#
# Every command page (man/plan-cli-COMMAND.1) has at least one checked
# output. Usage: man-test.sh PLAN_CLI SOURCE_ROOT [--update]
set -u
bin=$(realpath "$1")
root=$2
update=${3:-}
cd "$root" || exit 1
. "$(dirname "$(realpath "$0")")/cli/harness.sh"
export LC_ALL=C
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The output of a command as the page writes it (see above).
roff_escape() {
	sed -e 's/[[:space:]]*$//' -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}
# Both sides of the comparison pass through this.
normalise() {
	sed -e 's/[[:space:]]*$//' -e '/^search:/s/, [0-9][0-9.e+]* s$/, N s/'
}

pages=(man/*.[1-8])
for page in "${pages[@]}"; do
	out=$(groff -man -ww -z "$page" 2>&1)
	if [ -z "$out" ]; then ok "lint $page"; else bad "lint $page: $out"; fi
done

# extract PAGE DIR: DIR/cmd.K holds the K-th command of PAGE's EXAMPLES
# and, when its output is given, DIR/exp.K that output (roff source).
extract() {
	awk -v dir="$2" '
		/^\.SH / { ex = ($0 ~ /^\.SH EXAMPLES/); next }
		!ex { next }
		/^\.\\" example-output/ { want = k; next }
		/^\.nf/ { nf = 1; if (want) { out = dir "/exp." want; printf "" >out; collecting = 1 } ; next }
		/^\.fi/ { nf = 0; if (collecting) { close(out); collecting = 0; want = 0 }; next }
		collecting { print >out; next }
		nf && /^plan-cli / { k++; f = dir "/cmd." k; print >f; close(f) }
	' "$1"
}

changed=0
for page in "${pages[@]}"; do
	name=$(basename "$page")
	dir=$tmp/$name
	mkdir -p "$dir"
	extract "$page" "$dir"
	cmds=$(ls "$dir" | grep -c '^cmd\.')
	checked=$(ls "$dir" | grep -c '^exp\.')
	case $name in
	plan-cli-*.1)
		check "$name: EXAMPLES has commands, $checked of $cmds with their output" '[ "$cmds" -gt 0 ] && [ "$checked" -gt 0 ]'
		;;
	*)
		[ "$cmds" -eq 0 ] && continue
		;;
	esac
	k=1
	while [ -f "$dir/cmd.$k" ]; do
		line=$(cat "$dir/cmd.$k")
		read -r -a words <<<"${line#plan-cli }"
		if "$bin" "${words[@]}" >"$dir/out.$k" 2>"$dir/err.$k"; then
			if [ -f "$dir/exp.$k" ]; then
				roff_escape <"$dir/out.$k" >"$dir/act.$k"
				if diff <(normalise <"$dir/exp.$k") <(normalise <"$dir/act.$k") >"$dir/diff.$k"; then
					ok "$name example output: $line"
				elif [ "$update" = --update ]; then
					changed=1
					ok "$name example output: $line (updated)"
				else
					bad "$name example output: $line (the page's (<) and the output (>) differ; if the change is meant, run tests/man-test.sh PLAN_CLI . --update)"
					diag "$(head -40 "$dir/diff.$k")"
				fi
			else
				ok "$name example: $line"
			fi
		else
			bad "$name example: $line: $(head -c 300 "$dir/err.$k")"
		fi
		k=$((k + 1))
	done
	# --update: put each output in place of the page's (the block after
	# the K-th command's marker), keeping everything else.
	if [ "$update" = --update ] && [ "$checked" -gt 0 ]; then
		awk -v dir="$dir" '
			/^\.SH / { ex = ($0 ~ /^\.SH EXAMPLES/) }
			ex && /^\.\\" example-output/ { want = k; print; next }
			ex && /^\.nf/ { nf = 1; print
				if (want) { f = dir "/act." want
					if ((getline l <f) > 0) { print l; while ((getline l <f) > 0) print l; skipping = 1 }
					close(f) }
				next }
			ex && /^\.fi/ { nf = 0; skipping = 0; want = 0; print; next }
			skipping { next }
			ex && nf && /^plan-cli / { k++ }
			{ print }
		' "$page" >"$dir/page" && cat "$dir/page" >"$page"
	fi
done
[ "$changed" = 1 ] && diag "updated the example outputs of man/: review 'git diff man/'"
finish
