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
	root=$2
	cd "$root" || exit 1
	export PLAN_CLI_PATH=$root LC_ALL=C
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
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
