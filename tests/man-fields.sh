#!/usr/bin/env bash
# plan-cli-predict(1) documents the JSON keys of predict --format json and the CSV
# columns of --format csv: check them against field_table, which the
# formatters read, so that the page and the code cannot drift apart.
# Usage: man-fields.sh PRINT_FIELDS SOURCE_ROOT
set -u
fields=$1
root=$2
. "$(dirname "$(realpath "$0")")/cli/harness.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$fields" >"$tmp/fields"; then
	bad "print-fields failed"
	finish
	exit 1
fi
awk -f "$(dirname "$(realpath "$0")")/man-fields.awk" "$tmp/fields" "$root/man/plan-cli-predict.1" >"$tmp/diff"

grep -q '^checked [1-9]' "$tmp/diff" && ok "the man page and the field table were read" ||
	bad "the man page and the field table were read: $(cat "$tmp/diff")"
missing=$(sed -n 's/^undocumented //p' "$tmp/diff" | tr '\n' ' ')
[ -z "$missing" ] && ok "plan-cli-predict(1) documents every JSON key" ||
	bad "plan-cli-predict(1) does not document the JSON keys: $missing"
unknown=$(sed -n 's/^unknown \(tag\|key\) //p' "$tmp/diff" | tr '\n' ' ')
[ -z "$unknown" ] && ok "plan-cli-predict(1) names no JSON key that predict does not write" ||
	bad "plan-cli-predict(1) names JSON keys that predict does not write: $unknown"
csv=$(grep '^csv column' "$tmp/diff")
[ -z "$csv" ] && ok "plan-cli-predict(1) lists the CSV columns of the header, in order" || bad "$csv"
sum=$(grep '^sum ' "$tmp/diff")
[ -z "$sum" ] && ok "plan-cli-predict(1)'s \"How the breakdown adds up\" names every term of breakdown_s, in order" ||
	bad "How the breakdown adds up: $sum"
finish
