# Shared by the black-box test scripts (sourced, not run): TAP-like lines and
# the closing "N passed, N failed" that CI reads.
n=0
fail=0
skip=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; }
skipped() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n - # SKIP $1"; }
# check NAME CONDITION: CONDITION is a shell expression, evaluated here.
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
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
	local name=$1 want=$2 text=$3
	shift 3
	run_cmd "$@"
	check "$name (exit $want)" '[ $rc -eq $want ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		grep -q "^plan-cli: error: " "$tmp/err" && grep -qF -- "$text" "$tmp/err"'
	[ $rc -eq "$want" ] && grep -qF -- "$text" "$tmp/err" || sed 's/^/# /' "$tmp/err"
}
# finish: the closing line and the exit status.
finish() {
	if [ "$skip" -gt 0 ]; then
		echo "$((n - fail)) passed, $fail failed, $skip skipped"
	else
		echo "$((n - fail)) passed, $fail failed"
	fi
	[ "$fail" -eq 0 ]
}
