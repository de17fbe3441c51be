#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Re-sizing costs end to end (doc/policies.md, "Re-sizing costs";
# scenarios/policies/resize-cost.ini): workers that pay 40% for a changed
# batch, and the policies' options that know it.
#  - The cost is charged: lbbsp-cpu, which re-sizes every worker at every
#    barrier, is slower than the same scenario without the cost by at
#    least 0.4 x its compute (each changed iteration costs 1.4x), and
#    static-proportional, which re-sizes once, is not (under 1%).
#  - The ranking flips as a real framework showed: lbbsp-cpu falls behind
#    static-proportional; with its own resize_cost option it is level again.
#  - lbbsp-gpu's moves fix lasting imbalances: with a horizon of one
#    iteration it never moves (static's time), with 4 it does.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
sc=$top_srcdir/scenarios/policies/resize-cost.ini
mean() { # DB POLICY
	q "$1" "SELECT mean_iteration_s FROM runs WHERE policy = '$2' ORDER BY run_id DESC LIMIT 1"
}
run() { # DB ARGS...
	local db=$1
	shift
	"$LBSIM" "$sc" -q -o "$db" "$@" || bad "lbsim $sc $*"
}
run "$TMP/cost.db" --policy static-proportional,lbbsp-cpu,lbbsp-gpu
run "$TMP/free.db" --policy static-proportional,lbbsp-cpu $(for g in q20 q30 q50; do echo --set workers.$g.resize_cost=0; done)
run "$TMP/cpu.db" --policy lbbsp-cpu --set policy.lbbsp-cpu.resize_cost=0.4
run "$TMP/gpu1.db" --policy lbbsp-gpu --set policy.lbbsp-gpu.resize_cost=0.4
run "$TMP/gpu4.db" --policy lbbsp-gpu --set policy.lbbsp-gpu.resize_cost=0.4 --set policy.lbbsp-gpu.resize_horizon=4
sp=$(mean "$TMP/cost.db" static-proportional) sp0=$(mean "$TMP/free.db" static-proportional)
lc=$(mean "$TMP/cost.db" lbbsp-cpu) lc0=$(mean "$TMP/free.db" lbbsp-cpu) lch=$(mean "$TMP/cpu.db" lbbsp-cpu)
st=$(mean "$TMP/cost.db" static) g1=$(mean "$TMP/gpu1.db" lbbsp-gpu) g4=$(mean "$TMP/gpu4.db" lbbsp-gpu)
echo "static $st, static-proportional $sp ($sp0 free), lbbsp-cpu $lc ($lc0 free, $lch with its option), lbbsp-gpu H=1 $g1, H=4 $g4"
check "the cost is charged: lbbsp-cpu at least 1.3x its time without it" awk -v a="$lc" -v b="$lc0" 'BEGIN { exit !(a > 1.3 * b) }'
check "static-proportional re-sizes once: within 1% of its time without the cost" \
	awk -v a="$sp" -v b="$sp0" 'BEGIN { exit !(a < 1.01 * b) }'
check "the ranking flips: lbbsp-cpu over 20% behind static-proportional" awk -v a="$lc" -v b="$sp" 'BEGIN { exit !(a > 1.2 * b) }'
check "lbbsp-cpu knowing the cost: within 1% of static-proportional" \
	awk -v a="$lch" -v b="$sp" 'BEGIN { exit !(a < 1.01 * b && a > 0.99 * b) }'
check "lbbsp-gpu, horizon 1: never moves (static's time)" test "$g1" = "$st"
check "lbbsp-gpu, horizon 4: moves, within 5% of static-proportional" awk -v a="$g4" -v b="$sp" 'BEGIN { exit !(a < 1.05 * b) }'
finish
