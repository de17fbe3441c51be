#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The release tarball holds every file git tracks (but .gitignore and the
# empty directories' .keep files): run from the top of a built git checkout
# after `make dist`, with the tarball's name as $1. With this check, CI's
# `make distcheck` need not run every end-to-end test again to notice a file
# left out of EXTRA_DIST: the sanitizer build runs them all out of tree.
set -euo pipefail
tarball=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar tzf "$tarball" | sed 's|^[^/]*/||' | grep -v '/$' | sort > "$tmp/tar"
git ls-files | grep -v -e '^\.gitignore$' -e '/\.keep$' | sort > "$tmp/git"
missing=$(comm -13 "$tmp/tar" "$tmp/git")
if [ -n "$missing" ]; then
	echo "dist-complete: tracked files missing from $tarball (add them to Makefile.am's EXTRA_DIST or a _SOURCES):"
	echo "$missing"
	exit 1
fi
echo "dist-complete: $tarball holds all $(wc -l < "$tmp/git") tracked files"
