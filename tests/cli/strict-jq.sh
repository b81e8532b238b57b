# shellcheck shell=bash
# Sourced by the CLI test scripts (harness.sh, run-cli-tests.sh): jq that
# refuses an empty input. jq 1.6's -e exits 0 when its input is empty (1.7
# exits 4), so "plan-cli ... >out.json; check ... 'jq -e COND out.json'"
# passed when plan-cli printed nothing: 260 checks of the CLI scripts passed
# with a plan-cli that only exits 0 (issue 25, eighth session), one of them
# while optimize --baseline refused its plan. Every argument that names a
# regular file must be non-empty, and so must standard input when no file
# is named (jq -n, -en, ... reads none).
jq() {
	local a named=false
	for a in "$@"; do
		case $a in --null-input | -[!-]*n*) command jq "$@"; return ;; esac
		if [ -f "$a" ]; then
			named=true
			if [ ! -s "$a" ]; then
				echo "jq: $a is empty" >&2
				return 4
			fi
		fi
	done
	if $named; then
		command jq "$@"
		return
	fi
	local in
	in=$(cat)
	if [ -z "$in" ]; then
		echo "jq: the input is empty" >&2
		return 4
	fi
	printf '%s\n' "$in" | command jq "$@"
}
