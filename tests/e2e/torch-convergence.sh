#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Real convergence on the testbed (doc/validation.md, "Real convergence"):
# the torch workers train the teacher-student task (scenarios/testbed/
# convergence.ini) under the coordinator's barrier and the batch policies,
# rank 0's held-out losses give the measured steps and time to target, and
# `lbsim validate` compares them with the simulated ones. What it checks,
# independently of lbsim's model:
#  - a policy changes time, never the maths: the held-out losses after the
#    same steps agree across static, static-proportional and lbbsp-cpu
#    (gradients summed by sample), and differ under another seed;
#  - the measured target is where the losses say: the recorded step lies
#    between the last evaluation above the target and the first at or
#    below it, its time that step's end in the iterations table;
#  - (measured) the validation: simulated steps and time to target within
#    a tolerance derived from the measured spread over 3 repeats, and the
#    measured ranking by time to target reproduced.
# It needs root, a cgroup cpu controller and python3 with python3-torch;
# without them it skips (exit 77) saying so, and fails under
# LBSIM_REQUIRE_TESTBED=yes. LBSIM_CHECK_MEASURED=no runs a short pass.
. "$(dirname "$0")/lib.sh"
torch_own
need sqlite3 sqlite3

need_torch "real convergence"
sc=$top_srcdir/scenarios/testbed/convergence.ini

# A target loss on a network without a held-out loss: refused, naming the key.
rc=0
"$LBSIM" testbed "$top_srcdir/scenarios/testbed/small.ini" --worker torch --set testbed.target_loss=0.5 -q \
	-o "$TMP/r.db" 2> "$TMP/err" || rc=$?
check "target_loss on cifarnet: refused (exit 3, got $rc), naming the key" \
	sh -c "test $rc -eq 3 && grep -q 'target_loss' '$TMP/err' && grep -q teacher-student '$TMP/err'"

# 10 steps, the loss evaluated every 2, a target (1.0) reached near step 8
# in teacher_student.py's curves: short runs of three policies and another
# seed.
short="--set run.iterations=10 --set testbed.loss_every=2 --set testbed.target_loss=1.0"
# (runs 1 to 3: the three policies of seed 1; run 4: static, seed 2)
for run in "--policy static,static-proportional,lbbsp-cpu" "--policy static --seed 2"; do
	# shellcheck disable=SC2086
	"$LBSIM" testbed "$sc" $run $short -q -o "$TMP/s.db" || bad "testbed $run"
done
check "four runs, each with five held-out losses (steps 2 to 10)" \
	test "$(q "$TMP/s.db" "SELECT count(*) || ',' || count(DISTINCT run_id) FROM run_losses")" = 20,4
# rank 0's losses at each step: the same (1e-5 relative) under the three
# splits of seed 1, another under seed 2
check "the same losses under every split (1e-5)" test "$(q "$TMP/s.db" "SELECT count(*) FROM run_losses a
	JOIN run_losses b ON a.step = b.step AND b.run_id IN (2, 3) WHERE a.run_id = 1
	AND abs(a.loss - b.loss) <= 1e-5 * a.loss")" = 10
check "another seed's differ" test "$(q "$TMP/s.db" "SELECT count(*) FROM run_losses a
	JOIN run_losses b ON a.step = b.step AND b.run_id = 4 WHERE a.run_id = 1 AND abs(a.loss - b.loss) > 1e-4")" = 5
check "the losses fall (step 2 above step 10) in every run" test "$(q "$TMP/s.db" "SELECT count(*) FROM run_losses a
	JOIN run_losses b USING (run_id) WHERE a.step = 2 AND b.step = 10 AND a.loss > b.loss")" = 4
# The measured target: steps_to_target s with the loss above 1.0 at the
# last evaluation before s and at or below it at the first from s, and
# time_to_target_s the end of step s (iteration s - 1).
check "every run's target where its losses put it, at its step's end" test "$(q "$TMP/s.db" "SELECT count(*)
	FROM run_targets t JOIN iterations i ON i.run_id = t.run_id AND i.iteration = t.steps_to_target - 1
	WHERE abs(i.end_s - t.time_to_target_s) < 1e-9 AND t.progress = 1
	AND (SELECT loss FROM run_losses l WHERE l.run_id = t.run_id AND l.step < t.steps_to_target
	     ORDER BY step DESC LIMIT 1) > 1.0
	AND (SELECT loss FROM run_losses l WHERE l.run_id = t.run_id AND l.step >= t.steps_to_target
	     ORDER BY step LIMIT 1) <= 1.0")" = 4
check "no torch worker outlives its run" eval '! torch_left'

if ! measured; then
	# (its [convergence] is fitted to the target 0.45, not this pass's 1.0:
	# the simulation does not reach it in 10 steps; what is checked is that
	# the comparison is made and stored, not its accuracy)
	echo "skipped (LBSIM_CHECK_MEASURED=no): the time-to-target validation; a short one runs instead"
	rc=0
	# shellcheck disable=SC2086
	"$LBSIM" validate "$sc" --policy static-proportional --repeat 1 $short -o "$TMP/v.db" > "$TMP/v.out" || rc=$?
	cat "$TMP/v.out"
	check "validate (short): ran to its comparison (exit 0 or 7, got $rc)" test $rc -eq 0 -o $rc -eq 7
	check "validate (short): prints the time to target" grep -q '^the measured ranking by time to target' "$TMP/v.out"
	check "validate (short): stores it, the measured run at its target (step 8 to 10)" \
		test "$(q "$TMP/v.db" "SELECT count(*) FROM validation_targets WHERE policy = 'static-proportional'
			AND measured_reached = 1 AND repeats = 1 AND measured_steps BETWEEN 8 AND 10
			AND simulated_steps IS NULL")" = 1
	finish
	exit 0
fi

# The validation: the profile measured here first, then the simulation
# (its [convergence] fitted to teacher_student.py at batches 768, 1536 and
# 6144, never the 3072 validated; an ensemble of 10 seeds, each
# iteration's compute drawn with the noise the profile's repetitions
# measured) and 3 testbed runs of each policy. The gate, per policy: the
# ensemble's mean steps to target within max(STEPS, 3 standard errors of
# the difference of the means, sqrt(sd_sim^2 / 10 + sd_meas^2 / 3)) of
# the measured mean; its mean time to target within max(TIME, 3 x the
# run-to-run sd, sqrt(sd_sim^2 + sd_meas^2)) plus how far the machine's
# own speed moved during the validation (its machine_drift: no model
# predicts a time closer than the machine holds still; a full make check
# once failed at -12.3% with the machine moving 8.5%, the other policies
# -8 to -17% alike) and how far its iterations' own spikes lifted their
# mean above their median (the measured runs' iteration times, the mean of
# mean / median - 1 over the policy's repeats: a throttled worker here now
# and then loses 10 to 50% of an iteration, cpu time and all, which the
# profile's noise, measured without a quota, does not hold; CI's machine
# and this one have put static, which re-plans nothing, 13 to 17% above
# its simulation that way with the probes moving under 3%); and every pair
# of policies whose measured times to target differ by more than TIME
# ordered alike. STEPS 5%: the fit's
# held-out error (0.6% at worst) plus the evaluation interval's
# interpolation; TIME 10%: the issue's goal.
STEPS=0.05 TIME=0.10
rc=0
"$LBSIM" validate "$sc" --calibrate "$TMP/prof.ini" --timeshare-refill --policy static-proportional,lbbsp-cpu,dbs \
	--repeat 3 -o "$TMP/v.db" > "$TMP/v.out" 2> "$TMP/v.err" || rc=$?
cat "$TMP/v.out"
check "validate: ran to its comparison (exit 0, got $rc)" test $rc -eq 0
# per policy: the measured mean and sd of steps and time; per seed: the
# simulated steps and time
q "$TMP/v.db" "SELECT 'm', policy, measured_reached, repeats, measured_steps, coalesce(measured_steps_sd, 0),
	measured_time_s, coalesce(measured_time_sd_s, 0) FROM validation_targets UNION ALL
	SELECT 's', policy, coalesce(simulated_steps, 0), coalesce(simulated_time_s, 0), 0, 0, 0, 0
	FROM validation_seeds" | tr '|' ' ' > "$TMP/t"
drift=$(q "$TMP/v.db" "SELECT coalesce(max(machine_drift), 0) FROM validations")
echo "the machine's speed moved $drift during the validation (its probes, fastest to slowest)"
# per policy and measured run: its iterations' mean and median time
q "$TMP/v.db" "WITH it AS (SELECT v.policy AS p, i.run_id AS r, i.end_s - i.start_s AS d FROM validations v
	JOIN iterations i ON ',' || v.measured_runs || ',' LIKE '%,' || i.run_id || ',%'),
	ranked AS (SELECT p, r, d, row_number() OVER (PARTITION BY r ORDER BY d) AS k,
	count(*) OVER (PARTITION BY r) AS n FROM it)
	SELECT 'i', p, r, avg(d), avg(CASE WHEN k IN ((n + 1) / 2, (n + 2) / 2) THEN d END) FROM ranked
	GROUP BY p, r" | tr '|' ' ' >> "$TMP/t"
awk -v S=$STEPS -v T=$TIME -v D="$drift" '
	function sdev(s1, s2, k,   v) { v = (s2 - s1 * s1 / k) / (k - 1); return v > 0 ? sqrt(v) : 0 }
	$1 == "s" { n[$2]++; if ($3 > 0) { k[$2]++; a1[$2] += $3; a2[$2] += $3 * $3; b1[$2] += $4; b2[$2] += $4 * $4 }
		    next }
	$1 == "i" { nr[$2]++; sp[$2] += $4 / $5 - 1; next }
	{ p[++np] = $2; got[$2] = $3; reps[$2] = $4; ms[$2] = $5; msd[$2] = $6; mt[$2] = $7; mtd[$2] = $8 }
	END {
		for (i = 1; i <= np; i++) {
			x = p[i]
			if (got[x] != reps[x] || n[x] != 10 || k[x] != n[x]) {
				printf "%s: %d of %d repeats and %d of %d simulated seeds reached the target\n", x, got[x],
					reps[x], k[x], n[x]; bad++; continue }
			ss[x] = a1[x] / k[x]; sds = sdev(a1[x], a2[x], k[x]); st[x] = b1[x] / k[x]; sdt = sdev(b1[x], b2[x], k[x])
			ts = S; c = 3 * sqrt(sds * sds / k[x] + msd[x] * msd[x] / reps[x]) / ms[x]; if (c > ts) ts = c
			spikes = nr[x] ? sp[x] / nr[x] : 0; if (spikes < 0) spikes = 0
			tt = T; c = 3 * sqrt(sdt * sdt + mtd[x] * mtd[x]) / mt[x]; if (c > tt) tt = c; tt += D + spikes
			es = ss[x] / ms[x] - 1; et = st[x] / mt[x] - 1
			printf "%s: steps sim %.1f +- %.1f, measured %.1f +- %.1f (%+.1f%%, tolerance %.1f%%); time sim %.3f +- %.3f s, measured %.3f +- %.3f s (%+.1f%%, tolerance %.1f%%, with the spikes of its iterations %.1f%%)\n",
				x, ss[x], sds, ms[x], msd[x], 100 * es, 100 * ts, st[x], sdt, mt[x], mtd[x], 100 * et, 100 * tt,
				100 * spikes
			if (nr[x] != reps[x]) { printf "%s: iterations of %d of its %d measured runs\n", x, nr[x], reps[x]; bad++ }
			if (es > ts || -es > ts || et > tt || -et > tt) bad++
		}
		for (i = 1; i <= np; i++) for (j = i + 1; j <= np; j++) {
			x = p[i]; y = p[j]
			if (mt[x] > (1 + T) * mt[y] && !(st[x] > st[y]) || mt[y] > (1 + T) * mt[x] && !(st[y] > st[x])) {
				printf "misranked: %s and %s\n", x, y; bad++ }
		}
		exit bad != 0 || np != 4
	}' "$TMP/t" > "$TMP/gate"; rc=$?
cat "$TMP/gate"
check "validate: steps and time to target within their tolerances, the ranking reproduced" test $rc -eq 0
check "validate: 3 measured runs of each of 4 policies, each with its losses" \
	test "$(q "$TMP/v.db" "SELECT count(DISTINCT run_id) FROM run_losses")" = 12
finish
