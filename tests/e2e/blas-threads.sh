#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: the simulation does not load OpenBLAS, and its results do not
# depend on how many threads OpenBLAS would use (by default one per core,
# so on the machine). NARX training goes through GSL's QR or Cholesky,
# which call a CBLAS; on OpenBLAS the rounding would depend on its thread
# count (with OpenBLAS in the program and no one-thread setting, qr's
# unset and 1 differed from iteration 120 of this run on a 2-core machine)
# and its per-CPU kernels. lbsim links GSL's reference CBLAS and loads
# OpenBLAS (lbsim-blas.so) only where it runs real matrix products.
# 1. `lbsim run` loads no OpenBLAS; `lbsim calibrate --blas` does, and its
#    cblas_sgemm is OpenBLAS's, not the program's GSL CBLAS.
# 2. Each solver runs with OPENBLAS_NUM_THREADS unset, 1 and 2, and the
#    deterministic columns of every results table (all but the measured
#    decision_s, mean_decision_s, wall_s, created_at) must be identical; so
#    must `lbsim predict`'s scores, which train NARX too.
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

# The libraries the dynamic loader opens (LD_DEBUG=files names each).
LD_DEBUG=files "$LBSIM" "$S" -p lbbsp-cpu --set run.epochs=1 -q -o "$TMP/ld.db" 2> "$TMP/ld-run" ||
	bad "lbsim run under LD_DEBUG failed"
check "lbsim run: the loader ran (LD_DEBUG output)" grep -q "file=libgsl" "$TMP/ld-run"
check "lbsim run: no OpenBLAS loaded" sh -c "! grep -q 'file=.*openblas' '$TMP/ld-run'"
LD_DEBUG=files "$LBSIM" calibrate --blas cifarnet --batches 1,16 --reps 3 --warmup 1 --threads 1 \
	> "$TMP/cal" 2> "$TMP/ld-cal" || bad "lbsim calibrate --blas under LD_DEBUG failed"
check "calibrate --blas: OpenBLAS loaded" grep -q "file=.*openblas" "$TMP/ld-cal"
check "calibrate --blas: through the BLAS module" grep -q "file=.*lbsim-blas.so" "$TMP/ld-cal"
check "calibrate --blas: cblas_sgemm is OpenBLAS's" grep -q "cblas_sgemm from libopenblas" "$TMP/cal"
check "calibrate --blas --threads 1: one thread" grep -q "(1 BLAS thread)" "$TMP/cal"

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
