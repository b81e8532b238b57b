#!/usr/bin/env bash
# The profile keys and the bundled profiles against their documentation,
# read from the tables the loaders use (`plan-cli profiles --schema KIND`)
# and from the profile folders, so that the lists cannot drift apart:
#   - docs/profiles.md's "Key index" names every key of every schema, as
#     its dotted path in backquotes at the start of a table row, and no
#     other (a stale key fails);
#   - every key a .TP entry of plan-cli-profiles(5) documents under MODEL,
#     CLUSTER, GPU, FRAMEWORK or COMPRESSOR PROFILES is a key of that
#     schema (or one of its choices: a compressor's method); the other
#     direction is man-keys.sh's;
#   - every bundled GPU, cluster and framework profile is named in
#     docs/profiles.md, and every GPU and framework in the page's Bundled
#     GPUs and Bundled frameworks tables;
#   - the rows of predict's text breakdown and memory table, over plans
#     that show the optional rows, are the JSON keys breakdown_s.NAME and
#     memory_bytes.NAME that plan-cli-predict(1) documents (man-fields.sh
#     checks those keys against the field table).
# With --index it prints the key index (markdown) made from the schemas:
# the section to paste into docs/profiles.md when a key is added.
# Usage: doc-keys.sh PLAN_CLI SOURCE_ROOT [--index]
set -u
bin=$1
root=$2
page=$root/man/plan-cli-profiles.5
doc=$root/docs/profiles.md
kinds="model cluster gpu framework compressor"
. "$(dirname "$(realpath "$0")")/cli/harness.sh"

# The schema as "PATH<TAB>TYPE<TAB>MEANING" lines. --schema prints a key
# line at an indent of 2 per level (a child under its parent) and its
# meaning 4 further in; blank and '#' lines separate variants (a
# multimodal model), whose keys are listed once.
schema_rows() {
	"$bin" profiles --schema "$1" | awk '
		/^ *$/ || /^#/ { next }
		want_key {
			match($0, /^ */); depth = RLENGTH / 2
			line = substr($0, RLENGTH + 1)
			key = line; sub(/:.*/, "", key)
			type = line; sub(/^[^:]*: */, "", type)
			path[depth] = key
			full = key
			for (d = depth - 1; d >= 0; d--) full = path[d] "." full
			want_key = 0
			next
		}
		{
			what = $0; sub(/^ */, "", what)
			if (!(full in seen) && !(kind == "cluster" && full ~ /^gpu\./)) { seen[full] = 1; printf "%s\t%s\t%s\n", full, type, what }
			want_key = 1
		}
		BEGIN { want_key = 1 }' kind="$1"
}

if [ "${3:-}" = "--index" ]; then
	for kind in $kinds; do
		printf '\n**%s** (`plan-cli profiles --schema %s`)\n\n| key | type, default | meaning |\n|---|---|---|\n' \
			"$kind" "$kind"
		schema_rows "$kind" | awk -F '\t' '{ gsub(/\|/, "\\|"); printf "| `%s` | %s | %s |\n", $1, $2, $3 }'
	done
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The index: from its heading to the next "## " heading.
awk '/^## / { on = ($0 ~ /^## Key index/); next } on' "$doc" |
	sed -n 's/^| `\([a-z_0-9.]*\)` |.*/\1/p' | sort -u >"$tmp/index"
check "docs/profiles.md has a Key index" '[ -s "$tmp/index" ]'
# Each kind's table of the index names a key once (a hand-merged index
# once listed kind and submodules twice).
twice=$(awk '/^## / { on = ($0 ~ /^## Key index/); next } on' "$doc" |
	awk '/^\*\*[a-z]+\*\*/ { t = $1; next } /^\| `/ { print t, $2 }' | sort | uniq -d | tr '\n' ' ')
check "docs/profiles.md's Key index names each key once a table${twice:+ (twice: $twice)}" '[ -z "$twice" ]'

for kind in $kinds; do
	if ! schema_rows "$kind" >"$tmp/rows.$kind" || [ ! -s "$tmp/rows.$kind" ]; then
		bad "plan-cli profiles --schema $kind lists keys"
		continue
	fi
	cut -f1 "$tmp/rows.$kind" | sort -u >"$tmp/keys.$kind"
	missing=$(comm -23 "$tmp/keys.$kind" "$tmp/index" | tr '\n' ' ')
	check "docs/profiles.md's Key index names every $kind key${missing:+ (missing: $missing; regenerate: tests/doc-audit.sh PLAN_CLI . --index)}" \
		'[ -z "$missing" ]'

	# The .TP tags of the kind's section, less its Bundled subsections;
	# a tag counts by its first word (.BR name " (string, required)").
	section=$(echo "$kind" | tr a-z A-Z)
	awk -v s="$section PROFILES" '
		/^\.SH / { sub(/^\.SH /, ""); gsub(/"/, ""); on = ($0 == s); sub_on = 1; next }
		/^\.SS / { sub_on = ($0 !~ /Bundled/); next }
		/^\.TP/ { tag = 1; next }
		on && sub_on && tag { print }
		{ tag = 0 }' "$page" | sed 's/\\-/-/g' |
		awk '$1 ~ /^\.BR?$/ { w = $2; gsub(/"/, "", w); print w }' | sort -u >"$tmp/tags.$kind"
	# Known: a key's last name, its dotted path, or a choice of an enum.
	{
		sed 's/.*\.//' "$tmp/keys.$kind"
		cat "$tmp/keys.$kind"
		cut -f2 "$tmp/rows.$kind" | sed -n 's/.*(\([a-z0-9_|.-]*\)).*/\1/p' | tr '|' '\n'
	} | sort -u >"$tmp/known.$kind"
	stale=$(comm -23 "$tmp/tags.$kind" "$tmp/known.$kind" | tr '\n' ' ')
	check "plan-cli-profiles(5) documents no $kind key the schema lacks${stale:+ (stale: $stale)}" \
		'[ -s "$tmp/tags.$kind" ] && [ -z "$stale" ]'
done
check "docs/profiles.md's Key index names no key the schemas lack ($(cat "$tmp"/keys.* | sort -u | comm -13 - "$tmp/index" | tr '\n' ' '))" \
	'[ -z "$(cat "$tmp"/keys.* | sort -u | comm -13 - "$tmp/index")" ]'

# Bundled profiles: named in docs/profiles.md and, for GPUs and
# frameworks, in the first column of the page's Bundled table or a tag.
# unnamed DIR TEST: the profiles of DIR for which "TEST NAME" fails.
unnamed() {
	local f prof out=""
	for f in "$root/$1"/*.yaml; do
		prof=$(basename "$f" .yaml)
		"$2" "$prof" || out="$out $prof"
	done
	printf '%s' "$out"
}
in_doc() { grep -qF "\`$1\`" "$doc"; }
in_bundled() { grep -qxF "$1" "$tmp/bundled.$dir"; }
for dir in gpus clusters frameworks; do
	missing=$(unnamed "$dir" in_doc)
	check "docs/profiles.md names every profile of $dir/${missing:+ (missing:$missing)}" '[ -z "$missing" ]'
done
for dir in gpus frameworks; do
	title=$([ "$dir" = gpus ] && echo "Bundled GPUs" || echo "Bundled frameworks")
	awk -v t="$title" '/^\.S[SH] / { on = (index($0, t) > 0); next } on' "$page" | sed 's/\\-/-/g' |
		sed -n 's/^\(\.BR\? \)\?\([a-z0-9][a-z0-9.-]*\).*/\2/p' | sort -u >"$tmp/bundled.$dir"
	missing=$(unnamed "$dir" in_bundled)
	check "plan-cli-profiles(5) $title lists every profile of $dir/${missing:+ (missing:$missing)}" '[ -z "$missing" ]'
done

# The text report's rows: breakdown (ep_comm, moe_fixed; cp_comm;
# compression) and memory per GPU, each a documented JSON key.
export PLAN_CLI_PATH=$root
plans=(
	"--model mixtral-8x7b --cluster dgx-h100 --gpus 64 --tp 2 --ep 8 --micro-batch 1 --global-batch 256 --sequence-parallel"
	"--model llama3-8b --cluster dgx-h100 --gpus 16 --tp 2 --cp 2 --micro-batch 1 --global-batch 64 --flash-attention --sequence-parallel"
	"--model gpt-1.7b --cluster selene --gpus 16 --tp 2 --micro-batch 4 --global-batch 64 --compress dp --compressor topk-1"
)
: >"$tmp/rows"
for p in "${plans[@]}"; do
	# shellcheck disable=SC2086 # the plan's words are options
	"$bin" predict $p >"$tmp/out" 2>&1 || { bad "predict $p: $(head -3 "$tmp/out")"; continue; }
	sed -n '/^breakdown/,/^  total/p' "$tmp/out" | awk 'NR > 1 && $1 != "total" && NF == 4 { print "breakdown_s." $1 }' >>"$tmp/rows"
	sed -n '/^memory per GPU/,/^  total/p' "$tmp/out" | awk 'NR > 1 && $1 != "total" && NF == 2 { print "memory_bytes." $1 }' >>"$tmp/rows"
done
sed 's/\\-/-/g' "$root/man/plan-cli-predict.1" | sed -n 's/^\.BR\? \([a-z_]*\.[a-z_]*\).*/\1/p' | sort -u >"$tmp/documented"
sort -u "$tmp/rows" >"$tmp/shown"
missing=$(comm -23 "$tmp/shown" "$tmp/documented" | tr '\n' ' ')
check "plan-cli-predict(1) documents the text report's $(wc -l <"$tmp/shown") breakdown and memory rows${missing:+ (missing: $missing)}" \
	'[ "$(wc -l <"$tmp/shown")" -ge 16 ] && [ -z "$missing" ]'
finish
