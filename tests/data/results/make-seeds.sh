#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Rebuilds the small results databases of this folder, the seeds of the
# results fuzzer (fuzz/fuzz_results.c) and of its replay in make check:
# real files of each schema version and of each kind lbsim writes, and the
# hostile ones tests/e2e/hostile-db.sh builds, each with 512-byte pages and
# without the stored views, so that each is a few kB.
# Usage (from the top of the tree, after make): tests/data/results/make-seeds.sh
set -eu
LBSIM=${LBSIM:-./lbsim}
out=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
S=scenarios/default.ini
small() { # FILE: no views, 512-byte pages, vacuumed
	for v in $(sqlite3 "$1" "SELECT name FROM sqlite_master WHERE type = 'view'"); do
		sqlite3 "$1" "DROP VIEW $v"
	done
	sqlite3 "$1" "PRAGMA page_size = 512; VACUUM"
}
"$LBSIM" "$S" -q -o "$tmp/run.db" --set run.iterations=2 --set workers.v100.count=1 \
	--set workers.p100.count=1 --set workers.k80.count=1 --set run.global_batch=96 --detail workers --policy lbbsp-gpu > /dev/null
small "$tmp/run.db"
cp "$tmp/run.db" "$out/run.db"
# A sweep's file: sweep_points of the two runs.
cp "$tmp/run.db" "$out/sweep.db"
sqlite3 "$out/sweep.db" "$(printf '%s' "CREATE TABLE sweep_points (
  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  sweep TEXT NOT NULL, sweep_hash TEXT NOT NULL, point INTEGER NOT NULL,
  key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, key)) WITHOUT ROWID;
CREATE INDEX sweep_points_by_point ON sweep_points (sweep_hash, point);
INSERT INTO sweep_points SELECT run_id, 'seed', 'abc', run_id, 'policy', policy FROM runs;")"
# Version 2 (runs without mode, no validations) and 3 (no machine_drift),
# from a dump, as those versions created them (SQLite 3.40's DROP COLUMN
# fails on runs.mode, whose definition ends in a comment).
sqlite3 "$tmp/run.db" .dump | sed -e "/^  mode TEXT NOT NULL DEFAULT 'simulated'/d" \
	-e 's/^\(  created_at TEXT NOT NULL\),\( *-- UTC, ISO 8601\)$/\1\2/' \
	-e "/^INSERT INTO runs /s/,'simulated');\$/);/" \
	-e '/^CREATE TABLE validations/,/^) WITHOUT ROWID;$/d' -e '/^INSERT INTO validations/d' |
	sqlite3 "$tmp/v2.db"
sqlite3 "$tmp/v2.db" "PRAGMA user_version = 2"
small "$tmp/v2.db"
cp "$tmp/v2.db" "$out/v2.db"
sqlite3 "$tmp/run.db" .dump | sed -e '/^  machine_drift REAL,/d' -e '/^INSERT INTO validations/d' |
	sqlite3 "$tmp/v3.db"
sqlite3 "$tmp/v3.db" "PRAGMA user_version = 3"
small "$tmp/v3.db"
cp "$tmp/v3.db" "$out/v3.db"
# Hostile: a table missing, a column added, a view for a table, a trigger.
hostile() { cp "$tmp/run.db" "$out/$1.db" && sqlite3 "$out/$1.db" "$2; VACUUM"; }
hostile missing-table "DROP TABLE policy_vars"
hostile extra-column "ALTER TABLE runs ADD COLUMN evil TEXT"
hostile view-for-table "DROP TABLE run_config; CREATE VIEW run_config AS WITH RECURSIVE c(x) AS
	(SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT 1 AS run_id, 'run' AS section, 'k' || x AS key,
	'v' AS value FROM c"
hostile trigger "CREATE TRIGGER evil AFTER INSERT ON runs BEGIN DELETE FROM run_config; END"
ls -l "$out"/*.db
