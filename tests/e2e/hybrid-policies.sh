#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Balancing policies of hybrid jobs from the command line (doc/hybrid.md,
# "Balancing policies"): on two replicas of one GPU, the first at half
# speed, lbbsp, dbs and the oracle split 6 micro-batches 2 / 4 (1 : 2) and
# the slow replica's compute falls by the third it gives away; static keeps
# 3 / 3; resplit pays its pauses, the ladder buys a node replacement on a
# long episode and not on a short one; --seeds records a run a seed; bad
# policy input exits 3 naming the file, the line and the key.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t * (b < 0 ? -b : b)) }'; }

cat > "$TMP/two.ini" <<'INI'
[run]
steps = 6
[hybrid]
dp = 2
micro_batches = 3
[model]
name = llama3-8b
sequence_length = 2048
recompute = full
[nodes.slow]
count = 1
gpus_per_node = 1
gpu = h200
availability = 0.5
[nodes.fast]
count = 1
gpus_per_node = 1
gpu = h200
[intra_node]
bandwidth = 450 GB/s
[network]
bandwidth = 400 Gbit/s
latency = 5 us
[hybrid_policy]
name = static
epoch_steps = 3
INI
split() { q "$1" "SELECT group_concat(m, ' ') FROM (SELECT group_concat(micro_batches, '/') AS m FROM hybrid_replicas GROUP BY step ORDER BY step)"; }
comp() { q "$1" "SELECT quote(compute_s) FROM hybrid_groups WHERE step = $2 AND dp_rank = $3"; }
for p in static lbbsp dbs oracle; do
	"$LBSIM" "$TMP/two.ini" --set hybrid_policy.name=$p -o "$TMP/$p.db" -q
	check "$p runs" test $? -eq 0
done
check "static: 3/3 every step" test "$(split "$TMP/static.db")" = "3/3 3/3 3/3 3/3 3/3 3/3"
check "lbbsp: 3/3, then 2/4 (speeds 1 : 2)" test "$(split "$TMP/lbbsp.db")" = "3/3 2/4 2/4 2/4 2/4 2/4"
check "dbs (epochs of 3 steps): 3/3 for an epoch, then 2/4" test "$(split "$TMP/dbs.db")" = "3/3 3/3 3/3 2/4 2/4 2/4"
check "oracle: 2/4 from the first step" test "$(split "$TMP/oracle.db")" = "2/4 2/4 2/4 2/4 2/4 2/4"
# one stage: a replica's compute is its micro-batches times one's time
check "lbbsp: the slow replica computes 2/3 of static's" near "$(comp "$TMP/lbbsp.db" 2 0)" \
	"$(awk -v x="$(comp "$TMP/static.db" 2 0)" 'BEGIN { printf "%.17g", x * 2 / 3 }')" 1e-12
check "lbbsp: the fast one 4/3 of static's" near "$(comp "$TMP/lbbsp.db" 2 1)" \
	"$(awk -v x="$(comp "$TMP/static.db" 2 1)" 'BEGIN { printf "%.17g", x * 4 / 3 }')" 1e-12
check "lbbsp: the two replicas' compute equal (1 : 2 of speeds 1 : 2)" near "$(comp "$TMP/lbbsp.db" 2 0)" "$(comp "$TMP/lbbsp.db" 2 1)" 1e-12
check "lbbsp's step shorter than static's by the slow replica's third" near \
	"$(q "$TMP/static.db" "ATTACH '$TMP/lbbsp.db' AS l; SELECT printf('%.17g', s.step_s - t.step_s) FROM hybrid_steps s, l.hybrid_steps t WHERE s.step = 2 AND t.step = 2")" \
	"$(awk -v x="$(comp "$TMP/static.db" 2 0)" 'BEGIN { printf "%.17g", x / 3 }')" 1e-9
check "oracle: the timeline of a 2/4 step holds 2 and 4 forward computes, no padding" test \
	"$(q "$TMP/oracle.db" "SELECT group_concat(n, ' ') FROM (SELECT count(*) AS n FROM hybrid_timeline WHERE step = 0 AND optype = 'forward-compute' GROUP BY dp_rank ORDER BY dp_rank)")" = "2 4"
"$LBSIM" whatif "$TMP/oracle.db" -o "$TMP/w.db" > "$TMP/out" 2>&1
check "whatif refuses a run whose replicas ran different micro-batch counts (exit 3, saying why)" \
	test $? -eq 3 -a -n "$(grep -F 'every (step, dp_rank) must hold the same ops' "$TMP/out")"
"$LBSIM" whatif "$TMP/static.db" -o "$TMP/w2.db" -q
check "... and reads a run of static" test $? -eq 0
check "a decision's wall time recorded each step" test "$(q "$TMP/lbbsp.db" 'SELECT count(*) FROM hybrid_decisions WHERE decision_s >= 0')" = 6
check "the summary view: the policy and the time of the steps" test "$(q "$TMP/lbbsp.db" \
	'SELECT policy, abs(total_s - (SELECT sum(step_s) FROM hybrid_steps)) < 1e-9, changes FROM hybrid_policy_summary')" = "lbbsp|1|1"
"$LBSIM" "$TMP/two.ini" --set hybrid_policy.name=lbbsp -o "$TMP/lbbsp2.db" -q
check "a rerun is identical" test "$(q "$TMP/lbbsp.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')" = \
	"$(q "$TMP/lbbsp2.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')"

# static is the engine without a policy, to the bit
SC="$top_srcdir/scenarios/hybrid/llama3-70b-8x16.ini"
"$LBSIM" "$SC" -q -o "$TMP/none.db" && "$LBSIM" "$SC" -q --set hybrid_policy.name=static -o "$TMP/st.db"
check "static = no policy, to the bit" test "$(q "$TMP/none.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')" = \
	"$(q "$TMP/st.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')"

# layer re-split and the ladder on the fail-slow scenario
FS="$top_srcdir/scenarios/hybrid/failslow.ini"
"$LBSIM" "$FS" -q --set hybrid_policy.name=resplit --set run.steps=80 -o "$TMP/rs.db"
check "resplit runs" test $? -eq 0
check "resplit: every step's blocks sum to the model's 80" test "$(q "$TMP/rs.db" 'SELECT count(*) FROM (SELECT sum(blocks) AS b FROM hybrid_partitions GROUP BY step) WHERE b != 80')" = 0
check "resplit: it moved blocks during the episode, paying pauses" test "$(q "$TMP/rs.db" 'SELECT count(*) > 0 AND min(action_s) > 0 FROM hybrid_decisions WHERE action_s > 0')" = 1
check "resplit: the time of the steps counts the pauses" near "$(q "$TMP/rs.db" 'SELECT total_s FROM hybrid_policy_summary')" \
	"$(q "$TMP/rs.db" 'SELECT (SELECT sum(step_s) FROM hybrid_steps) + (SELECT sum(action_s) FROM hybrid_decisions)')" 1e-12
"$LBSIM" "$FS" -q --set hybrid_policy.name=ladder --set failslow.gpu40.duration=3600s --set run.steps=400 -o "$TMP/long.db"
check "ladder, a 1-hour episode: one node replaced, a 300 s restart" test "$(q "$TMP/long.db" 'SELECT count(*), sum(action_s >= 300) FROM hybrid_decisions WHERE action_s >= 300')" = "1|1"
check "ladder, after the replacement: the even split" test "$(q "$TMP/long.db" 'SELECT group_concat(micro_batches) FROM hybrid_replicas WHERE step = 399')" = "32,32,32,32"
"$LBSIM" "$FS" -q --set hybrid_policy.name=ladder --set failslow.gpu40.duration=60s -o "$TMP/short.db"
check "ladder, a 1-minute episode: no restart bought" test "$(q "$TMP/short.db" 'SELECT count(*) FROM hybrid_decisions WHERE action_s >= 300')" = 0

# sequence packing on long-tailed lengths: shorter steps, the same split
LT="$top_srcdir/scenarios/hybrid/long-tail.ini"
"$LBSIM" "$LT" -q --set run.steps=5 -o "$TMP/lt-static.db" && "$LBSIM" "$LT" -q --set run.steps=5 --set hybrid_policy.name=pack -o "$TMP/lt-pack.db"
check "pack runs" test $? -eq 0
check "pack: every step shorter than static's (the same lengths, re-arranged)" test "$(q "$TMP/lt-pack.db" "ATTACH '$TMP/lt-static.db' AS s;
	SELECT count(*) FROM hybrid_steps p JOIN s.hybrid_steps t USING (step) WHERE p.step_s < t.step_s")" = 5
check "pack: the same tokens a step as static (a permutation of the lengths)" near \
	"$(q "$TMP/lt-pack.db" 'SELECT tokens_per_s * mean_step_s FROM hybrid_runs')" "$(q "$TMP/lt-static.db" 'SELECT tokens_per_s * mean_step_s FROM hybrid_runs')" 1e-9

# seeds: a run a seed, the interval printed
MF="$top_srcdir/scenarios/hybrid/mixed-fleet.ini"
"$LBSIM" "$MF" --set run.steps=5 --set hybrid_policy.name=lbbsp --seeds 3 -o "$TMP/seeds.db" > "$TMP/out" 2>&1
check "--seeds 3: three runs, seeds 1 to 3" test "$(q "$TMP/seeds.db" 'SELECT group_concat(seed) FROM hybrid_runs')" = "1,2,3"
check "--seeds: the mean and its 95% interval printed" grep -q 'seeds 1 to 3: step .* +- .* (95%)' "$TMP/out"
check "--seeds: the nodes' draws differ between seeds" test "$(q "$TMP/seeds.db" 'SELECT count(DISTINCT mean_step_s) FROM hybrid_runs')" = 3

# a hybrid policy plugin (examples/hybrid-policy), built as out of tree
: "${CC:=cc}"
ex=$top_srcdir/examples/hybrid-policy
( cd "$TMP" && $CC -shared -fPIC -O2 -Wall -Wextra -Werror -I"$top_srcdir" -o steps.so "$ex/steps.c" )
check "the example plugin builds" test -e "$TMP/steps.so"
cp "$ex/example.ini" "$TMP/example.ini"
"$LBSIM" "$TMP/example.ini" -q -o "$TMP/plug.db" > "$TMP/out" 2>&1
check "without --plugins: exit 3 naming [hybrid_policy] plugin" test $? -eq 3 -a -n "$(grep -F 'example.ini:42: [hybrid_policy] plugin: plugins are not loaded' "$TMP/out")"
"$LBSIM" "$TMP/example.ini" --plugins -q -o "$TMP/plug.db"
check "with --plugins: 3/3, then the straggler gives one, 2/4 kept (steps.c's example)" \
	test "$(split "$TMP/plug.db")" = "3/3 2/4 2/4 2/4 2/4 2/4"
check "... the plugin's options recorded" test "$(q "$TMP/plug.db" "SELECT value FROM hybrid_config WHERE section = 'hybrid_policy' AND key = 'plugin'")" = steps.so
sed -e 's/"steps"/"lbbsp"/' "$ex/steps.c" > "$TMP/clash.c"
( cd "$TMP" && $CC -shared -fPIC -O2 -w -I"$top_srcdir" -o clash.so clash.c )
"$LBSIM" "$TMP/example.ini" --plugins --set hybrid_policy.plugin="$TMP/clash.so" --set hybrid_policy.name=lbbsp -q -o "$TMP/bad.db" > "$TMP/out" 2>&1
check "a plugin named like a built-in: exit 3" test $? -eq 3 -a -n "$(grep -F "is the name of a built-in policy" "$TMP/out")"
sed -e 's|^plugin = steps.so$|plugin = ../steps.so|' "$TMP/example.ini" > "$TMP/escape.ini"
"$LBSIM" "$TMP/escape.ini" --plugins -q -o "$TMP/bad.db" > "$TMP/out" 2>&1
check "a plugin path leaving the scenario's folder: exit 3" test $? -eq 3 -a -n "$(grep -F "leaves the scenario's folder" "$TMP/out")"

# bad input: exit 3, file, line and key, nothing written
refuse() { # NAME EXPECTED-MESSAGE FILE SETTINGS...
	local name=$1 msg=$2 file=$3; shift 3
	rm -f "$TMP/bad.db"
	"$LBSIM" "$file" -o "$TMP/bad.db" "$@" > "$TMP/out" 2>&1
	local rc=$?
	if [ $rc -ne 3 ] || ! grep -qF -- "$msg" "$TMP/out" || [ -e "$TMP/bad.db" ]; then
		bad "$name: exit $rc, $(cat "$TMP/out")"
	else
		ok "$name"
	fi
}
sed -i -e '/^\[hybrid_policy\]$/,$d' "$TMP/two.ini"
printf '[hybrid_policy]\nname = lbbsp\n[hybrid_policy.lbbsp]\npredictor = psychic\n' >> "$TMP/two.ini"
refuse "an unknown predictor" "two.ini:27: [hybrid_policy.lbbsp] predictor: 'psychic'" "$TMP/two.ini"
refuse "an unknown policy (--set)" "hybrid_policy.name: no hybrid policy 'magic'" "$TMP/two.ini" --set hybrid_policy.name=magic
sed -e 's/^name = lbbsp$/name = magic/' "$TMP/two.ini" > "$TMP/magic.ini"
refuse "an unknown policy" "magic.ini:25: [hybrid_policy] name: no hybrid policy 'magic'" "$TMP/magic.ini"
refuse "an option the policy lacks" "horizon" "$TMP/two.ini" --set hybrid_policy.lbbsp.horizon=3
refuse "options of a policy that does not exist" "[hybrid_policy.nosuch]: no hybrid policy 'nosuch'" "$TMP/two.ini" --set hybrid_policy.nosuch.x=1
refuse "a ladder threshold of no number" "threshold" "$TMP/two.ini" --set hybrid_policy.name=ladder --set hybrid_policy.ladder.threshold=nan
refuse "a negative interval" "hybrid_policy.every: '-1' is out of range" "$TMP/two.ini" --set hybrid_policy.every=-1
refuse "a decision of negative cost" "hybrid_policy.decision_cost" "$TMP/two.ini" --set hybrid_policy.decision_cost=-1s
refuse "a decision cost without a unit" "hybrid_policy.decision_cost" "$TMP/two.ini" --set hybrid_policy.decision_cost=1
# [hybrid_policy] decision_cost: a pause before every step, whatever the
# policy. failslow.ini without its episode (factor 1): every GPU at full
# speed, so neither policy changes the split and 10 steps of 1 s decisions
# end exactly 10 s later, every step as long (1e-9), the pauses recorded
for p in static lbbsp; do
	for c in 0 1; do
		"$LBSIM" "$FS" --set failslow.gpu40.factor=1 --set run.steps=10 --set hybrid_policy.name=$p \
			--set hybrid_policy.decision_cost=${c}s -q -o "$TMP/dc$c.db" || bad "decision_cost $c, $p"
	done
	check "$p: a decision cost of 1 s: 10 s more in 10 steps, the steps as long, the pauses recorded" \
		test "$(q "$TMP/dc1.db" "ATTACH '$TMP/dc0.db' AS z; SELECT abs(a.total_s - b.total_s - 10) < 1e-9
			AND abs(a.mean_step_s - b.mean_step_s) < 1e-9 AND a.action_s = 10 FROM hybrid_policy_summary a,
			z.hybrid_policy_summary b WHERE a.policy = '$p' AND b.policy = '$p'")" = 1
done
# a reaction delay: lbbsp's decisions applied 3 steps late on the fail-slow
# episode: a longer run, the summary says so; a delay out of range refused
"$LBSIM" "$FS" --set hybrid_policy.name=lbbsp --set run.steps=80 -o "$TMP/dl0.db" -q
"$LBSIM" "$FS" --set hybrid_policy.name=lbbsp --set run.steps=80 --set hybrid_policy.delay=3 -o "$TMP/dl3.db" > "$TMP/out"
check "delay 3: the summary says the decisions ran 3 steps late" grep -q 'decisions applied 3 steps late, 0 dropped' "$TMP/out"
check "delay 3: the run takes longer than at once" test "$(q "$TMP/dl3.db" "ATTACH '$TMP/dl0.db' AS z;
	SELECT a.total_s > b.total_s FROM hybrid_policy_summary a, z.hybrid_policy_summary b")" = 1
refuse "a negative delay" "hybrid_policy.delay" "$FS" --set hybrid_policy.delay=-1

# resplit with interleaved chunks (v = 2) on the fail-slow scenario: each
# stage's chunks stay alike, so every step's blocks a chunk sum to 80 / 2;
# the slow stage (1) gives blocks away during the episode and takes them
# back after it, paying pauses; the run is shorter than static's
IL="--set hybrid.schedule=interleaved --set hybrid.virtual_stages=2 --set run.steps=120"
"$LBSIM" "$FS" -q $IL -o "$TMP/il-st.db" && "$LBSIM" "$FS" -q $IL --set hybrid_policy.name=resplit -o "$TMP/il-rs.db"
check "resplit with interleaved chunks runs" test $? -eq 0
check "... every step's blocks a chunk sum to 40" test "$(q "$TMP/il-rs.db" 'SELECT count(*) FROM (SELECT sum(blocks) AS b FROM hybrid_partitions GROUP BY step) WHERE b != 40')" = 0
check "... the slow stage holds fewer during the episode, all 10 again at the end" test "$(q "$TMP/il-rs.db" "SELECT
	(SELECT min(blocks) FROM hybrid_partitions WHERE stage = 1) < 10 AND
	(SELECT group_concat(blocks) FROM hybrid_partitions WHERE step = 119) = '10,10,10,10'")" = 1
check "... it paid pauses, and ran shorter than static" test "$(q "$TMP/il-rs.db" "ATTACH '$TMP/il-st.db' AS s;
	SELECT a.action_s > 0 AND a.total_s < b.total_s FROM hybrid_policy_summary a, s.hybrid_policy_summary b")" = 1

# expert parallelism (scenarios/hybrid/mixtral-8x7b.ini: 16 replicas in
# two expert groups of 8), GPU 0 (replica 0's first stage, group 0) at half
# speed: the replicas of a group run as many micro-batches, and a group runs
# at its slowest's pace, so LB-BSP's shares go by group. The slow GPU halves
# one stage's compute, not the replica's exchanges and bubbles, so the
# group is less than twice as slow (a third of the 256 micro-batches, 10.67
# a replica, would hold for compute alone): LB-BSP, from the measured times,
# reaches the split the oracle finds by simulating every one, from step 2
# on; the step shorter than static's (more than 10% asserted)
MX="$top_srcdir/scenarios/hybrid/mixtral-8x7b.ini"
printf '[failslow.g0]\nstart = 0 s\nduration = 1000 s\ngpus = 0\nfactor = 0.5\n' | cat "$MX" - > "$TMP/mx.ini"
"$LBSIM" "$TMP/mx.ini" -q -o "$TMP/mx-st.db" && "$LBSIM" "$TMP/mx.ini" -q --set hybrid_policy.name=lbbsp -o "$TMP/mx-lb.db"
check "lbbsp with expert parallelism runs" test $? -eq 0
check "... every step, the replicas of an expert group at the same micro-batches, 256 in all" test "$(q "$TMP/mx-lb.db" \
	"SELECT count(*) FROM (SELECT step, dp_rank / 8 AS grp, count(DISTINCT micro_batches) AS k FROM hybrid_replicas
	 GROUP BY step, grp) WHERE k != 1") $(q "$TMP/mx-lb.db" "SELECT count(*) FROM (SELECT sum(micro_batches) AS n
	 FROM hybrid_replicas GROUP BY step) WHERE n != 256")" = "0 0"
"$LBSIM" "$TMP/mx.ini" -q --set hybrid_policy.name=oracle --set run.steps=4 -o "$TMP/mx-or.db"
best=$(q "$TMP/mx-or.db" "SELECT micro_batches FROM hybrid_replicas WHERE step = 3 AND dp_rank = 0")
check "... the oracle gives the slow group fewer than 16 a replica, more than 10.67 (got $best)" \
	test "$best" -lt 16 -a "$best" -gt 10
check "... the slow group's replicas at the oracle's $best from step 2 on" test "$(q "$TMP/mx-lb.db" "SELECT count(*) FROM
	hybrid_replicas WHERE step >= 2 AND dp_rank < 8 AND micro_batches != '$best'")" = 0
check "... the mean step more than 10% shorter than static's" test "$(q "$TMP/mx-lb.db" "ATTACH '$TMP/mx-st.db' AS s;
	SELECT (SELECT avg(step_s) FROM hybrid_steps) < 0.9 * (SELECT avg(step_s) FROM s.hybrid_steps)")" = 1
refuse "resplit with expert parallelism" "hybrid_policy.name" "$TMP/mx.ini" --set hybrid_policy.name=resplit
finish
