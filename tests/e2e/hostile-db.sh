#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: results databases crafted by an attacker, given to the
# commands that read them. Each file is a real results file changed with
# the sqlite3 shell.
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
hostile extra "ALTER TABLE runs ADD COLUMN evil TEXT"
run_status "merge: an input with an extra column is refused" 3 "extra.db: .*runs.*evil" merge m2.db extra.db
hostile extra2 "ALTER TABLE iterations ADD COLUMN evil TEXT"
run_status "merge: an extra column in another table" 3 "extra2.db: .*iterations.*evil" merge m2.db extra2.db
# A real version 2 file (runs without mode, no validations) merges, its runs
# simulated: it crashed the same way, on the column it lacks.
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

finish
