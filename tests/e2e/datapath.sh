#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Where lbsim finds the files a scenario names (doc/scenario.md, "Where
# files are found"): the scenario's folder, then each folder of LBSIM_PATH,
# then the installed data. The source tree stands in for an installed data
# folder here (it has the same scenarios/, profiles/ and traces/data/); a
# run that finds its files elsewhere gives the same numbers as the run in
# the tree, and one that finds them nowhere names where it looked.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
need parallel parallel
unset LBSIM_PATH
src=$top_srcdir
installed=$("$LBSIM" scenarios --help | grep -o '/[^ ]*, by the name' | sed 's/, by the name//')
# A copy of the program outside the build tree: the build tree's own looks
# in its source tree too (tested at the end), which would find everything.
cp "$LBSIM" "$TMP/lbsim"
tree_lbsim=$LBSIM
LBSIM=$TMP/lbsim
mkdir -p "$TMP/work" "$TMP/alt/profiles" "$TMP/tr/traces/data" "$TMP/none"
cd "$TMP/work" || exit 1

# cond 'A && B': check's form for a condition of several commands.
cond() { eval "$1"; }

# table OUTPUT: the summary's rows, without the line naming the file.
table() { sed -n '2,$p' "$1" | grep -v '^results:'; }

"$LBSIM" "$src/scenarios/default.ini" --set run.iterations=50 -o base.db > base.out
cp "$src/scenarios/default.ini" .

# 1. Found nowhere: exit 3, the file:line:key, and every place looked.
rc=0
"$LBSIM" default.ini -o none.db > /dev/null 2> err || rc=$?
if [ -d "$installed/profiles" ]; then
	ok "nowhere (skipped: lbsim is installed in $installed)"
else
	check "profile found nowhere: exit 3" [ "$rc" -eq 3 ]
	check "... names file:line and key" grep -q "^lbsim: default.ini:54: \[workers.v100\] profile: " err
	check "... says where it looked" grep -qF "(looked for it in: ../profiles/v100-resnet50.ini, $installed/profiles/v100-resnet50.ini)" err
	check "... nothing written" [ ! -e none.db ]
fi

# 2. LBSIM_PATH: an empty or missing folder is passed over; the profile is
#    found in the second folder under its path without "../".
LBSIM_PATH="$TMP/none::$src" "$LBSIM" default.ini --set run.iterations=50 -o path.db > path.out
check "LBSIM_PATH finds ../profiles/X as DIR/profiles/X: same results" \
	diff <(table base.out) <(table path.out)
check "... the profile is recorded as written" \
	[ "$(q path.db "SELECT value FROM run_config WHERE section = 'workers.v100' AND key = 'profile'")" = ../profiles/v100-resnet50.ini ]

# 3. Order: the first folder of LBSIM_PATH that has the file wins. A K80
#    profile under the V100's name slows the V100s down.
cp "$src/profiles/k80-resnet50.ini" "$TMP/alt/profiles/v100-resnet50.ini"
LBSIM_PATH="$TMP/alt:$src" "$LBSIM" default.ini --set run.iterations=50 -o alt.db > alt.out
# The V100s now compute as the K80s do: without noise, at the same batch
# (static's even split), the same compute time.
per_batch="SELECT group_concat(printf('%.9f', s), ' ') FROM (SELECT avg(wi.compute_s) AS s
	FROM worker_iterations wi JOIN workers w USING (run_id, worker) WHERE w.group_name IN ('k80', 'v100')
	GROUP BY w.group_name ORDER BY w.group_name)"
quiet="--set workers.v100.noise=none --set workers.v100.noise_sigma= --set workers.k80.noise=none --set workers.k80.noise_sigma= --set run.iterations=5 --detail workers -q"
LBSIM_PATH="$TMP/alt:$src" "$LBSIM" default.ini $quiet -o altw.db
read -r k80 v100 <<< "$(q altw.db "$per_batch")"
"$LBSIM" "$src/scenarios/default.ini" $quiet -o basew.db
read -r base_k80 base_v100 <<< "$(q basew.db "$per_batch")"
check "the first folder of LBSIM_PATH wins: the V100s take the K80s' $k80 s (not $base_v100 s)" \
	cond '[ -n "$v100" ] && [ "$v100" = "$k80" ] && [ "$v100" != "$base_v100" ]'
rc=0
diff <(table base.out) <(table alt.out) > /dev/null || rc=$?
check "... and other results" [ "$rc" -eq 1 ]

# 4. The scenario's own folder comes first, before LBSIM_PATH.
LBSIM_PATH="$TMP/alt" "$LBSIM" "$src/scenarios/default.ini" --set run.iterations=50 -o own.db > own.out
check "the scenario's folder comes before LBSIM_PATH" diff <(table base.out) <(table own.out)

# 5. A bare name runs scenarios/NAME.ini of LBSIM_PATH, from anywhere.
LBSIM_PATH="$src" "$LBSIM" run default --set run.iterations=50 -o name.db > name.out
check "lbsim run default: same results" diff <(table base.out) <(table name.out)
check "... the scenario found is named" grep -qF "($src/scenarios/default.ini)" name.out
rc=0
LBSIM_PATH="$src" "$LBSIM" run no-such-scenario -o x.db 2> err || rc=$?
check "an unknown name: exit 3 naming it" cond '[ "$rc" -eq 3 ] && grep -q "no-such-scenario" err'

# 6. A trace: found under DIR/traces/data/, the profile in the next folder.
mkdir -p t && cp "$src/scenarios/traces/own-trace.ini" t/
cp "$src/scenarios/traces/own-trace.csv" "$TMP/tr/traces/data/"
"$LBSIM" "$src/scenarios/traces/own-trace.ini" --set run.iterations=300 -o tb.db > tb.out
LBSIM_PATH="$TMP/tr:$src" "$LBSIM" t/own-trace.ini --set run.iterations=300 -o tp.db > tp.out
check "a trace found as DIR/traces/data/NAME: same results" diff <(table tb.out) <(table tp.out)
rc=0
LBSIM_PATH="$src" "$LBSIM" t/own-trace.ini -o tn.db 2> err || rc=$?
line=$(grep -n '^trace = own-trace.csv' t/own-trace.ini | head -1 | cut -d: -f1)
check "a trace found nowhere: exit 3" [ "$rc" -eq 3 ]
check "... names file:line and key" grep -q "t/own-trace.ini:$line: \[workers\.[a-z]*\] trace: " err
check "... and where it looked" grep -qF "(looked for it in: t/own-trace.csv, $src/own-trace.csv, $src/traces/data/own-trace.csv" err

# 7. lbsim scenarios lists every scenario and sweep of the folder.
LBSIM_PATH="$src" "$LBSIM" scenarios > list
n=$(cd "$src/scenarios" && find . -name '*.ini' | wc -l)
check "lbsim scenarios lists every file" [ "$(grep -c '^  ' list)" -eq "$n" ]
check "... under the folder's name" grep -qx "$src/scenarios:" list
check "... default, with its description" grep -q '^  default  *scenario ResNet-50, 4 V100' list
check "... and the sweep as a sweep" grep -q '^  sweeps/cluster-size  *sweep ' list

# 8. A sweep of one's own whose base scenario is found in LBSIM_PATH.
cat > mine.ini <<'INI'
[sweep]
scenario = default.ini
[vary]
run.iterations = 50
policy = static, lbbsp-gpu
seeds = 1..2
INI
LBSIM_PATH="$src" "$LBSIM" sweep mine.ini -j 2 -q -o sweep.db
check "a sweep's scenario found in LBSIM_PATH: 4 runs, each point once" \
	[ "$(q sweep.db "SELECT count(DISTINCT run_id) || ' ' || count(DISTINCT point) FROM sweep_points")" = "4 4" ]
check "... the static seed-1 point is the plain run" \
	[ "$(q sweep.db "SELECT r.sim_time_s FROM runs r JOIN sweep_points p USING (run_id) WHERE p.key = 'policy' AND p.value = 'static' AND r.seed = 1")" = \
	  "$(q base.db "SELECT sim_time_s FROM runs")" ]
# 8. The build tree's own program looks in its source tree, after
# LBSIM_PATH: the copy of default.ini found nowhere above runs with it, as
# the tree's, and the tree is listed once when LBSIM_PATH names it too.
rc=0
"$tree_lbsim" default.ini --set run.iterations=50 -o tree.db > tree.out 2> err || rc=$?
check "the build tree's lbsim finds the profiles in its source tree (exit $rc)" [ "$rc" -eq 0 ]
check "... the same numbers as the run in the tree" [ "$(table tree.out)" = "$(table base.out)" ]
LBSIM_PATH="$src" "$tree_lbsim" scenarios > list2
check "... and lists the tree once when LBSIM_PATH names it" [ "$(grep -c '^  ' list2)" -eq "$n" ]

finish
