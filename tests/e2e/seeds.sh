#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Answers with their uncertainty (lbsim(1), --seeds, --until-ci, --exceed):
# a run over seeds is each seed's own run, the summary's means and 95%
# intervals are those computed by hand from the database's rows (awk,
# Student's t from tables), the views' intervals agree with the summary's
# (a second method: SQL and a t table there, GSL here), --until-ci stops at
# the first seed count whose intervals are narrow enough, and P(exceed) is
# the share of runs over the time, with its Wilson interval.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3

S=$top_srcdir/scenarios/predict/cpu-bursty.ini # CPU workers whose speeds move: seeds differ
cd "$TMP" || exit 1

"$LBSIM" "$S" --set run.epochs=1 --policy lbbsp-cpu --seeds 5 --exceed '34 s' -o s.db --format csv > s.csv; rc=$?
check "--seeds 5: runs (exit $rc)" test $rc -eq 0
check "--seeds 5: 10 runs, seeds 1 to 5 for each policy" \
	test "$(q s.db "SELECT count(*) || ' ' || group_concat(DISTINCT seed) FROM (SELECT * FROM runs ORDER BY seed)")" = "10 1,2,3,4,5"
"$LBSIM" "$S" --set run.epochs=1 --policy lbbsp-cpu --seed 3 -q -o three.db
check "... seed 3's runs are those of a run with --seed 3" \
	test "$(q s.db "SELECT group_concat(sim_time_s) FROM (SELECT sim_time_s FROM runs WHERE seed = 3 ORDER BY run_id)")" = \
	"$(q three.db "SELECT group_concat(sim_time_s) FROM (SELECT sim_time_s FROM runs ORDER BY run_id)")"

# By hand: mean, sample sd, t(0.975, 4) = 2.7764 (tables) x sd / sqrt(5).
hand() { # POLICY: "mean half" of its sim_time_s
	q s.db "SELECT sim_time_s FROM runs WHERE policy = '$1'" | awk '{ x[NR] = $1; s += $1 }
		END { m = s / NR; for (i = 1; i <= NR; i++) v += (x[i] - m) ^ 2; sd = sqrt(v / (NR - 1))
		      printf "%.6f %.6f", m, 2.7764 * sd / sqrt(NR) }'
}
col() { # POLICY COLUMN: from the summary's CSV
	awk -F, -v p="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next } $1 == p { printf "%.6f", $k[c] }' s.csv
}
for p in static lbbsp-cpu; do
	read -r m h <<< "$(hand $p)"
	check "$p: the summary's mean simulated time is the runs' ($m)" \
		awk -v a="$(col $p sim_time_s)" -v b="$m" 'BEGIN { exit !(a - b < 1e-6 && b - a < 1e-6) }'
	check "$p: its 95% interval's half-width is t(0.975, 4) sd / sqrt(5) ($h, within the table's 4 digits)" \
		awk -v a="$(col $p sim_time_s_ci95)" -v b="$h" 'BEGIN { exit !(a / b - 1 < 1e-4 && 1 - a / b < 1e-4) }'
done
# The speedup's interval: the summary's (GSL's t) and speedup_by_point's (SQL, its t table) agree.
check "the speedup's 95% interval: the summary's is the view's" \
	awk -v a="$(col lbbsp-cpu speedup_ci95_low)" -v b="$(q s.db "SELECT ci95_low FROM speedup_by_point WHERE policy = 'lbbsp-cpu'")" \
		-v c="$(col lbbsp-cpu speedup_ci95_high)" -v d="$(q s.db "SELECT ci95_high FROM speedup_by_point WHERE policy = 'lbbsp-cpu'")" \
		'BEGIN { exit !(a - b < 1e-4 && b - a < 1e-4 && c - d < 1e-4 && d - c < 1e-4) }'
check "... and it holds the mean of the paired speedups" \
	test "$(q s.db "SELECT ci95_low < mean_speedup AND mean_speedup < ci95_high FROM speedup_by_point WHERE policy = 'lbbsp-cpu'")" = 1
check "time_by_point: 5 runs of each, an interval around the mean" \
	test "$(q s.db "SELECT count(*) FROM time_by_point WHERE runs = 5 AND ci95_low_s < mean_sim_time_s AND mean_sim_time_s < ci95_high_s")" = 2
# P(sim_time_s > 34 s): the share of the runs over it.
for p in static lbbsp-cpu; do
	k=$(q s.db "SELECT count(*) FROM runs WHERE policy = '$p' AND sim_time_s > 34")
	check "$p: P(sim_time_s > 34 s) = $k/5" awk -v a="$(col $p p_exceed)" -v k="$k" 'BEGIN { exit !(a == k / 5) }'
	check "$p: its Wilson interval holds it" awk -v a="$(col $p p_exceed)" -v l="$(col $p p_exceed_ci95_low)" \
		-v h="$(col $p p_exceed_ci95_high)" 'BEGIN { exit !(l <= a && a <= h && l >= 0 && h <= 1) }'
done

# --until-ci: seeds are added until every policy's interval of its
# simulated time is within 4% of its mean: the count it stopped at meets
# that (recomputed here with t from tables, to 4 digits), the one before
# does not.
"$LBSIM" "$S" --set run.epochs=1 --policy lbbsp-cpu --until-ci 4% --seeds 40 -o u.db > u.out; rc=$?
check "--until-ci 4%: runs (exit $rc)" test $rc -eq 0
check "... says it converged" grep -q '^converged: every policy' u.out
n=$(q u.db "SELECT count(*) FROM runs WHERE policy = 'static'")
within() { # N: whether every policy's interval over the first N seeds is within 4%
	local ok=1 p
	for p in static lbbsp-cpu; do
		q u.db "SELECT sim_time_s FROM runs WHERE policy = '$p' AND seed <= $1" | awk -v n="$1" '{ x[NR] = $1; s += $1 }
			END { m = s / NR; for (i = 1; i <= NR; i++) v += (x[i] - m) ^ 2; sd = sqrt(v / (NR - 1))
			      split("12.7062 4.3027 3.1824 2.7764 2.5706 2.4469 2.3646 2.3060 2.2622 2.2281 2.2010 2.1788 " \
			            "2.1604 2.1448 2.1314 2.1199 2.1098 2.1009 2.0930 2.0860 2.0796 2.0739 2.0687 2.0639 " \
			            "2.0595 2.0555 2.0518 2.0484 2.0452 2.0423", T, " ")
			      t = (n - 1 <= 30) ? T[n - 1] : 1.96 + 2.4 / (n - 1)
			      exit !(t * sd / sqrt(NR) <= 0.04 * m) }' || ok=0
	done
	[ $ok = 1 ]
}
check "... stopped at $n seeds (3 to 40), whose intervals are within 4%" sh -c "[ $n -ge 3 ] && [ $n -le 40 ]"
check "... within 4% at $n seeds (recomputed)" within "$n"
if [ "$n" -gt 3 ]; then
	check "... not yet at $((n - 1))" eval '! within $((n - 1))'
fi
"$LBSIM" "$S" --set run.epochs=1 --policy lbbsp-cpu --until-ci 0.1% --seeds 4 -q -o cap.db 2> cap.err; rc=$?
check "--until-ci with a cap it cannot meet: stops at the cap, exit 0, says so" \
	sh -c "[ $rc -eq 0 ] && [ $(q cap.db 'SELECT count(*) FROM runs') -eq 8 ] && grep -q 'still wider' cap.err"

# Refused before anything runs (exit 2), nothing written.
for bad in "--seeds 0" "--seeds x" "--until-ci 5" "--until-ci 100%" "--exceed 5" "--exceed 5s" "--until-ci 5% --seeds 2"; do
	rc=0
	case $bad in "--exceed 5s") args="--seeds 3 --exceed 0s" ;; "--exceed 5") args="--seeds 3 --exceed 5" ;; *) args=$bad ;; esac
	"$LBSIM" "$S" --set run.epochs=1 $args -q -o bad.db 2> /dev/null || rc=$?
	check "refused: $args (exit 2, got $rc), nothing written" sh -c "[ $rc -eq 2 ] && [ ! -e bad.db ]"
done
rc=0
"$LBSIM" "$S" --set run.epochs=1 --exceed '5 s' -q -o bad.db 2> err || rc=$?
check "refused: --exceed without seeds (exit 2), saying why" sh -c "[ $rc -eq 2 ] && grep -q 'goes with --seeds' err"

# The same run appended twice is one run to the views that pool seeds
# (run_unique): lbsim is deterministic, so a second copy adds nothing; a
# second seed does.
"$LBSIM" "$S" --set run.epochs=1 --policy lbbsp-cpu -q -o twice.db
"$LBSIM" "$S" --set run.epochs=1 --policy lbbsp-cpu -q -o twice.db
check "the same runs appended twice: 4 runs, each counted once (runs = 1)" \
	test "$(q twice.db "SELECT count(*) FROM runs") $(q twice.db "SELECT group_concat(runs) FROM speedup_by_point")" = "4 1,1"
"$LBSIM" "$S" --set run.epochs=1 --policy lbbsp-cpu --seed 2 -q -o twice.db
check "... a second seed counts (runs = 2)" \
	test "$(q twice.db "SELECT group_concat(runs) FROM speedup_by_point") $(q twice.db "SELECT group_concat(runs) FROM time_by_point")" = "2,2 2,2"

finish
