#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A hybrid scenario from the command line (doc/hybrid.md): the shipped
# Llama 3 70B job runs, its results tables hold every step and group with
# shares that add up to the step, the fail-slow episode lengthens the steps
# it covers, a rerun is identical, the per-op trace it writes is analysed by
# lbsim whatif whose no-delay replay gives the simulated steps, and bad
# input is refused with exit 3 naming the file, the line and the key.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
SC="$top_srcdir/scenarios/hybrid/llama3-70b-8x16.ini"
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t * (b < 0 ? -b : b)) }'; }

"$LBSIM" "$SC" -o "$TMP/h.db" --ops-trace "$TMP/ops.csv" > "$TMP/out" 2>&1
check "the shipped hybrid scenario runs" test $? -eq 0
check "its summary names the job" grep -q 'dp 4 x pp 4 x tp 8, 1f1b' "$TMP/out"
check "10 steps recorded" test "$(q "$TMP/h.db" 'SELECT count(*) FROM hybrid_steps')" = 10
check "16 groups a step" test "$(q "$TMP/h.db" 'SELECT count(*) FROM hybrid_groups')" = 160
check "each group's five times add up to its step (1e-9 s)" test "$(q "$TMP/h.db" \
	'SELECT count(*) FROM hybrid_groups g JOIN hybrid_steps s USING (hybrid_id, step)
	 WHERE abs(compute_s + bubble_s + comm_s + wait_s + optimizer_s - s.step_s) > 1e-9')" = 0
check "the view's shares add up to 1" near "$(q "$TMP/h.db" \
	'SELECT compute_share + bubble_share + comm_share + wait_share + optimizer_share FROM hybrid_shares')" 1 1e-12
check "the fail-slow episode (30 s to 50 s) lengthens the steps it covers" test "$(q "$TMP/h.db" \
	"SELECT (SELECT max(step_s) FROM hybrid_steps WHERE start_s + step_s > 30 AND start_s < 50) >
		1.05 * (SELECT min(step_s) FROM hybrid_steps)")" = 1
# the first step wholly inside the episode
slow="(SELECT min(step) FROM hybrid_steps WHERE start_s >= 30 AND start_s + step_s <= 50)"
check "in the episode, the slowed replica waits for no one, the others 1 s or more" test "$(q "$TMP/h.db" \
	"SELECT sum(dp_rank = 0 AND wait_s = 0) || ' ' || sum(dp_rank > 0 AND wait_s > 1) FROM hybrid_groups WHERE step = $slow")" = "4 12"
check "in the episode, the slowed group (GPU 17's, rank 16) is the pipeline's bottleneck: the least bubble" test "$(q "$TMP/h.db" \
	"SELECT rank FROM hybrid_groups WHERE step = $slow ORDER BY bubble_s LIMIT 1")" = 16
check "every key's value is recorded" test "$(q "$TMP/h.db" "SELECT value FROM hybrid_config WHERE section = 'hybrid' AND key = 'schedule'")" = 1f1b

# the same run again: the same step times, to the bit
"$LBSIM" "$SC" -o "$TMP/h2.db" -q
check "a rerun is identical" test "$(q "$TMP/h.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')" = \
	"$(q "$TMP/h2.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')"

# fail-slow episodes drawn from rates ([failslows.NAME]): recorded with the
# run's keys, and the same episodes written out by hand as [failslow.NAME]
# sections give the same steps, to the bit (128 GPUs, one episode per GPU
# every 20 minutes on average over the first 100 s: about 11 expected)
{ cat "$SC"; printf '\n[failslows.x]\nper = gpu\nmean_interval = 20 min\nmean_duration = 20 s\nfactor = 0.5\nhorizon = 100 s\n'; } \
	> "$TMP/drawn.ini"
"$LBSIM" "$TMP/drawn.ini" -o "$TMP/d.db" -q
check "a scenario with [failslows.x] runs" test $? -eq 0
nd=$(q "$TMP/d.db" "SELECT count(*) FROM hybrid_config WHERE section LIKE 'failslow.x-%' AND key = 'start'")
check "its drawn episodes recorded ($nd, 1 to 40), each with kind, start, duration, gpus and factor" \
	test "$nd" -ge 1 -a "$nd" -le 40 -a "$(q "$TMP/d.db" "SELECT count(*) FROM hybrid_config WHERE section LIKE 'failslow.x-%'")" = $((5 * nd))
{ cat "$SC"; q "$TMP/d.db" "SELECT section, key, value FROM hybrid_config WHERE section LIKE 'failslow.x-%'
	ORDER BY CAST(substr(section, 12) AS INTEGER), key" | awk -F'|' '
	{ sec = $1; sub("failslow.x-", "failslow.hand", sec) } sec != last { printf "\n[%s]\n", sec }
	{ print $2 " = " $3; last = sec }'; } > "$TMP/hand.ini"
"$LBSIM" "$TMP/hand.ini" -o "$TMP/hd.db" -q
check "the same episodes by hand: the same steps, to the bit" test "$(q "$TMP/d.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')" = \
	"$(q "$TMP/hd.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')"
check "... and slower steps than without them" test "$(q "$TMP/d.db" 'SELECT sum(step_s) FROM hybrid_steps')" \> \
	"$(q "$TMP/h.db" 'SELECT sum(step_s) FROM hybrid_steps')"

# a network fail-slow: replica 1's first stage (GPUs 32-39, node 4) with a
# tenth of its inter-node bandwidth from 30 s to 50 s (the compute episode
# of the scenario off, factor 1, in both runs): the steps it covers take
# longer, in exposed communication (the reduction across replicas) and in
# the waits it causes, never in compute
{ cat "$SC"; printf '\n[failslow.net]\nkind = network\nstart = 30 s\nduration = 20 s\ngpus = 32-39\nfactor = 0.1\n'; } \
	> "$TMP/net.ini"
"$LBSIM" "$TMP/net.ini" -o "$TMP/n.db" -q --set failslow.gpu17.factor=1
check "a network fail-slow runs" test $? -eq 0
"$LBSIM" "$SC" -o "$TMP/n0.db" -q --set failslow.gpu17.factor=1
check "... the steps it covers longer, by exposed communication, the compute the same (1e-9)" test "$(q "$TMP/n.db" "
	ATTACH '$TMP/n0.db' AS b;
	SELECT (SELECT sum(s.step_s > o.step_s + 0.01) FROM hybrid_steps s JOIN b.hybrid_steps o USING (step)) > 0
	AND (SELECT sum(abs(g.compute_s - o.compute_s) > 1e-9 * o.compute_s) FROM hybrid_groups g
	     JOIN b.hybrid_groups o USING (step, rank)) = 0
	AND (SELECT sum(comm_s) FROM hybrid_groups) > (SELECT sum(comm_s) FROM b.hybrid_groups) + 1")" = 1

# the simulated job through the what-if analysis
"$LBSIM" whatif "$TMP/ops.csv" --meta "$TMP/ops.csv.meta.yaml" -o "$TMP/w.db" -q
check "whatif reads the simulated trace" test $? -eq 0
check "whatif's no-delay replay gives each simulated step (1e-6, float32 times)" test "$(q "$TMP/w.db" "ATTACH '$TMP/h.db' AS h;
	SELECT count(*) FROM whatif_steps w JOIN h.hybrid_steps s ON s.step = w.step
	WHERE abs(w.t_nodelay / s.step_s - 1) > 1e-6")" = 0
check "no launch delays in a simulated trace (L = 1)" near "$(q "$TMP/w.db" "SELECT value FROM whatif_metrics WHERE name = 'L'")" 1 1e-6
check "whatif blames the slowed group" test "$(q "$TMP/w.db" "SELECT rank FROM whatif_slowdowns WHERE metric = 'S_w' AND step IS NULL ORDER BY value DESC LIMIT 1")" = 16

# a node group's availability from a trace, as [workers.NAME] takes it: a
# trace of constant 0.5 gives the steps of `availability = 0.5` to the bit
cat > "$TMP/small.ini" <<'INI'
[run]
steps = 5
[hybrid]
dp = 2
pp = 2
micro_batches = 4
[model]
name = llama3-8b
sequence_length = 2048
recompute = full
[nodes.a]
count = 4
gpus_per_node = 1
gpu = h100-sxm
availability = 0.5
[intra_node]
bandwidth = 450 GB/s
[network]
bandwidth = 400 Gbit/s
latency = 5 us
INI
printf '# lbsim-trace 1\ntime_s,availability\n0,0.5\n' > "$TMP/half.csv"
sed -e 's/^availability = 0.5$/trace_format = lbsim\ntrace = half.csv/' "$TMP/small.ini" > "$TMP/small-tr.ini"
"$LBSIM" "$TMP/small.ini" -o "$TMP/s1.db" -q && "$LBSIM" "$TMP/small-tr.ini" -o "$TMP/s2.db" -q
check "a node trace of constant 0.5 runs" test $? -eq 0
check "a node trace of constant 0.5 = availability 0.5, to the bit" test "$(q "$TMP/s1.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')" = \
	"$(q "$TMP/s2.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')"
check "the trace keys are recorded" test "$(q "$TMP/s2.db" "SELECT value FROM hybrid_config WHERE section = 'nodes.a' AND key = 'trace'")" = half.csv
# compute episodes on traced nodes: the replay times the episodes' levels,
# integrated piece by piece. Two episodes that change inside computes,
# overlapping (0.25 from 3 to 7 s on GPU 2, 0.5 from 5 to 15 s on GPUs 1-2):
# - on the trace of constant 0.5, the steps of `availability = 0.5` with the
#   same episodes (1e-12);
# - on a trace of 0.5 until 4 s and 1 after, the steps of an untraced node
#   at 1 with a third episode at 0.5 on every GPU until 4 s (1e-12);
# - the oracle on it runs (its look-ahead replays copies) and is no slower
EP='[failslow.x]\nstart = 3 s\nduration = 4 s\ngpus = 2\nfactor = 0.25\n[failslow.y]\nstart = 5 s\nduration = 10 s\ngpus = 1-2\nfactor = 0.5\n'
{ cat "$TMP/small.ini"; printf "$EP"; } > "$TMP/ep-u.ini"
{ cat "$TMP/small-tr.ini"; printf "$EP"; } > "$TMP/ep-t.ini"
"$LBSIM" "$TMP/ep-u.ini" -o "$TMP/ep-u.db" -q && "$LBSIM" "$TMP/ep-t.ini" -o "$TMP/ep-t.db" -q
check "episodes on a traced node run" test $? -eq 0
same_steps() { q "$1" "ATTACH '$2' AS o; SELECT count(*) FROM hybrid_steps a JOIN o.hybrid_steps b USING (step)
	WHERE abs(a.step_s / b.step_s - 1) > 1e-12"; }
check "... on a trace of 0.5: the steps of availability 0.5 with the same episodes (1e-12)" test "$(same_steps "$TMP/ep-u.db" "$TMP/ep-t.db")" = 0
printf '# lbsim-trace 1\ntime_s,availability\n0,0.5\n4,1\n' > "$TMP/step.csv"
{ sed -e 's/^trace = half.csv$/trace = step.csv/' "$TMP/small-tr.ini"; printf "$EP"; } > "$TMP/ep-s.ini"
{ sed -e 's/^availability = 0.5$/availability = 1/' "$TMP/small.ini"; printf "$EP"; printf '[failslow.z]\nstart = 0 s\nduration = 4 s\ngpus = 0-3\nfactor = 0.5\n'; } > "$TMP/ep-z.ini"
"$LBSIM" "$TMP/ep-s.ini" -o "$TMP/ep-s.db" -q && "$LBSIM" "$TMP/ep-z.ini" -o "$TMP/ep-z.db" -q
check "... on a trace that changes at 4 s: the untraced job with that change as an episode (1e-12)" test "$(same_steps "$TMP/ep-s.db" "$TMP/ep-z.db")" = 0
"$LBSIM" "$TMP/ep-t.ini" -o "$TMP/ep-o.db" -q --set hybrid_policy.name=oracle
check "... the oracle runs on it, no slower than static" test "$(q "$TMP/ep-o.db" "ATTACH '$TMP/ep-t.db' AS s;
	SELECT (SELECT sum(step_s) FROM hybrid_steps) <= (SELECT sum(step_s) FROM s.hybrid_steps) + 1e-9")" = 1
# a tensor group across traced nodes runs at the least of their levels
# (lbs_hy_least): t = 2 on nodes of one GPU, stage 0 on node a (a trace of
# 0.5, then 1 from 3 s) and node b (1, then 0.25 from 2 s to 6 s), with an
# episode of 0.5 on b's GPU from 8 s to 10 s. Its least is 0.5 to 2 s, 0.25
# to 6 s, 1 on, 0.5 from 8 to 10 s: the steps of the same job untraced with
# those levels written as episodes (1e-12), a second path (build_levels).
LT='[run]\nsteps = 8\n[hybrid]\ndp = 1\npp = 2\ntp = 2\nmicro_batches = 4\n[model]\nname = llama3-8b\nsequence_length = 2048\nrecompute = full\n'
LN='[nodes.c]\ncount = 2\ngpus_per_node = 1\ngpu = h100-sxm\n[intra_node]\nbandwidth = 450 GB/s\n[network]\nbandwidth = 400 Gbit/s\nlatency = 5 us\n[failslow.common]\nstart = 8 s\nduration = 2 s\ngpus = 1\nfactor = 0.5\n'
printf '# lbsim-trace 1\ntime_s,availability\n0,0.5\n3,1\n' > "$TMP/la.csv"
printf '# lbsim-trace 1\ntime_s,availability\n0,1\n2,0.25\n6,1\n' > "$TMP/lb.csv"
printf "$LT"'[nodes.a]\ncount = 1\ngpus_per_node = 1\ngpu = h100-sxm\ntrace_format = lbsim\ntrace = la.csv\n[nodes.b]\ncount = 1\ngpus_per_node = 1\ngpu = h100-sxm\ntrace_format = lbsim\ntrace = lb.csv\n'"$LN" > "$TMP/least.ini"
printf "$LT"'[nodes.a]\ncount = 1\ngpus_per_node = 1\ngpu = h100-sxm\n[nodes.b]\ncount = 1\ngpus_per_node = 1\ngpu = h100-sxm\n'"$LN"'[failslow.m1]\nstart = 0 s\nduration = 2 s\ngpus = 0\nfactor = 0.5\n[failslow.m2]\nstart = 2 s\nduration = 4 s\ngpus = 0\nfactor = 0.25\n' > "$TMP/least-ep.ini"
"$LBSIM" "$TMP/least.ini" -o "$TMP/least.db" -q && "$LBSIM" "$TMP/least-ep.ini" -o "$TMP/least-ep.db" -q
check "a tensor group across two traced nodes runs" test $? -eq 0
check "... at the least of the traces and episodes: the steps of the untraced job with it as episodes (1e-12)" \
	test "$(same_steps "$TMP/least.db" "$TMP/least-ep.db")" = 0 -a "$(q "$TMP/least.db" 'SELECT count(*) FROM hybrid_steps')" = 8
check "... the steps differ from the traces' absence" test "$(q "$TMP/least.db" 'SELECT count(DISTINCT round(step_s, 9)) FROM hybrid_steps')" -ge 3
"$LBSIM" "$TMP/least.ini" -o "$TMP/least-o.db" -q --set hybrid_policy.name=oracle
check "... the oracle runs on it, no slower than static" test "$(q "$TMP/least-o.db" "ATTACH '$TMP/least.db' AS s;
	SELECT (SELECT sum(step_s) FROM hybrid_steps) <= (SELECT sum(step_s) FROM s.hybrid_steps) + 1e-9")" = 1
sed -e 's/^trace = half.csv$/trace = nowhere.csv/' "$TMP/small-tr.ini" > "$TMP/small-bad.ini"
"$LBSIM" "$TMP/small-bad.ini" -o "$TMP/bad.db" > "$TMP/out" 2>&1
check "a node trace that is missing: exit 3 naming the section" test $? -eq 3 -a -n "$(grep -F "[nodes.a]" "$TMP/out")"

# [generator.NAME] kind background: an on/off job on every node
# - on phases of 1e9 s and off phases of 1e-6 s: every node starts on (the
#   stationary state, on with probability 1 - 1e-15) and stays on, so every
#   GPU runs at 1 - load = 0.5 throughout: the steps of `availability = 0.5`
#   to the bit;
sed -e '/^availability = 0.5$/d' "$TMP/small.ini" > "$TMP/bg0.ini"
{ cat "$TMP/bg0.ini"; printf '[generator.bg]\nkind = background\non_mean = 1e9 s\noff_mean = 1e-6 s\nload = 0.5\nhorizon = 1 s\n'; } > "$TMP/bg1.ini"
"$LBSIM" "$TMP/bg1.ini" -o "$TMP/bg1.db" -q
check "a background generator always on = availability 1 - load, to the bit" test $? -eq 0 -a \
	"$(q "$TMP/s1.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')" = \
	"$(q "$TMP/bg1.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')"
# - on 10 s, off 30 s over 8000 s on 4 nodes: the share of time on is
#   on / (on + off) = 0.25 within 4 sd; the sd of an alternating renewal
#   process's on time over T is sqrt(T (s_on^2 m_off^2 + s_off^2 m_on^2) /
#   (m_on + m_off)^3) (exponential phases: s = m), 300 s over the 32,000
#   unit-seconds, 0.0094 of the share;
{ cat "$TMP/bg0.ini"; printf '[generator.bg]\nkind = background\non_mean = 10 s\noff_mean = 30 s\nload = 0.5\nhorizon = 8000 s\n'; } > "$TMP/bg2.ini"
"$LBSIM" "$TMP/bg2.ini" -o "$TMP/bg2.db" -q --set run.steps=2
share=$(q "$TMP/bg2.db" "SELECT sum(min(s.v + d.v, 8000) - s.v) / 32000 FROM
	(SELECT section, CAST(value AS REAL) AS v FROM hybrid_config WHERE section LIKE 'failslow.bg-%' AND key = 'start') s JOIN
	(SELECT section, CAST(value AS REAL) AS v FROM hybrid_config WHERE section LIKE 'failslow.bg-%' AND key = 'duration') d
	USING (section)")
check "the on share over 8000 s of 4 nodes is 0.25 within 4 sd ($share)" near "$share" 0.25 0.15
check "... each on phase at 1 - load" test "$(q "$TMP/bg2.db" "SELECT DISTINCT value FROM hybrid_config WHERE section LIKE 'failslow.bg-%' AND key = 'factor'")" = 0.5
"$LBSIM" "$TMP/bg2.ini" -o "$TMP/bg3.db" -q --set run.steps=2
"$LBSIM" "$TMP/bg2.ini" -o "$TMP/bg4.db" -q --set run.steps=2 --set run.seed=2
cfg() { q "$1" "SELECT group_concat(value) FROM hybrid_config WHERE section LIKE 'failslow.bg-%'"; }
check "the same seed draws the same phases, another seed others" test "$(cfg "$TMP/bg2.db")" = "$(cfg "$TMP/bg3.db")" -a \
	"$(cfg "$TMP/bg2.db")" != "$(cfg "$TMP/bg4.db")"
# - the policies run on it, the oracle no slower than static
{ cat "$TMP/bg0.ini"; printf '[generator.bg]\nkind = background\non_mean = 20 s\noff_mean = 40 s\nload = 0.5\nhorizon = 300 s\n'; } > "$TMP/bg5.ini"
"$LBSIM" "$TMP/bg5.ini" -o "$TMP/bg5.db" -q --set run.steps=40 && \
	"$LBSIM" "$TMP/bg5.ini" -o "$TMP/bg5.db" -q --set run.steps=40 --set hybrid_policy.name=oracle
check "static and oracle on a background generator: the oracle's run is no longer" test $? -eq 0 -a \
	"$(q "$TMP/bg5.db" 'SELECT (SELECT sum(step_s) FROM hybrid_steps WHERE hybrid_id = 2) <= (SELECT sum(step_s) FROM hybrid_steps WHERE hybrid_id = 1)')" = 1
# - bad input
"$LBSIM" "$TMP/bg2.ini" -o "$TMP/bad.db" --set generator.bg.nodes=nope > "$TMP/out" 2>&1
check "a generator on no such node group: exit 3 naming the key" test $? -eq 3 -a -n "$(grep -F "generator.bg.nodes: 'nope' is no [nodes.NAME] section" "$TMP/out")"
"$LBSIM" "$TMP/bg2.ini" -o "$TMP/bad.db" --set generator.bg.kind=cpu_credits > "$TMP/out" 2>&1
check "a data-parallel kind: exit 3 naming the key" test $? -eq 3 -a -n "$(grep -F "kind" "$TMP/out")"
GEN='[generator.bg]\nkind = background\nnodes = a\non_mean = 10 s\noff_mean = 30 s\nload = 0.5\nhorizon = 100 s\n'
{ cat "$TMP/small-tr.ini"; printf "$GEN"; } > "$TMP/bg6.ini"
{ cat "$TMP/small.ini"; printf "$GEN"; } > "$TMP/bg7.ini"
"$LBSIM" "$TMP/bg6.ini" -o "$TMP/bg6.db" -q && "$LBSIM" "$TMP/bg7.ini" -o "$TMP/bg7.db" -q
check "a generator on a traced node group (named): its trace of 0.5 times the phases = availability 0.5 times them (1e-12)" \
	test $? -eq 0 -a "$(same_steps "$TMP/bg6.db" "$TMP/bg7.db")" = 0
"$LBSIM" "$TMP/bg2.ini" -o "$TMP/bad.db" --set generator.bg.horizon=1000000s > "$TMP/out" 2>&1
check "too many phases: exit 3 naming horizon" test $? -eq 3 -a -n "$(grep -F "generator.bg.horizon: more than 1024" "$TMP/out")"
check "nothing written on bad input" test ! -e "$TMP/bad.db"

# sequence parallelism: Llama 3 70B at t = 8 with micro-batches of 3
# sequences needs 114 GB on stage 0 without it (refused, exit 3), and fits
# with it (the activations of Korthikanti et al.'s eq. 4); at micro-batches
# of one the steps are shorter (the norms on 1/8 of the tokens), and at
# t = 1 it changes nothing, to the bit
L70="$top_srcdir/scenarios/hybrid/llama3-70b-8x16.ini"
"$LBSIM" "$L70" -o "$TMP/sp0.db" -q --set hybrid.micro_batch=3 --set hybrid.global_batch=384 --set run.steps=2 > "$TMP/out" 2>&1
check "no sequence parallelism, micro-batches of 3: exit 3, the memory said" test $? -eq 3 -a -n "$(grep -F 'needs 114.2 GB' "$TMP/out")"
"$LBSIM" "$L70" -o "$TMP/sp1.db" --set hybrid.sequence_parallel=yes --set hybrid.micro_batch=3 --set hybrid.global_batch=384 --set run.steps=2 > "$TMP/out"
check "with sequence parallelism it fits (57.5 GB)" test $? -eq 0 -a -n "$(grep -F 'memory: at most 57.5 GB' "$TMP/out")"
"$LBSIM" "$L70" -o "$TMP/sp2.db" -q --set run.steps=2 && "$LBSIM" "$L70" -o "$TMP/sp3.db" -q --set run.steps=2 --set hybrid.sequence_parallel=yes
check "sequence parallelism shortens the steps (norms on 1/8 of the tokens), by under 5%" test "$(q "$TMP/sp3.db" "ATTACH '$TMP/sp2.db' AS n;
	SELECT a.step_s < b.step_s AND a.step_s > 0.95 * b.step_s FROM hybrid_steps a JOIN n.hybrid_steps b USING (step) WHERE step = 1")" = 1
"$LBSIM" "$TMP/small.ini" -o "$TMP/sp4.db" -q --set hybrid.sequence_parallel=yes
check "sequence parallelism at tp = 1: the same steps, to the bit" test "$(q "$TMP/s1.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')" = \
	"$(q "$TMP/sp4.db" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps')"

# SIGINT stops a run within an event: exit 130, and the file it created is gone
rm -f "$TMP/int.db"
"$LBSIM" "$top_srcdir/bench/hybrid.ini" --set run.steps=100000 -o "$TMP/int.db" -q > "$TMP/out" 2>&1 &
pid=$!
sleep 2
kill -INT $pid
wait $pid
rc=$?
check "SIGINT: exit 130" test $rc -eq 130
check "SIGINT: the results file it created is gone" test ! -e "$TMP/int.db"
# a run that cannot record removes the trace it wrote, and leaves a file it did not create
echo "not a database" > "$TMP/junk.db"
"$LBSIM" "$SC" -o "$TMP/junk.db" --ops-trace "$TMP/j.csv" -q > "$TMP/out" 2>&1
check "a results file lbsim cannot write to: refused" test $? -ne 0
check "... the trace and its metadata removed" test ! -e "$TMP/j.csv" -a ! -e "$TMP/j.csv.meta.yaml"
check "... the file it did not create left alone" test "$(cat "$TMP/junk.db")" = "not a database"

# bad input: exit 3, file, line and key, nothing written
refuse() { # NAME EXPECTED-MESSAGE SETTINGS...
	local name=$1 msg=$2; shift 2
	rm -f "$TMP/bad.db"
	"$LBSIM" "$SC" -o "$TMP/bad.db" "$@" > "$TMP/out" 2>&1
	local rc=$?
	if [ $rc -ne 3 ] || ! grep -qF -- "$msg" "$TMP/out" || [ -e "$TMP/bad.db" ]; then
		bad "$name: exit $rc, $(cat "$TMP/out")"
	else
		ok "$name"
	fi
}
refuse "GPUs that do not match the degrees" "dp 2 x pp 4 x tp 8 = 64 GPUs, the nodes hold 128" --set hybrid.dp=2
refuse "a schedule unknown" "--set hybrid.schedule: 'zigzag' is not one of" --set hybrid.schedule=zigzag
refuse "interleaving without chunks" "virtual_stages" --set hybrid.schedule=interleaved
refuse "a global batch that does not split" "do not split" --set hybrid.global_batch=130
refuse "an unknown device" "--set nodes.dgx.gpu: 'h900' is no device" --set nodes.dgx.gpu=h900
refuse "a bandwidth without its unit" "--set network.bandwidth: '400' has no unit" --set network.bandwidth=400
refuse "a NaN factor" "--set failslow.gpu17.factor: 'nan' is not a number" --set failslow.gpu17.factor=nan
refuse "a fail-slow GPU outside the job" "GPU 128: the job has 128 GPUs" --set failslow.gpu17.gpus=120-128
refuse "more group-steps than a run records" "[run] steps: 10000000 steps of 16 groups" --set run.steps=10000000
refuse "a step of more ops than the engine holds" "[hybrid]: a hybrid step of" --set hybrid.global_batch=16000000
refuse "a sequence that does not fit in memory" "needs 81.4 GB a GPU" --set model.sequence_length=8192
refuse "layers that do not split into the stages" "blocks do not split into pp 3" --set hybrid.pp=3 --set hybrid.dp=4 \
	--set nodes.dgx.count=12
printf '[hybrid]\ndp = 1\n[model]\nname = llama3-8b\n[nodes.a]\ncount = 1\ngpu = h100-sxm\n[intra_node]\nbandwidth = 1 GB/s\n[network]\nbandwidth = 1 GB/s\n[mystery]\nx = 1\n' > "$TMP/bad.ini"
"$LBSIM" "$TMP/bad.ini" -o "$TMP/bad.db" > "$TMP/out" 2>&1
check "an unknown section: exit 3 naming its line" test $? -eq 3 -a -n "$(grep -F "bad.ini:12: [mystery]" "$TMP/out")"
printf '[hybrid]\ndp = 1\nmicro_batches = 4\n[model]\nname = llama3-8b\n[nodes.a]\ncount = 1\ngpus_per_node = 1\ngpu = h100-sxm\n[intra_node]\nbandwidth = 1 GB/s\n[network]\nbandwidth = 1 GB/s\nlatncy = 1 us\n' > "$TMP/bad.ini"
"$LBSIM" "$TMP/bad.ini" -o "$TMP/bad.db" > "$TMP/out" 2>&1
check "a misspelt key: exit 3 naming its line" test $? -eq 3 -a -n "$(grep -F "bad.ini:14" "$TMP/out")"
"$LBSIM" "$top_srcdir/scenarios/default.ini" --ops-trace "$TMP/x.csv" -o "$TMP/bad.db" > "$TMP/out" 2>&1
check "--ops-trace with a data-parallel scenario: exit 2" test $? -eq 2
# The accuracy comparison (bench/hybrid_accuracy.sh) on two published runs:
# SC'21 Table 1's 1.7B on 32 GPUs at 137 TFLOP/s took, by the paper's eq. 3,
# 96 x 512 x 2048 x 24 x 2304^2 (1 + 2048 / (6 x 2304) + 51200 / (16 x 24 x
# 2304)) = 1.54668e16 FLOPs / (32 x 137e12) = 3.528 s; each row's prediction
# is lbsim's step time of that configuration.
{ head -n 4 "$top_srcdir/traces/data/published-hybrid/megatron-sc21.csv"; grep '^t1-3.6b,' \
	"$top_srcdir/traces/data/published-hybrid/megatron-sc21.csv"; } > "$TMP/acc.csv"
# MT-NLG (Smith et al. 2022, sec. 2.4) on 2,240 GPUs at 126 TFLOP/s: 96 x
# 1920 x 2048 x 105 x 20480^2 (1 + 2048 / (6 x 20480) + 50272 / (16 x 105 x
# 20480)) / (2240 x 126e12) = 59.970 s, the paper's 60.1 s within the
# rounding of 126; two files at once, space-separated.
grep -e '^#' -e '^id,' -e '^mtnlg-2240,' "$top_srcdir/traces/data/published-hybrid/mt-nlg-530b.csv" > "$TMP/mt.csv"
sh "$top_srcdir/bench/hybrid_accuracy.sh" "$LBSIM" "$TMP/acc.csv $TMP/mt.csv" > "$TMP/acc.out" 2>&1
check "hybrid_accuracy.sh: the published time of 1.7B by eq. 3" \
	test "$(awk '$1 == "t1-1.7b" { print $9 }' "$TMP/acc.out")" = 3.528
check "hybrid_accuracy.sh: MT-NLG's on 2,240 GPUs" test "$(awk '$1 == "mtnlg-2240" { print $9 }' "$TMP/acc.out")" = 59.970
check "hybrid_accuracy.sh: three rows of two files and their summary" grep -q '^3 configurations: median' "$TMP/acc.out"
p17=$(awk '$1 == "t1-1.7b" { print $10, $NF }' "$TMP/acc.out")
check "hybrid_accuracy.sh: the error is predicted / published - 1 ($p17)" \
	awk -v p="${p17% *}" -v e="${p17#* }" 'BEGIN { sub(/%/, "", e); d = (p / 3.528 - 1) * 100 - e; exit !(d < 0.1 && d > -0.1) }'
# Data-dependent costs ([lengths]): the shipped job at 4096 tokens, its
# micro-batches' lengths drawn. At the model's length every step is the
# plain run's, to the bit; a file of one length is that fixed length; drawn
# lengths, never above 4096, give no step longer than the plain run's, the
# same steps again with the same seed and others with another.
steps() { q "$1" 'SELECT group_concat(quote(step_s)) FROM hybrid_steps'; }
{ cat "$SC"; printf '\n[lengths]\ndistribution = fixed\n'; } > "$TMP/len.ini"
"$LBSIM" "$TMP/len.ini" -q -o "$TMP/l0.db"
check "lengths: fixed at sequence_length is the plain run, to the bit" test "$(steps "$TMP/l0.db")" = "$(steps "$TMP/h.db")"
"$LBSIM" "$TMP/len.ini" -q -o "$TMP/l1.db" --set lengths.length=2048
printf 'length\n# one length\n2048\n' > "$TMP/lengths.csv"
"$LBSIM" "$TMP/len.ini" -q -o "$TMP/l2.db" --set lengths.distribution=empirical --set lengths.file="$TMP/lengths.csv"
check "lengths: a file of 2048 is fixed at 2048" test "$(steps "$TMP/l2.db")" = "$(steps "$TMP/l1.db")"
check "lengths: half the tokens, less than half the step (attention grows with the square)" test "$(q "$TMP/l1.db" \
	"ATTACH '$TMP/h.db' AS h; SELECT (SELECT min(step_s) FROM hybrid_steps) < 0.5 * (SELECT min(step_s) FROM h.hybrid_steps)")" = 1
"$LBSIM" "$TMP/len.ini" -q -o "$TMP/l3.db" --set lengths.distribution=uniform --set lengths.min=1024
"$LBSIM" "$TMP/len.ini" -q -o "$TMP/l4.db" --set lengths.distribution=uniform --set lengths.min=1024
"$LBSIM" "$TMP/len.ini" -q -o "$TMP/l5.db" --set lengths.distribution=uniform --set lengths.min=1024 --seed 2
check "lengths: drawn again with the seed, the same steps" test "$(steps "$TMP/l3.db")" = "$(steps "$TMP/l4.db")"
check "lengths: another seed, other steps" test "$(steps "$TMP/l3.db")" != "$(steps "$TMP/l5.db")"
check "lengths: no step longer than at the full length" test "$(sqlite3 "$TMP/l3.db" "ATTACH '$TMP/h.db' AS h;
	SELECT count(*) FROM hybrid_steps a JOIN h.hybrid_steps b USING (step) WHERE a.step_s > b.step_s")" = 0
SC="$TMP/len.ini"
refuse "lengths: min above max" "lengths.min: min 3000 above max 2000" --set lengths.distribution=uniform \
	--set lengths.min=3000 --set lengths.max=2000
refuse "lengths: longer than the sequence" "more than sequence_length 4096" --set lengths.length=5000
printf '2048\n0\n' > "$TMP/bad-lengths.csv"
refuse "lengths: a bad line of the file, named" "bad-lengths.csv:2: expected a length in tokens" \
	--set lengths.distribution=empirical --set lengths.file="$TMP/bad-lengths.csv"
SC="$top_srcdir/scenarios/hybrid/llama3-70b-8x16.ini"
# `lbsim whatif` on the results database itself: the run's hybrid_timeline
# read as its --ops-trace file gives the same analysis, figure for figure
# (its every step is recorded: 10 x 3,184 ops, under the 300,000 rows).
"$LBSIM" whatif "$TMP/h.db" -o "$TMP/wdb.db" > "$TMP/wdb.out" 2>&1
check "whatif RESULTS.db: exit 0" test $? -eq 0
check "whatif RESULTS.db: every step of the run recorded" test "$(q "$TMP/h.db" "SELECT count(DISTINCT step) FROM hybrid_timeline")" = 10
for t in whatif_steps whatif_slowdowns whatif_policies whatif_metrics; do
	check "whatif RESULTS.db: $t as from the --ops-trace file" test "$(q "$TMP/wdb.db" "SELECT * FROM $t")" = \
		"$(q "$TMP/w.db" "SELECT * FROM $t")"
done
check "whatif RESULTS.db: the run named in whatif_runs" test "$(q "$TMP/wdb.db" "SELECT trace FROM whatif_runs")" = "$TMP/h.db (hybrid run 1)"
"$LBSIM" whatif "$TMP/h.db" --hybrid 7 -o "$TMP/x.db" > "$TMP/out" 2>&1
check "whatif RESULTS.db --hybrid 7: no such run, exit 2" test $? -eq 2 -a -n "$(grep -F -- '--hybrid 7: no such run' "$TMP/out")"
"$LBSIM" whatif "$TMP/h.db" --meta "$TMP/ops.csv.meta.yaml" -o "$TMP/x.db" > "$TMP/out" 2>&1
check "whatif RESULTS.db --meta: exit 2" test $? -eq 2
"$LBSIM" whatif "$TMP/wdb.db" -o "$TMP/x.db" > "$TMP/out" 2>&1
check "whatif on a file without a hybrid run: exit 3" test $? -eq 3 -a -n "$(grep -F 'no hybrid run' "$TMP/out")"

# an uneven split (first_stage_layers, last_stage_layers): megatron-1.7b's
# 24 blocks over 4 stages as 5, 7, 7, 5 against the even 6 each. By hand:
# a middle stage computes only blocks (tp = 1: no tensor collectives), so
# its compute grows by 7 / 6; stage 0 (its blocks and the embedding)
# loses one block, a sixth of an even middle stage's compute.
cat > "$TMP/uneven.ini" <<'INI'
[run]
steps = 2
[hybrid]
dp = 1
pp = 4
global_batch = 8
[model]
name = megatron-1.7b
[nodes.a]
count = 1
gpus_per_node = 4
gpu = a100-80gb
[intra_node]
bandwidth = 300 GB/s
[network]
bandwidth = 200 Gbit/s
INI
"$LBSIM" "$TMP/uneven.ini" -q -o "$TMP/ev.db" &&
	"$LBSIM" "$TMP/uneven.ini" -q -o "$TMP/un.db" --set hybrid.first_stage_layers=5 --set hybrid.last_stage_layers=5
check "an uneven split runs" test $? -eq 0
cs() { q "$1" "SELECT compute_s FROM hybrid_groups WHERE step = 1 AND stage = $2"; }
check "... a middle stage of 7 blocks computes 7/6 of one of 6 (1e-9)" near "$(cs "$TMP/un.db" 1)" \
	"$(awk -v a="$(cs "$TMP/ev.db" 1)" 'BEGIN { printf "%.17g", a * 7 / 6 }')" 1e-9
check "... stage 0 a block less: a sixth of an even middle stage less (1e-9)" near "$(cs "$TMP/un.db" 0)" \
	"$(awk -v a="$(cs "$TMP/ev.db" 0)" -v b="$(cs "$TMP/ev.db" 1)" 'BEGIN { printf "%.17g", a - b / 6 }')" 1e-9
check "... the split recorded" test "$(q "$TMP/un.db" "SELECT value FROM hybrid_config WHERE section = 'hybrid'
	AND key = 'first_stage_layers'")" = 5
for bad in "hybrid.first_stage_layers=5" "hybrid.first_stage_layers=30" "hybrid.pp=1 --set hybrid.first_stage_layers=5"; do
	# shellcheck disable=SC2086
	"$LBSIM" "$TMP/uneven.ini" -q -o "$TMP/bad.db" --set $bad > "$TMP/out" 2>&1
	check "refused, naming the key: --set $bad" test $? -eq 3 -a -n "$(grep -F 'first_stage_layers' "$TMP/out")" -a ! -e "$TMP/bad.db"
done
"$LBSIM" "$TMP/uneven.ini" -q -o "$TMP/bad.db" --set hybrid.first_stage_layers=5 --set hybrid_policy.name=resplit > "$TMP/out" 2>&1
check "resplit refused on a split of the user's, saying so" test $? -eq 3 -a -n "$(grep -F 'first_stage_layers' "$TMP/out")"
"$LBSIM" "$TMP/uneven.ini" -q -o "$TMP/lad.db" --set hybrid.first_stage_layers=5 --set hybrid.last_stage_layers=5 \
	--set hybrid_policy.name=ladder
check "ladder on it runs, keeping the split: no re-split recorded" test $? -eq 0 -a "$(q "$TMP/lad.db" \
	"SELECT count(*) FROM hybrid_partitions")" = 0

# context parallelism: gpt3-1.3b at 2048 tokens on cp = 2 GPUs of two nodes
# (the costs by hand: the unit test "context parallelism against a job
# without it"); here what a user sees of it
cat > "$TMP/cp.ini" <<'INI'
[run]
steps = 3
[hybrid]
dp = 1
cp = 2
micro_batches = 2
[model]
name = gpt3-1.3b
sequence_length = 2048
[nodes.n]
count = 2
gpus_per_node = 1
gpu = h100-sxm
[intra_node]
bandwidth = 450 GB/s
[network]
bandwidth = 100 Gbit/s
latency = 5 us
INI
"$LBSIM" "$TMP/cp.ini" -o "$TMP/cp.db" > "$TMP/out" 2>&1
check "a context-parallel job runs, its summary naming cp" test $? -eq 0 -a -n "$(grep -F 'dp 1 x pp 1 x tp 1 x cp 2' "$TMP/out")"
printf '[failslow.x]\nstart = 0 s\nduration = 1000 s\ngpus = 1\nfactor = 0.5\n' >> "$TMP/cp.ini"
"$LBSIM" "$TMP/cp.ini" -q -o "$TMP/cpf.db"
check "... a fail-slow GPU of context rank 1 slows its group's steps" test "$(q "$TMP/cpf.db" "ATTACH '$TMP/cp.db' AS o;
	SELECT count(*) FROM hybrid_steps a JOIN o.hybrid_steps b USING (step) WHERE a.step_s > b.step_s * 1.1")" = 3
"$LBSIM" whatif "$TMP/cp.db" -q -o "$TMP/cpw.db"
check "... whatif reads its results (context ranks as dsp): the no-delay replay gives its steps (1e-6)" \
	near "$(q "$TMP/cpw.db" "SELECT value FROM whatif_metrics WHERE name = 'mean_t_nodelay'")" \
	"$(q "$TMP/cp.db" "SELECT avg(step_s) FROM hybrid_steps")" 1e-6
"$LBSIM" "$TMP/cp.ini" --set hybrid.cp_comm=a2a -o "$TMP/cpu.db" > "$TMP/out" 2>&1
check "the all-to-all variant (Ulysses) runs, its summary naming it" test $? -eq 0 -a -n "$(grep -F 'x cp 2 a2a' "$TMP/out")"
check "... its steps longer than the ring's at 100 Gbit/s (its all-to-alls exposed, the ring's hidden)" \
	test "$(q "$TMP/cpu.db" "ATTACH '$TMP/cpf.db' AS o;
	SELECT (SELECT avg(step_s) FROM hybrid_steps) > (SELECT avg(step_s) FROM o.hybrid_steps)")" = 1
printf '[lengths]\ndistribution = fixed\nlength = 1024\n' | cat "$TMP/cp.ini" - > "$TMP/cpl.ini"
for bad in "cp.ini hybrid.cp=3 dp" "cp.ini model.sequence_length=2046 cp" "cpl.ini run.steps=3 cp"; do
	# shellcheck disable=SC2086 # three words: file, key=value, the key named
	set -- $bad
	"$LBSIM" "$TMP/$1" -q -o "$TMP/bad.db" --set "$2" > "$TMP/out" 2>&1
	check "refused, naming [hybrid] $3: $1 --set $2" test $? -eq 3 -a -n "$(grep -F "[hybrid] $3" "$TMP/out")" -a ! -e "$TMP/bad.db"
done

# expert parallelism: Mixtral 8x7B, dp 2 x pp 8, the experts over the two
# replicas (ep 2), one GPU a node (the costs by hand: the unit tests
# "expert parallelism ..."); a fail-slow GPU of replica 1 (GPU 8, its
# stage 0) slows replica 0's stage 0 at each compute: their exchanges pair
# them, so replica 0's forward computes, as its trace records them (the
# all-to-alls inside), last as long as replica 1's; without ep the replicas
# meet only at the gradients, and replica 0's take about half as long
cat > "$TMP/ep.ini" <<'INI'
[run]
steps = 2
[hybrid]
dp = 2
pp = 8
ep = 2
micro_batches = 8
zero_stage = 1
[model]
name = mixtral-8x7b
sequence_length = 1024
recompute = selective
[nodes.n]
count = 16
gpus_per_node = 1
gpu = h100-sxm
[intra_node]
bandwidth = 450 GB/s
[network]
bandwidth = 400 Gbit/s
latency = 5 us
[failslow.x]
start = 0 s
duration = 1000 s
gpus = 8
factor = 0.5
INI
"$LBSIM" "$TMP/ep.ini" -o "$TMP/ep.db" > "$TMP/out" 2>&1
check "an expert-parallel job runs, its summary naming ep" test $? -eq 0 -a -n "$(grep -F 'dp 2 x pp 8 x tp 1, ep 2' "$TMP/out")"
fwd_ratio() {
	q "$1" "SELECT (SELECT avg(end_s - start_s) FROM hybrid_timeline WHERE dp_rank = 0 AND stage = 0
		AND optype = 'forward-compute') / (SELECT avg(end_s - start_s) FROM hybrid_timeline
		WHERE dp_rank = 1 AND stage = 0 AND optype = 'forward-compute')"
}
check "... replica 0's forward computes last as long as the slow replica 1's (1%)" near "$(fwd_ratio "$TMP/ep.db")" 1 0.01
"$LBSIM" "$TMP/ep.ini" -q -o "$TMP/ep1.db" --set hybrid.ep=1
check "... without ep, about half as long (5%)" near "$(fwd_ratio "$TMP/ep1.db")" 0.5 0.05
check "... and replica 0 waits for replica 1 in the steps with ep" test "$(q "$TMP/ep.db" "SELECT sum(wait_s) > 0
	FROM hybrid_groups WHERE dp_rank = 0 AND stage = 0")" = 1
"$LBSIM" whatif "$TMP/ep.db" -q -o "$TMP/epw.db"
check "... whatif reads its results: the no-delay replay gives its steps (1e-6)" \
	near "$(q "$TMP/epw.db" "SELECT value FROM whatif_metrics WHERE name = 'mean_t_nodelay'")" \
	"$(q "$TMP/ep.db" "SELECT avg(step_s) FROM hybrid_steps")" 1e-6
"$LBSIM" "$TMP/ep.ini" -q -o "$TMP/epg.db" --set model.expert_gini=0.3 && "$LBSIM" "$TMP/ep.ini" -q -o "$TMP/epg2.db" \
	--set model.expert_gini=0.3 && "$LBSIM" "$TMP/ep.ini" -q -o "$TMP/epg3.db" --set model.expert_gini=0.3 --seed 2
check "unbalanced routing (expert_gini 0.3): longer steps, the same for the same seed, others for another" test \
	"$(q "$TMP/epg.db" "ATTACH '$TMP/ep.db' AS b; ATTACH '$TMP/epg2.db' AS s; ATTACH '$TMP/epg3.db' AS o;
	SELECT (SELECT avg(step_s) FROM hybrid_steps) > (SELECT avg(step_s) FROM b.hybrid_steps) AND
	(SELECT avg(step_s) FROM hybrid_steps) = (SELECT avg(step_s) FROM s.hybrid_steps) AND
	(SELECT avg(step_s) FROM hybrid_steps) != (SELECT avg(step_s) FROM o.hybrid_steps)")" = 1
"$LBSIM" "$TMP/ep.ini" -o "$TMP/epc.db" --set model.expert_gini=0.3 --set model.expert_capacity=1.1 > "$TMP/out" 2>&1
check "... a capacity factor shortens them, the summary saying what it dropped" test "$(q "$TMP/epc.db" "ATTACH '$TMP/epg.db' AS g;
	SELECT (SELECT avg(step_s) FROM hybrid_steps) < (SELECT avg(step_s) FROM g.hybrid_steps)")" = 1 \
	-a -n "$(grep -E '^experts: [0-9.]+% of the routed tokens dropped at capacity 1.1' "$TMP/out")"
"$LBSIM" "$TMP/ep.ini" -q -o "$TMP/epp.db" --set model.expert_gini=0.3 --set model.expert_capacity=1.1 \
	--set model.expert_pad=yes && "$LBSIM" "$TMP/ep.ini" -q -o "$TMP/epp0.db" --set model.expert_capacity=1.1 \
	--set model.expert_pad=yes
check "... padded to it (expert_pad), the steps are the same at any routing, and no shorter than unpadded" \
	test "$(q "$TMP/epp.db" "ATTACH '$TMP/epp0.db' AS z; ATTACH '$TMP/epc.db' AS c;
	SELECT (SELECT avg(step_s) FROM hybrid_steps) = (SELECT avg(step_s) FROM z.hybrid_steps) AND
	(SELECT avg(step_s) FROM hybrid_steps) >= (SELECT avg(step_s) FROM c.hybrid_steps)")" = 1
"$LBSIM" "$TMP/ep.ini" -o "$TMP/epcp.db" --set hybrid.cp=2 --set nodes.n.count=32 > "$TMP/out" 2>&1
check "expert parallelism with context parallelism runs, its summary naming both" test $? -eq 0 \
	-a -n "$(grep -F 'dp 2 x pp 8 x tp 1 x cp 2, ep 2' "$TMP/out")"
"$LBSIM" whatif "$TMP/epcp.db" -q -o "$TMP/epcpw.db"
check "... whatif's no-delay replay gives its steps (1e-6)" \
	near "$(q "$TMP/epcpw.db" "SELECT value FROM whatif_metrics WHERE name = 'mean_t_nodelay'")" \
	"$(q "$TMP/epcp.db" "SELECT avg(step_s) FROM hybrid_steps")" 1e-6
"$LBSIM" "$TMP/cp.ini" -q -o "$TMP/bad.db" --set model.expert_gini=0.2 > "$TMP/out" 2>&1
check "refused: expert_gini on a dense model" test $? -eq 3 -a -n "$(grep -F 'no mixture of experts' "$TMP/out")" -a ! -e "$TMP/bad.db"
for bad in "hybrid.ep=3 hybrid.ep" "model.name=llama3-8b [hybrid] ep" "hybrid_policy.name=resplit hybrid_policy.name" \
	"model.expert_capacity=0.5 model.expert_capacity" "model.expert_pad=yes model.expert_pad"; do
	# shellcheck disable=SC2086 # the --set arguments, then what the message names
	set -- $bad
	key=$(printf '%s' "$bad" | sed 's/.* \(\[hybrid\] ep\|hybrid\.ep\|hybrid_policy\.name\|model\.expert_[a-z]*\)$/\1/')
	"$LBSIM" "$TMP/ep.ini" -q -o "$TMP/bad.db" --set ${bad% "$key"} > "$TMP/out" 2>&1
	check "refused, naming $key: --set ${bad% "$key"}" test $? -eq 3 -a -n "$(grep -F -e "$key" "$TMP/out")" -a ! -e "$TMP/bad.db"
done
finish
