#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Time to target and backup workers (doc/model.md, "Synchronisation" and
# "Time to target"), against hand calculations: the gradient-noise-scale
# model's S(B) = S_min (1 + B_noise / B) steps at a constant batch, and the
# timing of scenarios/sync/backup-workers.ini worked out in its header.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
S=$top_srcdir/scenarios/sync/backup-workers.ini
t() { q "$1" "SELECT $2 FROM run_targets JOIN runs USING (run_id) WHERE runs.policy = '$3'"; }
near() { awk -v a="$1" -v b="$2" -v e="$3" 'BEGIN { exit !(a - b <= e && b - a <= e) }'; }

# BSP, B = 64, B_noise = 64, S_min = 100: 200 steps; each 16 x 1 ms / 0.5
# (the slow worker) + 256 B x 4 / 10 Gbit/s x 2 (the server's push and pull: 25.6 us).


"$LBSIM" "$S" --policy static-proportional -q -o "$TMP/a.db" 2> "$TMP/err"; rc=$?
check "BSP: runs (exit $rc)" test $rc -eq 0
check "BSP static: the target at step 100 (1 + 64/64) = 200" test "$(t "$TMP/a.db" steps_to_target static)" = 200
check "... at 200 x 32.0256 ms = 6.40512 s" near "$(t "$TMP/a.db" time_to_target_s static)" 6.40512 1e-9
check "... stop_at_target: the run ends there (200 iterations)" \
	test "$(q "$TMP/a.db" "SELECT iterations FROM runs WHERE policy = 'static'")" = 200
check "... its time to target is its last step's end" \
	test "$(q "$TMP/a.db" "SELECT abs(t.time_to_target_s - max(i.end_s)) < 1e-12 FROM run_targets t JOIN iterations i USING (run_id)
		JOIN runs r USING (run_id) WHERE r.policy = 'static'")" = 1
check "static-proportional: 200 steps too (same batch), in 32.0256 + 199 x 19.0256 ms = 3.81812 s" \
	near "$(t "$TMP/a.db" time_to_target_s static-proportional)" 3.81812 1e-9
check "... no sample dropped under BSP" test "$(q "$TMP/a.db" "SELECT sum(dropped_samples) FROM run_targets")" = 0

# One backup worker: the slow worker's 16 samples dropped every step, 48
# counting: 100 (1 + 64/48) = 233.3, so 234 steps of 16 ms + 25.6 us.
"$LBSIM" "$S" --set sync.mode=backup -q -o "$TMP/b.db" 2> "$TMP/err"; rc=$?
check "backup: runs (exit $rc)" test $rc -eq 0
check "backup: the target at step 234" test "$(t "$TMP/b.db" steps_to_target static)" = 234
check "... at 234 x 16.0256 ms = 3.7499904 s" near "$(t "$TMP/b.db" time_to_target_s static)" 3.7499904 1e-9
check "... 234 x 48 samples counted, 234 x 16 dropped" \
	test "$(t "$TMP/b.db" "samples_to_target || ' ' || dropped_samples" static)" = "11232 3744"
check "... every step's global batch is the 48 counted" \
	test "$(q "$TMP/b.db" "SELECT min(global_batch_samples) || ' ' || max(global_batch_samples) FROM iterations")" = "48 48"
check "... progress 234 x 48 / (100 x 112) = 1.002857" near "$(t "$TMP/b.db" progress static)" 1.0028571428571 1e-9

# S(B) over the global batch, without a stop: B = 32 needs 100 x 3 = 300
# steps, B = 128 100 x 1.5 = 150 (the run's progress after 1000 steps:
# 1000 / 300 and 1000 / 150).
for b in 32:300 128:150; do
	"$LBSIM" "$S" --set run.global_batch=${b%:*} --set convergence.stop_at_target=no -q -o "$TMP/g${b%:*}.db"
	check "B = ${b%:*}: the target at step ${b#*:}" test "$(t "$TMP/g${b%:*}.db" steps_to_target static)" = "${b#*:}"
	check "... progress after 1000 steps = 1000 / ${b#*:}" \
		near "$(t "$TMP/g${b%:*}.db" progress static)" "$(awk -v s="${b#*:}" 'BEGIN { printf "%.15g", 1000 / s }')" 1e-9
done
# Not reached: said, NULL in the table.
"$LBSIM" "$S" --set run.iterations=50 --set convergence.stop_at_target=no -o "$TMP/n.db" > "$TMP/n.out"
check "not reached in 50 steps: NULL, and the summary says how far (25.0%)" \
	sh -c "[ -z '$(t "$TMP/n.db" steps_to_target static)' ] && grep -q 'not reached in 50 steps (25.0% of the way)' '$TMP/n.out'"

# Refused before anything runs (exit 3), naming the key.
refuse() { # WHAT WORDS ARGS...
	local what=$1 words=$2 rc=0
	shift 2
	"$LBSIM" "$S" "$@" -q -o "$TMP/r.db" 2> "$TMP/err" || rc=$?
	check "refused: $what (exit 3, got $rc), naming the key" sh -c "[ $rc -eq 3 ] && grep -q '$words' '$TMP/err' && [ ! -e '$TMP/r.db' ]"
}
refuse "backup workers on a ring" "sync.mode: backup workers need a parameter server" --set sync.mode=backup \
	--set network.topology=ring
refuse "as many backup workers as workers" "sync.backup_workers: 4 of 4 workers" --set sync.mode=backup \
	--set sync.backup_workers=4
refuse "backup workers with work stealing" "sync.mode: backup workers drop whole shares" --set sync.mode=backup \
	--policy work-stealing --no-baseline
refuse "a negative noise scale" "convergence.noise_scale" --set convergence.noise_scale=-1

# calibrate --convergence: the fit recovers the parameters that made the
# curves. Loss curves that reach 1.0 exactly at S(B) = 100 (1 + 64 / B)
# steps (loss = 2 - step / S(B)), two seeds per batch, one of them 10%
# earlier and one 10% later: their mean is S(B), the fit exact, and every
# held-out prediction exact.
awk 'BEGIN { print "seed,batch,step,loss,time"
	split("16 32 64 128 256", B, " ")
	for (i = 1; i <= 5; i++) for (sd = 1; sd <= 2; sd++) {
		S = 100 * (1 + 64 / B[i]) * (sd == 1 ? 0.9 : 1.1)
		for (t = 1; t <= 2 * S; t++) printf "%d,%d,%d,%.12f,%d\n", sd, B[i], t, 2 - t / S, t }
}' > "$TMP/loss.csv"
"$LBSIM" calibrate --convergence "$TMP/loss.csv" --target 1.0 -o "$TMP/conv.ini" > "$TMP/conv.out"; rc=$?
check "calibrate --convergence: exit 0 (got $rc)" test $rc -eq 0
check "... S(16) = 500: the mean of the two seeds' 450 and 550" grep -q '^16  *2  *500.0 (450.0 to 550.0)$' "$TMP/conv.out"
check "... recovers S_min = 100 and B_noise = 64" \
	sh -c "grep -qx 'noise_scale = 64' '$TMP/conv.ini' && grep -qx 'min_steps = 100' '$TMP/conv.ini'"
check "... every held-out batch predicted exactly" grep -q 'mean |error| 0.0%, worst 0.0%$' "$TMP/conv.out"
check "... the section it writes runs" sh -c "cat '$S' | sed '/^\[convergence\]/,\$d' > '$TMP/with.ini' &&
	cat '$TMP/conv.ini' >> '$TMP/with.ini' && '$LBSIM' '$TMP/with.ini' -q -o '$TMP/with.db'"
# Refused, naming the file and line.
cbad() { # WHAT WORDS CONTENT
	printf '%b' "$3" > "$TMP/bad.csv"
	local rc=0
	"$LBSIM" calibrate --convergence "$TMP/bad.csv" --target 1 -o "$TMP/bad.ini" > /dev/null 2> "$TMP/err" || rc=$?
	check "calibrate --convergence refuses $1 (exit 3, got $rc): $(head -c 120 "$TMP/err")" \
		sh -c "[ $rc -eq 3 ] && grep -q '$2' '$TMP/err' && [ ! -e '$TMP/bad.ini' ]"
}
cbad "a header without loss" "bad.csv:1: the header must name" 'batch,step\n1,1\n'
cbad "steps that go back" "bad.csv:3: step: 1 after step 2 (line 2) of batch 8" 'batch,step,loss\n8,2,1\n8,1,0.5\n'
cbad "a loss that is not a number" "bad.csv:2: loss: .nan. is not a number" 'batch,step,loss\n8,1,nan\n'
cbad "a hexadecimal batch" "bad.csv:2: batch: .0x10. is not a number" 'batch,step,loss\n0x10,1,1\n'
cbad "a fractional batch" "bad.csv:2: batch: .1.5. must be a whole number" 'batch,step,loss\n1.5,1,1\n'
cbad "one batch size" "1 batch sizes reach the target: the fit needs 2" 'batch,step,loss\n8,1,2\n8,2,0.5\n'
cbad "steps that grow with the batch" "do not fall with the batch" 'batch,step,loss\n8,1,2\n8,2,0.5\n16,1,2\n16,9,0.5\n'
cbad "a staleness that is not whole" "bad.csv:2: staleness: .1.5. must be a whole number" \
	'batch,step,loss,staleness\n8,1,1,1.5\n'
cbad "stale curves at the learning rate kept" "bad.csv:2: kept_lr_staleness: 2: a curve of stale gradients" \
	'batch,step,loss,kept_lr_staleness\n8,1,1,2\n'

# The staleness exponent: the fresh curves above and, at batches 32 and 64,
# curves trained with gradients tau = 2, 3 and 4 updates stale that reach
# 1.0 at S(B) tau^0.7 steps (the model with beta = 0.7): the fit recovers
# 0.7, and predicts each of the six from the other five exactly.
awk 'BEGIN { print "seed,batch,step,loss,staleness"
	split("32 64", B, " ")
	for (i = 1; i <= 2; i++) for (tau = 2; tau <= 4; tau++) {
		S = 100 * (1 + 64 / B[i]) * tau ^ 0.7
		for (t = 1; t <= 2 * S; t++) printf "1,%d,%d,%.12f,%d\n", B[i], t, 2 - t / S, tau }
}' > "$TMP/stale.csv"
tail -n +2 "$TMP/loss.csv" | awk -F, '{ print $1 "," $2 "," $3 "," $4 ",0" }' >> "$TMP/stale.csv"
"$LBSIM" calibrate --convergence "$TMP/stale.csv" --target 1.0 -o "$TMP/stale.ini" > "$TMP/stale.out"; rc=$?
check "calibrate --convergence with stale curves: exit 0 (got $rc)" test $rc -eq 0
check "... the fresh fit unchanged (S_min 100, B_noise 64)" \
	sh -c "grep -qx 'noise_scale = 64' '$TMP/stale.ini' && grep -qx 'min_steps = 100' '$TMP/stale.ini'"
check "... recovers staleness_exponent = 0.7, with the inverse penalty" \
	sh -c "grep -qx 'staleness_exponent = 0.7' '$TMP/stale.ini' && grep -qx 'staleness_penalty = inverse' '$TMP/stale.ini'"
check "... six (batch, staleness) points, each predicted exactly by the other five" \
	sh -c "[ \$(grep -c '^[234]  ' '$TMP/stale.out') = 6 ] && grep -q 'held-out mean |error| 0.0%, worst 0.0%' '$TMP/stale.out'"
# the exponent runs: under asp the same updates count (1/tau)^0.7, more
# progress a stale update than 1/tau: no more steps to the target
m=$top_srcdir/scenarios/sync/modes.ini
"$LBSIM" "$m" --set sync.mode=asp --no-baseline -q -o "$TMP/e1.db" &&
	"$LBSIM" "$m" --set sync.mode=asp --set convergence.staleness_exponent=0.7 --no-baseline -q -o "$TMP/e7.db"; rc=$?
check "asp with staleness_exponent 0.7: runs (exit $rc), no more updates to the target than with 1" \
	test "$(q "$TMP/e7.db" "SELECT steps_to_target FROM run_targets")" -le "$(q "$TMP/e1.db" "SELECT steps_to_target FROM run_targets")"

rc=0
"$LBSIM" calibrate --convergence "$TMP/loss.csv" -o "$TMP/bad.ini" 2> "$TMP/err" || rc=$?
check "calibrate --convergence without --target: exit 2" sh -c "[ $rc -eq 2 ] && grep -q 'needs --target' '$TMP/err'"

finish
