# Shared by the black-box test scripts (sourced, not run): TAP on stdout,
# which meson reads (protocol 'tap', each case a subtest): "ok N - NAME" or
# "not ok N - NAME" a case, and at the end the plan "1..N" and a comment
# "# N passed, N failed". Anything else a script says goes to stderr, or
# behind "# ". What a failed case says about why goes to stderr, under a
# copy of its "not ok" line: meson prints a failed test's stderr
# (--print-errorlogs, as scripts/run-tests runs it) but, of a TAP test's
# stdout, only the subtests' results.
n=0
fail=0
skip=0
. "$(dirname "${BASH_SOURCE[0]}")/strict-jq.sh"
# diag TEXT: why the last case failed, on stderr, "#   " before each line
# (nothing when TEXT is empty).
diag() { if [ -n "$1" ]; then printf '%s\n' "$1" | sed 's/^/#   /' >&2; fi; }
# ok NAME, bad NAME, skipped NAME: one case; the first line of NAME names
# it, further lines (the output that says why) are bad's diagnostics.
ok() { n=$((n + 1)); echo "ok $n - ${1%%$'\n'*}"; }
bad() {
	n=$((n + 1))
	fail=$((fail + 1))
	echo "not ok $n - ${1%%$'\n'*}"
	echo "not ok $n - ${1%%$'\n'*}" >&2
	case $1 in *$'\n'*) diag "${1#*$'\n'}" ;; esac
}
skipped() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - ${1%%$'\n'*} # SKIP"; }
# check NAME CONDITION: CONDITION is a shell expression, evaluated here, in
# a subshell that starts with the caller's $?; when it fails, what it
# printed (stdout and stderr) and the expression are the diagnostics.
check() {
	local st=$? out
	if out=$( (exit "$st"); eval "$2" 2>&1); then
		ok "$1"
	else
		bad "$1"
		diag "$out"
		diag "failed: $2"
	fi
}
# harness_setup PLAN_CLI SOURCE_ROOT: $bin (absolute) and $root, the
# working folder from now on, as PLAN_CLI_PATH; LC_ALL=C; a $tmp folder
# removed on exit.
harness_setup() {
	bin=$(realpath "$1")
	root=$(realpath "$2")
	cd "$root" || exit 1
	export PLAN_CLI_PATH=$root LC_ALL=C
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
}
# run_cmd COMMAND ARGS...: plan-cli COMMAND; $rc, $tmp/out, $tmp/err.
run_cmd() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
# fails_cmd NAME RC TEXT COMMAND ARGS...: exit status RC, one error line
# that says TEXT, nothing on stdout (and the stderr shown when not).
fails_cmd() {
	# shellcheck disable=SC2034 # text: read by check's expression
	local name=$1 want=$2 text=$3
	shift 3
	run_cmd "$@"
	local before=$fail
	check "$name (exit $want)" '[ $rc -eq $want ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		grep -q "^plan-cli: error: " "$tmp/err" && grep -qF -- "$text" "$tmp/err"'
	[ "$fail" -eq "$before" ] || diag "exit $rc; stderr:
$(head -n 20 "$tmp/err")"
}
# mem NAME FIELD: memory_bytes.FIELD of predict's JSON in $tmp/NAME.json.
mem() { jq -r ".memory_bytes.$2" "$tmp/$1.json"; }
# rel A B WANT: (A - B) is WANT to 1e-6 (relative to WANT).
rel() { awk -v a="$1" -v b="$2" -v w="$3" 'BEGIN { d = a - b - w; if (d < 0) d = -d; exit !(d <= 1e-6 * w) }'; }
# finish: the plan, the closing comment and the exit status (1 when a case
# failed, which meson reports as the test's failure too).
finish() {
	echo "1..$n"
	if [ "$skip" -gt 0 ]; then
		echo "# $((n - fail)) passed, $fail failed, $skip skipped"
	else
		echo "# $((n - fail)) passed, $fail failed"
	fi
	[ "$fail" -eq 0 ]
}
