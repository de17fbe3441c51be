#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The documentation matches the program: the key reference is what
# `lbsim keys` prints, the man page renders cleanly and has every command,
# the marked examples of README.md and doc/ print what lbsim prints (and
# the data of doc/sweeps' pictures is what they draw), every source file
# carries its SPDX line.
. "$(dirname "$0")/lib.sh"

"$LBSIM" keys > "$TMP/keys.md"
if cmp -s "$TMP/keys.md" "$top_srcdir/doc/scenario-keys.md"; then
	ok "doc/scenario-keys.md is current"
else
	bad "doc/scenario-keys.md is stale: run 'make doc-keys'"
fi

if command -v groff > /dev/null; then
	warnings=$(groff -man -ww -z "$top_srcdir/doc/lbsim.1" 2>&1)
	check "man page renders without warnings" test -z "$warnings"
fi
for opt in --output --seed --detail --max-rows --set --quiet --help --version; do
	check "man page documents $opt" grep -q -- "${opt//-/\\\\-}" "$top_srcdir/doc/lbsim.1"
done
for cmd in sweep merge plot export views report; do
	check "man page documents lbsim $cmd" grep -q "^\.B $cmd\$" "$top_srcdir/doc/lbsim.1"
	check "doc/sweeps.md documents lbsim $cmd" grep -q "^lbsim $cmd " "$top_srcdir/doc/sweeps.md"
done
for opt in --jobs --shard --sshlogin --list --keep --out --setting; do
	check "man page documents $opt" grep -q -- "${opt//-/\\\\-}" "$top_srcdir/doc/lbsim.1"
done

# The man page's structure: every command is a heading of COMMANDS, and
# every entry of EXIT STATUS is a status (groff -ww does not see a missing
# .TP that runs a heading into the paragraph before it).
if command -v man > /dev/null && command -v col > /dev/null; then
	man -l "$top_srcdir/doc/lbsim.1" 2> /dev/null | col -b > "$TMP/man.txt"
	for cmd in $(sed -n 's/^[[:space:]]*{ "\([a-z]*\)", lbs_[a-z_]*_command }.*/\1/p' "$top_srcdir/cli/main.c"); do
		check "man page: $cmd is a heading of COMMANDS" test -n "$(sed -n '/^COMMANDS/,/^OPTIONS/p' "$TMP/man.txt" |
			grep -E "^       $cmd( |\$)")"
	done
	# An entry starts after a blank line; the paragraph after them, on calibrate, is no entry.
	check "man page: every EXIT STATUS entry is a status" test -z "$(sed -n '/^EXIT STATUS/,/^ENVIRONMENT/p' "$TMP/man.txt" |
		awk 'blank && /^       [^ ]/ && !/^       [0-9]+ / && !/^       calibrate exits/ { print } { blank = /^$/ }')"
fi
if command -v mandoc > /dev/null; then
	check "mandoc -T lint finds nothing" test -z "$(mandoc -T lint -W warning "$top_srcdir/doc/lbsim.1" 2>&1)"
fi

# Every example marked `<!-- docs.sh -->` (the line before its ``` fence)
# is rerun and its output compared: the lines starting with "$ " are run
# in order, in a scratch folder per file that sees the source tree's scenarios,
# profiles and traces, with lbsim (and ./lbsim) the binary under test; the
# other lines are the expected output. Wall times are masked. Pictures
# that such a command writes are compared through their data: each
# doc/sweeps/NAME.csv with the CSV the rerun wrote beside NAME.png in
# plots/ (DIR-NAME.csv: in DIR/).
scratch() { # DIR: a fresh folder as the top of the source tree looks after make
	mkdir -p "$1/bin"
	for d in scenarios profiles traces tests analysis bench; do ln -s "$top_srcdir/$d" "$1/$d"; done
	ln -s "$LBSIM" "$1/bin/lbsim"
	ln -s "$LBSIM" "$1/lbsim"
}
mask() { sed -E -e 's/in [0-9.]+ s \([0-9.]+ runs\/s/in X s (X runs\/s/' -e 's/ +$//'; }
examples() { # FILE: writes $TMP/ex.N.sh and $TMP/ex.N.out for each marked block; prints N
	awk -v dir="$TMP" -v file="$1" '
	/^<!-- docs.sh -->$/ { mark = 1; next }
	mark && /^```/ { n++; inside = 1; mark = 0; cmd = dir "/ex." n ".sh"; out = dir "/ex." n ".out"
		printf "" > cmd; printf "" > out; next }
	{ mark = 0 }
	inside && /^```/ { inside = 0; next }
	inside && /^\$ / { print substr($0, 3) >> cmd; last = "cmd"; next }
	inside && last == "cmd" && /^    / { print >> cmd; next }
	inside { print >> out; last = "out" }
	END { print n + 0 }' "$1"
}
blocks=0
for f in $(cd "$top_srcdir" && ls README.md doc/*.md); do
	W="$TMP/docs/$(basename "$f" .md)"
	scratch "$W"
	n=$(examples "$top_srcdir/$f")
	for i in $(seq 1 "$n"); do
		blocks=$((blocks + 1))
		(cd "$W" && PATH="$W/bin:$PATH" bash "$TMP/ex.$i.sh" 2>&1) | mask > "$TMP/got"
		mask < "$TMP/ex.$i.out" > "$TMP/want"
		if cmp -s "$TMP/want" "$TMP/got"; then
			ok "$f: example $i ($(head -n 1 "$TMP/ex.$i.sh" | cut -c1-60)) is what lbsim prints"
		else
			bad "$f: example $i ($(head -n 1 "$TMP/ex.$i.sh" | cut -c1-60)) is stale:"
			diff "$TMP/want" "$TMP/got" | head -n 20
		fi
	done
done
check "docs: the marked examples were found" test "$blocks" -ge 5
# doc/sweeps/NAME.csv is plots/NAME.csv; DIR-NAME.csv is DIR/NAME.csv.
for csv in "$top_srcdir"/doc/sweeps/*.csv; do
	name=$(basename "$csv")
	got="$TMP/docs/sweeps/plots/$name"
	[ -d "$TMP/docs/sweeps/${name%%-*}" ] && got="$TMP/docs/sweeps/${name%%-*}/${name#*-}"
	check "doc/sweeps/$name: the data of the picture is what the example draws" cmp -s "$csv" "$got"
done

missing=$(cd "$top_srcdir" && grep -L 'SPDX-License-Identifier: GPL-3.0-or-later' \
	$(ls util/*.[ch] sim/*.[ch] models/*.[ch] models/*/*.[ch] models/calib/cuda.cu traces/*.[ch] testbed/*.[ch] analysis/*.[ch] sweep/*.[ch] whatif/*.[ch] hybrid/*.[ch] cli/*.[ch] fuzz/*.[ch] tests/unit/*.[ch] tests/e2e/*.sh bench/*.[ch] \
	     bench/*.sh analysis/*.sql analysis/*.gp analysis/*.sh scenarios/sweeps/* 2> /dev/null))
check "every source file has an SPDX line" test -z "$missing"

# Notes kept outside the repository are not there for a user: the tree
# must say what it needs itself. (The names are split so this file does
# not match itself.)
outside=$(cd "$top_srcdir" && grep -rlE --exclude-dir=corpus --exclude-dir=artifacts --exclude-dir=clang "(DESIGN|PAPERS|STYLE|WHATIF)[.]md" README.md doc scenarios profiles \
	util sim models traces analysis sweep hybrid cli fuzz bench tests 2> /dev/null | grep -v '^tests/e2e/docs.sh$')
check "no reference to notes outside the repository${outside:+: $outside}" test -z "$outside"

finish
