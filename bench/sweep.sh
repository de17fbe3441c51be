#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Sweep throughput: runs per second of `lbsim sweep` over POINTS runs of the
# default scenario (one point per seed), at -j 1 and -j 2, for short runs
# (50 iterations: the cost of running a point dominates) and longer ones
# (ITERATIONS). For comparison: the same runs as a plain loop of `lbsim run`
# into one database (no GNU parallel, no merge), and GNU parallel alone
# running POINTS empty jobs (its own cost per job). Each figure is the best
# of REPEATS (default 3); wall time includes checking the sweep, GNU
# parallel and the merge.
#
# Then batching, on the 54 points of scenarios/sweeps/cluster-size.ini (3
# to 96 GPUs, three policies, three seeds, 500 iterations each: runs of a
# few milliseconds): `lbsim sweep -j 2` with its default points per job,
# the same with one point per job (--points-per-job 1, as lbsim did before
# jobs ran batches), and a plain sequential loop of `lbsim run` over the
# same points into one database, measured in turn in each of REPEATS
# rounds, so that the ratios compare runs under the same load. Wall and
# CPU time (user + system, the children's included) of the best round of
# each; the target is a batched sweep at least 1.8 times as fast as the
# loop.
#
#   bench/sweep.sh [POINTS [ITERATIONS]]      (LBSIM: the binary, default ./lbsim)
set -euo pipefail
points=${1:-48}
long=${2:-50000}
repeats=${REPEATS:-3}
lbsim=$(command -v "${LBSIM:-./lbsim}")
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lbsim-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
# best COMMAND...: the least wall time of REPEATS runs, in seconds.
best() {
	for _ in $(seq "$repeats"); do
		local t0
		t0=$(now)
		"$@"
		echo "$t0 $(now)"
	done | awk '{ d = $2 - $1; if (NR == 1 || d < b) b = d } END { printf "%.3f", b }'
}
report() { awk -v how="$1" -v s="$2" -v n="$points" 'BEGIN { printf "%-42s %9.3f %9.1f\n", how, s, n / s }'; }

loop() {
	rm -f "$tmp/loop.db"
	for s in $(seq "$points"); do
		"$lbsim" "$top/scenarios/default.ini" -q --no-baseline --seed "$s" \
			--set run.iterations="$1" -o "$tmp/loop.db"
	done
}
sweep() {
	rm -rf "$tmp/s.db" "$tmp/s.db.sweep"
	"$lbsim" sweep "$tmp/$1.ini" -q -j "$2" -o "$tmp/s.db"
	[ "$(sqlite3 "$tmp/s.db" 'SELECT count(*) FROM runs')" = "$points" ] ||
		{ echo "bench/sweep.sh: the sweep has the wrong number of runs" >&2; exit 1; }
}
empty_jobs() {
	for _ in $(seq "$points"); do echo true; done | PARALLEL_SHELL=/bin/sh parallel --will-cite -j 2
}

echo "Sweep throughput: $points runs of scenarios/default.ini (12 workers), best of $repeats,"
echo "on $(nproc) CPU(s), $(uname -m); $(parallel --version | head -1)"
printf '%-42s %9s %9s\n' "" "wall_s" "runs/s"
report "GNU parallel -j 2, $points empty jobs" "$(best empty_jobs)"
for it in 50 "$long"; do
	printf '[sweep]\nscenario = %s\n[vary]\nrun.iterations = %s\nseeds = 1..%s\n' \
		"$top/scenarios/default.ini" "$it" "$points" > "$tmp/i$it.ini"
	report "$it iterations: lbsim run in a loop" "$(best loop "$it")"
	for j in 1 2; do
		report "$it iterations: lbsim sweep -j $j" "$(best sweep "i$it" "$j")"
	done
done

# ---- batching: 54 small points -------------------------------------------
cs="$top/scenarios/sweeps/cluster-size.ini"
"$lbsim" sweep "$cs" --list > "$tmp/cs.list"
n_cs=$(($(wc -l < "$tmp/cs.list") - 1))
# The loop: one `lbsim run` a point, the point's keys as --set, --policy
# and --seed, as a user would write it.
cs_loop() {
	rm -f "$tmp/cs-loop.db"
	local IFS=$'\t' keys row args i
	read -r -a keys < "$tmp/cs.list"
	tail -n +2 "$tmp/cs.list" | while read -r -a row; do
		args=()
		for ((i = 1; i < ${#keys[@]}; i++)); do
			case ${keys[$i]} in
			policy) args+=(--policy "${row[$i]}") ;;
			seed) args+=(--seed "${row[$i]}") ;;
			*) args+=(--set "${keys[$i]}=${row[$i]}") ;;
			esac
		done
		"$lbsim" run "$top/scenarios/default.ini" -q --no-baseline "${args[@]}" -o "$tmp/cs-loop.db"
	done
}
cs_sweep() {
	rm -rf "$tmp/cs.db" "$tmp/cs.db.sweep"
	"$lbsim" sweep "$cs" -q -j 2 "$@" -o "$tmp/cs.db"
}
# timed NAME COMMAND...: appends "NAME wall cpu" to $tmp/times.
timed() {
	local name=$1 t
	shift
	t=$( { TIMEFORMAT='%R %U %S'; time "$@" > /dev/null; } 2>&1 | tail -1)
	echo "$name $t" >> "$tmp/times"
}
: > "$tmp/times"
for _ in $(seq "$repeats"); do
	timed loop cs_loop
	timed batched cs_sweep
	timed unbatched cs_sweep --points-per-job 1
done
[ "$(sqlite3 "$tmp/cs-loop.db" 'SELECT count(*) FROM runs')" = "$n_cs" ] &&
	[ "$(sqlite3 "$tmp/cs.db" 'SELECT count(*) FROM runs')" = "$n_cs" ] ||
	{ echo "bench/sweep.sh: a batching run has the wrong number of runs" >&2; exit 1; }
echo
echo "Batching: the $n_cs points of scenarios/sweeps/cluster-size.ini, best of $repeats rounds"
awk -v n="$n_cs" '
	{ cpu = $3 + $4; if (!($1 in w) || $2 < w[$1]) { w[$1] = $2; c[$1] = cpu } }
	END {
		printf "%-42s %9s %9s %9s %9s\n", "", "wall_s", "cpu_s", "runs/s", "x loop"
		split("loop batched unbatched", order, " ")
		label["loop"] = "lbsim run in a sequential loop"
		label["batched"] = "lbsim sweep -j 2 (points per job: auto)"
		label["unbatched"] = "lbsim sweep -j 2 --points-per-job 1"
		for (i = 1; i <= 3; i++) {
			k = order[i]
			printf "%-42s %9.3f %9.3f %9.1f %9.2f\n", label[k], w[k], c[k], n / w[k], w["loop"] / w[k]
		}
		printf "batched sweep: %.2f times as fast as the loop (target 1.8: %s), %.2f times as fast as unbatched\n",
			w["loop"] / w["batched"], (w["loop"] / w["batched"] >= 1.8 ? "met" : "NOT met"),
			w["unbatched"] / w["batched"]
	}' "$tmp/times"
