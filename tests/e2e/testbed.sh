#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The testbed (doc/validation.md): one small validation scenario simulated
# and run for real, failing when a simulated speedup over static differs
# from the measured one by more than a tolerance derived from the measured
# run-to-run spread of separate validations: max(10%, 3 x the relative
# standard deviation of the measured speedup over the 3 repeats) for
# lbbsp-cpu, max(15%, the same) for static-proportional, explained below. Then
# what the testbed refuses, what it says without root, and that no worker
# process or control group outlives a run stopped by a signal. Last, a ring
# all-reduce for real over tc-shaped links: its exchange time against the
# closed form, and that nothing of its network outlives a killed run.
#
# The testbed needs root and a cgroup cpu controller. Where they are
# missing, lbsim says what is missing and exits 6, and this test skips
# (exit 77) with that message (fails under LBSIM_REQUIRE_TESTBED=yes, as
# in CI): it never passes without having measured anything.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
need pgrep procps

sc=$top_srcdir/scenarios/testbed/small.ini

# Where the testbed cannot run (exit 6), say why and skip; any other
# failure is one.
rc=0
msg=$("$LBSIM" testbed "$sc" --set run.iterations=1 -q -o "$TMP/probe.db" 2>&1) || rc=$?
[ $rc -eq 6 ] && missing "the testbed cannot run here: ${msg##*: }"
if [ $rc -ne 0 ]; then
	echo "$msg"
	bad "the testbed runs on this machine (lbsim testbed exited $rc: ${msg##*: })"
	finish
	exit 1
fi
ok "the testbed runs on this machine"
check "a testbed run is recorded as measured" test "$(q "$TMP/probe.db" "SELECT mode FROM runs")" = measured

if ! measured; then
	# LBSIM_CHECK_MEASURED=no: one short validation, its comparison unchecked
	echo "skipped (LBSIM_CHECK_MEASURED=no): the validation's and the co-located process's measured comparisons; a short validation runs instead"
	rc=0
	"$LBSIM" validate "$sc" --policy lbbsp-cpu --repeat 1 --set run.iterations=3 -q -o "$TMP/v.db" > /dev/null || rc=$?
	check "validate (short): ran to its comparison (exit 0 or 7, got $rc)" test $rc -eq 0 -o $rc -eq 7
	check "validate (short): one comparison row per policy" test "$(q "$TMP/v.db" "SELECT count(*) FROM validations")" = 2
else
	# The validation: the profile is measured first (--calibrate), then what
	# time-sharing a core costs, then the simulation and 3 testbed runs of
	# each policy.
	validation() { # DB
		local rc=0
		"$LBSIM" validate "$sc" --calibrate "$TMP/profile.ini" --policy static-proportional,lbbsp-cpu \
			--repeat 3 --tolerance auto -q -o "$1" > "$1.out" 2> "$1.err" || rc=$?
		cat "$1.out" "$1.err"
		q "$1" "SELECT policy, printf('sim %.4f s, measured %.4f +- %.4f s; speedup sim %.3f, measured %.3f +- %.3f',
			simulated_iteration_s, measured_iteration_s, measured_iteration_sd_s, simulated_speedup, measured_speedup,
			measured_speedup_sd) FROM validations"
		return $rc
	}
	# The gate, from the validations table: max(FLOOR, 3 x the relative sd of
	# the measured speedup over the repeats). The sd within one validation
	# understates how far separate validations land (the machine's load moves
	# between them), so each floor comes from the gaps of six separate
	# validations of this scenario measured with the kernel's tick in the
	# model (doc/validation.md, "The tolerance of the test"): lbbsp-cpu +1.1%
	# to +7.6%, mean 2.8%, sd 2.4%, mean + 3 sd 10.1%; static-proportional
	# -0.5% to +4.6%, mean 2.1%, sd 2.0%, mean + 3 sd 8.1%. Both floors are
	# 10%. The gaps lean to the simulation's side (its workers use less CPU
	# per sample than the measured ones, which lose some to their quotas),
	# reported there, not hidden by these bounds.
	within() { # DB POLICY FLOOR
		test "$(q "$1" "SELECT abs(simulated_speedup / measured_speedup - 1) <=
			max($3, 3 * coalesce(measured_speedup_sd, 0) / measured_speedup) FROM validations WHERE policy = '$2'")" = 1
	}
	gate() { # DB
		within "$1" lbbsp-cpu 0.10 && within "$1" static-proportional 0.10
	}
	# Each bound is about 3 sd above the systematic gap: a miss is measured
	# once more, and the test fails when the second validation misses too. A
	# real regression misses both.
	rc=0
	validation "$TMP/v.db" || rc=$?
	v=$TMP/v.db
	if [ $rc -eq 0 -o $rc -eq 7 ] && ! gate "$v"; then
		echo "the first validation missed (above); measuring it once more"
		rc=0
		validation "$TMP/v2.db" || rc=$?
		v=$TMP/v2.db
	fi
	check "validate: ran to its comparison (exit 0, or 7 for a miss under --tolerance auto; got $rc)" \
		test $rc -eq 0 -o $rc -eq 7
	check "validate: lbbsp-cpu's simulated speedup within max(10%, 3 sd) of the measured one" within "$v" lbbsp-cpu 0.10
	check "validate: static-proportional's simulated speedup within max(10%, 3 sd) of the measured one" \
		within "$v" static-proportional 0.10
	check "validate: the profile was measured here" grep -q '^kind = blas' "$TMP/profile.ini"
	check "validate: ... at every batch from 4 to 48 (45 points)" grep -q '^points = 45$' "$TMP/profile.ini"
	# The tick the simulation is given is the machine's: jiffies counted over
	# a second here, independently of lbsim's 100 ms.
	j0=$(awk '/^jiffies:/ { print $2; exit }' /proc/timer_list 2>/dev/null); sleep 1
	j1=$(awk '/^jiffies:/ { print $2; exit }' /proc/timer_list 2>/dev/null)
	hz=$(awk -v d=$(( ${j1:-0} - ${j0:-0} )) 'BEGIN { n = split("100 250 300 1000", h, " "); for (k = 1; k <= n; k++)
		if (d > 0.9 * h[k] && d < 1.1 * h[k]) { print h[k]; exit } print 0 }')
	[ "$hz" = 0 ] && hz=$(sed -n 's/^CONFIG_HZ=//p' "/boot/config-$(uname -r)" 2>/dev/null | head -1) && hz=${hz:-0}
	tick=$(awk -v h="$hz" 'BEGIN { if (h > 0) printf "%.6g us", 1e6 / h; else print "0 us" }')
	echo "this machine's tick: $hz Hz ($tick)"
	check "validate: the simulation models the testbed's CFS period, the kernel's tick ($tick), the profile's fit and no refill without --timeshare-refill" \
		test "$(q "$v" "SELECT group_concat(kv) FROM (SELECT c.key || '=' || c.value kv FROM run_config c
			JOIN runs r USING (run_id) WHERE r.mode = 'simulated' AND c.section = 'workers.q20'
			AND c.key IN ('cpu_quota_period', 'cpu_quota_tick', 'profile_cost', 'timeshare_refill')
			AND r.policy = 'static' ORDER BY c.key)")" = \
		"cpu_quota_period=10000 us,cpu_quota_tick=$tick,profile_cost=fit,timeshare_refill=0 s"
	check "validate: 3 simulated and 9 measured runs" \
		test "$(q "$v" "SELECT group_concat(n) FROM (SELECT count(*) n FROM runs GROUP BY mode ORDER BY mode)")" = "9,3"
	check "validate: one comparison row per policy" test "$(q "$v" "SELECT count(*) FROM validations")" = 3
	# The machine's own speed, probed before each repeat and after the last:
	# one figure per validation, the slowest probe over the fastest less one.
	check "validate: the machine's drift is recorded, the same for every policy, from 0 to 1" \
		test "$(q "$v" "SELECT count(DISTINCT machine_drift), min(machine_drift) >= 0 AND max(machine_drift) < 1
			FROM validations")" = "1|1"
	check "validate: each measured run has its 15 iterations" \
		test "$(q "$v" "SELECT count(*) FROM iterations i JOIN runs r USING (run_id) WHERE r.mode = 'measured'")" = 135
	# Independent of the simulation: the equal split is as slow as the 0.2
	# worker (32 samples at 0.2 of a core), the proportional one gives it
	# 96 x 0.2 = 19.2 samples at the same speed, so the speedup is
	# 32 / 19.2 = 1.667 when t0 is negligible. t0 takes the simulated one to
	# 1.585 (5% below), and the measured one has been 1.46 to 1.55 (the
	# systematic gap above): within 20%.
	check "validate: the measured speedup of static-proportional is near 1.667" \
		test "$(q "$v" "SELECT abs(measured_speedup / 1.667 - 1) < 0.20 FROM validations
			WHERE policy = 'static-proportional'")" = 1

	# A real co-located process (scenarios/testbed/cotenant-process.ini): the
	# job of [generator.tenant] held on for the whole run, then off, by its
	# on and off means (seed 1 starts it in the state of the long mean). On,
	# it takes 60% of the worker's core: the worker is given 0.4 of its wall
	# time (its CPU time over its wall time, 1 - the cpu_util it reads), and
	# the cpu_util the policies read is measured near 0.6. In this project's
	# runs the reading was 0.60 to 0.62 (sd about 0.01): the bound, 0.06 on
	# the reading, is over 5 sd wide.
	# What the worker does with that share is the machine's: sharing a core
	# with a process that wakes 100 times a second (the caches refilled after
	# each switch, we take it) makes its CPU time per iteration grow (4 to 6% on the
	# development machine, 29% on a CI machine), or shrink (24% and 13% on
	# another CI machine: the on and off runs are a minute apart, and what an
	# iteration's CPU time is over that minute is the host's). Its compute time
	# is then its CPU time over its share, and the median compute time with the
	# job off over the one with it on (measured apart from the readings) is
	# from the share over 1.5 to the share over 0.6: the CPU time per iteration
	# from 50% longer to 40% shorter, the range seen (-24% to +29%) with a
	# margin. A co-located process not on the worker's core, or not running,
	# gives a ratio near 1.
	cot=$top_srcdir/scenarios/testbed/cotenant-process.ini
	# A host that takes CPU from this machine (its steal is not reported here)
	# shows in the readings as time the worker was not given: a miss of any of
	# the figures below is measured once more, as the validation's is.
	tenant_measure() {
		tenant_rc=0
		for state in on off; do
			if [ $state = on ]; then on=1000s off=1ms; else on=1ms off=1000s; fi
			"$LBSIM" testbed "$cot" --set run.iterations=12 --set generator.tenant.on_mean=$on \
				--set generator.tenant.off_mean=$off --set generator.tenant.memory=60% --policy static \
				--detail workers -q -o "$TMP/tenant-$state.db" || tenant_rc=$?
		done
		ratio=$(awk -v a="$(med "$TMP/tenant-off.db")" -v b="$(med "$TMP/tenant-on.db")" 'BEGIN { printf "%.3f", a / b }')
		util=$(q "$TMP/tenant-on.db" "SELECT printf('%.3f', avg(cpu_util)) FROM worker_iterations WHERE worker = 0 AND iteration > 0")
		util_off=$(q "$TMP/tenant-off.db" "SELECT printf('%.4f', avg(cpu_util)) FROM worker_iterations WHERE worker = 0 AND iteration > 0")
		# the worker's share (its CPU over its wall time, on over off) and the
		# growth of its CPU time per iteration beside the job
		share=$(awk -v u="$util" -v f="$util_off" 'BEGIN { printf "%.3f", (1 - u) / (1 - f) }')
		growth=$(awk -v s="$share" -v r="$ratio" 'BEGIN { printf "%.3f", s / r - 1 }')
		mem_on=$(q "$TMP/tenant-on.db" "SELECT printf('%.3f', avg(mem_util)) FROM worker_iterations WHERE worker = 0 AND iteration > 0")
		mem_off=$(q "$TMP/tenant-off.db" "SELECT printf('%.3f', max(mem_util)) FROM worker_iterations WHERE worker = 0 AND iteration > 0")
		# (the median: the reading is what the worker was not given, so another
		# program's burst on its CPU, in an iteration of a loaded machine, shows in it)
		off_low=$(q "$TMP/tenant-off.db" "SELECT cpu_util < 0.1 FROM worker_iterations WHERE worker = 0 AND iteration > 0
			ORDER BY cpu_util LIMIT 1 OFFSET (SELECT (count(*) - 1) / 2 FROM worker_iterations WHERE worker = 0 AND iteration > 0)")
	}
	med() { # DB: the median compute time of worker 0 after iteration 0
		q "$1" "SELECT compute_s FROM worker_iterations WHERE worker = 0 AND iteration > 0 ORDER BY compute_s
			LIMIT 1 OFFSET (SELECT (count(*) - 1) / 2 FROM worker_iterations WHERE worker = 0 AND iteration > 0)"
	}
	ratio_ok() {
		awk -v r="$ratio" -v s="$share" -v g="$growth" \
			'BEGIN { exit !(g > -0.4 && g < 0.5 && s > 0.34 && s < 0.46) }'
	}
	util_ok() { awk -v u="$util" 'BEGIN { exit !(u > 0.54 && u < 0.66) }'; }
	tenant_measure
	if [ $tenant_rc -ne 0 ] || ! ratio_ok || ! util_ok || [ "$off_low" != 1 ]; then
		echo "a co-located process: compute ratio $ratio, share $share, cpu_util $util, low when off: $off_low; a miss: measuring it once more"
		tenant_measure
	fi
	check "a co-located process: the testbed ran, on and off (exit $tenant_rc)" test $tenant_rc -eq 0
	echo "a co-located process: worker 0 given $share of its core while the job is on (0.4 expected), its CPU time per iteration $growth longer, its compute time $ratio of the one with the job off"
	check "a co-located process takes its 60%: the worker's share is 0.4 within 15% (got $share), its compute time ratio ($ratio) from the share over 1.5 to the share over 0.6" ratio_ok
	check "a co-located process: the cpu_util read is measured near 0.6 (got $util)" util_ok
	# The memory it holds while on (memory = 60%, set here): 0.6 of a machine the
	# testbed scales to 64 MiB, written page by page, so mem_util is measured
	# at 0.6 plus the few pages of its own it wrote since the fork (its stack,
	# its variables: under 0.01); given back when off, so about 0 then.
	check "a co-located process: the mem_util read is measured near 0.6 (got $mem_on)" \
		awk -v u="$mem_on" 'BEGIN { exit !(u > 0.595 && u < 0.62) }'
	check "a co-located process: mem_util near 0 while the job is off (got $mem_off)" \
		awk -v u="$mem_off" 'BEGIN { exit !(u < 0.02) }'
	check "a co-located process: read near 0 while the job is off" test "$off_low" = 1

fi

# Work stealing for real (small.ini: 0.2, 0.3 and 0.5 of a core, 32
# samples each to start with, micro-batches of 8): the coordinator sends
# each worker its next micro-batch, and a worker with none left gets a
# not-yet-started one of another's. Every iteration still processes the
# global batch (96); samples move from the slowest worker to the fastest
# (with stealing they tend to the speed shares, 19 / 29 / 48: the bounds
# are half-way from the even 32); and the spread of compute times, 2.5 to
# 1 with the even split, closes to the last micro-batch's (8 samples on
# the 0.2 worker, about 70 ms of 0.2 s): under 2 in the median iteration.
# How far the samples move, and how close the times come, are the
# machine's speed: under LBSIM_CHECK_MEASURED=no (the sanitizers' pass,
# whose other tests share the cores with these workers: there the 0.5
# worker once averaged exactly 40) only the direction is checked.
"$LBSIM" testbed "$sc" --policy work-stealing --set run.iterations=6 --detail workers -q \
	-o "$TMP/ws.db" || bad "work stealing on the testbed failed"
ws="FROM worker_iterations JOIN runs USING (run_id) WHERE policy = 'work-stealing'"
check "work stealing: every iteration processes the global batch" \
	test "$(q "$TMP/ws.db" "SELECT count(*) FROM (SELECT sum(batch) AS b $ws GROUP BY iteration) WHERE b = 96")" = 6
w0=$(q "$TMP/ws.db" "SELECT avg(batch) $ws AND worker = 0")
w2=$(q "$TMP/ws.db" "SELECT avg(batch) $ws AND worker = 2")
if measured; then
	check "work stealing: samples move from the 0.2 worker (got $w0 a iteration) to the 0.5 one (got $w2)" \
		awk -v a="$w0" -v b="$w2" 'BEGIN { exit !(a < 26 && b > 40) }'
	ratio=$(q "$TMP/ws.db" "SELECT printf('%.3f', max(compute_s) / min(compute_s)) AS r $ws GROUP BY iteration ORDER BY r LIMIT 1 OFFSET 2")
	check "work stealing: the median iteration's slowest over fastest compute time is under 2 (got $ratio)" \
		awk -v r="$ratio" 'BEGIN { exit !(r > 0 && r < 2) }'
else
	check "work stealing: samples move from the 0.2 worker (got $w0 a iteration, of 32) toward the 0.5 one (got $w2)" \
		awk -v a="$w0" -v b="$w2" 'BEGIN { exit !(a < 32 && b > 32) }'
	echo "skipped (LBSIM_CHECK_MEASURED=no): how far work stealing moves the samples and evens the compute times"
fi

# What it cannot emulate is refused before anything runs (exit 3).
rc=0
"$LBSIM" testbed "$sc" --policy oracle -o "$TMP/x.db" 2> "$TMP/err" || rc=$?
check "the oracle is refused (exit 3)" test $rc -eq 3
check "the oracle is refused: no future in a real run" grep -q 'no future to look at' "$TMP/err"
rc=0
"$LBSIM" testbed "$sc" --set network.topology=ring --set 'network.bandwidth=1 Gbit/s' --set model.parameters=100000000 \
	-o "$TMP/x.db" 2> "$TMP/err" || rc=$?
check "a gradient over the exchange's 256 MiB is refused (exit 3), naming the key" \
	test $rc -eq 3 -a -n "$(grep 'model.*parameters.*scaled down' "$TMP/err")"
rc=0
"$LBSIM" testbed "$sc" --set 'workers.q20.timeshare_refill=100 us' -o "$TMP/x.db" 2> "$TMP/err" || rc=$?
check "the simulation's model of time-sharing is refused (exit 3), naming the key" \
	test $rc -eq 3 -a -n "$(grep 'timeshare_refill' "$TMP/err")"
rc=0
"$LBSIM" testbed "$sc" --set 'workers.q20.cpu_quota_period=20 ms' -o "$TMP/x.db" 2> "$TMP/err" || rc=$?
check "a CFS period other than the testbed's is refused (exit 3), naming the key" \
	test $rc -eq 3 -a -n "$(grep 'cpu_quota_period' "$TMP/err")"
check "nothing was written for a refused run" test ! -e "$TMP/x.db"

# Without root: exit 6, saying so.
if command -v setpriv > /dev/null; then
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$LBSIM" testbed "$sc" -o /tmp/never.db 2> "$TMP/err" || rc=$?
	cat "$TMP/err"
	check "without root: exit 6" test $rc -eq 6
	check "without root: the message says root is needed" grep -q 'needs root' "$TMP/err"
fi

# A network needs iproute2: without `ip` on PATH, exit 6 saying so, before
# anything runs (the cgroup checks do not use PATH).
rc=0
env PATH=/nonexistent "$LBSIM" testbed "$top_srcdir/scenarios/testbed/ring-shaped.ini" -o "$TMP/x.db" 2> "$TMP/err" || rc=$?
cat "$TMP/err"
check "a network without iproute2: exit 6" test $rc -eq 6
check "a network without iproute2: the message names ip and iproute2" grep -q '`ip` (iproute2)' "$TMP/err"
check "a network without iproute2: nothing written" test ! -e "$TMP/x.db"

# alive PID...: how many of them run (a zombie does not: an orphan is
# reaped only if something reaps orphans).
alive() {
	local n=0 k
	for k in "$@"; do
		[ -r "/proc/$k/stat" ] && ! sed 's/.*) //' "/proc/$k/stat" | grep -q '^[ZX]' && n=$((n + 1))
	done
	echo $n
}

# cgroup directory of coordinator PID, if any.
tops() { find /sys/fs/cgroup -maxdepth 2 -name "lbsim-testbed-$1" 2> /dev/null; }

# A signal in the middle of a run: every worker killed, every group removed.
for sig in TERM INT; do
	"$LBSIM" testbed "$sc" --set run.iterations=1000 -q -o "$TMP/sig.db" 2> "$TMP/sig.err" &
	pid=$!
	for _ in $(seq 100); do
		[ "$(pgrep -c -P $pid)" -ge 3 ] && [ -n "$(tops $pid)" ] && break
		sleep 0.1
	done
	kids=$(pgrep -P $pid | tr '\n' ' ')
	check "SIG$sig: 3 workers were running, in a control group" test "$(echo $kids | wc -w)" -eq 3 -a -n "$(tops $pid)"
	sleep 0.5
	kill -$sig $pid
	rc=0
	wait $pid || rc=$?
	check "SIG$sig: the testbed exits 130" test $rc -eq 130
	check "SIG$sig: no worker process is left" test "$(alive $kids)" -eq 0
	check "SIG$sig: no control group is left" test -z "$(tops $pid)"
	check "SIG$sig: the interrupted run left no rows" test "$(q "$TMP/sig.db" "SELECT count(*) FROM runs" 2> /dev/null || echo 0)" = 0
done

# SIGKILL: the workers die with their coordinator (PR_SET_PDEATHSIG) and
# the next run removes the group it left.
"$LBSIM" testbed "$sc" --set run.iterations=1000 -q -o "$TMP/kill.db" 2> /dev/null &
pid=$!
for _ in $(seq 100); do
	[ "$(pgrep -c -P $pid)" -ge 3 ] && break
	sleep 0.1
done
kids=$(pgrep -P $pid | tr '\n' ' ')
kill -KILL $pid
wait $pid 2> /dev/null
sleep 0.5
check "SIGKILL: no worker outlives its coordinator" test "$(alive $kids)" -eq 0 -a "$(echo $kids | wc -w)" -eq 3
"$LBSIM" testbed "$sc" --set run.iterations=1 -q -o "$TMP/after.db" > /dev/null 2>&1
check "SIGKILL: the next run removed the group left behind" test -z "$(tops $pid)"

# The exchange for real (scenarios/testbed/ring-shaped.ini): 3 workers, a
# ring all-reduce of M = 878213 B over NICs shaped by tc, 2 ms a step,
# here at 50 Mbit/s. By hand: 2(N-1)/N x M / 6.25 MB/s + 2(N-1) x 2 ms =
# 187.36 ms + 8 ms = 195.36 ms an iteration. What is measured is the
# fastest exchange of a run (iteration 0 left out): the links' own time,
# which the machine's load can only lengthen, by an amount that is the
# host's: the packets cross the veths and the bridge in the kernel's
# softirq work, and htb's one-frame bucket needs a timer a packet, which a
# virtual machine pays in exits. What a host can shape varies with its
# kind: at 100 Mbit/s 0.4% to 3.2% above the model on an AMD EPYC of this
# kind, 7% to 14% on an Intel Xeon of the same kind (2026-12-03), whose
# 200 Mbit/s runs came 33% to 37% above it (a CI run there missed the old
# rate check, 200 against 100 Mbit/s: 38.84 ms faster, not 46.84); at 50
# and 25 Mbit/s the Xeon came within 1.7% and 0.2%. So the rates gated are
# 50 and 25 Mbit/s, which both hosts shape, and the host's speed decides
# nothing: what is gated is what the model claims, by differences in which
# the host's own time cancels:
#  - a lower bound, 195.36 ms - 2%: no load makes the links faster (no
#    shaping at all takes about a twentieth of it, a latency left out -4.1%);
#  - the rate: the same run at 25 Mbit/s is slower by 2(N-1)/N x M x
#    (1/3.125 - 1/6.25 MB/s) = 187.36 ms, within 10% (on the Xeon -0.7% to
#    -1.5% in three runs);
#  - the latency: at 4 ms a step it is slower by 2(N-1) x 2 ms = 8 ms,
#    within 3 ms (on the Xeon 6.3 to 7.9 ms: a host's own delay after a
#    step partly hides in a longer wait; none paid, or paid twice, is 8 ms
#    off).
# The time above the model is printed, not gated. A miss is measured once
# more, as the validation above is.
ring=$top_srcdir/scenarios/testbed/ring-shaped.ini
ring_run() { # DB BANDWIDTH LATENCY: the fastest exchange of one run, or nothing
	rm -f "$1"
	"$LBSIM" testbed "$ring" --set run.iterations=11 --policy static --set "network.bandwidth=$2" \
		--set "network.latency=$3" -q -o "$1" || return
	q "$1" "SELECT min(aggregation_s) FROM iterations WHERE iteration > 0"
}
ring_measure() {
	a=$(ring_run "$TMP/ring.db" "50 Mbit/s" "2 ms")
	b=$(ring_run "$TMP/ring-rate.db" "25 Mbit/s" "2 ms")
	c=$(ring_run "$TMP/ring-latency.db" "50 Mbit/s" "4 ms")
}
ring_low() { awk -v a="$a" 'BEGIN { exit !(a > 0.19536 * 0.98) }'; }
ring_rate() { awk -v a="$a" -v b="$b" 'BEGIN { exit !(a != "" && b != "" && (b - a) / 0.18736 > 0.9 && (b - a) / 0.18736 < 1.1) }'; }
ring_latency() { awk -v a="$a" -v c="$c" 'BEGIN { exit !(a != "" && c != "" && c - a > 0.005 && c - a < 0.011) }'; }
ring_measure
if ! ring_low || ! ring_rate || ! ring_latency; then
	echo "a ring all-reduce: fastest exchanges ${a:-none}, ${b:-none} and ${c:-none} s, a miss: measuring them once more"
	ring_measure
fi
check "a ring all-reduce over tc-shaped links: the testbed ran" test -n "$a" -a -n "$b" -a -n "$c"
echo "a ring all-reduce: fastest exchange at 50 Mbit/s $a s, $(awk -v a="$a" 'BEGIN { printf "%+.1f%%", 100 * (a / 0.19536 - 1) }') from the model's 0.19536 s (the host's time, not gated)"
check "a ring all-reduce: the fastest exchange is above 195.36 ms - 2% (got $a s)" ring_low
check "a ring all-reduce: at 25 Mbit/s 187.36 ms slower within 10% (got $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", 1000 * (b - a) }') ms)" ring_rate
check "a ring all-reduce: at 4 ms a step 8 ms slower within 3 ms (got $(awk -v a="$a" -v c="$c" 'BEGIN { printf "%.2f", 1000 * (c - a) }') ms)" ring_latency
check "a ring all-reduce: the workers' compute is not in the exchange (compute_end_s < end_s in every iteration)" \
	test "$(q "$TMP/ring.db" "SELECT count(*) FROM iterations WHERE end_s - compute_end_s > 0.09")" = 11

# A network's processes and namespaces (the same scenario: 3 workers, the
# switch's holder and 3 ring nodes) die with a coordinator killed with
# SIGKILL, and with them every veth, bridge and qdisc (they exist only in
# those namespaces).
netns_of() { for k in "$@"; do readlink "/proc/$k/ns/net" 2> /dev/null; done | sort -u; }
"$LBSIM" testbed "$ring" --set run.iterations=1000 -q -o "$TMP/kill-net.db" 2> /dev/null &
pid=$!
for _ in $(seq 100); do
	[ "$(pgrep -c -P $pid)" -ge 7 ] && [ "$(netns_of $(pgrep -P $pid) | wc -l)" -ge 5 ] && break
	sleep 0.1
done
sleep 1
kids=$(pgrep -P $pid | tr '\n' ' ')
spaces=$(netns_of $kids | grep -vxF "$(readlink /proc/$$/ns/net)" | tr '\n' ' ')
check "a network run: 7 processes, 4 network namespaces of their own" \
	test "$(echo $kids | wc -w)" -eq 7 -a "$(echo $spaces | wc -w)" -eq 4
kill -KILL $pid
wait $pid 2> /dev/null
sleep 0.5
check "a network run, SIGKILL: no process outlives its coordinator" test "$(alive $kids)" -eq 0
left=0
for ns in $spaces; do
	for p in /proc/[0-9]*; do [ "$(readlink $p/ns/net 2> /dev/null)" = "$ns" ] && left=$((left + 1)); done
done
check "a network run, SIGKILL: no process is left in its namespaces (so they are gone)" test $left -eq 0

finish
