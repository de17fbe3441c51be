#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: the generator scenarios run as they are and show what each
# generator does; the shipped network-bucket table is what the fit gives.
. "$(dirname "$0")/lib.sh"
D="$top_srcdir/scenarios/generators"

# The fitted table is current: fit_netbucket reproduces it byte for byte.
if [ -n "${FIT_NETBUCKET:-}" ]; then
	"$FIT_NETBUCKET" "$top_srcdir/traces/data/ec2-network-token-bucket-uta2020" > "$TMP/fit.c"
	check "fit_netbucket exits 0" test $? -eq 0
	if cmp -s "$TMP/fit.c" "$top_srcdir/traces/netbucket_fit.c"; then
		ok "traces/netbucket_fit.c is what the fit gives"
	else
		bad "traces/netbucket_fit.c is stale: run 'make fit-netbucket'"
	fi
	"$FIT_NETBUCKET" > /dev/null 2>&1; check "fit_netbucket without a directory: exit 2" test $? -eq 2
	"$FIT_NETBUCKET" "$TMP" > /dev/null 2>&1; check "fit_netbucket on no data: exit 3" test $? -eq 3
fi

# Every generator scenario runs as it is.
for s in "$D"/*.ini; do
	name=$(basename "$s" .ini)
	"$LBSIM" "$s" -o "$TMP/$name.db" --detail workers > "$TMP/out" 2> "$TMP/err"; rc=$?
	if [ $rc -eq 0 ] && [ ! -s "$TMP/err" ] && [ "$(q "$TMP/$name.db" 'SELECT count(*) FROM runs')" = 1 ]; then
		ok "scenario $name runs"
	else
		bad "scenario $name (exit $rc): $(cat "$TMP/err")"
	fi
done

# CPU credits: full speed (0.19567 s of compute plus 0.02669 s of
# aggregation, 0.22236 s per iteration) until the t2 instances run out,
# between iterations 12,000 and 13,000 (hand estimate in the scenario: 1800 s
# of computing on launch credits, 2045 s at 88% busy, then 703 s on the 30.7
# credits earned meanwhile: 2748 s, iteration 12,359); then they run near
# their 22.5% baseline: about four times slower.
db="$TMP/cpu-credits.db"
check "credits: full speed at first" test "$(q "$db" \
	'SELECT abs(avg(end_s - start_s) - 0.22236) < 1e-4 FROM iterations WHERE iteration < 1000')" = 1
knee=$(q "$db" 'SELECT min(iteration) FROM iterations WHERE end_s - start_s > 0.23')
check "credits: run out between iterations 12000 and 13000 ($knee)" test "$knee" -gt 12000 -a "$knee" -lt 13000
check "credits: then about four times slower" test "$(q "$db" \
	'SELECT avg(end_s - start_s) / 0.22236 BETWEEN 3.9 AND 4.2 FROM iterations WHERE iteration >= 14000')" = 1
# (compute_s is end - start, so equal durations differ in the last bits.)
check "credits: the c5 workers never slow down" test "$(q "$db" \
	"SELECT max(compute_s) - min(compute_s) < 1e-9 FROM worker_iterations JOIN workers USING (run_id, worker)
	 WHERE group_name = 'c5'")" = 1

# Background jobs: the shared workers run at full or half speed (32 samples
# at 6.11471 ms, the measured ResNet-32 profile: 0.19567072 s, or twice
# that), the dedicated ones always at full speed.
db="$TMP/background.db"
check "background: dedicated workers constant" test "$(q "$db" \
	"SELECT max(compute_s) - min(compute_s) < 1e-9 FROM worker_iterations JOIN workers USING (run_id, worker)
	 WHERE group_name = 'dedicated'")" = 1
check "background: shared workers between full and half speed" test "$(q "$db" \
	"SELECT abs(min(compute_s) - 0.19567072) < 1e-9 AND abs(max(compute_s) - 0.39134144) < 1e-9
	 AND count(DISTINCT round(compute_s, 6)) > 20
	 FROM worker_iterations JOIN workers USING (run_id, worker) WHERE group_name = 'shared'")" = 1

# Network bucket: aggregation at the burst rate (2*7/8 * 102.2 MB at
# 9.688 Gbit/s plus 14 steps of 50 us = 0.1484 s), then, once the buckets
# are empty, at the baseline between short bursts.
db="$TMP/network-bucket.db"
check "network bucket: burst-rate aggregation at first" test "$(q "$db" \
	'SELECT abs(max(aggregation_s) - 0.14840) < 1e-4 FROM iterations WHERE iteration < 5000')" = 1
check "network bucket: over three times slower at the end" test "$(q "$db" \
	'SELECT avg(aggregation_s) / 0.1484 > 3 FROM iterations WHERE iteration >= 11000')" = 1
check "network bucket: compute untouched" test "$(q "$db" \
	'SELECT max(compute_s) - min(compute_s) < 1e-9 FROM worker_iterations')" = 1

# DBS disturbance: per worker and epoch, the added compute time is 0, a
# whole number D of seconds in 5..10, or D * 96/97 (the onset epoch loses
# its first iteration's share).
db="$TMP/dbs-disturbance.db"
q "$db" "SELECT worker, epoch, sum(compute_s) FROM worker_iterations JOIN iterations USING (run_id, iteration)
	 GROUP BY worker, epoch ORDER BY worker, epoch" | tr '|' ' ' > "$TMP/epochs"
awk '{ t[$1, $2] = $3; if (!($1 in base) || $3 < base[$1]) base[$1] = $3; n[$1]++ }
     END {
	bad = 0; slowed = 0
	for (k in t) {
		split(k, p, SUBSEP); d = t[k] - base[p[1]]
		if (d < 1e-6) continue
		slowed++; ok = 0
		for (D = 5; D <= 10; D++)
			if ((d - D) ^ 2 < 1e-12 || (d - D * 96 / 97) ^ 2 < 1e-12) ok = 1
		if (!ok) { bad++; print "odd delay", k, d > "/dev/stderr" }
	}
	exit !(bad == 0 && slowed > 0)
     }' "$TMP/epochs"
check "dbs: every epoch's delay is 0, D or D*96/97 with D in 5..10" test $? -eq 0

# Same seed, same runs; another seed, other background jobs.
"$LBSIM" "$D/background.ini" -o "$TMP/seeds.db" --detail workers -q
"$LBSIM" "$D/background.ini" -o "$TMP/seeds.db" --detail workers -q
"$LBSIM" "$D/background.ini" -o "$TMP/seeds.db" --detail workers -q --seed 2
same() {
	q "$TMP/seeds.db" "SELECT count(*) FROM (
	  SELECT iteration, worker, compute_s FROM worker_iterations WHERE run_id = $1
	  EXCEPT SELECT iteration, worker, compute_s FROM worker_iterations WHERE run_id = $2)"
}
check "background: same seed, identical runs" test "$(same 1 2)" = 0
check "background: another seed differs" test "$(same 1 3)" != 0

# worker_events = always checks each completion against its compute time;
# once an iteration computes for longer than all the time before it, start +
# (fin - start) need not round back to fin, and that check aborted (exit
# 134; found by fuzz/fuzz_simulate.c).
printf '[run]\nglobal_batch = 4096\nepochs = 1\ndataset_samples = 12288\nworker_events = always
[model]\ngradient = 1 B\n[network]\ntopology = ps\nbandwidth = 10 Gbit/s\nlatency = 10 s\n[policy]
name = oracle\n[workers.g0]\ncount = 1\ndevice = cpu\ncost = linear\nt0 = 1 ms\nper_sample = 1 h
noise = uniform\nnoise_low = -0.99\nnoise_high = 0.1\n[generator.c]\nkind = cpu_credits\nworkers = g0
instance_type = t2.micro\n' > "$TMP/always.ini"
"$LBSIM" "$TMP/always.ini" -q -o "$TMP/always.db" --no-baseline; rc=$?
check "worker_events = always, a compute longer than the run so far: runs (exit $rc)" test $rc -eq 0

# What the monitor reads (readings_noise, readings_lag, readings_period of
# [workers.NAME]): with the three at 0 given explicitly, every row is the
# default's; with noise, lag and sampling, the static run (whose batches do
# not depend on readings) computes exactly as before, its readings differ,
# and every noisy reading lies in [0, 1]: the monitor's draws come from a
# stream of their own and shift no other.
B="$top_srcdir/scenarios/predict/cpu-bursty.ini"
P="--policy lbbsp-cpu --set run.epochs=2 --detail workers -q"
"$LBSIM" "$B" -o "$TMP/mon.db" $P
"$LBSIM" "$B" -o "$TMP/mon.db" $P --set workers.cpu.readings_noise=0 --set 'workers.cpu.readings_lag=0 s' \
	--set 'workers.cpu.readings_period=0 s'
"$LBSIM" "$B" -o "$TMP/mon.db" $P --set workers.cpu.readings_noise=0.05 --set 'workers.cpu.readings_lag=1 s' \
	--set 'workers.cpu.readings_period=1 s'
rows() {
	q "$TMP/mon.db" "SELECT count(*) FROM (
	  SELECT iteration, worker, batch, compute_s, predicted_speed, cpu_util, mem_util FROM worker_iterations WHERE run_id = $1
	  EXCEPT SELECT iteration, worker, batch, compute_s, predicted_speed, cpu_util, mem_util FROM worker_iterations WHERE run_id = $2)"
}
check "monitor: readings keys at 0 change no row (static and lbbsp-cpu)" test "$(rows 1 3)$(rows 2 4)" = 00
check "monitor: noise and lag leave the static run's compute times alone" test "$(q "$TMP/mon.db" "SELECT count(*) FROM (
	  SELECT iteration, worker, compute_s FROM worker_iterations WHERE run_id = 1
	  EXCEPT SELECT iteration, worker, compute_s FROM worker_iterations WHERE run_id = 5)")" = 0
check "monitor: the noisy readings differ, within [0, 1]" test "$(q "$TMP/mon.db" "SELECT
	  (SELECT count(*) FROM worker_iterations a JOIN worker_iterations b USING (iteration, worker)
	   WHERE a.run_id = 1 AND b.run_id = 5 AND a.cpu_util != b.cpu_util) > 100,
	  (SELECT count(*) FROM worker_iterations WHERE run_id IN (5, 6) AND NOT cpu_util BETWEEN 0 AND 1)")" = "1|0"

finish
