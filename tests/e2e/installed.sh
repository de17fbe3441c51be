#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `make installcheck`: the installed lbsim, from a directory that is not
# the source tree and without LBSIM_PATH, runs the default scenario (by
# name, by its installed path, and as a copy of one's own), a trace
# scenario and a sweep, from the installed files alone. LBSIM is the
# installed binary, PKGDATADIR its data folder.
. "$(dirname "$0")/lib.sh"
: "${PKGDATADIR:?set PKGDATADIR to the installed data folder (make installcheck does)}"
need sqlite3 sqlite3
need parallel parallel
unset LBSIM_PATH LBSIM_BLAS_MODULE
cd "$TMP" || exit 1
# cond 'A && B': check's form for a condition of several commands.
cond() { eval "$1"; }

check "the data is installed" cond '[ -f "$PKGDATADIR/scenarios/default.ini" ] &&
	[ -f "$PKGDATADIR/profiles/v100-resnet50.ini" ] && [ -d "$PKGDATADIR/traces/data" ] &&
	[ -f "$PKGDATADIR/analysis/views.sql" ]'
n=$(cd "$PKGDATADIR/scenarios" && find . -name '*.ini' | wc -l)
"$LBSIM" scenarios > list
check "lbsim scenarios lists the $n installed files" [ "$(grep -c '^  ' list)" -eq "$n" ]
check "... from the installed folder" grep -qx "$PKGDATADIR/scenarios:" list

"$LBSIM" run default -q -o name.db --set run.iterations=50
"$LBSIM" "$PKGDATADIR/scenarios/default.ini" -q -o path.db --set run.iterations=50
cp "$PKGDATADIR/scenarios/default.ini" mine.ini
"$LBSIM" mine.ini -q -o copy.db --set run.iterations=50
t=$(q path.db "SELECT sim_time_s FROM runs")
check "lbsim run default runs the installed default" [ "$(q name.db "SELECT sim_time_s FROM runs")" = "$t" ]
check "... as its installed path does" [ -n "$t" ]
check "... and a copy of it elsewhere, finding the installed profiles" [ "$(q copy.db "SELECT sim_time_s FROM runs")" = "$t" ]

# The BLAS module, from the installed $(pkglibdir) (nothing beside the program).
"$LBSIM" calibrate --blas cifarnet --batches 1,16 --reps 3 --warmup 1 --threads 1 > cal 2>&1
check "calibrate --blas loads the installed BLAS module" grep -q "cblas_sgemm from libopenblas" cal

"$LBSIM" run traces/azure-b8ms -q -o trace.db --set run.iterations=100
check "a trace scenario runs on the installed trace" \
	[ "$(q trace.db "SELECT count(*) FROM iterations")" -eq 100 ]

# Every installed scenario runs by name from here, on the installed data
# alone (a sweep lists its points); the testbed's, simulated.
bad_runs=
for f in $(cd "$PKGDATADIR/scenarios" && find . -name '*.ini' | sort); do
	name=${f#./}
	name=${name%.ini}
	if grep -q '^\[sweep\]' "$PKGDATADIR/scenarios/$f"; then
		"$LBSIM" sweep "$name" --list > /dev/null 2> err || bad_runs="$bad_runs $name($(head -c 200 err))"
	else
		rm -f each.db
		length=run.iterations=2
		grep -q '^epochs *=' "$PKGDATADIR/scenarios/$f" && length=run.epochs=1
		grep -q '^\[hybrid\]' "$PKGDATADIR/scenarios/$f" && length=run.steps=2 # (a hybrid job counts steps)
		"$LBSIM" run "$name" -q -o each.db --set $length 2> err ||
			bad_runs="$bad_runs $name($(head -c 200 err))"
	fi
done
check "every installed scenario runs, and every sweep expands, by name (failed:${bad_runs:- none})" test -z "$bad_runs"
# The README's what-if example, from here: the shipped trace found in the installed data.
"$LBSIM" whatif traces/data/bytedance-whatif/trace-ST.csv.gz --meta traces/data/bytedance-whatif/meta-ST.yaml \
	-q -o wi.db 2> err
check "the README's whatif example runs from any directory ($(head -c 200 err))" \
	test "$(q wi.db "SELECT count(*) FROM whatif_runs")" = 1

cat > sweep.ini <<'INI'
[sweep]
scenario = default.ini
[vary]
run.iterations = 50
policy = static, lbbsp-gpu
seeds = 1..2
INI
"$LBSIM" sweep sweep.ini -j 2 -q -o sweep.db
check "a sweep on the installed default: every point once" \
	[ "$(q sweep.db "SELECT count(DISTINCT run_id) || ' ' || count(DISTINCT point) FROM runs JOIN sweep_points USING (run_id)")" = "4 4" ]
check "... the installed sweep expands" [ "$("$LBSIM" sweep sweeps/cluster-size --list | wc -l)" -eq 55 ]
check "the installed views load" sqlite3 sweep.db < "$PKGDATADIR/analysis/views.sql"

# The example policy plugin, built out of tree against the installed
# headers with pkg-config (its own Makefile), runs beside the built-ins.
if [ -n "${EXAMPLES:-}" ]; then
	need pkg-config pkg-config
	cp -R "$EXAMPLES/policy-myrule" ex && chmod -R u+w ex
	check "pkg-config --cflags --libs lbsim" pkg-config --cflags --libs lbsim
	check "the example plugin builds against the installed lbsim" make -s -C ex CC="${CC:-cc}"
	(cd ex && "$LBSIM" example.ini --plugins --policy static,myrule -o ex.db > out)
	check "... and runs beside static" cond "grep -q '^myrule  *10  *3.3000 ' ex/out && grep -q '^static  *10  *6.0000 ' ex/out"
fi
finish
