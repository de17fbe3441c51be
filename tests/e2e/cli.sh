#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: the command line, exit codes, the results database, bad input.
. "$(dirname "$0")/lib.sh"
S="$top_srcdir/scenarios/default.ini"

# The default scenario runs and fills every table.
"$LBSIM" "$S" -o "$TMP/r.db" --detail workers > "$TMP/out" 2> "$TMP/err"
check "default scenario exits 0" test $? -eq 0
check "summary names the policy" grep -q '^static ' "$TMP/out"
check "nothing on stderr without a terminal" test ! -s "$TMP/err"
check "schema version 4" test "$(q "$TMP/r.db" 'PRAGMA user_version')" = 4
check "one run" test "$(q "$TMP/r.db" 'SELECT count(*) FROM runs')" = 1
check "a simulated run is marked so" test "$(q "$TMP/r.db" 'SELECT mode FROM runs')" = simulated
# A version 2 file (before runs.mode): readable, and upgraded in place by
# the next run appended to it, its old runs simulated.
cp "$TMP/r.db" "$TMP/v2.db"
sqlite3 "$TMP/v2.db" 'ALTER TABLE runs DROP COLUMN mode; DROP TABLE validations; PRAGMA user_version = 2'
check "a version 2 file is exported" test "$("$LBSIM" export "$TMP/v2.db" runs | wc -l)" = 2
"$LBSIM" "$top_srcdir/scenarios/default.ini" -q -o "$TMP/v2.db" --set run.iterations=3
check "a version 2 file becomes version 4 when a run is appended" \
	test "$(q "$TMP/v2.db" "SELECT group_concat(mode) FROM runs") $(q "$TMP/v2.db" 'PRAGMA user_version')" = "simulated,simulated 4"
check "... with the validations table of version 4" \
	test "$(q "$TMP/v2.db" "SELECT count(*) FROM pragma_table_info('validations') WHERE name = 'machine_drift'")" = 1
# A version 3 file (validations without machine_drift): the same, in place.
cp "$TMP/r.db" "$TMP/v3.db"
sqlite3 "$TMP/v3.db" 'ALTER TABLE validations DROP COLUMN machine_drift; PRAGMA user_version = 3'
"$LBSIM" "$top_srcdir/scenarios/default.ini" -q -o "$TMP/v3.db" --set run.iterations=3
check "a version 3 file becomes version 4 when a run is appended, with validations.machine_drift" \
	test "$(q "$TMP/v3.db" 'PRAGMA user_version') $(q "$TMP/v3.db" "SELECT count(*) FROM pragma_table_info('validations') WHERE name = 'machine_drift'") $(q "$TMP/v3.db" 'SELECT count(*) FROM runs')" = "4 1 2"
check "500 iterations" test "$(q "$TMP/r.db" 'SELECT count(*) FROM iterations')" = 500
check "12 workers" test "$(q "$TMP/r.db" 'SELECT count(*) FROM workers')" = 12
check "500 x 12 worker iterations" test "$(q "$TMP/r.db" 'SELECT count(*) FROM worker_iterations')" = 6000
check "batches sum to the global batch" test "$(q "$TMP/r.db" \
	'SELECT count(*) FROM (SELECT sum(batch) s FROM worker_iterations GROUP BY iteration) WHERE s != 768')" = 0
check "iterations follow each other" test "$(q "$TMP/r.db" \
	'SELECT count(*) FROM iterations a JOIN iterations b ON b.iteration = a.iteration + 1 WHERE b.start_s != a.end_s')" = 0
check "mean iteration matches the rows" test "$(q "$TMP/r.db" \
	'SELECT abs(r.mean_iteration_s - (SELECT avg(end_s - start_s) FROM iterations)) < 1e-9 FROM runs r')" = 1

# The analysis views load and show the K80s as the stragglers: they wait least.
sqlite3 "$TMP/r.db" < "$top_srcdir/analysis/views.sql"
check "group_summary has the three groups" test "$(q "$TMP/r.db" 'SELECT count(*) FROM group_summary')" = 3
check "K80s wait least" test "$(q "$TMP/r.db" 'SELECT group_name FROM group_summary ORDER BY wait_share LIMIT 1')" = k80

# Same scenario and seed: identical rows; another seed: different ones.
"$LBSIM" "$S" -o "$TMP/r.db" --detail workers -q
"$LBSIM" "$S" -o "$TMP/r.db" --detail workers -q --seed 2
check "second run appended" test "$(q "$TMP/r.db" 'SELECT count(*) FROM runs')" = 3
same() {
	q "$TMP/r.db" "SELECT (SELECT count(*) FROM (
	  SELECT iteration, start_s, end_s, straggler_gap_s FROM iterations WHERE run_id = $1
	  EXCEPT SELECT iteration, start_s, end_s, straggler_gap_s FROM iterations WHERE run_id = $2))
	  + (SELECT count(*) FROM (
	  SELECT iteration, worker, batch, compute_s, wait_s FROM worker_iterations WHERE run_id = $1
	  EXCEPT SELECT iteration, worker, batch, compute_s, wait_s FROM worker_iterations WHERE run_id = $2))"
}
check "same seed, identical iterations and worker_iterations" test "$(same 1 2)" = 0
check "another seed differs" test "$(same 1 3)" != 0

# --set and --seed reach the recorded configuration.
"$LBSIM" "$S" -o "$TMP/s.db" -q --set 'network.bandwidth=25 Gbit/s' --set workers.k80.count=2 --seed 7
check "--set recorded" test "$(q "$TMP/s.db" "SELECT value FROM run_config WHERE section='network' AND key='bandwidth'")" = "25 Gbit/s"
check "--set changes the fleet" test "$(q "$TMP/s.db" 'SELECT n_workers || seed FROM runs')" = 107

# --policy runs each policy plus the static baseline and prints speedups.
P="$top_srcdir/scenarios/policies/stealing-loses.ini"
"$LBSIM" "$P" -o "$TMP/p.db" --policy lbbsp-gpu,oracle --set run.iterations=40 > "$TMP/out"
check "--policy: exit 0" test $? -eq 0
check "--policy adds the static baseline" test "$(q "$TMP/p.db" 'SELECT group_concat(policy) FROM runs')" = "static,lbbsp-gpu,oracle"
check "speedup column" grep -q '^oracle .* [0-9]\.[0-9][0-9][0-9] ' "$TMP/out"
check "oracle is fastest" test "$(q "$TMP/p.db" 'SELECT policy FROM runs ORDER BY sim_time_s LIMIT 1')" = oracle
check "run_config names the policy run" test "$(q "$TMP/p.db" "SELECT value FROM run_config WHERE run_id = 3 AND section = 'policy' AND key = 'name'")" = oracle
check "batches recorded when they change" test "$(q "$TMP/p.db" 'SELECT count(DISTINCT iteration) > 1 FROM batches WHERE run_id = 2')" = 1
check "static records its batches once" test "$(q "$TMP/p.db" 'SELECT count(DISTINCT iteration) FROM batches WHERE run_id = 1')" = 1
check "policy state recorded" test "$(q "$TMP/p.db" "SELECT count(*) FROM policy_vars WHERE run_id = 2 AND name = 'step'")" = 40
check "decision time recorded" test "$(q "$TMP/p.db" 'SELECT count(*) FROM iterations WHERE run_id = 3 AND decision_s > 0')" = 40
"$LBSIM" "$P" -o "$TMP/p2.db" --policy nope 2> "$TMP/err"; rc=$?
check "unknown --policy: exit 2" test $rc -eq 2
check "unknown --policy named" grep -q "unknown policy 'nope'" "$TMP/err"
check "unknown --policy: no database" test ! -e "$TMP/p2.db"
"$LBSIM" "$P" -o "$TMP/p2.db" --policy , 2> /dev/null; check "empty --policy: exit 2" test $? -eq 2
"$LBSIM" "$P" -o "$TMP/p2.db" --policy dbs 2> "$TMP/err"; rc=$?
check "dbs without epochs: exit 3" test $rc -eq 3

# lbsim predict scores each predictor on a run's recorded speeds.
"$LBSIM" "$P" -o "$TMP/pr.db" --policy lbbsp-cpu --no-baseline --detail workers -q --set run.iterations=60 \
	--set 'policy.lbbsp-cpu.predictor=ema'
check "predictions recorded" test "$(q "$TMP/pr.db" 'SELECT count(*) > 400 FROM worker_iterations WHERE predicted_speed > 0')" = 1
"$LBSIM" predict "$TMP/pr.db:1" -p last,ema,arima > "$TMP/out"
check "predict: exit 0" test $? -eq 0
check "predict: three scores" test "$(q "$TMP/pr.db" 'SELECT count(*) FROM predictor_errors WHERE eval_id = 1')" = 3
check "predict: prints rmse" grep -q '^arima ' "$TMP/out"
"$LBSIM" predict "$TMP/pr.db:7" > /dev/null 2>&1; check "predict: missing run: exit 3" test $? -eq 3
"$LBSIM" predict "$TMP/pr.db" > /dev/null 2>&1; check "predict: no run id: exit 2" test $? -eq 2

# Usage errors exit 2, bad input 3; nothing is written.
"$LBSIM" > /dev/null 2>&1; check "no scenario: exit 2" test $? -eq 2
"$LBSIM" --bogus "$S" > /dev/null 2>&1; check "unknown option: exit 2" test $? -eq 2
"$LBSIM" "$S" --detail everything > /dev/null 2>&1; check "bad --detail: exit 2" test $? -eq 2
"$LBSIM" "$S" --set nodot -o "$TMP/u.db" > /dev/null 2>&1; check "malformed --set: exit 2" test $? -eq 2
"$LBSIM" --help | grep -q '^Usage: lbsim'; check "--help" test $? -eq 0
"$LBSIM" --version | grep -q '^lbsim [0-9]'; check "--version" test $? -eq 0
"$LBSIM" keys | grep -q 'global_batch'; check "keys lists the keys" test $? -eq 0
"$LBSIM" "$TMP/none.ini" -o "$TMP/m.db" 2> "$TMP/err"; rc=$?
check "missing file: exit 3" test $rc -eq 3
check "missing file named" grep -q "$TMP/none.ini" "$TMP/err"
check "missing file: no database" test ! -e "$TMP/m.db"
"$LBSIM" "$TMP" -o "$TMP/m.db" 2> /dev/null; check "directory: exit 3" test $? -eq 3

# The bad-input corpus is run by tests/e2e/bad-input.sh.

# Bad input against an existing database adds no rows to it.
before=$(q "$TMP/r.db" 'SELECT count(*) FROM runs')
"$LBSIM" "$top_srcdir/tests/data/bad/batch-over-cap.ini" -o "$TMP/r.db" 2> /dev/null
check "bad input leaves an existing database alone" test "$(q "$TMP/r.db" 'SELECT count(*) FROM runs')" = "$before"

# A database of another program is refused (exit 4), not scribbled on.
sqlite3 "$TMP/other.db" 'CREATE TABLE t(x); PRAGMA user_version = 9;'
"$LBSIM" "$S" -o "$TMP/other.db" 2> "$TMP/err"; rc=$?
check "foreign database: exit 4" test $rc -eq 4
check "foreign database untouched" test "$(q "$TMP/other.db" 'SELECT count(*) FROM sqlite_master')" = 1

# SIGINT during a long run: exit 130, and the run leaves no rows.
"$LBSIM" "$S" -o "$TMP/i.db" -q --set run.iterations=100000000 &
pid=$!
sleep 1
kill -INT $pid
wait $pid; rc=$?
check "SIGINT: exit 130" test $rc -eq 130
check "SIGINT: no rows kept (the results file it made is removed)" test ! -e "$TMP/i.db"

# --sweep-job: the output appears whole or not at all.
"$LBSIM" "$S" -q -o "$TMP/j.db" --sweep-job "$TMP/j.lock" -p lbbsp-gpu --set run.iterations=20; rc=$?
check "sweep job: exit 0" test $rc -eq 0
check "sweep job: runs in place" test "$(q "$TMP/j.db" 'SELECT count(*) FROM runs')" = 2
check "sweep job: no temporary file left" test -z "$(ls "$TMP" | grep 'j\.db\.tmp')"
"$LBSIM" "$S" -q -o "$TMP/j.db" --sweep-job "$TMP/j.lock" -p lbbsp-gpu --set run.iterations=20; rc=$?
check "sweep job: an existing output is left alone (exit 0)" test "$rc $(q "$TMP/j.db" 'SELECT count(*) FROM runs')" = "0 2"
"$LBSIM" "$S" -q -o "$TMP/k.db" --sweep-job "$TMP/j.lock" --set run.iterations=100000000 &
pid=$!
sleep 1
kill -TERM $pid
wait $pid; rc=$?
check "sweep job, SIGTERM: exit 130" test $rc -eq 130
check "sweep job, SIGTERM: no output, no temporary file" test -z "$(ls "$TMP" | grep '^k\.db')"
"$LBSIM" "$S" -q -o "$TMP/l.db" --sweep-job "$TMP/j.lock" --parent 2 2> "$TMP/err"; rc=$?
check "sweep job, parent gone: exit 130, nothing written" test "$rc $(ls "$TMP" | grep -c '^l\.db')" = "130 0"
check "sweep job, parent gone: said" grep -q "parent process 2 has gone" "$TMP/err"
"$LBSIM" "$S" -q -o "$TMP/l.db" --sweep-job "$TMP/j.lock" --parent 1 2> /dev/null
check "sweep job, orphaned under init: exit 130, nothing written" test "$? $(ls "$TMP" | grep -c '^l\.db')" = "130 0"
"$LBSIM" "$S" -q -o "$TMP/l.db" --sweep-job "$TMP/j.lock" --parent "$$" -p lbbsp-gpu --set run.iterations=5; rc=$?
check "sweep job, parent alive: runs (exit 0, 2 runs)" test "$rc $(q "$TMP/l.db" 'SELECT count(*) FROM runs')" = "0 2"
"$LBSIM" "$S" -q -o "$TMP/m.db" --parent 7 2> /dev/null
check "--parent without --sweep-job: exit 2" test $? -eq 2

# The traps of a new user's first commands (issue 33): a mistyped command,
# `help`, a results file given as a scenario, a mistyped scenario name,
# getopt's messages, and names found in the source tree.
expect_msg() { # NAME CODE WORDS ARGS...: the exit code and the message
	local name=$1 code=$2 words=$3 rc=0
	shift 3
	"$LBSIM" "$@" > "$TMP/out" 2> "$TMP/err" || rc=$?
	check "$name: exit $code (got $rc)" test $rc -eq "$code"
	check "$name: says \"$words\" ($(head -c 200 "$TMP/err"))" grep -qF "$words" "$TMP/err"
}
expect_msg "a mistyped command" 2 "plto is not a command: did you mean plot?" plto "$TMP/x.db"
expect_msg "another" 2 "did you mean report?" reprot "$TMP/x.db"
expect_msg "a results database given as a scenario" 2 "is a results database, not a scenario" "$TMP/j.db"
expect_msg "a mistyped scenario name" 3 "did you mean default?" run defualt
expect_msg "a name near nothing" 3 "lbsim scenarios lists the names" run no-such-scenario-anywhere
expect_msg "getopt's message names the command, not a path" 2 "lbsim plot: unrecognized option '--bogus'" plot --bogus
"$LBSIM" help > "$TMP/out"; rc=$?
check "lbsim help: exit 0, the commands listed" sh -c "test $rc -eq 0 && grep -q 'Commands: run keys' '$TMP/out'"
"$LBSIM" help sweep > "$TMP/out"; rc=$?
check "lbsim help sweep: its own usage" sh -c "test $rc -eq 0 && grep -q '^Usage: lbsim sweep' '$TMP/out'"
# A build tree's lbsim finds the tree's scenarios by name, with no
# LBSIM_PATH (and not an installed copy's: the tree comes first).
rc=0
(cd "$TMP" && env -u LBSIM_PATH "$LBSIM" run default -q -o "$TMP/byname.db" --set run.iterations=2) || rc=$?
check "lbsim run default, from a build tree, without LBSIM_PATH: runs (exit $rc)" test $rc -eq 0
check "... the tree's scenario" test "$(realpath "$(q "$TMP/byname.db" "SELECT scenario_path FROM runs LIMIT 1")")" = \
	"$(realpath "$top_srcdir/scenarios/default.ini")"
check "lbsim scenarios, from a build tree: lists the tree's" \
	sh -c "env -u LBSIM_PATH '$LBSIM' scenarios | grep -q '^  default  *scenario'"

check "lbsim scenarios --profiles: the shipped profiles with device, model and origin" \
	sh -c "env -u LBSIM_PATH '$LBSIM' scenarios --profiles | grep -q '^  v100-resnet50.ini  *NVIDIA V100; ResNet-50 (ImageNet); piecewise cost, table'"

# Bash completion (cli/lbsim.bash): commands, each command's options from
# its --help, scenario names, files by kind.
complete_words() { # WORDS...: what completing the last word offers
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _lbsim; echo "${COMPREPLY[*]}"' \
		_ "$top_srcdir/cli/lbsim.bash" "$LBSIM" "$@"
}
check "completion: pl -> plot" test "$(complete_words pl)" = plot
check "completion: run --se -> run's options only" test "$(complete_words run --se)" = "--seed --seeds --set"
check "completion: help rep -> report" test "$(complete_words help rep)" = report
check "completion: run def -> the scenario default" sh -c "echo ' $(complete_words run def) ' | grep -q ' default '"
check "completion: plot --format -> the formats" sh -c "echo ' $(complete_words plot --format p) ' | grep -q ' png '"
check "completion: plot --paper -> single, double" test "$(complete_words plot --paper '')" = "single double"
check "completion: plot --s -> its --setting and --size" test "$(complete_words plot --s)" = "--setting --size"

finish
