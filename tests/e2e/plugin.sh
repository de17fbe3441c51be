#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Policy and predictor plugins (doc/extending.md): the example policy of
# examples/policy-myrule, built as a shared object with the compiler flags
# `pkg-config --cflags lbsim` gives (here the source tree's headers),
# runs beside the built-in policies with the times its opening comment
# works out by hand; a predictor plugin that is `last` again gives the
# same run as `last`; every broken plugin is refused with exit 3, naming
# where it was given and what is wrong.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
: "${CC:=cc}"
ex=$top_srcdir/examples/policy-myrule
plugins=$top_srcdir/tests/data/plugins
cd "$TMP" || exit 1
# cond 'A && B': check's form for a condition of several commands.
cond() { eval "$1"; }
build() { # OUT SOURCE [FLAGS...]: a plugin, as an out-of-tree build makes it
	local out=$1 src=$2; shift 2
	$CC -shared -fPIC -O2 -I"$top_srcdir" "$@" -o "$out" "$src"
}
check "the example builds" build myrule.so "$ex/myrule.c" -Wall -Wextra -Werror
cp "$ex/example.ini" .

# 0. The trust model: a plugin is code, so it loads only when the command
#    line allows it (--plugins, or LBSIM_PLUGINS=1); never while a sweep is
#    listed; and a scenario file names one only within its own folder.
build ctor.so "$plugins/broken.c" -w -DCONSTRUCTOR
export LBSIM_TEST_MARK=$TMP/loaded
unset LBSIM_PLUGINS
sed 's/^plugin = myrule.so$/plugin = ctor.so/' example.ini > ctor.ini
rc=0; "$LBSIM" ctor.ini -o r.db 2> err || rc=$?
check "without --plugins: exit 3, saying how to allow it" \
	cond 'test $rc -eq 3 && grep -q "ctor.ini:20: \[policy\] plugin: plugins are not loaded unless .*--plugins (or set LBSIM_PLUGINS=1)" err'
check "... the plugin's constructor did not run, nothing written" cond 'test ! -e loaded && test ! -e r.db'
rc=0; LBSIM_PLUGINS=yes "$LBSIM" ctor.ini -o r.db 2> err || rc=$?
check "LBSIM_PLUGINS=yes is not LBSIM_PLUGINS=1: refused" cond 'test $rc -eq 3 && test ! -e loaded'
printf '[sweep]\nscenario = ctor.ini\n[vary]\nseeds = 1, 2\n' > ctor-sweep.ini
rc=0; LBSIM_PLUGINS=1 "$LBSIM" sweep ctor-sweep.ini --list --plugins > out 2> err || rc=$?
check "sweep --list never loads a plugin, even allowed: exit 3" \
	cond 'test $rc -eq 3 && test ! -e loaded && grep -q "not read while listing" err'
rc=0; "$LBSIM" testbed ctor.ini -o r.db > out 2> err || rc=$?
check "testbed without --plugins: exit 3, nothing loaded" cond 'test $rc -eq 3 && test ! -e loaded && grep -q -- --plugins err'
rc=0; "$LBSIM" validate ctor.ini -o r.db > out 2> err || rc=$?
check "validate without --plugins: exit 3, nothing loaded" cond 'test $rc -eq 3 && test ! -e loaded'
"$LBSIM" ctor.ini --plugins -q -o r.db 2> err
check "with --plugins it loads (its constructor ran)" test -e loaded
rm -f loaded r.db
mkdir -p sub
for v in ../ctor.so "$TMP/ctor.so" ./../ctor.so x/../../ctor.so; do
	sed "s|^plugin = myrule.so\$|plugin = $v|" example.ini > sub/escape.ini
	rc=0; "$LBSIM" sub/escape.ini --plugins -o r.db 2> err || rc=$?
	check "a scenario file's plugin path '$v' leaving its folder: exit 3" \
		cond 'test $rc -eq 3 && test ! -e loaded && grep -q "leaves the scenario.s folder" err'
done
"$LBSIM" example.ini --plugins --set "policy.plugin=$TMP/ctor.so" --set policy.name=static -q -o r.db 2> err
check "... an absolute path given on the command line is the user's own: it loads" test -e loaded
rm -f loaded r.db
unset LBSIM_TEST_MARK
# The rest of this test allows plugins through the environment.
export LBSIM_PLUGINS=1

# 1. Beside the built-ins. Hand calculation (myrule.c): static 0.6 s an
#    iteration; myrule 0.6 s, then 300 and 100 samples at 0.3 s: 3.3 s in
#    10 iterations, as static-proportional (a second method) after its one
#    profiling iteration.
"$LBSIM" example.ini --policy static,static-proportional,myrule -o a.db > out
check "the summary lists myrule beside the built-ins" \
	test "$(awk 'NR > 2 && !/^results/ { print $1 }' out | tr '\n' ' ')" = "static static-proportional myrule "
t() { q a.db "SELECT sim_time_s FROM runs WHERE policy = '$1'"; }
check "myrule: 0.6 + 9 x 0.3 = 3.3 s" test "$(q a.db "SELECT abs(sim_time_s - 3.3) < 1e-9 FROM runs WHERE policy = 'myrule'")" = 1
check "... as static-proportional" test "$(t myrule)" = "$(t static-proportional)"
check "... splitting 300 and 100 from iteration 1, once" \
	test "$(q a.db "SELECT group_concat(iteration || ':' || batch_samples, ' ') FROM batches b JOIN runs r USING (run_id) WHERE r.policy = 'myrule'")" = "0:200 0:200 1:300 1:100"
check "... its variable recorded" \
	test "$(q a.db "SELECT value FROM policy_vars v JOIN runs r USING (run_id) WHERE r.policy = 'myrule' AND iteration = 9")" = 1.0
check "... its plugin recorded" \
	test "$(q a.db "SELECT value FROM run_config WHERE run_id = 3 AND section = 'policy' AND key = 'plugin'")" = myrule.so
"$LBSIM" example.ini --policy static,myrule -q -o b.db
"$LBSIM" example.ini --policy static,myrule -q -o c.db
check "a plugin's run is reproducible" test "$(q b.db "SELECT group_concat(sim_time_s) FROM runs")" = "$(q c.db "SELECT group_concat(sim_time_s) FROM runs")"

# 2. Its options, from a [policy.myrule] section that comes before [policy]:
#    warmup = 3 gives 3 x 0.6 + 7 x 0.3 = 3.9 s.
{ printf '[policy.myrule]\nwarmup = 3\n'; cat example.ini; } > warm.ini
"$LBSIM" warm.ini -q -o w.db
check "[policy.myrule] warmup = 3: 3.9 s" test "$(q w.db "SELECT abs(sim_time_s - 3.9) < 1e-9 FROM runs WHERE policy = 'myrule'")" = 1
rc=0; "$LBSIM" warm.ini --set policy.myrule.warmup=0 -o x.db 2> err || rc=$?
check "a bad option of the plugin: exit 3 naming it" cond 'test $rc -eq 3 && grep -q "policy.myrule.warmup" err'

# 3. A sweep over policies that include the plugin's.
printf '[sweep]\nscenario = example.ini\n[vary]\npolicy = static, myrule\n' > sweep.ini
if command -v parallel > /dev/null; then
	env -u LBSIM_PLUGINS "$LBSIM" sweep sweep.ini --plugins -j 2 -q -o s.db
	check "a sweep runs the plugin's policy" test "$(q s.db "SELECT group_concat(policy, ' ') FROM (SELECT policy FROM runs ORDER BY policy)")" = "myrule static"
fi

# 3b. A point that fails while it runs (a plugin whose plan fails at
#     iteration 3), in a job with two points that do not: it is reported by
#     number and parameters, the others keep their runs, in a database each
#     (the one before it put in place as it failed), nothing is merged, and
#     the sweep exits with the point's status (3). Run again, it retries
#     that point alone.
if command -v parallel > /dev/null; then
	build failat.so "$plugins/fail_at.c" -Wall -Wextra -Werror
	sed -e 's/^name = myrule$/name = failat/' -e 's/^plugin = myrule.so$/plugin = failat.so/' example.ini > failat.ini
	printf '[sweep]\nscenario = failat.ini\n[vary]\npolicy.failat.at = 0, 3, 1000\n' > fail-sweep.ini
	rc=0; "$LBSIM" sweep fail-sweep.ini -j 1 --points-per-job 3 -q -o f.db 2> err || rc=$?
	check "a point that fails: the sweep exits 3" test $rc -eq 3
	check "... naming the point and its parameters" \
		grep -q '^lbsim sweep: point 2 (policy.failat.at=3, policy=failat, seed=1): .*failing at iteration 3' err
	check "... and how many failed" grep -q '1 of 3 points failed' err
	check "... the points before and after it keep their runs" \
		test "$(q f.db.sweep/points/000001.db 'SELECT count(*) FROM runs') $(q f.db.sweep/points/000003.db 'SELECT count(*) FROM runs')" = "1 1"
	check "... the failed point has none" test "$(ls f.db.sweep/points)" = "$(printf '000001.db\n000003.db')"
	check "... nothing is merged (the results file it created removed)" test ! -e f.db
	stat -c '%i %Y' f.db.sweep/points/*.db > kept
	rc=0; "$LBSIM" sweep fail-sweep.ini -j 1 --points-per-job 3 -q -o f.db 2> err || rc=$?
	check "run again: the point fails again (exit 3)" cond 'test $rc -eq 3 && grep -q "^lbsim sweep: point 2 " err'
	check "... and only it ran: the others' databases are the same files" test "$(stat -c '%i %Y' f.db.sweep/points/*.db)" = "$(cat kept)"
fi

# 4. A predictor plugin: `last` again under another name gives the same run.
build last-again.so "$plugins/last_again.c" -Wall -Wextra -Werror
s=$top_srcdir/scenarios/predict/cpu-bursty.ini
"$LBSIM" "$s" --policy lbbsp-cpu --no-baseline --set run.epochs=4 --set policy.lbbsp-cpu.predictor=last -q -o p1.db
"$LBSIM" "$s" --policy lbbsp-cpu --no-baseline --set run.epochs=4 --set policy.lbbsp-cpu.predictor=last-again \
	--set "predictor.last-again.plugin=$TMP/last-again.so" -q -o p2.db
it() { q "$1" "SELECT group_concat(end_s) FROM iterations"; }
check "a predictor plugin that is last: the same iterations as last" test -n "$(it p1.db)" -a "$(it p1.db)" = "$(it p2.db)"
"$LBSIM" "$s" --policy lbbsp-cpu --no-baseline --set run.epochs=4 --set policy.lbbsp-cpu.predictor=ema -q -o p3.db
check "... which differ from ema's (the predictor counts)" test "$(it p1.db)" != "$(it p3.db)"

# 5. Refused, exit 3, with where it was given and why.
refuse() { # NAME PLUGIN EXPECTED...
	local name=$1 plugin=$2 rc=0; shift 2
	"$LBSIM" example.ini --set "policy.plugin=$plugin" -o r.db > /dev/null 2> err || rc=$?
	local good=1
	for e in "$@"; do grep -qF -- "$e" err || good=0; done
	if [ $rc -eq 3 ] && [ $good -eq 1 ] && [ ! -e r.db ]; then ok "refused: $name"; else
		bad "refused: $name (exit $rc: $(cat err))"; fi
}
for v in WRONG_ABI NO_ABI NO_TABLE BUILTIN_NAME NO_PLAN MISSING_SYMBOL GARBAGE_FN FOREIGN_FN GARBAGE_NAME BAD_OPTION; do
	build "$v.so" "$plugins/broken.c" -w -D$v
done
refuse "wrong ABI version" ./WRONG_ABI.so "--set policy.plugin: " "was built for plugin ABI 999, this lbsim has 1"
refuse "no ABI symbol" ./NO_ABI.so "exports no lbs_plugin_abi: not an lbsim plugin"
refuse "no table" ./NO_TABLE.so "exports no lbs_policy_plugin"
refuse "a built-in's name" ./BUILTIN_NAME.so "policy 'static' is the name of a built-in policy"
refuse "no plan function" ./NO_PLAN.so "needs a name (letters, digits, '-', '_') and create, plan and destroy"
refuse "a symbol lbsim lacks" ./MISSING_SYMBOL.so "cannot load policy plugin ./MISSING_SYMBOL.so" "undefined symbol: lbs_no_such_function"
refuse "a function pointer to nowhere" ./GARBAGE_FN.so "lbs_policy_plugin: a function pointer (0x12345) does not point into the plugin's code"
refuse "a function pointer outside the plugin (libc's abort)" ./FOREIGN_FN.so "does not point into the plugin's code"
refuse "a name pointer to nowhere" ./GARBAGE_NAME.so "needs a name (letters, digits, '-', '_')"
refuse "an option outside its struct" ./BAD_OPTION.so "options[0] (warmup): its type or offset puts the value outside the options struct"
echo 'not a shared object' > text.so
refuse "not a shared object" ./text.so "cannot load policy plugin ./text.so"
refuse "a missing file" nowhere.so "nowhere.so: no such file (looked for it in: nowhere.so, "
refuse "a predictor where a policy goes" ./last-again.so "exports no lbs_policy_plugin"
rc=0; sed 's/^plugin = myrule.so$/plugin = nowhere.so/' example.ini > miss.ini
"$LBSIM" miss.ini -o r.db 2> err || rc=$?
check "a missing file named in the scenario: FILE:LINE: [policy] plugin" \
	cond "test $rc -eq 3 && grep -q '^lbsim: miss.ini:$(grep -n '^plugin' miss.ini | cut -d: -f1): \[policy\] plugin: ' err"
rc=0; "$LBSIM" "$s" --set "predictor.other.plugin=$TMP/last-again.so" -o r.db 2> err || rc=$?
check "a predictor plugin under another section's name: exit 3" cond "test $rc -eq 3 && grep -q \"holds predictor 'last-again', not 'other'\" err"
rc=0; "$LBSIM" "$top_srcdir/scenarios/default.ini" --policy static,myrule -o r.db 2> err || rc=$?
check "--policy myrule without its plugin: exit 2, naming the known ones" cond "test $rc -eq 2 && grep -q \"unknown policy 'myrule' (known: static, \" err"
rc=0; sed 's/^plugin = myrule.so$/plugin =/' example.ini > empty.ini
"$LBSIM" empty.ini -o r.db 2> err || rc=$?
check "an empty plugin path: exit 3 naming its line" cond 'test $rc -eq 3 && grep -q "^lbsim: empty.ini:20: \[policy\] plugin: " err'
finish
