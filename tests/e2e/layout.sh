#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The source folders keep the data flow's direction (doc/layout.md): each
# folder includes only the folders below it, and no two modules (a path
# without its .c/.h) include each other, directly or through others. The
# checker is tried first on small made-up trees that break each rule, so
# that it is known to catch what it is meant to.
. "$(dirname "$0")/lib.sh"

# What each folder may include, bottom first.
allowed() {
	case $1 in
	util) echo "util" ;;
	models) echo "util models" ;;
	traces) echo "util traces" ;;
	sim) echo "util models traces sim" ;;
	testbed) echo "util models traces sim testbed" ;;
	analysis) echo "util models traces sim analysis" ;;
	sweep) echo "util models traces sim analysis sweep" ;;
	whatif) echo "util models traces sim hybrid whatif" ;;
	hybrid) echo "util models traces sim hybrid" ;;
	cli) echo "util models traces sim testbed analysis sweep whatif hybrid cli" ;;
	*) echo "" ;;
	esac
}
FOLDERS="util models traces sim testbed analysis sweep hybrid whatif cli"

# edges ROOT: "FILE INCLUDED" for every #include "..." of the sources.
edges() {
	(cd "$1" && for d in $FOLDERS; do
		[ -d "$d" ] && find "$d" -name '*.[ch]' -o -name '*.cu'
	done | sort | while read -r f; do
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
			while read -r h; do echo "$f $h"; done
	done)
}

# layering ROOT: prints each include that goes up or sideways, and each one
# that names no file of the tree (config.h is the build's).
layering() {
	local root=$1 f h from to
	edges "$root" | while read -r f h; do
		[ "$h" = config.h ] && continue
		if [ ! -f "$root/$h" ]; then
			echo "$f includes \"$h\", which is no file of the tree (includes are from the top)"
			continue
		fi
		from=${f%%/*} to=${h%%/*}
		case " $(allowed "$from") " in
		*" $to "*) ;;
		*) echo "$f ($from/) includes $h ($to/): $from/ may include only $(allowed "$from")" ;;
		esac
	done
}

# circles ROOT: prints the modules on an include circle (module = path
# without extension: sim/scenario is scenario.c and scenario.h).
circles() {
	edges "$1" | awk '
	$2 != "config.h" {
		a = $1; b = $2; sub(/\.[^.\/]*$/, "", a); sub(/\.[^.\/]*$/, "", b)
		if (a != b && !((a, b) in e)) { e[a, b] = 1; out[a] = out[a] " " b }
		mod[a] = 1; mod[b] = 1
	}
	function visit(v,    n, i, w, list) {
		state[v] = 1; path[++depth] = v
		n = split(out[v], list, " ")
		for (i = 1; i <= n; i++) {
			w = list[i]
			if (state[w] == 1) {
				line = w
				for (j = depth; j >= 1 && path[j] != w; j--) line = path[j] " -> " line
				print w " -> " line
			} else if (!state[w])
				visit(w)
		}
		depth--; state[v] = 2
	}
	END { for (m in mod) if (!state[m]) visit(m) }'
}

# The checker on trees made to break the rules.
fake=$TMP/fake
mkdir -p "$fake/util" "$fake/traces" "$fake/sim" "$fake/analysis"
echo '#include "util/a.h"' > "$fake/util/a.c"
: > "$fake/util/a.h"
printf '#include "sim/s.h"\n#include "util/a.h"\n' > "$fake/traces/g.c"
echo '#include "traces/g.h"' > "$fake/traces/g.h"
echo '#include "traces/g.h"' > "$fake/sim/s.c"
echo '#include "analysis/p.h"' > "$fake/sim/s.h"
echo '#include "sim/s.h"' > "$fake/analysis/p.h"
echo '#include "sim/gone.h"' > "$fake/analysis/p.c"
out=$(layering "$fake")
check "an include up from traces/ into sim/ is caught" grep -q '^traces/g.c (traces/) includes sim/s.h' <<< "$out"
check "an include from the core into a command folder is caught" grep -q '^sim/s.h (sim/) includes analysis/p.h' <<< "$out"
check "an include of a file not in the tree is caught" grep -q 'sim/gone.h", which is no file' <<< "$out"
check "allowed includes are not reported" test "$(wc -l <<< "$out")" -eq 3
out=$(circles "$fake")
check "a circle of modules is caught" grep -q 'sim/s -> analysis/p -> sim/s\|analysis/p -> sim/s -> analysis/p' <<< "$out"
check "a circle through two folders is caught" grep -q 'traces/g -> sim/s' <<< "$out"
rm -f "$fake/sim/s.h" "$fake/traces/g.c"
: > "$fake/sim/s.h"
check "a tree without circles has none" test -z "$(circles "$fake")"

# The tree itself.
for d in $FOLDERS; do
	check "$d/ exists" test -d "$top_srcdir/$d"
done
out=$(layering "$top_srcdir")
[ -n "$out" ] && echo "$out"
check "every include of util/ models/ traces/ sim/ testbed/ analysis/ sweep/ whatif/ cli/ goes down the layers" test -z "$out"
out=$(circles "$top_srcdir")
[ -n "$out" ] && echo "$out"
check "no module includes itself through others" test -z "$out"
check "sim/ includes no command's header" test -z "$(grep -l '_cmd\.h\|sweep/\|analysis/\|whatif/' "$top_srcdir"/sim/*.[ch])"
check "main.c holds no command of its own" test "$(grep -c 'getopt' "$top_srcdir/cli/main.c")" -eq 0

# The folder graph, for the record: "FROM -> TO COUNT".
edges "$top_srcdir" | awk '$2 != "config.h" { a = $1; b = $2; sub(/\/.*/, "", a); sub(/\/.*/, "", b)
	if (a != b) n[a " -> " b]++ } END { for (k in n) print "# " k " " n[k] }' | sort

finish
