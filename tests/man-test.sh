#!/usr/bin/env bash
# Lint the man pages (groff -man -ww -z prints nothing) and run every
# "plan-cli ..." line of plan-cli(1)'s EXAMPLES section (jq's habit:
# documented examples are tests). Usage: man-test.sh PLAN_CLI SOURCE_ROOT
set -u
bin=$(realpath "$1")
root=$2
cd "$root" || exit 1
. "$(dirname "$(realpath "$0")")/cli/harness.sh"

for page in man/plan-cli.1 man/plan-cli-profiles.5; do
	out=$(groff -man -ww -z "$page" 2>&1)
	if [ -z "$out" ]; then ok "lint $page"; else bad "lint $page: $out"; fi
done

examples=$(sed -n '/^\.SH EXAMPLES/,/^\.SH /p' man/plan-cli.1 | grep '^plan-cli ')
[ -n "$examples" ] && ok "EXAMPLES has commands" || bad "EXAMPLES has no plan-cli lines"
while IFS= read -r line; do
	[ -n "$line" ] || continue
	read -r -a words <<<"${line#plan-cli }"
	if "$bin" "${words[@]}" >/dev/null 2>/tmp/man-test.$$; then
		ok "example: $line"
	else
		bad "example: $line: $(head -c 300 /tmp/man-test.$$)"
	fi
done <<<"$examples"
rm -f /tmp/man-test.$$
finish
