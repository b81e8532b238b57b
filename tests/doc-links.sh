#!/usr/bin/env bash
# Every relative link of the Markdown documentation resolves: README.md,
# HACKING.md and docs/ (docs/research/ too). A link [text](PATH) or
# ![alt](PATH) must name a file or folder that exists, relative to the
# file it is in; a link with #ANCHOR must name a heading of its target
# (GitHub's anchors: the heading in lower case, punctuation dropped but
# '-' and '_', spaces as '-', a repeated heading '-1', '-2', ...) or an
# explicit <a id="ANCHOR">. Links in code (fenced blocks, `spans`) and
# links with a scheme (https:, mailto:) are not checked. And README.md,
# the front door, stays at most 300 lines (the rest goes to docs/); and
# every man page they or the man pages name, plan-cli-NAME(N), is in man/.
# Usage: doc-links.sh SOURCE_ROOT
set -u
root=$1
cd "$root" || exit 1
export LC_ALL=C

# The anchors of a Markdown file, one a line.
anchors() {
	awk '
		/^(```|~~~)/ { code = !code; next }
		code { next }
		{
			line = $0
			while (match(line, /<a (id|name)="[^"]*"/)) {
				a = substr(line, RSTART, RLENGTH)
				sub(/^<a (id|name)="/, "", a); sub(/"$/, "", a)
				print a
				line = substr(line, RSTART + RLENGTH)
			}
		}
		/^#+ / {
			h = $0
			sub(/^#+ +/, "", h); sub(/ +#* *$/, "", h)
			while (match(h, /\[[^]]*\]\([^)]*\)/)) {
				t = substr(h, RSTART, RLENGTH); sub(/^\[/, "", t); sub(/\]\(.*$/, "", t)
				h = substr(h, 1, RSTART - 1) t substr(h, RSTART + RLENGTH)
			}
			h = tolower(h)
			gsub(/[^a-z0-9 _-]/, "", h)
			gsub(/ /, "-", h)
			if (h in seen) { seen[h]++; print h "-" seen[h] } else { seen[h] = 0; print h }
		}
	' "$1"
}

# The relative links of a Markdown file: LINE TARGET, one a line.
links() {
	awk '
		/^(```|~~~)/ { code = !code; next }
		code { next }
		{
			line = $0
			gsub(/`[^`]*`/, "", line)
			while (match(line, /\]\([^) ]+( "[^"]*")?\)/)) {
				t = substr(line, RSTART + 2, RLENGTH - 3)
				sub(/ ".*$/, "", t)
				line = substr(line, RSTART + RLENGTH)
				if (t ~ /^[a-zA-Z][a-zA-Z0-9+.-]*:/) continue
				print NR, t
			}
		}
	' "$1"
}

files=(README.md HACKING.md)
while IFS= read -r f; do files+=("$f"); done < <(find docs -name '*.md' | sort)

# Sets bad (what does not resolve, ';' between) and checked for file $1.
check_file() {
	local f=$1 dir lineno target path anchor dest
	dir=$(dirname "$f")
	bad=""
	checked=0
	while read -r lineno target; do
		checked=$((checked + 1))
		path=${target%%#*}
		anchor=""
		case $target in *'#'*) anchor=${target#*#} ;; esac
		if [ -z "$path" ]; then
			dest=$f
		else
			dest=$dir/$path
		fi
		if [ ! -e "$dest" ]; then
			bad="$bad $f:$lineno: $target (no such file);"
			continue
		fi
		if [ -n "$anchor" ]; then
			case $dest in
			*.md)
				anchors "$dest" | grep -qxF -- "$anchor" ||
					bad="$bad $f:$lineno: $target (no heading '#$anchor' in $dest);"
				;;
			*)
				bad="$bad $f:$lineno: $target (an anchor into a file that is not Markdown);"
				;;
			esac
		fi
	done < <(links "$f")
}

count=0
failed=0
for f in "${files[@]}"; do
	count=$((count + 1))
	if [ ! -f "$f" ]; then
		echo "not ok $count - $f exists"
		failed=1
		continue
	fi
	check_file "$f"
	if [ -z "$bad" ]; then
		echo "ok $count - $f: its $checked relative links resolve"
	else
		echo "not ok $count - $f: links that do not resolve:"
		echo "$bad" | tr ';' '\n' | sed '/^ *$/d; s/^ */#   /'
		failed=1
	fi
done

# Every man page named (plan-cli-NAME(N), or ".BR plan\-cli\-NAME (N)" in
# roff) in the Markdown documentation and the man pages is one of man/.
count=$((count + 1))
named=$(cat README.md HACKING.md NEWS docs/*.md man/*.[1-8] | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' |
	grep -oE 'plan-cli(-[a-z][a-z-]*[a-z])? ?\([1-8]\)' | tr -d ' ' | sort -u)
missing=""
for ref in $named; do
	page=${ref%(*}
	section=${ref#*(}
	section=${section%)}
	[ -f "man/$page.$section" ] || missing="$missing $ref"
done
if [ -n "$named" ] && [ -z "$missing" ]; then
	echo "ok $count - the $(echo $named | wc -w) man pages named in the documentation exist in man/"
else
	echo "not ok $count - man pages named in the documentation but not in man/:${missing:- (none named)}"
	failed=1
fi

count=$((count + 1))
lines=$(wc -l <README.md)
if [ "$lines" -le 300 ]; then
	echo "ok $count - README.md is at most 300 lines ($lines)"
else
	echo "not ok $count - README.md is at most 300 lines ($lines: move the detail to docs/)"
	failed=1
fi

# The check itself: a heading's anchor as GitHub makes it, and a file and
# an anchor that do not exist found (a link in code is not).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '# A `b`: c, d?\n## A `b`: c, d?\n<a id="x-y"></a>\n' >"$tmp/t.md"
got=$(anchors "$tmp/t.md" | tr '\n' ' ')
count=$((count + 1))
if [ "$got" = "a-b-c-d a-b-c-d-1 x-y " ]; then
	echo "ok $count - anchors are GitHub's"
else
	echo "not ok $count - anchors are GitHub's (got '$got')"
	failed=1
fi
printf '[a](t.md#a-b-c-d-1) [b](#x-y) [c](no.md) [d](t.md#no) `[e](no.md)` [f](https://x/y)\n' >>"$tmp/t.md"
check_file "$tmp/t.md"
count=$((count + 1))
if [ "$checked" = 4 ] && [ "$(echo "$bad" | tr ';' '\n' | grep -c 'no\.md (no such file)\|t\.md#no (no heading')" = 2 ]; then
	echo "ok $count - a missing file and a missing heading are found"
else
	echo "not ok $count - a missing file and a missing heading are found (checked $checked: $bad)"
	failed=1
fi
echo "1..$count"
exit $failed
