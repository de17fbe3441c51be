#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: a NARX scenario's results do not depend on how many threads
# OpenBLAS would use (by default one per core, so on the machine). NARX
# training with solver = qr goes through GSL's QR, which calls BLAS, whose
# rounding depends on its thread count; lbsim runs BLAS on one thread
# outside `lbsim calibrate`. Each solver runs with OPENBLAS_NUM_THREADS
# unset, 1 and 2, and the deterministic columns of every results table
# (all but the measured decision_s, mean_decision_s, wall_s, created_at)
# must be identical; so must `lbsim predict`'s scores, which train NARX too.
# Without the one-thread setting, qr's unset and 1 differ on a machine with
# two or more cores (from iteration 120 of this run on a 2-core machine),
# and 1 and 2 differ anywhere BLAS gets 2 threads.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
S="$top_srcdir/scenarios/predict/cpu-bursty.ini"

# dump DB: the deterministic rows, in key order.
dump() {
	local t cols
	for t in iterations worker_iterations batches runs workers; do
		cols=$(q "$1" "SELECT group_concat('quote(' || name || ')', ',') FROM pragma_table_info('$t')
			WHERE name NOT IN ('decision_s', 'mean_decision_s', 'wall_s', 'created_at')")
		q "$1" "SELECT $cols FROM $t ORDER BY 1, 2, 3"
	done
}

for solver in qr cholesky; do
	for th in unset 1 2; do
		db="$TMP/$solver-$th.db"
		(
			if [ "$th" = unset ]; then unset OPENBLAS_NUM_THREADS; else export OPENBLAS_NUM_THREADS=$th; fi
			"$LBSIM" "$S" -p lbbsp-cpu --set run.epochs=4 --set predictor.narx.solver=$solver \
				--detail workers -q -o "$db" &&
				"$LBSIM" predict "$db:1" -p narx --set predictor.narx.solver=$solver |
				sed "s|$db|DB|" > "$TMP/$solver-$th.predict"
		) || bad "$solver, OPENBLAS_NUM_THREADS $th: lbsim failed"
		dump "$db" > "$TMP/$solver-$th.rows"
	done
	check "$solver: rows recorded" test "$(wc -l < "$TMP/$solver-unset.rows")" -gt 1000
	check "$solver: narx scored" grep -q narx "$TMP/$solver-unset.predict"
	for th in 1 2; do
		check "$solver: results with OPENBLAS_NUM_THREADS $th = unset" \
			cmp -s "$TMP/$solver-$th.rows" "$TMP/$solver-unset.rows"
		check "$solver: predict with OPENBLAS_NUM_THREADS $th = unset" \
			cmp -s "$TMP/$solver-$th.predict" "$TMP/$solver-unset.predict"
	done
done
finish
