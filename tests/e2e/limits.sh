#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Output and resource bounds: the --detail workers row guard (--max-rows) of
# lbsim run and lbsim sweep, and the bounds on what a trace file may make
# lbsim hold (--max-trace-rows, the longest line), each refused before
# anything is written and before memory grows past the bound. (Workers,
# iterations and global batches beyond their limits are in the bad-input
# corpus: count-1e12, workers-total-1e6, iterations-1e15,
# epochs-1e15-iterations, batch-over-cap.)
. "$(dirname "$0")/lib.sh"
D="$top_srcdir/tests/data"
S="$D/sweep/scenario.ini" # 4 workers

# ---- the row guard of lbsim run ------------------------------------------
# The estimate: iterations x workers x runs, the static baseline included.
"$LBSIM" "$S" -q -o "$TMP/est.db" --detail workers --set run.iterations=7 --policy lbbsp-gpu \
	--max-rows 56; rc=$?
check "--max-rows equal to the estimate (7 x 4 x 2 = 56): runs" test $rc -eq 0
check "the estimate is the rows written: 56" test "$(q "$TMP/est.db" 'SELECT count(*) FROM worker_iterations')" = 56
"$LBSIM" "$S" -q -o "$TMP/refused.db" --detail workers --set run.iterations=7 --policy lbbsp-gpu \
	--max-rows 55 > "$TMP/out" 2> "$TMP/err"; rc=$?
check "one row over --max-rows: exit 3" test $rc -eq 3
check "refused: no results file" test ! -e "$TMP/refused.db"
check "refused: nothing on stdout" test ! -s "$TMP/out"
check "refused: the message gives the estimate and how it was made" \
	grep -qF 'would write 56 rows to worker_iterations (7 iterations x 4 workers x 2 runs)' "$TMP/err"
check "refused: the message gives the limit and how to raise it" \
	grep -qF 'more than the limit of 55 rows (about 2.07 kB to 2.86 kB at 37 to 51 bytes a row): raise the limit with --max-rows N (0: no limit)' "$TMP/err"
check "refused: the message names the scenario" grep -qF "lbsim: $S: --detail workers" "$TMP/err"

# The default limit, 20 million rows: 5e6 iterations x 4 workers is at it,
# one iteration more is over it (refused at once, before anything runs).
"$LBSIM" "$S" -q -o "$TMP/big.db" --detail workers --set run.iterations=5000001 --no-baseline 2> "$TMP/err"; rc=$?
check "default limit: 20000004 rows refused (exit 3)" test $rc -eq 3
check "default limit: the message says 20000000" grep -qF 'more than the limit of 20000000 rows' "$TMP/err"
check "default limit: no results file" test ! -e "$TMP/big.db"
cp "$TMP/est.db" "$TMP/kept.db"
"$LBSIM" "$S" -q -o "$TMP/kept.db" --detail workers --set run.iterations=5000001 --no-baseline 2> /dev/null
check "refused: an existing results file gains no rows" test "$(q "$TMP/kept.db" \
	'SELECT count(*) FROM runs') $(q "$TMP/kept.db" 'SELECT count(*) FROM worker_iterations')" = "2 56"
# A longer run is not refused at a lower detail level, nor with --max-rows 0
# (it is stopped by SIGTERM long before its end: only the start matters here).
timeout --preserve-status -s TERM 5 "$LBSIM" "$S" -q -o "$TMP/iter.db" --set run.iterations=500000001 --no-baseline 2> "$TMP/err"; rc=$?
check "--detail iterations: no row guard (stopped by the timeout, exit 130)" test $rc -eq 130
timeout --preserve-status -s TERM 5 "$LBSIM" "$S" -q -o "$TMP/unl.db" --detail workers --set run.iterations=500000001 --no-baseline \
	--max-rows 0 2> "$TMP/err"; rc=$?
check "--max-rows 0: no limit (stopped by the timeout, exit 130)" test $rc -eq 130
"$LBSIM" "$S" -q -o "$TMP/ov.db" --detail workers --set run.iterations=2 --no-baseline --max-rows 1e3; rc=$?
check "--max-rows 1e3: accepted" test $rc -eq 0
for v in -1 x 1.5 '' 1e30; do
	"$LBSIM" "$S" -q -o "$TMP/bad.db" --detail workers --max-rows "$v" 2> "$TMP/err"; rc=$?
	check "--max-rows '$v': exit 2, nothing written" test $rc -eq 2 -a ! -e "$TMP/bad.db"
done

# Runs given in epochs: an epoch is floor(dataset_samples / global_batch)
# iterations (256 samples a batch: 10 epochs of 1000 samples = 30 iterations).
E=(--set run.iterations= --set run.epochs=10 --set run.dataset_samples=1000 --no-baseline --detail workers)
"$LBSIM" "$S" -q -o "$TMP/ep.db" "${E[@]}" --max-rows 120; rc=$?
check "epochs: 10 x 3 iterations x 4 workers = 120 rows allowed" test $rc -eq 0
check "epochs: 120 rows written" test "$(q "$TMP/ep.db" 'SELECT count(*) FROM worker_iterations')" = 120
"$LBSIM" "$S" -q -o "$TMP/ep2.db" "${E[@]}" --max-rows 119 2> "$TMP/err"; rc=$?
check "epochs: 119 refused" test $rc -eq 3 -a ! -e "$TMP/ep2.db"
check "epochs: the estimate counts 30 iterations" grep -qF '(30 iterations x 4 workers x 1 run)' "$TMP/err"

# A run that outgrows its estimate (DBS with the authors' rounding shrinks
# the global batch, so its epochs run longer) is stopped at the limit and
# rolled back. In scenarios/default.ini over 5 epochs of 49,900 samples it
# runs 323 iterations, not 320 (doc/policies.md).
DBS=(--set run.iterations= --set run.epochs=5 --set run.dataset_samples=49900 --set policy.dbs.rounding=authors
	--policy dbs --no-baseline --detail workers)
"$LBSIM" "$top_srcdir/scenarios/default.ini" -q -o "$TMP/dbs.db" "${DBS[@]}" --max-rows 3840 2> "$TMP/err"; rc=$?
check "a run past its estimate: exit 3" test $rc -eq 3
check "a run past its estimate: rolled back (the results file it made is removed)" test ! -e "$TMP/dbs.db"
check "a run past its estimate: says why" grep -qF 'at iteration 320 the run reached the --max-rows limit' "$TMP/err"
"$LBSIM" "$top_srcdir/scenarios/default.ini" -q -o "$TMP/dbs.db" "${DBS[@]}" --max-rows 3876; rc=$?
check "the same run within 3876 rows (323 x 12)" test $rc -eq 0 -a "$(q "$TMP/dbs.db" 'SELECT count(*) FROM worker_iterations')" = 3876

# ---- the row guard of lbsim sweep ----------------------------------------
if parallel --version 2> /dev/null | grep -q '^GNU parallel'; then
	cat > "$TMP/sw.ini" << EOF
[sweep]
scenario = $S
detail = workers
[vary]
workers.k80.count = 2, 6
run.iterations = 3
EOF
	# 2 points: 3 x 4 = 12 rows and 3 x 8 = 24 rows, 36 in all.
	"$LBSIM" sweep "$TMP/sw.ini" -q -j 2 -o "$TMP/sw.db" --max-rows 35 > "$TMP/out" 2> "$TMP/err"; rc=$?
	check "sweep: one row over --max-rows: exit 3" test $rc -eq 3
	check "sweep: refused: no results file, no work folder" test ! -e "$TMP/sw.db" -a ! -e "$TMP/sw.db.sweep"
	check "sweep: the message gives the estimate" \
		grep -qF 'would write 36 rows to worker_iterations (2 points of 12 to 24 rows (iterations x workers))' "$TMP/err"
	"$LBSIM" sweep "$TMP/sw.ini" -q -j 2 -o "$TMP/sw.db" --max-rows 36; rc=$?
	check "sweep: --max-rows 36: exit 0" test $rc -eq 0
	check "sweep: the estimate is the rows written: 36" test "$(q "$TMP/sw.db" 'SELECT count(*) FROM worker_iterations')" = 36
	"$LBSIM" sweep "$TMP/sw.ini" -q -o "$TMP/sw2.db" --shard 1/2 --max-rows 12; rc=$?
	check "sweep --shard 1/2: only its point counts (12 rows)" test $rc -eq 0
	"$LBSIM" sweep "$TMP/sw.ini" -q -o "$TMP/sw3.db" --max-rows x 2> /dev/null; rc=$?
	check "sweep --max-rows x: exit 2" test $rc -eq 2
	sed -i 's/^detail = workers/detail = iterations/' "$TMP/sw.ini"
	"$LBSIM" sweep "$TMP/sw.ini" -q -o "$TMP/sw4.db" --max-rows 1; rc=$?
	check "sweep at detail iterations: no row guard" test $rc -eq 0
else
	echo "skip: lbsim sweep's row guard (GNU parallel is not installed)"
fi

# ---- trace files: rows kept, line length -----------------------------------
# A scenario of 2 workers replaying trace T (relative to $TMP).
with_trace() {
	sed -e '/^\[workers.v100\]/,$d' "$S" | sed -e 's/^iterations = .*/iterations = 10/'
	printf '[workers.cpu]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 1 ms\ntrace_format = lbsim\ntrace = %s\n' "$1"
	[ -z "${2:-}" ] || printf 'trace_ids = %s\n' "$2"
}
trace_line=$(with_trace x | grep -n '^trace = ' | cut -d: -f1)
# 10^9 rows, streamed through a pipe (no 10 GB file): refused at the first
# row over the limit, so it is neither read whole nor held in memory.
mkfifo "$TMP/huge.csv"
{ printf '# lbsim-trace 1\ntime_s,availability\n'; awk 'BEGIN { for (i = 0; i < 1e9; i++) print i ",1" }'; } \
	> "$TMP/huge.csv" 2> /dev/null &
writer=$!
with_trace huge.csv > "$TMP/huge.ini"
timeout 120 "$LBSIM" "$TMP/huge.ini" -q -o "$TMP/huge.db" --max-trace-rows 100000 > "$TMP/out" 2> "$TMP/err"; rc=$?
kill "$writer" 2> /dev/null; wait "$writer" 2> /dev/null
check "a trace of 10^9 rows over --max-trace-rows 100000: exit 3" test $rc -eq 3
check "10^9 rows: refused at row 100001 (line 100003), naming the scenario's line" \
	grep -qF "huge.ini:$trace_line: [workers.cpu] trace: $TMP/huge.csv:100003: more than 100000 rows: a trace may keep at most 100000 (--max-trace-rows raises the limit" "$TMP/err"
check "10^9 rows: no results file, nothing on stdout" test ! -e "$TMP/huge.db" -a ! -s "$TMP/out"

printf '# lbsim-trace 1\ntime_s,availability\n0,1\n1,0.5\n2,1\n3,0.5\n4,1\n' > "$TMP/five.csv"
with_trace five.csv > "$TMP/five.ini"
"$LBSIM" "$TMP/five.ini" -q -o "$TMP/five.db" --max-trace-rows 5; rc=$?
check "a 5-row trace at --max-trace-rows 5: runs" test $rc -eq 0
"$LBSIM" "$TMP/five.ini" -q -o "$TMP/five4.db" --max-trace-rows 4 2> "$TMP/err"; rc=$?
check "a 5-row trace at --max-trace-rows 4: exit 3 at its line 7" test $rc -eq 3 -a ! -e "$TMP/five4.db"
check "the message names the trace's line 7" grep -qF "five.csv:7: more than 4 rows" "$TMP/err"
"$LBSIM" "$TMP/five.ini" -q -o "$TMP/five0.db" --max-trace-rows 0; rc=$?
check "--max-trace-rows 0: no limit" test $rc -eq 0
"$LBSIM" "$TMP/five.ini" -q -o "$TMP/fivex.db" --max-trace-rows -3 2> /dev/null; rc=$?
check "--max-trace-rows -3: exit 2" test $rc -eq 2 -a ! -e "$TMP/fivex.db"
# Only the rows kept count: with trace_ids, the other ids' rows are skipped.
printf '# lbsim-trace 1\ntime_s,id,availability\n0,a,1\n0,b,1\n1,a,0.5\n1,b,0.5\n2,a,1\n2,b,1\n' > "$TMP/ids.csv"
with_trace ids.csv a > "$TMP/ids.ini"
"$LBSIM" "$TMP/ids.ini" -q -o "$TMP/ids.db" --max-trace-rows 3; rc=$?
check "trace_ids: 3 rows kept of 6, within --max-trace-rows 3" test $rc -eq 0
# The same bound for lbsim predict --format and for a sweep (checked while
# loading, and passed on to each point).
"$LBSIM" predict --format lbsim "$TMP/five.csv" -q -o "$TMP/p.db" --max-trace-rows 4 2> "$TMP/err"; rc=$?
check "predict --format: --max-trace-rows 4 refuses 5 rows (exit 3)" test $rc -eq 3 -a ! -e "$TMP/p.db"
"$LBSIM" predict --format lbsim "$TMP/five.csv" -q -o "$TMP/p.db" --max-trace-rows 5; rc=$?
check "predict --format: --max-trace-rows 5 reads 5 rows" test $rc -eq 0
if parallel --version 2> /dev/null | grep -q '^GNU parallel'; then
	printf '[sweep]\nscenario = five.ini\n[vary]\nseeds = 1..2\n' > "$TMP/five-sweep.ini"
	"$LBSIM" sweep "$TMP/five-sweep.ini" -q -o "$TMP/fs.db" --max-trace-rows 4 2> "$TMP/err"; rc=$?
	check "sweep --max-trace-rows 4: refused while loading (exit 3), nothing written" \
		test $rc -eq 3 -a ! -e "$TMP/fs.db" -a ! -e "$TMP/fs.db.sweep"
	"$LBSIM" sweep "$TMP/five-sweep.ini" -q -o "$TMP/fs.db" --max-trace-rows 5 --keep; rc=$?
	check "sweep --max-trace-rows 5: runs" test $rc -eq 0
	check "sweep: each point gets --max-trace-rows 5" test "$(grep -c -- '--max-trace-rows 5 ' "$TMP/fs.db.sweep/jobs")" = 2
fi

# A line longer than 1 MiB (a file without line ends) is refused at once.
{ printf '# lbsim-trace 1\ntime_s,availability\n0,'; head -c 2000000 /dev/zero | tr '\0' 1; printf '\n'; } > "$TMP/long.csv"
with_trace long.csv > "$TMP/long.ini"
"$LBSIM" "$TMP/long.ini" -q -o "$TMP/long.db" 2> "$TMP/err"; rc=$?
check "a 2 MB line: exit 3, no results file" test $rc -eq 3 -a ! -e "$TMP/long.db"
check "a 2 MB line: named, with the limit" grep -qF "long.csv:3: line longer than 1048576 bytes" "$TMP/err"
# A quoted field left open runs to the end of the file: refused at 1 MiB.
{ printf '# lbsim-trace 1\ntime_s,availability\n0,1\n1,"0.5\n'; awk 'BEGIN { for (i = 0; i < 400000; i++) print "0,1" }'; } > "$TMP/quote.csv"
with_trace quote.csv > "$TMP/quote.ini"
"$LBSIM" "$TMP/quote.ini" -q -o "$TMP/quote.db" 2> "$TMP/err"; rc=$?
check "an open quote over 1 MiB of lines: exit 3, no results file" test $rc -eq 3 -a ! -e "$TMP/quote.db"
check "an open quote: the record's first line named" grep -qF "quote.csv:4: record longer than 1048576 bytes" "$TMP/err"
finish
