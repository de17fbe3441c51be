#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: results databases crafted by an attacker, given to the
# commands that read them (merge, export, report, plot, views, predict) or
# append to them (run, merge, views). Each file is a real results file
# changed with the sqlite3 shell: a table missing, a column added, a view
# (endless) where a table belongs, a 16 MB text value, a trigger or an
# unknown table planted in an output, a foreign file tagged as an older
# schema version. Every one is refused before it is used, with its exit
# status (3: an input; 4: an output), at once, in bounded memory, and a
# refused output is left byte for byte as it was. A long merge and a long
# export stop on SIGTERM within a second with exit status 130.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
need timeout coreutils
S="$top_srcdir/scenarios/default.ini"
cd "$TMP" || exit 1

# A small real results file of every table: 2 runs, worker detail.
"$LBSIM" "$S" -q -o base.db --set run.iterations=5 --detail workers --policy static-proportional \
	> /dev/null || { echo "FAIL: cannot write base.db"; exit 1; }
"$LBSIM" "$S" -q -o other.db --set run.iterations=5 --seed 2 > /dev/null
# hostile NAME SQL: base.db changed by SQL, as NAME.db.
hostile() { cp base.db "$1.db" && sqlite3 "$1.db" "$2"; }

# run_status NAME WANT PATTERN CMD...: CMD (lbsim's arguments) exits WANT
# within 20 s, not by a signal, and says PATTERN on stderr.
run_status() {
	local name=$1 want=$2 pat=$3 rc; shift 3
	timeout -s KILL 20 "$LBSIM" "$@" > out 2> err < /dev/null
	rc=$?
	if [ "$rc" -eq "$want" ] && { [ -z "$pat" ] || grep -q -- "$pat" err; }; then
		ok "$name (exit $rc)"
	else
		bad "$name: exit $rc, wanted $want and '$pat'; stderr: $(head -c 300 err)"
	fi
}

# ---- class 3: merge crashed (SIGBUS) on a missing table or an extra column --
hostile missing "DROP TABLE policy_vars"
run_status "merge: an input without a table is refused" 3 "missing.db: .*policy_vars" merge m1.db missing.db
check "... before the output is created" test ! -e m1.db
hostile extra "ALTER TABLE runs ADD COLUMN evil TEXT"
run_status "merge: an input with an extra column is refused" 3 "extra.db: .*runs.*evil" merge m2.db extra.db
check "... before the output is created" test ! -e m2.db
hostile extra2 "ALTER TABLE iterations ADD COLUMN evil TEXT"
run_status "merge: an extra column in another table" 3 "extra2.db: .*iterations.*evil" merge m2.db extra2.db
# The same inputs to the other readers: one checker for all.
run_status "export: an input without a table is refused" 3 "policy_vars" export missing.db runs
run_status "export: an extra column is refused" 3 "evil" export extra.db runs
run_status "views: an extra column is refused" 3 "evil" views extra.db
run_status "predict: an extra column is refused" 3 "evil" predict extra.db:1
# An output of the same shapes: refused (4), not written.
run_status "merge: an output with an extra column is refused" 4 "extra.db: .*evil" merge extra.db other.db
run_status "run: appending to a file without a table is refused" 4 "missing.db: .*policy_vars" \
	"$S" -q -o missing.db --set run.iterations=2

# ---- class 4: hostile databases ----------------------------------------------
# A view where a table belongs, endless: merge wrote without bound and
# ignored SIGTERM, export and report hung.
endless="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
hostile view-rc "DROP TABLE run_config; CREATE VIEW run_config AS $endless
	SELECT 1 AS run_id, 'run' AS section, 'k' || x AS key, 'v' AS value FROM c;"
hostile view-wi "DROP TABLE worker_iterations; CREATE VIEW worker_iterations AS $endless
	SELECT 1 AS run_id, x AS iteration, 0 AS worker, 1 AS batch, 1.0 AS compute_s, 0.0 AS wait_s,
	NULL AS predicted_speed, NULL AS cpu_util, NULL AS mem_util FROM c;"
for f in view-rc view-wi; do
	t=run_config; [ $f = view-wi ] && t=worker_iterations
	run_status "merge: $t a view ($f.db) is refused" 3 "$f.db: $t is a view" merge m3.db $f.db
	check "... nothing written" test ! -e m3.db
	run_status "export: $t a view is refused" 3 "$f.db: $t is a view" export $f.db runs
	run_status "report: $t a view is refused" 3 "$t is a view" report $f.db -o r.html
	check "... no report" test ! -e r.html
	run_status "plot: $t a view is refused" 3 "$t is a view" plot $f.db --out plots
	run_status "views: $t a view is refused" 3 "$t is a view" views $f.db
done
run_status "predict: worker_iterations a view is refused" 3 "worker_iterations is a view" predict view-wi.db:1
# A view in the place of a table in an output.
run_status "run: an output with a view for a table is refused" 4 "view-rc.db: run_config is a view" \
	"$S" -q -o view-rc.db --set run.iterations=2

# A 16 MB text value: merge took ~1 GB; now refused in bounded memory.
hostile big "UPDATE runs SET description = replace(hex(zeroblob(8388608)), '0', 'a') WHERE run_id = 1"
check "big.db holds a 16 MB value" test "$(sqlite3 big.db 'SELECT length(description) FROM runs WHERE run_id = 1')" = 16777216
peak() { # peak KB of lbsim ARGS... into rss, or "" without GNU time
	rss=
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -o rss.txt -f %M "$LBSIM" "$@" > /dev/null 2> err
		rc=$?
		rss=$(tail -n 1 rss.txt)
	else
		"$LBSIM" "$@" > /dev/null 2> err
		rc=$?
	fi
}
peak merge m4.db big.db
check "merge: a 16 MB value is refused (exit 3)" test "$rc" -eq 3
check "... saying the value is too large" grep -q "big.db (table runs).*over 1048576 bytes" err
check "... nothing merged" test "$(q m4.db 'SELECT count(*) FROM runs' 2> /dev/null || echo 0)" = 0
if [ -n "$rss" ]; then
	check "... in bounded memory (peak $rss KB < 100 MB)" test "$rss" -lt 100000
	peak export big.db runs
	check "export: a 16 MB value, in bounded memory (exit $rc, peak $rss KB < 150 MB)" test "$rss" -lt 150000
else
	echo "note: no /usr/bin/time: peak memory not checked"
fi

# Triggers, unknown tables and views planted in an output: refused before
# anything is written, the file left as it was.
refused_output() { # NAME STATUS FILE PATTERN CMD...
	local name=$1 want=$2 f=$3 pat=$4; shift 4
	cp "$f" "$f.orig"
	run_status "$name" "$want" "$pat" "$@"
	check "... $f left byte for byte" cmp -s "$f" "$f.orig"
	check "... no journal left" test ! -e "$f-journal"
}
hostile trigger "CREATE TRIGGER evil AFTER INSERT ON runs BEGIN
	UPDATE runs SET description = 'pwned'; DELETE FROM run_config; END;"
refused_output "merge: a trigger in the output is refused" 4 trigger.db "trigger.db: .*trigger evil" \
	merge trigger.db other.db
check "... the trigger did not run" test "$(q trigger.db "SELECT count(*) FROM runs WHERE description = 'pwned'")" = 0
refused_output "run: a trigger in the output is refused" 4 trigger.db "trigger evil" \
	"$S" -q -o trigger.db --set run.iterations=2
refused_output "views: a trigger in the file is refused" 3 trigger.db "trigger evil" views trigger.db
refused_output "sweep: a trigger in the output is refused" 4 trigger.db "trigger.db: .*trigger evil" \
	sweep "$top_srcdir/tests/data/sweep/bandwidth.ini" -j 1 -q -o trigger.db
check "... no point run" test ! -e trigger.db.sweep/points
hostile table "CREATE TABLE evil (x)"
refused_output "merge: an unknown table in the output is refused" 4 table.db "table.db: .*table evil" \
	merge table.db other.db
hostile view "CREATE VIEW evil AS SELECT * FROM runs"
refused_output "merge: an unknown view in the output is refused" 4 view.db "view.db: .*view evil" \
	merge view.db other.db
hostile index "CREATE INDEX evil ON runs (description)"
refused_output "run: an unknown index in the output is refused" 4 index.db "index evil" \
	"$S" -q -o index.db --set run.iterations=2
# A constraint planted in a table of a version 3 file: the upgrade was
# committed, then the run failed on it.
hostile check "DROP TABLE iterations; CREATE TABLE iterations (
	run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE, iteration INTEGER NOT NULL,
	epoch INTEGER NOT NULL, start_s REAL NOT NULL, compute_end_s REAL NOT NULL, end_s REAL NOT NULL
	CHECK (end_s < 0), straggler_gap_s REAL NOT NULL, aggregation_s REAL NOT NULL, decision_s REAL NOT NULL,
	global_batch_samples INTEGER NOT NULL, PRIMARY KEY (run_id, iteration)) WITHOUT ROWID;
	ALTER TABLE validations DROP COLUMN machine_drift; PRAGMA user_version = 3"
refused_output "run: a CHECK planted in a table of the output is refused" 4 check.db \
	"check.db: table iterations is not declared as lbsim declares it" "$S" -q -o check.db --set run.iterations=2
# ... but read: lbsim ignores what it does not read in an input.
run_status "merge: an input with a trigger and a view of its own is read" 0 "" merge m5.db trigger.db
check "... its 2 runs merged" test "$(q m5.db 'SELECT count(*) FROM runs')" = 2
check "... and nothing of the trigger or view" test "$(q m5.db "SELECT count(*) FROM sqlite_master WHERE name = 'evil'")" = 0

# A foreign file tagged as an older schema version was upgraded in place
# before it was refused: now left as it was.
for v in 2 3; do
	sqlite3 foreign$v.db "CREATE TABLE runs (x); CREATE TABLE validations (y); PRAGMA user_version = $v"
	refused_output "run: a foreign file of user_version $v is refused" 4 foreign$v.db "foreign$v.db: " \
		"$S" -q -o foreign$v.db --set run.iterations=2
	refused_output "merge: a foreign output of user_version $v is refused" 4 foreign$v.db "foreign$v.db: " \
		merge foreign$v.db other.db
	refused_output "views: a foreign file of user_version $v is refused" 3 foreign$v.db "foreign$v.db: " \
		views foreign$v.db
done
# A real version 2 file is still upgraded when a run is appended to it.
# (Built from a dump: SQLite 3.40's DROP COLUMN fails on runs.mode, whose
# definition ends in a comment.)
sqlite3 base.db .dump | sed -e "/^  mode TEXT NOT NULL DEFAULT 'simulated'/d" \
	-e 's/^\(  created_at TEXT NOT NULL\),\( *-- UTC, ISO 8601\)$/\1\2/' \
	-e "/^INSERT INTO runs /s/,'simulated');\$/);/" \
	-e '/^CREATE TABLE validations/,/^) WITHOUT ROWID;$/d' -e '/^INSERT INTO validations/d' > v2.sql
sqlite3 v2.db < v2.sql && sqlite3 v2.db "PRAGMA user_version = 2"
check "v2.db is a version 2 file" test "$(q v2.db "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'mode'") $(q v2.db "SELECT count(*) FROM sqlite_master WHERE name = 'validations'") $(q v2.db 'SELECT count(*) FROM runs')" = "0 0 2"
run_status "merge: a real version 2 file is read" 0 "" merge m6.db v2.db
check "... its runs simulated" test "$(q m6.db "SELECT group_concat(mode) FROM runs")" = simulated,simulated
run_status "export: a real version 2 file is read" 0 "" export v2.db runs
run_status "run: a real version 2 file is appended to" 0 "" "$S" -q -o v2.db --set run.iterations=2
check "... and made version 4" test "$(q v2.db 'PRAGMA user_version') $(q v2.db 'SELECT count(*) FROM runs')" = "4 3"

# SIGTERM during one long statement: merge copied a run's rows in one
# statement and looked at signals only between runs.
cp base.db long.db
sqlite3 long.db "WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < 1999999)
	INSERT INTO worker_iterations SELECT 1, x / 12 + 100, x % 12, 64, 0.5, 0.1, NULL, NULL, NULL FROM c"
# term NAME WAIT CMD...: CMD (lbsim's arguments) gets SIGTERM once the file
# WAIT exists (or after 0.5 s when WAIT is "") and exits 130 within a
# second of it.
term() {
	local name=$1 wait=$2 rc t0 t1 ms i; shift 2
	"$LBSIM" "$@" > /dev/null 2> err &
	local pid=$!
	sleep 0.5
	for ((i = 0; i < 1000; i++)); do
		[ -z "$wait" ] || [ -e "$wait" ] && break
		sleep 0.01
	done
	t0=$(date +%s%N)
	kill -TERM $pid
	wait $pid
	rc=$?
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	if [ "$rc" -eq 130 ] && [ "$ms" -lt 1000 ]; then
		ok "$name: exit 130, ${ms} ms after SIGTERM"
	else
		bad "$name: exit $rc, ${ms} ms after SIGTERM (wanted 130 within 1000 ms); stderr: $(head -c 300 err)"
	fi
}
# (Once the output's journal exists, merge is copying the long run: it
# writes nothing before.)
term "merge: SIGTERM during a long copy" m7.db-journal merge m7.db long.db
check "... nothing of the run kept" test "$(q m7.db 'SELECT count(*) FROM runs')" = 0
check "... no journal left" test ! -e m7.db-journal
cp base.db slowbase.db && sqlite3 slowbase.db "CREATE VIEW slow AS $endless SELECT x FROM c WHERE x < 0"
term "export: SIGTERM during an endless query" "" export slowbase.db slow

finish
