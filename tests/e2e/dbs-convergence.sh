#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# DBS's convergence claim on real training (testbed/dbs_convergence.py,
# doc/model.md "Batch sizes and convergence"): PyTorch trains the
# teacher-student task with the per-worker batches of lbsim's static and dbs
# runs of scenarios/reproduce/dbs.ini. What it checks:
#  - aggregated by sample, the workers' own gradients are one process's on
#    the union of their samples (to 1e-6); a plain mean over workers is not;
#  - the splits are lbsim's: equal for static, 85/85/85/256 from DBS's
#    second epoch;
#  - with equal splits the two aggregations are the same run, step for step;
#  - DBS at an equal global batch reaches the target within 10% of static's
#    steps, seed by seed (the paper's claim; the same data, student and
#    shuffles for both: common random numbers).
# Needs python3 with PyTorch; skips (77) without it, fails under
# LBSIM_REQUIRE_TESTBED=yes.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
py=${LBSIM_PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import torch' 2> /dev/null; then
	missing "$py cannot import torch (Debian: apt-get install python3-torch); DBS convergence is not tested"
fi
script=$top_srcdir/testbed/dbs_convergence.py

"$py" "$script" --check > "$TMP/check"
check "aggregation: by sample = one process on the union; the plain mean differs" test $? -eq 0
cat "$TMP/check"

"$LBSIM" "$top_srcdir/scenarios/reproduce/dbs.ini" --policy static,dbs -q -o "$TMP/dbs.db" --set run.epochs=6
check "lbsim: static and dbs runs" test "$(q "$TMP/dbs.db" 'SELECT count(*) FROM runs')" = 2
seeds=1,2
measured || seeds=1
"$py" "$script" "$TMP/dbs.db" --seeds $seeds --target 0.38 > "$TMP/out"
check "dbs_convergence: exit 0" test $? -eq 0
cat "$TMP/out"
check "static: 128 a worker" grep -q '^static: batches \[128, 128, 128, 128\] from iteration 0$' "$TMP/out"
check "dbs: 85/85/85/256 from its second epoch (iteration 97)" grep -q '^dbs: .*\[85, 85, 85, 256\] from 97' "$TMP/out"
rows=$(grep -cE '^(static|dbs),(weighted|mean),[0-9]+,[0-9]+,[0-9.]+$' "$TMP/out")
n=$(echo "$seeds" | tr ',' '\n' | wc -l)
check "every policy, aggregation and seed reached the target ($rows rows)" test "$rows" = $((4 * n))
check "static: by sample and by worker are the same run" test \
	"$(grep '^static,weighted,' "$TMP/out" | cut -d, -f3-)" = "$(grep '^static,mean,' "$TMP/out" | cut -d, -f3-)"
for s in $(echo "$seeds" | tr ',' ' '); do
	st=$(awk -F, -v s="$s" '$1 == "static" && $2 == "weighted" && $3 == s { print $4 }' "$TMP/out")
	db=$(awk -F, -v s="$s" '$1 == "dbs" && $2 == "weighted" && $3 == s { print $4 }' "$TMP/out")
	check "seed $s: dbs $db steps within 10% of static's $st" awk -v a="$db" -v b="$st" 'BEGIN { exit !(b > 0 && a / b - 1 <= 0.1 && a / b - 1 >= -0.1) }'
done

"$py" "$script" "$TMP/dbs.db" --policies static,lbbsp-cpu > /dev/null 2> "$TMP/err"
check "a policy the database lacks: refused, naming what it has" grep -q "no run of policy 'lbbsp-cpu' (it has: static, dbs)" "$TMP/err"

echo "dbs-convergence: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
