#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The synchronisation modes (doc/model.md, "Synchronisation"), timed by
# hand on two workers, what each mode refuses, and the shipped comparison
# scenarios/sync/modes.ini against the figures its header works out.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3

# Two workers of speeds 2 and 1: 10 samples each at 1 and 2 ms a sample
# (10 and 20 ms); a 1000-byte gradient through one parameter server of
# 1 MB/s: T_ps = 2 max(2 x 1000 / 1e6, 1000 / 1e6) = 4 ms, no latency.
# BSP: iterations of 20 + 4 = 24 ms.
cat > "$TMP/two.ini" <<'EOF'
[run]
name = two
seed = 1
global_batch = 20
iterations = 6

[model]
parameters = 250
bytes_per_parameter = 4

[network]
topology = ps
bandwidth = 8 Mbit/s
latency = 0 s

[workers.fast]
count = 1
device = cpu
cost = linear
per_sample = 1 ms

[workers.slow]
count = 1
device = cpu
cost = linear
per_sample = 2 ms
EOF
run() { # DB ARGS...: runs the two workers
	local db=$1
	shift
	"$LBSIM" "$TMP/two.ini" --detail workers -q -o "$TMP/$db.db" "$@"
}
# rows DB SQL: the rows, one a line, times in ms rounded to 1e-6
rows() { q "$TMP/$1.db" "$2" | tr '\n' ' ' | sed 's/ $//'; }
ms() { echo "round(($1) * 1000, 6)"; }

run bsp
# ssp, s = 1: the slow worker (24 ms a step, push and pull included) is
# never held, and finishes step k at 24 (k + 1) ms, completing clock k. The
# fast one (14 ms a step) may start step k once clock k - 2 is complete: it
# starts steps 0, 1, 2 at 0, 14, 28, then each step k at the slow worker's
# end of step k - 2, 24 (k - 1) ms: 48, 72, 96; it waited 48 - 42 = 6 ms
# before step 3 and 10 ms before each later one. A clock starts with its
# fast step and ends with its slow one.
run ssp1 --set sync.mode=ssp --set sync.staleness=1
check "ssp s=1: the clocks start at 0, 14, 28, 48, 72, 96 ms" \
	test "$(rows ssp1 "SELECT $(ms start_s) FROM iterations ORDER BY iteration")" = "0.0 14.0 28.0 48.0 72.0 96.0"
check "... and end at 24 (k + 1) ms, as BSP's iterations" \
	test "$(rows ssp1 "SELECT $(ms end_s) FROM iterations")" = "$(rows bsp "SELECT $(ms end_s) FROM iterations")"
check "... the fast worker waits 0, 0, 0, 6, 10, 10 ms before its steps, the slow one never" \
	test "$(rows ssp1 "SELECT $(ms wait_s) FROM worker_iterations WHERE worker = 0 ORDER BY iteration") | $(rows ssp1 "SELECT sum(wait_s) FROM worker_iterations WHERE worker = 1")" = "0.0 0.0 0.0 6.0 10.0 10.0 | 0.0"
# Staleness: the clocks a read misses, k minus the clocks complete at the
# step's start: the fast worker's steps 1-5 miss one, every other step none.
check "... staleness: 7 steps of 0 clocks, 5 of 1 (run_staleness)" \
	test "$(rows ssp1 "SELECT staleness || ':' || updates FROM run_staleness ORDER BY staleness")" = "0:7 1:5"
run ssp0 --set sync.mode=ssp --set sync.staleness=0
check "ssp s=0: BSP's iterations, to the bit" \
	test "$(rows ssp0 "SELECT start_s, compute_end_s, end_s FROM iterations")" = \
	"$(rows bsp "SELECT start_s, compute_end_s, end_s FROM iterations")"

# asp: each transfer of the 1000 bytes holds the server's link for 1 ms,
# first come first served (the worker's own link also 1 ms); a push then a
# pull. The fast worker's push 10-11 (update 0 at 11), pull 11-12; the slow
# one's push 20-21 (update 1), pull 21-22, its step 22-42; the fast one's
# step 12-22, push 22-23 (update 2), pull 23-24, step 24-34, push 34-35
# (update 3), pull 35-36, step 36-46; the slow one's push 42-43 (update 4),
# the fast one's 46-47 (update 5). Staleness, updates applied between the
# worker's read of the model (when its pull starts) and its own: 0, 1
# (update 0 came first), 1, 0, 2 (updates 2 and 3), 1 (update 4).
run asp --set sync.mode=asp
check "asp: updates at 11, 21, 23, 35, 43, 47 ms" \
	test "$(rows asp "SELECT $(ms end_s) FROM iterations ORDER BY iteration")" = "11.0 21.0 23.0 35.0 43.0 47.0"
check "... by workers 0, 1, 0, 0, 1, 0, one row each, 10 samples" \
	test "$(rows asp "SELECT worker || ':' || batch FROM worker_iterations ORDER BY iteration")" = "0:10 1:10 0:10 0:10 1:10 0:10"
check "... each step starting when its pull ends: 0, 0, 12, 24, 22, 36 ms" \
	test "$(rows asp "SELECT $(ms start_s) FROM iterations ORDER BY iteration")" = "0.0 0.0 12.0 24.0 22.0 36.0"
check "... staleness 0 twice, 1 three times, 2 once" \
	test "$(rows asp "SELECT staleness || ':' || updates FROM run_staleness ORDER BY staleness")" = "0:2 1:3 2:1"

# local-sgd, H = 2: step 0 local (the fast worker 0-10, the slow one 0-20);
# step 1 ends in the averaging: the fast worker 10-20 then waits 20 ms for
# the slow one (20-40), the all-reduce 40-44; both start step 2 at 44.
run local --set sync.mode=local-sgd --set sync.period=2
check "local-sgd H=2: clocks end at 20, 44, 64, 88, 108, 132 ms" \
	test "$(rows local "SELECT $(ms end_s) FROM iterations")" = "20.0 44.0 64.0 88.0 108.0 132.0"
check "... the fast worker waits 20 ms at each averaging, never between" \
	test "$(rows local "SELECT $(ms wait_s) FROM worker_iterations WHERE worker = 0")" = "0.0 20.0 0.0 20.0 0.0 20.0"
run local1 --set sync.mode=local-sgd --set sync.period=1
check "local-sgd H=1: BSP's iterations, to the bit" \
	test "$(rows local1 "SELECT start_s, compute_end_s, end_s FROM iterations")" = \
	"$(rows bsp "SELECT start_s, compute_end_s, end_s FROM iterations")"

# dropcompute, 15 ms, micro-batches of 3: the fast worker's 3+3+3+1
# samples end at 10 ms; the slow one's at 6, 12 and 18 ms: it stops at 15
# with 6 samples, the third micro-batch and the last one's sample dropped.
# Iterations of 15 + 4 = 19 ms, 16 samples counted, 6 x 4 dropped.
run drop --set sync.mode=dropcompute --set sync.time_limit=15ms --set sync.micro_batch=3
check "dropcompute: iterations of 19 ms, 16 samples counted" \
	test "$(rows drop "SELECT DISTINCT $(ms "end_s - start_s") || ':' || global_batch_samples FROM iterations")" = "19.0:16"
check "... the slow worker computed 15 ms and kept 6 samples, the fast one 10 ms and 10" \
	test "$(rows drop "SELECT DISTINCT worker || ':' || $(ms compute_s) || ':' || batch FROM worker_iterations ORDER BY worker")" = "0:10.0:10 1:15.0:6"
check "... 24 samples dropped (run_targets)" test "$(rows drop "SELECT dropped_samples FROM run_targets")" = 24
# dropcompute's automatic limit, micro-batches of 2, a 500-byte gradient
# (T_ps = 2 ms), 3 steps measured: they run to the end (20 + 2 = 22 ms);
# their micro-batches end at 2, 4, 6, 8, 10 ms (fast) and 4, 8, 12, 16,
# 20 ms (slow), 2 samples each, so the samples finished by tau per second
# of tau + 2 ms are: 2/4, 6/6, 8/8, 12/10 (tau = 8 ms, the most), 14/12,
# 16/14, 18/18, 20/22. From step 3 on: 8 + 4 samples in 8 + 2 = 10 ms.
run auto --set model.parameters=125 --set sync.mode=dropcompute --set sync.micro_batch=2 --set sync.time_limit_steps=3
check "dropcompute, automatic limit: steps of 22, 22, 22, then 10 ms; 20, 20, 20, then 12 samples" \
	test "$(rows auto "SELECT $(ms "end_s - start_s") || ':' || global_batch_samples FROM iterations")" = \
	"22.0:20 22.0:20 22.0:20 10.0:12 10.0:12 10.0:12"

# Refused before anything runs (exit 3), naming the key.
refuse() { # WHAT WORDS ARGS...
	local what=$1 words=$2 rc=0
	shift 2
	rm -f "$TMP/r.db"
	"$LBSIM" "$TMP/two.ini" "$@" -q -o "$TMP/r.db" 2> "$TMP/err" || rc=$?
	check "refused: $what (exit 3, got $rc): $(head -c 150 "$TMP/err")" \
		sh -c "[ $rc -eq 3 ] && grep -q '$words' '$TMP/err' && [ ! -e '$TMP/r.db' ]"
}
refuse "ssp without a staleness" "sync.*staleness" --set sync.mode=ssp
refuse "asp on a ring" "sync.mode: mode = asp goes through a parameter server" --set sync.mode=asp \
	--set network.topology=ring
refuse "ssp with a policy that re-plans" "mode = ssp has no barrier at which policy .static-proportional." \
	--set sync.mode=ssp --set sync.staleness=1 --policy static-proportional --no-baseline
refuse "local-sgd with work stealing" "mode = local-sgd runs whole shares" --set sync.mode=local-sgd \
	--set sync.period=2 --policy work-stealing --no-baseline
refuse "local-sgd with epochs" "run.epochs: .sync. mode = local-sgd counts steps" --set sync.mode=local-sgd \
	--set sync.period=2 --set run.iterations= --set run.epochs=2 --set run.dataset_samples=200
refuse "a period of 0" "sync.period" --set sync.mode=local-sgd --set sync.period=0
refuse "a micro-batch over the global batch" "sync.micro_batch: a micro-batch larger than the global batch of 20" \
	--set sync.mode=dropcompute --set sync.time_limit=1s --set sync.micro_batch=21
refuse "ssp with the exchange on the workers" "network.exchange_on_workers" --set sync.mode=ssp \
	--set sync.staleness=1 --set network.exchange_on_workers=yes
refuse "a staleness bound that keeps too many steps in flight" "sync.staleness: up to 1000001 steps in flight per worker (of 11 workers)" \
	--set sync.mode=ssp --set sync.staleness=1000000 --set run.iterations=100000000 --set workers.fast.count=10
refuse "a staleness key under bsp" "sync.*staleness: this key applies only when mode=ssp" --set sync.staleness=1

# scenarios/sync/modes.ini: each mode's steps and time to target, as its
# header works them out.
M=$top_srcdir/scenarios/sync/modes.ini
near() { awk -v a="$1" -v b="$2" -v e="$3" 'BEGIN { exit !(a - b <= e && b - a <= e) }'; }
mode() { # NAME STEPS TIME ARGS...: the run's steps and time to target
	local name=$1 steps=$2 time=$3 db="$TMP/modes-$1.db"
	shift 3
	"$LBSIM" "$M" -q -o "$db" --no-baseline "$@" 2> "$TMP/err" || bad "modes.ini $name: $(cat "$TMP/err")"
	local got
	got=$(q "$db" "SELECT steps_to_target || ' ' || time_to_target_s FROM run_targets")
	check "modes.ini $name: the target at step $steps, $time s (got $got)" \
		sh -c "[ '${got% *}' = '$steps' ] && awk -v a='${got#* }' -v b='$time' 'BEGIN { exit !(a - b <= 1e-9 && b - a <= 1e-9) }'"
}
mode bsp 200 8.4
mode static-proportional 200 5.813 --policy static-proportional
mode backup 234 6.084 --set sync.mode=backup
mode dropcompute 215 5.6975 --set sync.mode=dropcompute --set sync.time_limit=16.5ms --set sync.micro_batch=4
mode dropcompute-auto 214 5.724 --set sync.mode=dropcompute --set sync.micro_batch=4
check "... dropcompute: 8 of the slow worker's 16 samples dropped a step" \
	test "$(q "$TMP/modes-dropcompute.db" "SELECT dropped_samples FROM run_targets")" = $((215 * 8))
# overrun = finish: the slow worker's third micro-batch, started at 16 ms
# (before the limit), runs to 24 ms and counts; no fourth starts: 60
# samples a step of 24 + 10 ms; 100 (1 + 64/60) = 206.7, 207 steps: 7.038 s
mode dropcompute-finish 207 7.038 --set sync.mode=dropcompute --set sync.time_limit=16.5ms --set sync.micro_batch=4 \
	--set sync.overrun=finish
check "... overrun = finish: 4 of the slow worker's 16 samples dropped a step, 60 counted" \
	test "$(q "$TMP/modes-dropcompute-finish.db" "SELECT dropped_samples || ' ' || (SELECT min(global_batch_samples)
		|| '/' || max(global_batch_samples) FROM iterations) FROM run_targets")" = "$((207 * 4)) 60/60"
mode local-sgd-4 200 6.9 --set sync.mode=local-sgd --set sync.period=4
mode local-sgd-16 208 6.786 --set sync.mode=local-sgd --set sync.period=16
mode local-sgd-4-sp 200 4.352 --set sync.mode=local-sgd --set sync.period=4 --policy static-proportional
check "... local-sgd re-plans at its first averaging: 19/18/18/9 from clock 4 on" \
	test "$(rows modes-local-sgd-4-sp "SELECT iteration || ':' || group_concat(batch_samples, '/') FROM batches GROUP BY iteration")" = \
	"0:16/16/16/16 4:19/18/18/9"
mode ssp-1 200 8.4 --set sync.mode=ssp --set sync.staleness=1
mode ssp-3 397 16.674 --set sync.mode=ssp --set sync.staleness=3
check "... ssp s=3: staleness 0 in 397 + 3 steps, 1 in 2 x 3, 2 in 3 x 3, 3 in the fast workers' other 391 x 3" \
	test "$(rows modes-ssp-3 "SELECT staleness || ':' || updates FROM run_staleness ORDER BY staleness")" = "0:400 1:6 2:9 3:1173"
mode asp 1307 6.91475 --set sync.mode=asp
# asp, a second way: the progress is the sum over the updates of
# 16 / (100 x (16 + 64)) / max(1, staleness), from run_staleness.
check "... asp: its progress is the staleness distribution's sum" near \
	"$(q "$TMP/modes-asp.db" "SELECT progress FROM run_targets")" \
	"$(q "$TMP/modes-asp.db" "SELECT sum(updates * 16.0 / (100 * 80) / max(1, staleness)) FROM run_staleness")" 1e-9
check "... asp: one iteration a update, 1307 in all, 16 samples each" \
	test "$(q "$TMP/modes-asp.db" "SELECT count(*) || ' ' || min(global_batch_samples) || ' ' || max(global_batch_samples) FROM iterations")" = "1307 16 16"
# With transient stragglers (the header's second list): the simulation's
# times to target, to the 4 decimals the header gives, and their ranking.
noisy="--set workers.slow.availability=1 --set workers.fast.noise=lognormal --set workers.fast.noise_sigma=0.5
	--set workers.slow.noise=lognormal --set workers.slow.noise_sigma=0.5"
ranked=""
for m in "local-sgd --set sync.period=4:4.621" "asp:4.9758" "ssp --set sync.staleness=1:5.6412" \
	"dropcompute --set sync.time_limit=20ms --set sync.micro_batch=4:6.0972" "backup:6.5564" "bsp:6.9462" \
	"ssp --set sync.staleness=2:6.9846"; do
	rm -f "$TMP/n.db"
	# shellcheck disable=SC2086 # the options split on purpose
	"$LBSIM" "$M" -q -o "$TMP/n.db" --no-baseline $noisy --set sync.mode=${m%:*}
	ranked="$ranked $(q "$TMP/n.db" "SELECT round(time_to_target_s, 4) FROM run_targets")"
done
check "transient stragglers: local-sgd, asp, ssp 1, dropcompute, backup, bsp, ssp 2 (got$ranked)" \
	test "$ranked" = " 4.621 4.9758 5.6412 6.0972 6.5564 6.9462 6.9846"

"$LBSIM" "$M" --set sync.mode=ssp --set sync.staleness=3 -o "$TMP/sum.db" > "$TMP/sum.out" 2>&1
check "the summary names the mode and gives the time to target" sh -c "grep -q 'global batch 64, sync ssp (staleness 3)\$' '$TMP/sum.out' &&
	grep -q 'static  *step 397, 16.6740 s' '$TMP/sum.out'"

# lbsim merge keeps both tables, from files with and without them.
"$LBSIM" merge "$TMP/merged.db" "$TMP/bsp.db" "$TMP/modes-asp.db" "$TMP/modes-ssp-3.db" -q
check "merge: run_targets and run_staleness copied, renumbered" \
	test "$(q "$TMP/merged.db" "SELECT group_concat(run_id || ':' || steps_to_target, ' ') FROM run_targets") |
$(q "$TMP/merged.db" "SELECT sum(updates) FROM run_staleness WHERE run_id = 3")" = "2:1307 3:397 |
$((397 * 4))"

# A sweep over the modes keeps each run's time to target (its jobs' files
# are merged).
if command -v parallel > /dev/null; then
	printf '[sweep]\nscenario = %s\n[vary]\nsync.mode = bsp, backup, asp\n' "$M" > "$TMP/sw.ini"
	"$LBSIM" sweep "$TMP/sw.ini" -o "$TMP/sw.db" -q -j 1 > /dev/null 2>&1
	check "sweep over sync.mode: each run's steps to target (bsp 200, backup 234, asp 1307)" \
		test "$(q "$TMP/sw.db" "SELECT group_concat(v, ' ') FROM (SELECT c.value || ':' || t.steps_to_target AS v
			FROM run_targets t JOIN run_config c ON c.run_id = t.run_id AND c.section = 'sync' AND c.key = 'mode'
			ORDER BY t.run_id)")" = \
		"bsp:200 backup:234 asp:1307"
else
	echo "(GNU parallel missing: the sweep over the modes is not checked)"
fi

finish
