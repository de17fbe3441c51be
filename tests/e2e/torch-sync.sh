#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The [sync] modes on the testbed (doc/validation.md, "The synchronisation
# modes on the testbed"): the torch workers train the teacher-student task
# under ssp, asp and backup through a real parameter server (a torch
# process of rank N) and under local-sgd with their own averaging. What it
# checks, independently of lbsim's model:
#  - the modes' maths, by identities that hold exactly in real arithmetic:
#    ssp with s = 0 (each clock's pushes applied as b_i / B of a step, all
#    on the same model) and local-sgd with H = 1 (the models' average
#    weighted by b_i / B after one local step each) both make BSP's
#    update, so that rank 0's parameters after 4 steps agree with BSP's to
#    float rounding (1e-6 relative; they differ by about 2e-7 here), while
#    asp, ssp with s = 2 and backup with k = 1 (stale or dropped
#    gradients) do not; and so does dropcompute when its limit drops
#    nothing (micro-batches accumulated, the mean over the samples that
#    counted: all of them);
#  - the records, against the modes' definitions: asp one update a record,
#    each of one worker's share, staleness counted for each; ssp clocks
#    whose staleness never exceeds s; backup steps of exactly N - k
#    workers' samples, the others' counted as dropped; local-sgd clocks;
#  - what the testbed cannot run is refused (exit 3) naming the key;
#  - dropcompute's micro-batches: whole ones kept, steps of what counted;
#  - (measured) `lbsim validate --sync`: each mode's simulated steps to
#    target (the mean of an ensemble of 10 noisy seeds) within 10% of the
#    measured mean (or 3 standard errors of their difference), and the
#    times printed and stored (their gap is reported, not gated: see
#    doc/validation.md for why it is not within 10%).
# It needs root, a cgroup cpu controller and python3 with python3-torch;
# without them it skips (exit 77) saying so, and fails under
# LBSIM_REQUIRE_TESTBED=yes. LBSIM_CHECK_MEASURED=no runs a short pass.
. "$(dirname "$0")/lib.sh"
torch_own
need sqlite3 sqlite3

need_torch "the [sync] modes on the testbed"
sc=$top_srcdir/scenarios/testbed/convergence.ini

# What the testbed refuses, before anything runs: exit 3 naming the key.
refused() { # NAME KEY ARGS...
	local name=$1 key=$2
	shift 2
	rc=0
	"$LBSIM" testbed "$@" -q -o "$TMP/r.db" 2> "$TMP/err" || rc=$?
	check "$name: refused (exit 3, got $rc), naming $key" sh -c "test $rc -eq 3 && grep -q '$key' '$TMP/err'"
}
refused "asp with the blas worker" "mode" "$top_srcdir/scenarios/testbed/small.ini" --set sync.mode=asp
refused "local-sgd evaluated between averagings" "loss_every" "$sc" --set sync.mode=local-sgd --set sync.period=2 \
	--set testbed.loss_every=5
refused "backup of every worker" "backup_workers" "$sc" --set sync.mode=backup --set sync.backup_workers=3
refused "asp with a policy that re-plans" "mode" "$sc" --set sync.mode=asp --policy lbbsp-cpu
check "no database written by a refused run" test ! -e "$TMP/r.db"

# The identities: rank 0's parameters after 4 steps (LBSIM_TORCH_DIGEST).
dg=$TMP/digest
for m in bsp "ssp --set sync.staleness=0" "local-sgd --set sync.period=1" \
	"dropcompute --set sync.micro_batch=256 --set sync.time_limit=100s" asp "ssp --set sync.staleness=2" \
	"backup --set sync.backup_workers=1"; do
	# shellcheck disable=SC2086
	LBSIM_TORCH_DIGEST=$dg "$LBSIM" testbed "$sc" --set sync.mode=$m --set run.iterations=4 \
		--set testbed.target_loss=0 -q -o "$TMP/dg.db" || bad "torch run under $m"
done
cat "$dg"
check "ssp s=0, local-sgd H=1, dropcompute dropping nothing: BSP's parameters (within 1e-6)" \
	awk 'NR <= 4 { s[NR] = $2; q[NR] = $3 } END { for (i = 2; i <= 4; i++)
		if ((s[i] - s[1]) ^ 2 > 1e-12 * s[1] ^ 2 || (q[i] - q[1]) ^ 2 > 1e-12 * q[1] ^ 2) exit 1;
		exit NR != 7 }' "$dg"
# (by both sums: 4 steps move the sum of squares little, and backup's,
# one worker of three dropped each step, once came within 3e-6 of BSP's
# while its sum was 8e-4 away)
check "asp, ssp s=2, backup k=1: other parameters (stale or dropped gradients)" \
	awk 'NR == 1 { a = $2; b = $3 } NR >= 5 && (a - $2) ^ 2 <= 1e-10 * a ^ 2 && (b - $3) ^ 2 <= 1e-10 * b ^ 2 { same++ }
		END { exit same > 0 || NR != 7 }' "$dg"

# The records of short runs of each mode.
T=12
for m in asp "ssp --set sync.staleness=1" "backup --set sync.backup_workers=1" "local-sgd --set sync.period=3"; do
	# shellcheck disable=SC2086
	"$LBSIM" testbed "$sc" --set sync.mode=$m --set run.iterations=$T --set testbed.loss_every=3 -q \
		--detail workers -o "$TMP/m.db" || bad "testbed under $m"
done
# runs 1 asp, 2 ssp, 3 backup, 4 local-sgd; B = 3072 in shares of 1024
check "asp: $T updates, each one worker's 1024 samples, its own worker row" test "$(q "$TMP/m.db" "SELECT count(*) FROM
	iterations i WHERE run_id = 1 AND global_batch_samples = 1024 AND (SELECT count(*) FROM worker_iterations w
	WHERE w.run_id = 1 AND w.iteration = i.iteration) = 1")" = $T
check "asp: a staleness counted for every update" test "$(q "$TMP/m.db" "SELECT sum(updates) FROM run_staleness
	WHERE run_id = 1")" = $T
check "asp: updates end in order, each after its compute" test "$(q "$TMP/m.db" "SELECT count(*) FROM iterations a
	JOIN iterations b ON b.run_id = a.run_id AND b.iteration = a.iteration + 1 WHERE a.run_id = 1
	AND a.end_s <= b.end_s AND a.compute_end_s <= a.end_s")" = $((T - 1))
check "ssp s=1: $T clocks of 3072 samples, no step staler than 1" test "$(q "$TMP/m.db" "SELECT (SELECT count(*)
	FROM iterations WHERE run_id = 2 AND global_batch_samples = 3072) || ',' || (SELECT sum(updates) FROM
	run_staleness WHERE run_id = 2) || ',' || (SELECT max(staleness) FROM run_staleness WHERE run_id = 2)")" \
	= "$T,$((3 * T)),1"
check "backup k=1: $T steps of exactly two workers' 2048 samples" test "$(q "$TMP/m.db" "SELECT count(*) FROM
	iterations i WHERE run_id = 3 AND global_batch_samples = 2048 AND (SELECT count(*) FROM worker_iterations w
	WHERE w.run_id = 3 AND w.iteration = i.iteration AND w.batch = 1024) = 2")" = $T
check "backup k=1: the dropped samples whole shares, counted" test "$(q "$TMP/m.db" "SELECT dropped_samples % 1024
	= 0 FROM run_targets WHERE run_id = 3")" = 1
check "local-sgd H=3: $T clocks of 3072 samples" test "$(q "$TMP/m.db" "SELECT count(*) FROM iterations
	WHERE run_id = 4 AND global_batch_samples = 3072")" = $T
check "local-sgd H=3: the model evaluated after averagings only" test "$(q "$TMP/m.db" "SELECT count(*) || ',' ||
	sum(step % 3 = 0) FROM run_losses WHERE run_id = 4")" = 4,4
check "every run's held-out losses (every 3 steps)" test "$(q "$TMP/m.db" "SELECT count(DISTINCT run_id) FROM
	run_losses")" = 4
# dropcompute, micro-batches of 256, a limit of 0.64 T, T the 0.2 worker's
# median compute of its 1024 samples under ssp above (0.22 to 0.33 s on the
# machines seen; a fixed 0.25 s once dropped nothing on a faster one): its
# micro-batches, each a little over T / 4, end near 0.28, 0.55, 0.83 T and
# the 0.3 worker's near 0.18, 0.37, 0.55, 0.73 T, so the limit falls some
# 15% from any of them: the 0.2 worker keeps 2 under drop, 3 under finish,
# the 0.3 one 3 and 4. Each worker keeps whole ones, a step counts what
# they kept; overrun = finish keeps the one running at the limit, so no
# fewer samples than with drop.
T20=$(q "$TMP/m.db" "WITH c AS (SELECT compute_s, row_number() OVER (ORDER BY compute_s) AS k, count(*) OVER () AS n
	FROM worker_iterations WHERE run_id = 2 AND worker = 0) SELECT avg(compute_s) FROM c
	WHERE k IN ((n + 1) / 2, (n + 2) / 2)")
limit=$(awk -v t="$T20" 'BEGIN { printf "%.4fs", 0.64 * t }')
echo "the 0.2 worker's median compute of 1024 samples: $T20 s; dropcompute's limit: $limit"
for o in drop finish; do
	"$LBSIM" testbed "$sc" --set sync.mode=dropcompute --set sync.micro_batch=256 --set sync.time_limit=$limit \
		--set sync.overrun=$o --set run.iterations=6 --set testbed.loss_every=3 --detail workers -q \
		-o "$TMP/d.db" || bad "testbed under dropcompute, overrun $o"
done
check "dropcompute: each worker's samples whole micro-batches, each step's the sum, dropped ones counted" \
	test "$(q "$TMP/d.db" "SELECT (SELECT count(*) FROM worker_iterations WHERE batch % 256 = 0) || ',' ||
	(SELECT count(*) FROM iterations i WHERE global_batch_samples = (SELECT sum(batch) FROM worker_iterations w
	 WHERE w.run_id = i.run_id AND w.iteration = i.iteration)) || ',' ||
	(SELECT count(*) FROM run_targets t WHERE dropped_samples = 6 * 3072 - (SELECT sum(global_batch_samples)
	 FROM iterations i WHERE i.run_id = t.run_id))")" = 36,12,2
check "dropcompute: the 0.2 worker loses samples under drop, no more under finish" \
	test "$(q "$TMP/d.db" "SELECT (SELECT dropped_samples FROM run_targets WHERE run_id = 1) > 0 AND
	(SELECT dropped_samples FROM run_targets WHERE run_id = 2) <= (SELECT dropped_samples FROM run_targets
	WHERE run_id = 1)")" = 1
# ... and alone: one worker, no process group, its micro-batches still
# accumulated (it once had no buffer for them without an exchange).
sed -e '/^\[workers.q30\]/,/^$/d' -e '/^\[workers.q50\]/,/^$/d' -e "s#\.\./\.\./profiles#$top_srcdir/profiles#" \
	"$sc" > "$TMP/one.ini"
"$LBSIM" testbed "$TMP/one.ini" --set sync.mode=dropcompute --set sync.micro_batch=256 --set sync.time_limit=10s \
	--set run.iterations=2 --set testbed.target_loss=0 -q -o "$TMP/one.db" 2> "$TMP/err" || bad "dropcompute alone: $(cat "$TMP/err")"
check "dropcompute, one worker: 2 steps of its 3072 samples" \
	test "$(q "$TMP/one.db" "SELECT count(*) || ',' || sum(global_batch_samples) FROM iterations")" = 2,6144

# local-sgd re-plans at its averagings: static-proportional's first round
# even, then every clock of a round the same proportional plan, summing to B
# (the policy's own defaults: one round profiled, none skipped, not the
# scenario's warm-up and five).
"$LBSIM" testbed "$sc" --set sync.mode=local-sgd --set sync.period=3 --policy static-proportional \
	--set policy.static-proportional.skip_iterations=0 --set policy.static-proportional.profile_iterations=1 \
	--set policy.static-proportional.estimator=mean \
	--set run.iterations=9 --set testbed.loss_every=3 --detail workers -q -o "$TMP/p.db" || bad "local-sgd, static-proportional"
check "local-sgd H=3, static-proportional: clocks 0-2 even, 3-8 one uneven plan of 3072" test "$(q "$TMP/p.db" "
	SELECT (SELECT count(*) FROM worker_iterations WHERE run_id = 2 AND iteration < 3 AND batch = 1024) || ',' ||
	(SELECT count(DISTINCT plan) || ',' || count(*) FROM (SELECT group_concat(batch, '/') AS plan, sum(batch) AS b
	 FROM (SELECT * FROM worker_iterations WHERE run_id = 2 AND iteration >= 3 ORDER BY worker) GROUP BY iteration
	 HAVING b = 3072 AND min(batch) < 1024))")" = 9,1,6
check "no torch worker or server outlives its run" eval '! torch_left'

if ! measured; then
	# a short comparison: the variants' rows, the policy asp refuses left out, saying so
	rc=0
	"$LBSIM" validate "$sc" --sync bsp,asp --policy lbbsp-cpu --set run.iterations=6 --repeat 1 -o "$TMP/v.db" \
		> "$TMP/v.out" 2> "$TMP/v.err" || rc=$?
	cat "$TMP/v.out"
	check "validate --sync (short): ran (exit 0 or 7, got $rc)" test $rc -eq 0 -o $rc -eq 7
	check "validate --sync (short): lbbsp-cpu left out of asp's rows, saying why" \
		grep -q 'sync asp: leaving out policy lbbsp-cpu: .*re-plan' "$TMP/v.err"
	check "validate --sync (short): an ensemble of 10 seeds from the run's, each run noisy, for each row" \
		test "$(q "$TMP/v.db" "SELECT count(*) || ',' || count(DISTINCT policy) || ',' || min(seed) || ',' ||
			max(seed) || ',' || sum((SELECT count(*) FROM run_config c WHERE c.run_id = s.run_id
			AND c.section = 'workers.q20' AND c.key = 'noise' AND c.value = 'lognormal')) FROM validation_seeds s")" = 30,3,1,10,30
	check "validate --sync (short): three rows stored (static/bsp, lbbsp-cpu/bsp, static/asp)" \
		test "$(q "$TMP/v.db" "SELECT group_concat(policy, ' ') FROM (SELECT policy FROM validations ORDER BY policy)")" \
		= "lbbsp-cpu/bsp static/asp static/bsp"
	echo "skipped (LBSIM_CHECK_MEASURED=no): the modes' time-to-target validation"
	finish
	exit 0
fi

# The validation: the profile measured here, then each mode simulated (an
# ensemble of 10 seeds, each iteration's compute drawn with the noise the
# profile's repetitions measured) and run 3 times. The gate is the steps to
# target: the ensemble's mean within max(STEPS, 3 standard errors of the
# difference of the two means, sqrt(sd_sim^2 / 10 + sd_meas^2 / 3)) of the
# measured mean, STEPS = 10%, the issue's goal (the [convergence] fit's
# held-out error is 0.6%, the staleness penalty adds the model's own error
# under asp). One noise-free run is not the simulation's answer under asp:
# which worker's update lands between two others turns on a few percent of
# their speeds, and 5% changes to the calibrated ones move it from 47 to 55
# steps (doc/validation.md, "The simulated ensemble"). The times are printed.
STEPS=0.10
rc=0
"$LBSIM" validate "$sc" --calibrate "$TMP/prof.ini" --timeshare-refill \
	--sync bsp,asp,ssp:1,backup:1,local-sgd:5,dropcompute:256:0.25s:finish \
	--set run.iterations=70 --repeat 3 -o "$TMP/v.db" > "$TMP/v.out" 2> "$TMP/v.err" || rc=$?
cat "$TMP/v.out"
check "validate --sync: ran to its comparison (exit 0, got $rc)" test $rc -eq 0
q "$TMP/v.db" "SELECT 'm', policy, measured_reached, repeats, measured_steps, coalesce(measured_steps_sd, 0)
	FROM validation_targets UNION ALL SELECT 's', policy, coalesce(simulated_steps, 0), 0, 0, 0
	FROM validation_seeds" | tr '|' ' ' > "$TMP/t"
awk -v S=$STEPS '
	$1 == "s" { n[$2]++; if ($3 > 0) { k[$2]++; s1[$2] += $3; s2[$2] += $3 * $3 }; next }
	{ p[++np] = $2; got[$2] = $3; reps[$2] = $4; mm[$2] = $5; md[$2] = $6 }
	END {
		for (i = 1; i <= np; i++) {
			x = p[i]
			if (got[x] != reps[x] || n[x] != 10 || k[x] != n[x]) {
				printf "%s: %d of %d repeats and %d of %d simulated seeds reached the target\n", x, got[x],
					reps[x], k[x], n[x]; bad++; continue }
			ms = s1[x] / k[x]; v = (s2[x] - k[x] * ms * ms) / (k[x] - 1); sds = v > 0 ? sqrt(v) : 0
			se = sqrt(sds * sds / k[x] + md[x] * md[x] / reps[x])
			ts = S; c = 3 * se / mm[x]; if (c > ts) ts = c; es = ms / mm[x] - 1
			printf "%s: steps sim %.1f +- %.1f (10 seeds), measured %.1f +- %.1f (%+.1f%%, tolerance %.1f%%)\n",
				x, ms, sds, mm[x], md[x], 100 * es, 100 * ts
			if (es > ts || -es > ts) bad++
		}
		exit bad != 0 || np != 6
	}' "$TMP/t" > "$TMP/gate"; rc=$?
cat "$TMP/gate"
check "validate --sync: each mode's steps to target within its tolerance" test $rc -eq 0
finish
