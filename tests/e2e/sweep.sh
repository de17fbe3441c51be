#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: lbsim sweep (GNU parallel, resuming after a kill, shards),
# lbsim merge, the analysis views, lbsim export and lbsim plot.
. "$(dirname "$0")/lib.sh"
need pgrep procps
D="$top_srcdir/tests/data/sweep"
SW="$D/sweep.ini"

if ! parallel --version 2> /dev/null | grep -q '^GNU parallel'; then
	echo "SKIP: GNU parallel is not installed (Debian package parallel; .ci/run installs it)"
	exit 77
fi

# The expansion: 2 cluster sizes x 2 policies x 2 seeds, first key slowest.
"$LBSIM" sweep "$SW" --list > "$TMP/list"
check "--list: 8 points and a header" test "$(wc -l < "$TMP/list")" = 9
check "--list: the first key varies slowest" test "$(sed -n 2p "$TMP/list")" = "$(printf '1\t2\tstatic\t1')"
check "--list: the seed varies fastest" test "$(sed -n 9p "$TMP/list")" = "$(printf '8\t6\tlbbsp-gpu\t2')"
"$LBSIM" sweep "$SW" --list --shard 2/3 > "$TMP/list"
check "--list --shard 2/3: points 2, 5, 8" test "$(cut -f1 "$TMP/list" | tail -n +2 | tr '\n' ' ')" = "2 5 8 "

# ---- the sweep: exactly 8 runs, one per point ------------------------------
"$LBSIM" sweep "$SW" -j2 -o "$TMP/a.db" --keep > "$TMP/out" 2> "$TMP/err"
rc=$?
check "sweep -j2: exit 0" test $rc -eq 0
check "sweep: nothing on stderr without a terminal" test ! -s "$TMP/err"
check "sweep: reports runs per second" grep -q 'ran 8 points in .* runs/s, -j 2' "$TMP/out"
check "sweep: 8 runs" test "$(q "$TMP/a.db" 'SELECT count(*) FROM runs')" = 8
check "sweep: 8 distinct (size, policy, seed)" test "$(q "$TMP/a.db" \
	'SELECT count(*) FROM (SELECT DISTINCT n_workers, policy, seed FROM runs)')" = 8
check "sweep: sizes 4 and 8" test "$(q "$TMP/a.db" 'SELECT group_concat(n, " ") FROM (SELECT DISTINCT n_workers n FROM runs ORDER BY n)')" = "4 8"
check "sweep_points: 8 points, 3 keys each" test "$(q "$TMP/a.db" \
	'SELECT count(DISTINCT point) || " " || count(*) FROM sweep_points')" = "8 24"
check "sweep_points match the runs" test "$(q "$TMP/a.db" "SELECT count(*) FROM runs r
	JOIN sweep_points p ON p.run_id = r.run_id AND p.key = 'policy' AND p.value = r.policy
	JOIN sweep_points s ON s.run_id = r.run_id AND s.key = 'seed' AND s.value = r.seed")" = 8
check "sweep: the schema version stays 4" test "$(q "$TMP/a.db" 'PRAGMA user_version')" = 4
log="$TMP/a.db.sweep/joblog"
# 8 points at -j 2: 2 jobs for each of the 2 running, of 2 points each.
check "job log: 4 jobs, each once, each exit 0" test "$(awk -F'\t' 'NR > 1 && $7 == 0 { print $1 }' "$log" | sort -n | uniq | wc -l) $(tail -n +2 "$log" | wc -l)" = "4 4"
check "each job's database holds its 2 runs" test "$(for f in "$TMP"/a.db.sweep/points/*.db; do echo "${f##*/} $(q "$f" 'SELECT count(*) FROM runs')"; done | tr '\n' ' ')" = \
	"000001-000002.db 2 000003-000004.db 2 000005-000006.db 2 000007-000008.db 2 "
# The same runs as `lbsim run` with the same settings.
"$LBSIM" run "$D/scenario.ini" -q --no-baseline --policy lbbsp-gpu --seed 2 --set workers.k80.count=6 -o "$TMP/one.db"
check "a point is the run lbsim run makes" test "$(q "$TMP/one.db" 'SELECT sim_time_s FROM runs')" = \
	"$(q "$TMP/a.db" "SELECT sim_time_s FROM runs WHERE policy = 'lbbsp-gpu' AND seed = 2 AND n_workers = 8")"

# Running it again adds nothing; without --keep the work folder goes.
"$LBSIM" sweep "$SW" -j2 -o "$TMP/a.db" > "$TMP/out"
check "rerun: exit 0, nothing run" grep -q '^ran 0 points' "$TMP/out"
check "rerun: still 8 runs" test "$(q "$TMP/a.db" 'SELECT count(*) FROM runs')" = 8
check "rerun: the work folder is removed" test ! -e "$TMP/a.db.sweep"
"$LBSIM" sweep "$SW" -o "$TMP/a.db" > "$TMP/out"
check "rerun when complete: says so" grep -q 'all 8 points are already in' "$TMP/out"
check "rerun when complete: still 8 runs" test "$(q "$TMP/a.db" 'SELECT count(*) FROM runs')" = 8

# On a terminal (script(1) gives it one), a progress line on stderr.
if command -v script > /dev/null; then
	script -qfc "'$LBSIM' sweep '$SW' --shard 1/4 -o '$TMP/tty.db'" "$TMP/tty.log" > /dev/null 2>&1
	check "on a terminal: a progress line" grep -q 'lbsim: sweep test: [0-9]/2 points ([0-9]*%), 0:0[0-9] elapsed' "$TMP/tty.log"
fi

# ---- killed midway, then resumed: 8 runs, none run twice -------------------
# One point a job, to follow each point's database and job log line (the
# kills of tests/e2e/kill.sh and tests/ci/slurm-sweep.sh take jobs of more).
# done_points DIR: the points the job databases there hold (NNNNNN.db one,
# A-B.db those from A to B).
done_points() {
	ls "$1" 2> /dev/null | grep -E '^[0-9]{6}(-[0-9]{6})?\.db$' |
		awk -F'[-.]' '{ n += $2 == "db" ? 1 : $2 - $1 + 1 } END { print n + 0 }'
}
setsid "$LBSIM" sweep "$SW" -j2 --points-per-job 1 -o "$TMP/k.db" --keep > "$TMP/out" 2> "$TMP/err" &
pid=$!
pgid=$(ps -o pgid= -p $pid | tr -d ' ')
pts="$TMP/k.db.sweep/points"
for _ in $(seq 600); do
	[ "$(done_points "$pts")" -ge 2 ] && break
	sleep 0.05
done
kill -TERM -- "-$pgid"
wait $pid
rc=$?
# Points still running when the signal came finish their iteration, roll
# back and exit; one that had just committed may still rename its file.
# Count only once the whole group is gone.
for _ in $(seq 200); do
	pgrep -g "$pgid" > /dev/null || break
	sleep 0.05
done
done_before=$(done_points "$pts")
check "killed sweep: exit 130" test $rc -eq 130
check "killed sweep: says how to resume" grep -q 'run the same command again to resume' "$TMP/err"
if [ "$done_before" -ge 1 ] && [ "$done_before" -lt 8 ]; then
	ok "killed midway ($done_before of 8 points done)"
else
	bad "killed midway: $done_before of 8 points were done (the machine is too fast or too slow for this test)"
fi
check "killed sweep: nothing merged yet (the results file it created removed)" test ! -e "$TMP/k.db"
# What was finished before: the point files (inode and time) and their runs.
(cd "$pts" && for f in [0-9]*.db; do echo "$f $(stat -c '%i %Y' "$f") $(q "$f" 'SELECT created_at || wall_s FROM runs')"; done) > "$TMP/before"
awk -F'\t' 'NR > 1 && $7 == 0 { print $1 }' "$TMP/k.db.sweep/joblog" | sort -n > "$TMP/logged_before"
"$LBSIM" sweep "$SW" -j2 --points-per-job 1 -o "$TMP/k.db" --keep > "$TMP/out" 2> "$TMP/err"
check "resumed sweep: exit 0" test $? -eq 0
# The resumed sweep reruns only what was not finished: what it ran plus what
# it found done is 8, and it found at least the points counted above (a
# point that committed as the signal came may finish its rename later).
ran=$(sed -n 's/^ran \([0-9]*\) points.*; \([0-9]*\) done before.*/\1 \2/p' "$TMP/out")
check "resumed sweep: ran only the rest" test -n "$ran" -a "$(echo "$ran" | awk '{ print $1 + $2 }')" = 8 \
	-a "$(echo "$ran" | awk '{ print $2 }')" -ge "$done_before"
check "resumed sweep: exactly 8 runs" test "$(q "$TMP/k.db" 'SELECT count(*) FROM runs')" = 8
check "resumed sweep: 8 distinct points" test "$(q "$TMP/k.db" 'SELECT count(DISTINCT point) FROM sweep_points')" = 8
check "resumed sweep: 8 distinct (size, policy, seed)" test "$(q "$TMP/k.db" \
	'SELECT count(*) FROM (SELECT DISTINCT n_workers, policy, seed FROM runs)')" = 8
log="$TMP/k.db.sweep/joblog"
check "job log: every job succeeded exactly once" test \
	"$(awk -F'\t' 'NR > 1 && $7 == 0 { n[$1]++ } END { for (s in n) if (n[s] == 1) k++; print k }' "$log")" = 8
twice=$(awk -F'\t' 'NR > 1 { print $1 }' "$log" | sort -n | uniq -d | comm -12 - "$TMP/logged_before")
check "job log: no job done before the kill ran again" test -z "$twice"
check "finished points were not redone (same files, same runs)" test \
	"$(cd "$pts" && while read -r f _; do echo "$f $(stat -c '%i %Y' "$f") $(q "$f" 'SELECT created_at || wall_s FROM runs')"; done < "$TMP/before")" = "$(cat "$TMP/before")"
check "their runs are the ones merged" test "$(while read -r f _ _ run; do
	p=$((10#${f%.db})); q "$TMP/k.db" "SELECT count(*) FROM runs r JOIN sweep_points s ON s.run_id = r.run_id
	AND s.key = 'seed' WHERE s.point = $p AND r.created_at || r.wall_s = '$run'"; done < "$TMP/before" | sort -u)" = 1
check "no temporary files left" test -z "$(ls "$pts" | grep -v '^[0-9]*\.db$')"

# ---- jobs of several points: the same results, row for row ---------------
# The 8 points (at --detail workers, short runs) in jobs of 3, 3 and 2
# points, and in jobs of one point each, as separate processes: the merged
# databases hold the same rows in every table, in the same order, but for
# the columns of real time that doc/results.md lists as differing from run
# to run (created_at, wall_s, decision_s, mean_decision_s). Reals are
# compared as -quote prints them: to 20 significant digits, which tells
# every double apart.
sed -e "s|^scenario = .*|scenario = $D/scenario.ini\ndetail = workers|" -e 's/^name = test$/name = rows/' "$SW" > "$TMP/rows.ini"
printf 'run.iterations = 300\n' >> "$TMP/rows.ini"
"$LBSIM" sweep "$TMP/rows.ini" -j2 --points-per-job 3 --keep -q -o "$TMP/batched.db"
check "--points-per-job 3: exit 0" test $? -eq 0
check "--points-per-job 3: one database a job, named by its points" \
	test "$(ls "$TMP/batched.db.sweep/points" | tr '\n' ' ')" = "000001-000003.db 000004-000006.db 000007-000008.db "
check "... holding 3, 3 and 2 runs" test "$(for f in "$TMP"/batched.db.sweep/points/*.db; do q "$f" 'SELECT count(*) FROM runs'; done | tr '\n' ' ')" = "3 3 2 "
check "... 3 jobs in the job log" test "$(tail -n +2 "$TMP/batched.db.sweep/joblog" | wc -l)" = 3
"$LBSIM" sweep "$TMP/rows.ini" -j2 --points-per-job 1 -q -o "$TMP/single.db"
check "--points-per-job 1: exit 0" test $? -eq 0
rows_of() { # DB: every table's rows, all but the real-time columns, as SQL literals
	local t cols
	for t in $(q "$1" "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"); do
		cols=$(q "$1" "SELECT group_concat('\"' || name || '\"', ', ') FROM pragma_table_info('$t')
			WHERE name NOT IN ('created_at', 'wall_s', 'decision_s', 'mean_decision_s')")
		echo "table $t"
		sqlite3 -quote "$1" "SELECT $cols FROM \"$t\" ORDER BY $cols"
	done
}
rows_of "$TMP/batched.db" > "$TMP/batched.rows"
rows_of "$TMP/single.db" > "$TMP/single.rows"
check "batched and one point a job: the same rows in every table" cmp -s "$TMP/batched.rows" "$TMP/single.rows"
check "... which are all there: 8 runs, 8 x 300 x 8 / 2 worker rows" test \
	"$(q "$TMP/batched.db" 'SELECT (SELECT count(*) FROM runs) || " " || (SELECT count(*) FROM worker_iterations)')" = "8 $((4 * 300 * 4 + 4 * 300 * 8))"
check "... and the run ids are the same" test "$(q "$TMP/batched.db" 'SELECT group_concat(run_id || p.point) FROM sweep_points p WHERE key = "seed"')" = \
	"$(q "$TMP/single.db" 'SELECT group_concat(run_id || p.point) FROM sweep_points p WHERE key = "seed"')"

# A different sweep into the same unfinished work folder is refused.
sed -e 's/^seeds = 1..2/seeds = 3..4/' -e "s|^scenario = .*|scenario = $D/scenario.ini|" "$SW" > "$TMP/other.ini"
"$LBSIM" sweep "$TMP/other.ini" -o "$TMP/k.db" 2> "$TMP/err"
check "another sweep into an unfinished work folder: exit 3" test $? -eq 3
check "... says so" grep -q 'holds an unfinished sweep that differs' "$TMP/err"

# A removal of the finished sweep's work folder cut short (killed): the
# identity goes first, so what is left (here: all but the identity and one
# point) is started afresh, finds every point merged, and is cleared.
rm "$TMP/k.db.sweep/sweep" "$pts/000001.db"
"$LBSIM" sweep "$SW" -j2 -o "$TMP/k.db" > "$TMP/out" 2> "$TMP/err"; rc=$?
check "removal cut short: exit 0" test $rc -eq 0
[ $rc -eq 0 ] || cat "$TMP/err"
check "removal cut short: still 8 runs" test "$(q "$TMP/k.db" 'SELECT count(*) FROM runs')" = 8
check "removal cut short: the folder is gone" test ! -e "$TMP/k.db.sweep"

# ---- shards and lbsim merge ------------------------------------------------
# The shards run as the Slurm template's array tasks would run them.
slurm="$top_srcdir/scenarios/sweeps/slurm-array.sh"
for k in 1 2; do
	SLURM_ARRAY_TASK_ID=$k SLURM_ARRAY_TASK_COUNT=2 SLURM_CPUS_PER_TASK=2 LBSIM="$LBSIM" \
		"$slurm" "$SW" "$TMP/slurm" > /dev/null || break
done
check "shards: exit 0" test $? -eq 0
ln -s "$TMP/slurm/shard-1-of-2.db" "$TMP/s1.db"
ln -s "$TMP/slurm/shard-2-of-2.db" "$TMP/s2.db"
check "shards: 4 runs each" test "$(q "$TMP/s1.db" 'SELECT count(*) FROM runs') $(q "$TMP/s2.db" 'SELECT count(*) FROM runs')" = "4 4"
check "shard 1/2: the odd points" test "$(q "$TMP/s1.db" 'SELECT group_concat(DISTINCT point) FROM sweep_points')" = "1,3,5,7"
"$LBSIM" merge "$TMP/m.db" "$TMP/s1.db" "$TMP/s2.db" > "$TMP/out"
check "merge: exit 0" test $? -eq 0
check "merge: 8 runs" test "$(q "$TMP/m.db" 'SELECT count(*) FROM runs')" = 8
check "merge: runs renumbered 1 to 8" test "$(q "$TMP/m.db" 'SELECT min(run_id) || max(run_id) FROM runs')" = 18
rows() { # DB: the rows of every table with runs
	q "$1" 'SELECT (SELECT count(*) FROM run_config), (SELECT count(*) FROM workers),
	  (SELECT count(*) FROM iterations), (SELECT count(*) FROM batches),
	  (SELECT count(*) FROM policy_vars), (SELECT count(*) FROM sweep_points)'
}
check "merge: every table copied" test "$(rows "$TMP/m.db")" = \
	"$(paste -d'|' <(rows "$TMP/s1.db" | tr '|' '\n') <(rows "$TMP/s2.db" | tr '|' '\n') | awk -F'|' '{ printf "%s%d", (NR > 1 ? "|" : ""), $1 + $2 }')"
check "merge: the rows follow their run" test "$(q "$TMP/m.db" "SELECT count(*) FROM runs r JOIN iterations i
	ON i.run_id = r.run_id AND i.iteration = r.iterations - 1 WHERE i.end_s = r.sim_time_s")" = 8
# What the template submits from a login node (a stand-in sbatch logs it).
mkdir "$TMP/bin"
printf '#!/bin/sh\necho "$*" >> "%s/sbatch.log"\necho 42\n' "$TMP" > "$TMP/bin/sbatch"
chmod +x "$TMP/bin/sbatch"
PATH="$TMP/bin:$PATH" LBSIM="$LBSIM" "$slurm" "$SW" "$TMP/slurm2" 4 > /dev/null
check "slurm template: submits the array" grep -q -- "^--parsable --array=1-4 $slurm $SW $TMP/slurm2 4\$" "$TMP/sbatch.log"
check "slurm template: then the merge" grep -q -- "^--dependency=afterok:42 .*merge '$TMP/slurm2/results.db' '$TMP/slurm2'/shard-\\*-of-4.db" "$TMP/sbatch.log"
"$LBSIM" merge "$TMP/m.db" "$TMP/s1.db" "$TMP/s2.db" "$TMP/a.db" > "$TMP/out"
check "merge again: nothing added" grep -q 'merged 0 runs from 3 files.*16 already there, skipped' "$TMP/out"
check "merge again: still 8 runs" test "$(q "$TMP/m.db" 'SELECT count(*) FROM runs')" = 8
"$LBSIM" merge "$TMP/m2.db" "$TMP/one.db" "$TMP/one.db" -q
check "merge: a plain run once, however often given" test "$(q "$TMP/m2.db" 'SELECT count(*) FROM runs')" = 1
"$LBSIM" merge "$TMP/m2.db" > /dev/null 2>&1
check "merge without inputs: exit 2" test $? -eq 2
"$LBSIM" merge "$TMP/m2.db" "$TMP/none.db" 2> "$TMP/err"
check "merge a missing file: exit 3" test $? -eq 3
check "... named" grep -q "$TMP/none.db" "$TMP/err"
sqlite3 "$TMP/other.db" 'CREATE TABLE t(x); PRAGMA user_version = 9;'
"$LBSIM" merge "$TMP/m2.db" "$TMP/one.db" "$TMP/other.db" 2> "$TMP/err"
check "merge a foreign database: exit 3" test $? -eq 3
check "merge a foreign database: nothing merged" test "$(q "$TMP/m2.db" 'SELECT count(*) FROM runs')" = 1
"$LBSIM" merge "$TMP/m2.db" "$TMP/m2.db" 2> /dev/null
check "merge a file into itself: exit 3" test $? -eq 3
"$LBSIM" merge "$TMP/other.db" "$TMP/one.db" 2> /dev/null
check "merge into a foreign database: exit 4" test $? -eq 4

# ---- the analysis views ----------------------------------------------------
sqlite3 "$TMP/v.db" ".restore '$TMP/a.db'"
sqlite3 "$TMP/v.db" < "$top_srcdir/analysis/views.sql"
check "run_setting: 4 settings of 2 runs" test "$(q "$TMP/v.db" 'SELECT count(DISTINCT setting_id) || " " || max(c) FROM
	(SELECT setting_id, count(*) OVER (PARTITION BY setting_id) c FROM run_setting)')" = "4 2"
check "speedup: every static run is 1" test "$(q "$TMP/v.db" "SELECT count(*) FROM speedup WHERE policy = 'static' AND speedup = 1")" = 4
check "speedup: every run has its baseline of the same seed and size" test "$(q "$TMP/v.db" "SELECT count(*) FROM speedup s
	JOIN runs b ON b.run_id = s.baseline_run_id WHERE b.seed = s.seed AND b.n_workers = s.n_workers AND b.policy = 'static'")" = 8
check "speedup: lbbsp-gpu wins on the small cluster" test "$(q "$TMP/v.db" "SELECT mean_speedup > 1.5 FROM speedup_by_size WHERE policy = 'lbbsp-gpu' AND n_workers = 4")" = 1
check "straggler_gap_stats: ordered percentiles" test "$(q "$TMP/v.db" 'SELECT count(*) FROM straggler_gap_stats
	WHERE min_s <= p50_s AND p50_s <= p90_s AND p90_s <= p99_s AND p99_s <= max_s AND iterations = 10000')" = 8
check "policy_time_to_iterations: time to 1000 iterations" test "$(q "$TMP/v.db" 'SELECT count(*) FROM policy_time_to_iterations WHERE iterations = 1000 AND runs = 2')" = 4

# ---- lbsim export ------------------------------------------------------------
"$LBSIM" export "$TMP/a.db" run_summary > "$TMP/summary.csv"
check "export: exit 0" test $? -eq 0
check "export: a header and 8 rows" test "$(wc -l < "$TMP/summary.csv")" = 9
check "export: CSV header" grep -q '^run_id,scenario,policy,seed,n_workers,' "$TMP/summary.csv"
sum_a=$(md5sum < "$TMP/a.db")
"$LBSIM" export "$TMP/a.db" speedup_by_size > "$TMP/s.csv"
check "export: a view of views.sql" test "$(grep -c '^test-sweep,lbbsp-gpu,' "$TMP/s.csv")" = 2
check "export: the database is not changed" test "$(md5sum < "$TMP/a.db")" = "$sum_a"
"$LBSIM" export "$TMP/a.db" | grep -q '^view	speedup$'
check "export without a view: lists them" test $? -eq 0
"$LBSIM" export "$TMP/a.db" nope > /dev/null 2> "$TMP/err"
check "export an unknown view: exit 2" test $? -eq 2
check "... lists the views" grep -q 'view straggler_gap_cdf' "$TMP/err"
"$LBSIM" export "$TMP/none.db" runs > /dev/null 2>&1
check "export a missing database: exit 3" test $? -eq 3
check "export a missing database: not created" test ! -e "$TMP/none.db"

# ---- lbsim plot --------------------------------------------------------------
is_png() { # FILE: PNG signature and more than a header
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && [ "$(stat -c %s "$1")" -gt 2000 ]
}
if command -v gnuplot > /dev/null; then
	"$LBSIM" plot "$TMP/a.db" --out "$TMP/plots" > "$TMP/out" 2> "$TMP/err"
	check "plot: exit 0" test $? -eq 0
	for p in iteration-time batch-sizes speedup straggler-cdf iteration-cdf time-to-train; do
		check "plot: $p.png is a PNG" is_png "$TMP/plots/$p.png"
		check "plot: $p.csv beside it" test -s "$TMP/plots/$p.csv"
	done
	check "plot: names the files" test "$(wc -l < "$TMP/out")" = 6
	check "plot: no timeline without --detail workers, saying why" grep -q 'no gantt: .*--detail workers' "$TMP/err"
	check "plot: the database is not changed" test "$(md5sum < "$TMP/a.db")" = "$sum_a"
	# The scripts work by hand on the CSV (their defaults read it with POSIX tools).
	for p in iteration-time batch-sizes speedup straggler-cdf iteration-cdf time-to-train; do
		(cd "$TMP" && gnuplot -e "data='plots/$p.csv'; out='hand-$p.png'" "$top_srcdir/analysis/$p.gp" 2> "$TMP/err")
		check "analysis/$p.gp by hand" is_png "$TMP/hand-$p.png"
	done
	"$LBSIM" plot "$TMP/a.db" --out "$TMP/plots" --setting 9 2> /dev/null
	check "plot --setting beyond the settings: exit 2" test $? -eq 2
else
	echo "(gnuplot is not installed: the plot checks are left out)"
fi
PATH=/nonexistent "$LBSIM" plot "$TMP/a.db" --out "$TMP/noplots" 2> "$TMP/err"
check "plot without gnuplot: exit 4" test $? -eq 4
check "plot without gnuplot: says so" grep -q 'gnuplot.*not on PATH.*gnuplot-nox' "$TMP/err"
check "plot without gnuplot: no pictures" test ! -e "$TMP/noplots"

# ---- bad sweeps --------------------------------------------------------------
PATH=/nonexistent "$LBSIM" sweep "$SW" -o "$TMP/np.db" 2> "$TMP/err"
check "sweep without GNU parallel: exit 4" test $? -eq 4
check "sweep without GNU parallel: says so" grep -q 'GNU parallel.*not on PATH' "$TMP/err"
check "sweep without GNU parallel: no database" test ! -e "$TMP/np.db"
"$LBSIM" sweep "$SW" -j 0 2> /dev/null; check "-j 0: exit 2" test $? -eq 2
"$LBSIM" sweep "$SW" --shard 3/2 2> /dev/null; check "--shard 3/2: exit 2" test $? -eq 2
"$LBSIM" sweep 2> /dev/null; check "no sweep file: exit 2" test $? -eq 2
printf '[sweep]\nscenario = %s\n[vary]\nrun.global_batch = 256, 4096\n' "$D/scenario.ini" > "$TMP/cap.ini"
"$LBSIM" sweep "$TMP/cap.ini" -o "$TMP/cap.db" 2> "$TMP/err"
check "a point that cannot run: exit 3" test $? -eq 3
check "... named with its parameters" grep -q "$TMP/cap.ini: point 2 of 2 (run.global_batch=4096, policy=static, seed=1)" "$TMP/err"
check "... before anything ran" test ! -e "$TMP/cap.db" -a ! -e "$TMP/cap.db.sweep"
# The bad-sweep corpus is run by tests/e2e/bad-input.sh.

# ---- hostile folder names: every path reaches the job lines literally ----
# Sweeps started inside folders whose names hold a newline, quotes, `$(...)`,
# backquotes and `;`: each must run its points, and none of the shell text
# in the names may run (it would create INJECTED* files).
mkdir "$TMP/hostile"
names=($'nl\ntouch INJECTED1; $(touch INJECTED2)' $'q \'x\' "y"\n$(touch INJECTED3) `touch INJECTED4`; touch INJECTED5')
for i in 0 1; do
	dir="$TMP/hostile/${names[$i]}"
	mkdir "$dir"
	cp "$D/scenario.ini" "$dir/sc.ini"
	printf '[sweep]\nname = hostile\nscenario = sc.ini\n[vary]\nrun.iterations = 3,4\nseeds = 1..2\n' > "$dir/sw.ini"
	(cd "$dir" && "$LBSIM" sweep sw.ini -j2 -o "out.db" > /dev/null 2> "$TMP/herr"); rc=$?
	check "hostile folder $i: the sweep succeeds" test $rc -eq 0
	[ $rc -eq 0 ] || cat "$TMP/herr"
	check "hostile folder $i: its 4 points are in the results" test "$(q "$dir/out.db" 'SELECT count(*) FROM runs')" = 4
	# gnuplot gets the folder's name too (as a gnuplot string)
	command -v gnuplot > /dev/null || continue
	(cd "$dir" && "$LBSIM" plot out.db --out "p'\$(touch INJECTED6)" -q); rc=$?
	check "hostile folder $i: plot into it (exit $rc)" test $rc -eq 0 -a -s "$dir/p'\$(touch INJECTED6)/speedup.png"
done
check "hostile folders: no command in a folder name ran" test -z "$(find "$TMP" -name 'INJECTED*')"

# A sweep over a policy's option (issue 33): lbbsp-cpu on NARX and on EMA
# are two policies to every view, plot and label, never pooled. On a CPU
# cluster whose speeds move (predict/cpu-bursty) the two predictors give
# different times, so pooling them would show as runs = 4 and a mean of
# the two.
cat > "$TMP/popt.ini" <<INI
[sweep]
scenario = $top_srcdir/scenarios/predict/cpu-bursty.ini
[vary]
run.epochs = 1
policy = static, lbbsp-cpu
policy.lbbsp-cpu.predictor = narx, ema
seeds = 1..2
INI
"$LBSIM" sweep "$TMP/popt.ini" -q -o "$TMP/popt.db" -j 2 > /dev/null 2>&1
check "a policy option swept: two variants of lbbsp-cpu, 2 runs each, in speedup_by_point" \
	test "$(q "$TMP/popt.db" "SELECT group_concat(policy || ':' || runs, ' ') FROM (SELECT policy, runs FROM speedup_by_point
		WHERE policy LIKE 'lbbsp-cpu%' ORDER BY policy)")" = "lbbsp-cpu:2 lbbsp-cpu (predictor=ema):2"
check "... each variant's mean is its own runs' (EMA's runs alone)" \
	test "$(q "$TMP/popt.db" "SELECT abs(b.mean_speedup - (SELECT avg(s.speedup) FROM speedup s JOIN run_config c USING (run_id)
		WHERE s.policy = 'lbbsp-cpu' AND c.section = 'policy.lbbsp-cpu' AND c.key = 'predictor' AND c.value = 'ema')) < 1e-12
		FROM speedup_by_point b WHERE b.policy = 'lbbsp-cpu (predictor=ema)'")" = 1
check "... the option is a key that varies (run_keys)" \
	test "$(q "$TMP/popt.db" "SELECT count(DISTINCT \"policy.lbbsp-cpu.predictor\") FROM run_keys")" = 2
"$LBSIM" plot "$TMP/popt.db" --out "$TMP/popt-plots" --by policy.lbbsp-cpu.predictor -q 2> "$TMP/err"; rc=$?
check "... lbsim plot --by policy.lbbsp-cpu.predictor draws (exit $rc: $(head -c 200 "$TMP/err"))" \
	test $rc -eq 0 -a -s "$TMP/popt-plots/speedup.png"
check "... the speedup plot's series are the two variants" \
	sh -c "grep -q 'predictor=ema' '$TMP/popt-plots/speedup.csv' && grep -q 'predictor=narx' '$TMP/popt-plots/speedup.csv'"
# Static reads no lbbsp-cpu option: its run of each seed is made once and
# shared by both variants (2 static + 2 x 2 lbbsp-cpu = 6 runs of 8 points),
# each lbbsp-cpu run paired with the static run of its seed.
check "a policy option swept: static runs once per seed (6 runs, not 8)" test "$(q "$TMP/popt.db" 'SELECT count(*) FROM runs')" = 6
check "... 2 static runs, one per seed" test "$(q "$TMP/popt.db" "SELECT group_concat(seed) FROM (SELECT seed FROM runs WHERE policy = 'static' ORDER BY seed)")" = "1,2"
check "... every lbbsp-cpu run has its seed's static run as baseline" test \
	"$(q "$TMP/popt.db" "SELECT count(*) FROM speedup s JOIN runs b ON b.run_id = s.baseline_run_id WHERE s.policy = 'lbbsp-cpu' AND b.policy = 'static' AND b.seed = s.seed")" = 4
check "... static's speedup row counts its 2 runs, once" test "$(q "$TMP/popt.db" "SELECT runs FROM speedup_by_point WHERE policy = 'static'")" = 2
"$LBSIM" sweep "$TMP/popt.ini" -o "$TMP/popt.db" -j 2 > "$TMP/out" 2>&1
check "... run again: every run already there (6 points that run)" grep -q 'all 6 points are already in' "$TMP/out"
"$LBSIM" sweep "$TMP/popt.ini" -o "$TMP/popt2.db" -j 2 > "$TMP/out" 2>&1
check "... the sweep says which points share a run" grep -q '8 points (6 runs: 2 share another point' "$TMP/out"

finish
