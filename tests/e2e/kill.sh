#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Crash safety: runs and sweeps killed with SIGKILL at random moments leave
# every results database valid (PRAGMA integrity_check), each run in it
# complete (as many iteration rows as runs.iterations) or absent, and a
# resumed sweep finishes with every point exactly once.
# KILL_POINTS (default 30) kills in all: half runs, half sweeps.
. "$(dirname "$0")/lib.sh"
need pgrep procps
need flock util-linux
SC="$top_srcdir/tests/data/sweep/scenario.ini"
SW="$top_srcdir/tests/data/sweep/sweep.ini"
points=${KILL_POINTS:-30}
RANDOM=${KILL_SEED:-$$}

# valid DB: integrity ok and no partial run.
valid() {
	[ "$(q "$1" 'PRAGMA integrity_check')" = ok ] &&
	[ "$(q "$1" 'SELECT count(*) FROM runs r WHERE r.iterations !=
		(SELECT count(*) FROM iterations i WHERE i.run_id = r.run_id)')" = 0 ]
}
# sleep a random 0.00 .. $1.99 s
nap() { sleep "$((RANDOM % ($1 + 1))).$((RANDOM % 100))"; }
# point runs of session $1 still going
points_running() { pgrep -s "$1" -f 'sweep --run-batch' > /dev/null; }
# wait for them to stop: at most $2 steps of 0.05 s
await_points() { for _ in $(seq "$2"); do points_running "$1" || break; sleep 0.05; done; }
# kill what is left of session $1 (a process forked as the signal went out
# can escape it: again until none is left)
reap() { while pgrep -s "$1" > /dev/null; do pkill -KILL -s "$1"; sleep 0.05; done; }

# ---- runs: each killed while recording, into one growing database -----
"$LBSIM" "$SC" -q -o "$TMP/r.db" --set run.iterations=50
bad_runs=0
for i in $(seq $((points / 2))); do
	before=$(q "$TMP/r.db" 'SELECT count(*) FROM runs')
	"$LBSIM" "$SC" -q -o "$TMP/r.db" --detail workers --set run.iterations=40000 &
	pid=$!
	nap 0
	kill -KILL $pid 2> /dev/null
	wait $pid 2> /dev/null
	after=$(q "$TMP/r.db" 'SELECT count(*) FROM runs')
	if ! valid "$TMP/r.db" || [ "$after" -lt "$before" ] || [ "$after" -gt $((before + 1)) ]; then
		bad_runs=$((bad_runs + 1))
		echo "kill run $i: runs $before -> $after, integrity $(q "$TMP/r.db" 'PRAGMA integrity_check')"
	fi
done
check "$((points / 2)) runs killed: database valid, every run complete or absent" test $bad_runs -eq 0

# ---- sweeps: killed again and again, resumed -----
# Odd kills take the whole session (power loss); even kills take lbsim's
# process group only, which is what `kill -9 -PGID` or a closed terminal
# does: GNU parallel dies with it, but its jobs, each in its own process
# group, outlive it and must stop by themselves (their parent died) without
# leaving a partial point. A sweep started while they run waits for them.
bad_sweeps=0 orphans=0
for i in $(seq $((points - points / 2))); do
	setsid "$LBSIM" sweep "$SW" -j2 -o "$TMP/s.db" > /dev/null 2>&1 &
	pid=$!
	nap 1
	if [ $((i % 2)) = 1 ]; then
		pkill -KILL -s "$pid"
	else
		kill -KILL -- "-$pid" 2> /dev/null
	fi
	wait $pid 2> /dev/null
	await_points "$pid" 200
	if points_running "$pid"; then
		orphans=$((orphans + 1))
		echo "kill sweep $i: still running 10 s after the kill:"
		ps -o pid,pgid,args -s "$pid"
	fi
	reap "$pid"
	for db in "$TMP/s.db" "$TMP"/s.db.sweep/points/*.db; do
		[ -e "$db" ] || continue
		valid "$db" || { bad_sweeps=$((bad_sweeps + 1)); echo "kill sweep $i: $db not valid"; }
	done
done
check "$((points - points / 2)) sweeps killed: no job outlives its killed sweep" test $orphans -eq 0
check "$((points - points / 2)) sweeps killed: every database valid, no partial run" test $bad_sweeps -eq 0
# ---- the jobs of a sweep whose GNU parallel was killed stop at once -----
# Points of a few seconds each; the group is killed once a job writes.
printf '[sweep]\nname = long\nscenario = %s\n[vary]\nrun.iterations = 4000000\nseeds = 1..2\n' \
	"$SC" > "$TMP/long.ini"
setsid "$LBSIM" sweep "$TMP/long.ini" -j2 -o "$TMP/long.db" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 400); do
	ls "$TMP"/long.db.sweep/points/*.tmp* > /dev/null 2>&1 && break
	sleep 0.05
done
sleep 0.3
kill -KILL -- "-$pid" 2> /dev/null
wait $pid 2> /dev/null
await_points "$pid" 60
check "killed parallel: its running jobs stop within 3 s" sh -c "! pgrep -s $pid -f 'sweep --run-batch' > /dev/null"
reap "$pid"
check "killed parallel: no point database left" sh -c "! ls '$TMP'/long.db.sweep/points/*.db 2> /dev/null"

# ---- a sweep waits for the jobs of an earlier one still running -----
mkdir -p "$TMP/w.db.sweep"
flock -s "$TMP/w.db.sweep/jobs.lock" sh -c "sleep 2; touch '$TMP/released'" &
holder=$!
sleep 0.3
"$LBSIM" sweep "$SW" -j2 -o "$TMP/w.db" > /dev/null 2> "$TMP/werr"
check "waiting sweep: exit 0" test $? -eq 0
check "waiting sweep: says it waits" grep -q "waiting for the jobs of an earlier" "$TMP/werr"
check "waiting sweep: ran after the jobs stopped" test -e "$TMP/released"
check "waiting sweep: 8 runs" test "$(q "$TMP/w.db" 'SELECT count(*) FROM runs')" = 8
wait $holder

"$LBSIM" sweep "$SW" -j2 -o "$TMP/s.db" > "$TMP/out" 2> "$TMP/err"; rc=$?
check "resumed sweep: exit 0" test $rc -eq 0
[ $rc -eq 0 ] || { echo "exit $rc:"; cat "$TMP/err"; }
check "resumed sweep: 8 runs" test "$(q "$TMP/s.db" 'SELECT count(*) FROM runs')" = 8
check "resumed sweep: 8 distinct points" test "$(q "$TMP/s.db" 'SELECT count(DISTINCT point) FROM sweep_points')" = 8
check "resumed sweep: 8 distinct (size, policy, seed)" test "$(q "$TMP/s.db" \
	'SELECT count(*) FROM (SELECT DISTINCT n_workers, policy, seed FROM runs)')" = 8
check "resumed sweep: valid" valid "$TMP/s.db"
# ---- SIGTERM inside one long iteration -----
# Work stealing in one-sample chunks over 9e7 samples: each iteration is
# 9e7 events (just under the limit of 1e8), seconds of work, so a run that
# looked at signals only between iterations would not stop for seconds.
printf '[run]\nglobal_batch = 90000000\niterations = 1000\n[model]\nparameters = 1000\n[network]
topology = ring\nbandwidth = 10 Gbit/s\n[workers.cpu]\ncount = 2\ndevice = cpu\ncost = linear
per_sample = 1 ns\n[policy]\nname = work-stealing\n[policy.work-stealing]\nchunk = 1\n' > "$TMP/long-iteration.ini"
"$LBSIM" "$SC" -q -o "$TMP/term.db" --set run.iterations=3
before=$(cksum < "$TMP/term.db")
"$LBSIM" "$TMP/long-iteration.ini" -q --no-baseline -o "$TMP/term.db" 2> "$TMP/term.err" &
pid=$!
sleep 1
t0=$(date +%s%N)
kill -TERM $pid
wait $pid; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "SIGTERM inside an iteration: exit 130 (got $rc)" test $rc -eq 130
check "SIGTERM inside an iteration: stopped within 2 s (${ms} ms)" test $ms -lt 2000
check "SIGTERM inside an iteration: it was inside one" grep -q "interrupted within an iteration" "$TMP/term.err"
check "SIGTERM inside an iteration: the results file is unchanged" test "$(cksum < "$TMP/term.db")" = "$before"
check "SIGTERM inside an iteration: no journal left" test ! -e "$TMP/term.db-journal"
# ---- SIGTERM while the scenario's trace is read: 130, nothing written -----
awk 'BEGIN { print "# lbsim-trace 1"; print "time_s,id,availability";
	for (i = 0; i < 2000000; i++) printf "%d,w%d,0.5\n", i % 3, i }' > "$TMP/big.csv"
sed -n '1,/^per_sample/p' "$TMP/long-iteration.ini" > "$TMP/big-trace.ini"
printf 'trace_format = lbsim\ntrace = big.csv\n' >> "$TMP/big-trace.ini"
"$LBSIM" "$TMP/big-trace.ini" -q -o "$TMP/big.db" 2> /dev/null &
pid=$!
sleep 0.3
kill -TERM $pid
wait $pid; rc=$?
check "SIGTERM while reading a trace: exit 130 (got $rc)" test $rc -eq 130
check "SIGTERM while reading a trace: no results file" test ! -e "$TMP/big.db"
echo "kill: $points kill points tried ($((points / 2)) runs, $((points - points / 2)) sweeps)"
finish
