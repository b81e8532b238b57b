#!/usr/bin/env bash
# plan-cli-profiles(5) documents every key of every profile kind: check it
# against `plan-cli profiles --schema KIND`, which prints the schema tables
# the loaders read, so that the page cannot lag behind a new key.
# A key counts as documented when a .B or .BR line starts with it, bare
# (the GPU keys, documented once for inline and named GPUs) or as its
# dotted path (inter_node.latency, moe.first_dense_layers).
# Usage: man-keys.sh PLAN_CLI SOURCE_ROOT
set -u
bin=$1
root=$2
page=$root/man/plan-cli-profiles.5
. "$(dirname "$(realpath "$0")")/cli/harness.sh"

for kind in model cluster gpu framework compressor; do
	if ! schema=$("$bin" profiles --schema "$kind" 2>&1); then
		bad "plan-cli profiles --schema $kind: $schema"
		continue
	fi
	# Indented keys are children of the last key one level up.
	keys=$(printf '%s\n' "$schema" | awk '
		/^ *[a-z_]+:/ {
			match($0, /^ */); depth = RLENGTH / 2
			key = $1; sub(/:.*/, "", key)
			path[depth] = key
			full = key
			for (d = depth - 1; d >= 0; d--) full = path[d] "." full
			print full
		}')
	[ -n "$keys" ] || { bad "--schema $kind lists no keys"; continue; }
	missing=""
	for full in $keys; do
		last=${full##*.}
		grep -qE "^\.BR? \"?($full|$last)([ \"]|$)" "$page" || missing="$missing $full"
	done
	[ -z "$missing" ] && ok "plan-cli-profiles(5) documents every $kind key ($(echo $keys | wc -w))" ||
		bad "plan-cli-profiles(5) does not document these $kind keys:$missing"
done
finish
