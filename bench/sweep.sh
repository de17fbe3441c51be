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
