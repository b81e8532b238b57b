#!/usr/bin/env bash
# The man pages as a set: every command of 'plan-cli --help' has its page
# man/plan-cli-COMMAND.1, named in plan-cli(1)'s SEE ALSO and in the
# command's --help; meson.build's
# install_man list names every page of man/; and, installed with
# 'meson install --tags man' into a scratch DESTDIR, each page lands in
# its manN folder and 'man -w plan-cli-optimize' finds it there (skipped
# where meson or man is absent).
# Usage: man-install.sh PLAN_CLI SOURCE_ROOT BUILD_ROOT [MESON]
set -u
bin=$(realpath "$1")
root=$2
build=$3
meson=${4:-}
cd "$root" || exit 1
. "$(dirname "$(realpath "$0")")/cli/harness.sh"
export LC_ALL=C
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' >"$tmp/commands"
check "plan-cli --help lists commands" '[ -s "$tmp/commands" ]'
# The SEE ALSO section of plan-cli(1), roff escapes dropped.
sed -n '/^\.SH SEE ALSO/,/^\.SH /p' man/plan-cli.1 | sed 's/\\-/-/g' >"$tmp/see-also"
while IFS= read -r cmd; do
	page=man/plan-cli-$cmd.1
	check "$cmd has its page $page, with the sections of a command page" \
		'[ -f "$page" ] && for s in NAME SYNOPSIS DESCRIPTION OPTIONS OUTPUT "EXIT STATUS" EXAMPLES "SEE ALSO"; do
			grep -qx "\.SH \"\?$s\"\?" "$page" || { echo "no $s"; exit 1; }; done'
	check "plan-cli(1) SEE ALSO names plan-cli-$cmd(1)" 'grep -q "^\.BR plan-cli-$cmd (1)" "$tmp/see-also"'
	check "plan-cli $cmd --help names plan-cli-$cmd(1)" '"$bin" "$cmd" --help | grep -qF "plan-cli-$cmd(1)"'
done <"$tmp/commands"

for page in man/*.[1-8]; do
	check "meson.build installs $page" 'grep -qF "'"'"'$page'"'"'" meson.build'
done

if [ -z "$meson" ]; then
	skipped "meson install --tags man (no meson)"
	finish
	exit
fi
"$meson" install -C "$build" --no-rebuild --tags man --destdir "$tmp/inst" >"$tmp/install.log" 2>&1
check "meson install --tags man --destdir" '[ $? -eq 0 ] || { tail -5 "$tmp/install.log"; exit 1; }'
mandir=$(find "$tmp/inst" -name plan-cli.1 -path '*/man1/*' | head -1)
mandir=${mandir%/man1/plan-cli.1}
for page in man/*.[1-8]; do
	name=${page#man/}
	section=${name##*.}
	check "installed: man$section/$name, the same as $page" \
		'[ -n "$mandir" ] && cmp -s "$mandir/man$section/$name" "$page"'
done
if ! command -v man >/dev/null 2>&1; then
	skipped "man -w plan-cli-optimize (no man)"
else
	found=$(MANPATH=$mandir man -w plan-cli-optimize 2>&1)
	check "man -w plan-cli-optimize finds the installed page" '[ "$found" = "$mandir/man1/plan-cli-optimize.1" ]'
	found=$(MANPATH=$mandir man -w 7 plan-cli-cost-model 2>&1)
	check "man -w 7 plan-cli-cost-model finds the installed page" '[ "$found" = "$mandir/man7/plan-cli-cost-model.7" ]'
fi
finish
