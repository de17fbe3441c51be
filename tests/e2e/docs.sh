#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The documentation matches the program: the key reference is what
# `lbsim keys` prints, the man page renders cleanly, every source file
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
for cmd in sweep merge plot export; do
	check "man page documents lbsim $cmd" grep -q "^\.B $cmd\$" "$top_srcdir/doc/lbsim.1"
	check "doc/sweeps.md documents lbsim $cmd" grep -q "^lbsim $cmd " "$top_srcdir/doc/sweeps.md"
done
for opt in --jobs --shard --sshlogin --list --keep --out --setting; do
	check "man page documents $opt" grep -q -- "${opt//-/\\\\-}" "$top_srcdir/doc/lbsim.1"
done

missing=$(cd "$top_srcdir" && grep -L 'SPDX-License-Identifier: GPL-3.0-or-later' \
	$(ls util/*.[ch] sim/*.[ch] models/*.[ch] models/*/*.[ch] models/calib/cuda.cu traces/*.[ch] testbed/*.[ch] analysis/*.[ch] sweep/*.[ch] whatif/*.[ch] cli/*.[ch] fuzz/*.[ch] tests/unit/*.[ch] tests/e2e/*.sh bench/*.[ch] \
	     bench/*.sh analysis/*.sql analysis/*.gp analysis/*.sh scenarios/sweeps/* 2> /dev/null))
check "every source file has an SPDX line" test -z "$missing"

# Notes kept outside the repository are not there for a user: the tree
# must say what it needs itself. (The names are split so this file does
# not match itself.)
outside=$(cd "$top_srcdir" && grep -rlE --exclude-dir=corpus --exclude-dir=artifacts --exclude-dir=clang "(DESIGN|PAPERS|STYLE|WHATIF)[.]md" README.md doc scenarios profiles \
	util sim models traces analysis sweep cli fuzz bench tests 2> /dev/null | grep -v '^tests/e2e/docs.sh$')
check "no reference to notes outside the repository${outside:+: $outside}" test -z "$outside"

finish
