#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: golden results. Shipped scenarios, run at --detail workers for
# a few seeds and both engine modes, give exactly the rows recorded in
# tests/data/golden/results.sha256: the SHA-256 of every deterministic column
# of iterations, worker_iterations, batches, runs and workers (each value
# with quote(), which round-trips doubles exactly; decision_s,
# mean_decision_s, wall_s and created_at are measured, and scenario_path
# depends on where the tree is: they are left out). The
# hashes were made by the binary before the run loop's optimisations (issue
# 17), so a change that alters any draw, event order or floating-point
# operation order fails here. Scenarios whose NARX training goes through
# BLAS (whose rounding depends on its thread count and CPU kernel) are not
# in the list. Regenerate with GOLDEN_WRITE=1 only for an intended change.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
need sha256sum coreutils
S="$top_srcdir/scenarios"
expected="$top_srcdir/tests/data/golden/results.sha256"

# dump DB: the deterministic rows, in key order.
dump() {
	local t cols
	for t in iterations worker_iterations batches runs workers; do
		cols=$(q "$1" "SELECT group_concat('quote(' || name || ')', ',') FROM pragma_table_info('$t')
			WHERE name NOT IN ('decision_s', 'mean_decision_s', 'wall_s', 'created_at', 'scenario_path')")
		q "$1" "SELECT $cols FROM $t ORDER BY 1, 2, 3"
	done
}

# case NAME SCENARIO ARGS...: one line "HASH  NAME" into $TMP/actual.
case_() {
	local name=$1 sc=$2; shift 2
	rm -f "$TMP/g.db"
	if ! "$LBSIM" "$sc" -o "$TMP/g.db" --detail workers -q "$@" > "$TMP/out" 2>&1; then
		bad "golden $name: lbsim failed: $(cat "$TMP/out")"
		return
	fi
	echo "$(dump "$TMP/g.db" | sha256sum | cut -d' ' -f1)  $name" >> "$TMP/actual"
}

: > "$TMP/actual"
for seed in 1 7; do
	for ev in auto always; do
		set -- --seed "$seed" --set run.worker_events="$ev"
		case_ "default-$seed-$ev" "$S/default.ini" "$@" --set run.iterations=60 -p static,oracle,lbbsp-gpu
		case_ "stealing-wins-$seed-$ev" "$S/policies/stealing-wins.ini" "$@" --set run.iterations=40
		case_ "background-$seed-$ev" "$S/generators/background.ini" "$@" --set run.iterations=60
		case_ "cpu-credits-$seed-$ev" "$S/generators/cpu-credits.ini" "$@" --set run.iterations=60
		case_ "network-bucket-$seed-$ev" "$S/generators/network-bucket.ini" "$@" --set run.iterations=60
		case_ "dbs-disturbance-$seed-$ev" "$S/generators/dbs-disturbance.ini" "$@"
		case_ "own-trace-$seed-$ev" "$S/traces/own-trace.ini" "$@" --set run.iterations=60
		case_ "philly-$seed-$ev" "$S/traces/philly.ini" "$@" --set run.iterations=60
	done
done

if [ -n "${GOLDEN_WRITE:-}" ]; then
	cp "$TMP/actual" "$expected"
	ok "wrote $expected"
else
	while read -r hash name; do
		want=$(awk -v n="$name" '$2 == n { print $1 }' "$expected")
		check "golden $name" test "$hash" = "$want"
	done < "$TMP/actual"
	check "golden: every case recorded is run" test "$(wc -l < "$TMP/actual")" = "$(wc -l < "$expected")"
fi
finish
