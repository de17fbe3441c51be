#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The exit status of each failure lbsim(1) documents under EXIT STATUS, one
# case per failure named there (the bad-input corpus, tests/e2e/bad-input.sh,
# has the many kinds of bad input, exit 3; this is the rest and one of each
# kind), and every status the page lists is tried (5, an internal error, has
# no input that causes it: a test would need a bug or exhausted memory).
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
S="$top_srcdir/tests/data/sweep/scenario.ini"
SW="$top_srcdir/tests/data/sweep/sweep.ini"
cd "$TMP"
"$LBSIM" "$S" -q -o r.db --set run.iterations=3 --detail workers

tried=" "
# want CODE WHAT lbsim-ARGS...: the command exits CODE.
want() {
	local code=$1 what=$2 rc; shift 2
	"$LBSIM" "$@" > out 2> err; rc=$?
	tried="$tried$code "
	if [ $rc -eq "$code" ]; then ok "exit $code: $what"; else bad "exit $code: $what (got $rc: $(head -c 300 err))"; fi
}

want 0 "a run" "$S" -q -o ok.db --set run.iterations=2
want 0 "--help" --help
want 0 "--version" --version
want 0 "export without a name lists the views" export r.db

# 2: usage.
want 2 "an unknown option" "$S" --bogus
want 2 "no scenario" -q
want 2 "two scenarios" "$S" "$S"
want 2 "--set without a dot" "$S" --set nodot=1
want 2 "--set with an empty key" "$S" --set run.=1
want 2 "--set too long" "$S" --set "run.name=$(head -c 400 /dev/zero | tr '\0' x)"
want 2 "--set removing a key the scenario does not set" "$S" --set run.description=
want 2 "--seed not an integer" "$S" --seed x
want 2 "--seed negative" "$S" --seed -1
want 2 "an unknown --detail" "$S" --detail bogus
want 2 "--max-rows not an integer >= 0" "$S" --max-rows -1
want 2 "--max-trace-rows not an integer >= 0" "$S" --max-trace-rows x
want 2 "arguments after keys" keys x
want 2 "a bad -j" sweep "$SW" -j 0
want 2 "a bad --shard" sweep "$SW" --shard 3/2
want 2 "merge without input" merge out.db
want 2 "export of an unknown view" export r.db bogus_view
want 2 "plot of a setting that does not exist" plot r.db --setting 99
want 2 "an unknown --policy" "$S" --policy bogus
want 2 "--policy naming none, with --no-baseline" "$S" --policy , --no-baseline
want 2 "--policy naming a policy twice" "$S" --policy dbs,dbs
want 2 "-o that is not a file path" "$S" -o :memory:
want 2 "predict: not RESULTS.db:RUN" predict r.db
want 2 "predict: run 0" predict r.db:0
want 2 "predict: an unknown predictor" predict r.db:1 -p bogus
want 2 "predict: a bad --set" predict r.db:1 --set x=1
want 2 "predict: --set of a predictor not compared" predict r.db:1 --set predictor.narx.k=1 -p last
want 2 "predict: a bad --skip" predict r.db:1 --skip x
want 2 "predict: a bad --as" predict r.db:1 --as bogus
want 2 "calibrate: an unknown model" calibrate --blas bogus

# 3: bad input.
want 3 "a scenario that cannot be read" missing.ini
want 3 "--seed above 9007199254740991" "$S" --seed 9007199254740992
want 3 "--seed far above (overflowing)" "$S" --seed 99999999999999999999
want 3 "an invalid --set value" "$S" --set run.iterations=0
want 3 "an unknown [policy] name" "$S" --set policy.name=bogus
want 3 "the global batch beyond the memory caps" "$S" --set run.global_batch=100000
want 3 "a trace that cannot be read" "$top_srcdir/tests/data/bad/trace-missing-file.ini"
want 3 "a profile that cannot be read" "$top_srcdir/tests/data/bad/profile-missing-file.ini"
want 3 "--detail workers over --max-rows" "$S" --detail workers --max-rows 1
want 3 "an invalid sweep file" sweep "$top_srcdir/tests/data/bad-sweep/bad-value.ini"
want 3 "merge of a file that is not a results database" merge out.db "$S"
want 3 "plot of a file that cannot be read" plot missing.db
want 3 "predict of a database that cannot be read" predict missing.db:1
want 3 "predict of a run without worker_iterations" predict ok.db:1
want 3 "predict with an invalid predictor option" predict r.db:1 -p ema --set predictor.ema.alpha=7
want 3 "calibrate: a table that cannot be read" calibrate --from-table --data missing -o prof

# 4: the results could not be written.
printf 'not a database, but longer than a page header of sixteen bytes\n' > junk.db
want 4 "a results file that is not a database" "$S" -q -o junk.db
sqlite3 other.db 'CREATE TABLE t(x); PRAGMA user_version = 9;'
want 4 "a database of another program" "$S" -q -o other.db
want 4 "a results file that cannot be created" "$S" -q -o missing-dir/x.db
PATH=/nonexistent want 4 "sweep without GNU parallel on PATH" sweep "$SW" -o s.db
PATH=/nonexistent want 4 "plot without gnuplot on PATH" plot r.db --out plots

# 130: interrupted.
"$LBSIM" "$S" -q -o i.db --set run.iterations=100000000 2> /dev/null &
pid=$!
sleep 1
kill -TERM $pid
wait $pid; rc=$?
tried="${tried}130 "
check "exit 130: SIGTERM" test $rc -eq 130

# 6 and 7: the testbed (doc/validation.md, tests/e2e/testbed.sh): 6 where it
# cannot run (here: not root), 7 a simulated speedup outside the tolerance
# of the measured one (a tolerance of 0.0001% that no measurement meets).
TB="$top_srcdir/scenarios/testbed/small.ini"
need setpriv util-linux
asnobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
[ "$(id -u)" -ne 0 ] && asnobody=() # already not root
"${asnobody[@]}" "$LBSIM" testbed "$TB" -q -o nobody.db > out 2> err; rc=$?
tried="${tried}6 "
check "exit 6: the testbed without root" test $rc -eq 6
# (exit 7 needs the testbed: where it cannot run, that case is skipped, saying so)
rc=0
"$LBSIM" testbed "$TB" --set run.iterations=1 -q -o probe.db > /dev/null 2> err || rc=$?
if [ $rc -eq 6 ]; then
	echo "SKIP: exit 7 not tried: the testbed cannot run here ($(tail -n 1 err))"
	[ "${LBSIM_REQUIRE_TESTBED:-no}" = yes ] && bad "exit 7: the testbed cannot run (LBSIM_REQUIRE_TESTBED=yes)"
else
	want 7 "validate: a speedup outside --tolerance" validate "$TB" --policy static-proportional --repeat 1 \
		--tolerance 0.0001% --set run.iterations=3 -q -o v.db
fi

# Every status the page lists was tried (but 5).
page=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH FILES/p' "$top_srcdir/doc/lbsim.1" | awk 'prev == ".TP" && /^\.B [0-9]+$/ { print $2 } { prev = $0 }')
check "lbsim(1) lists 0, 2, 3, 4, 5, 6, 7 and 130" test "$(echo $page)" = "0 2 3 4 5 6 7 130"
for code in $page; do
	[ "$code" = 5 ] && continue
	[ "$code" = 7 ] && [ $rc -eq 6 ] && continue
	case "$tried" in *" $code "*) ok "exit $code: tried" ;; *) bad "exit $code: no case" ;; esac
done
finish
