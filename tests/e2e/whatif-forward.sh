#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lbsim whatif --forward: a traced job rebuilt as a forward hybrid plan and
# run under the hybrid policies (whatif/forward.h, doc/whatif.md, "Forward:
# real policies on the traced job").
# - A job lbsim simulated itself, traced with --ops-trace and rebuilt from
#   that trace, runs static, lbbsp and oracle to the same steps as the
#   scenario's own runs: the decomposition into slowness, stage cost and
#   data cost is exact when the trace was made by that model. To 1e-6, not
#   1e-9: the trace format holds durations as float32, 6e-8 relative each
#   (the gap measured: 3e-8).
# - On ByteDance's three traces, the ideal job's step is whatif's ideal
#   (within 1e-3: the forward graph runs gc and the layer-norm reduction
#   with the optimizer, and one p2p time for both directions), and the job
#   as traced is within 1% of the no-delay replay; each trace's cause is
#   met by the policy that targets it (resplit on ST, lbbsp on AR, pack on
#   SE), as the counterfactuals say.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
D="$top_srcdir/traces/data/bytedance-whatif"
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t * (b < 0 ? -b : b)) }'; }
above() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }

# a job of 2 replicas x 2 stages, one GPU (replica 1's stage 0) at half speed
cat > "$TMP/small.ini" <<'INI'
[run]
steps = 12
[hybrid]
dp = 2
pp = 2
micro_batches = 4
[model]
name = llama3-8b
sequence_length = 2048
recompute = full
[nodes.a]
count = 4
gpus_per_node = 1
gpu = h100-sxm
[intra_node]
bandwidth = 450 GB/s
[network]
bandwidth = 400 Gbit/s
latency = 5 us
[failslow.x]
start = 0 s
duration = 100000 s
gpus = 2
factor = 0.5
INI
"$LBSIM" "$TMP/small.ini" --ops-trace "$TMP/ops.csv" -o "$TMP/s.db" -q
for p in lbbsp oracle; do
	"$LBSIM" "$TMP/small.ini" --set hybrid_policy.name=$p -o "$TMP/s.db" -q
done
"$LBSIM" whatif "$TMP/ops.csv" --meta "$TMP/ops.csv.meta.yaml" --forward -o "$TMP/w.db" > "$TMP/out"
check "--forward on a simulated job's trace: exit 0 and a forward summary" test $? -eq 0 -a -n "$(grep '^forward lbbsp' "$TMP/out")"
id=1
for p in static lbbsp oracle; do
	sim=$(q "$TMP/s.db" "SELECT printf('%.17g', avg(step_s)) FROM hybrid_steps WHERE hybrid_id = $id")
	fwd=$(q "$TMP/w.db" "SELECT printf('%.17g', mean_step_s) FROM whatif_forward WHERE policy = '$p'")
	check "rebuilt from its trace, $p's mean step is the scenario's ($fwd vs $sim, 1e-6)" near "$fwd" "$sim" 1e-6
	id=$((id + 1))
done
check "the replica shares move once (to the slow replica's speed)" \
	test "$(q "$TMP/w.db" "SELECT changes FROM whatif_forward WHERE policy = 'lbbsp'")" = 1
check "static and ideal recover 0 and 1" test "$(q "$TMP/w.db" "SELECT group_concat(recovered) FROM whatif_forward WHERE policy IN ('static', 'ideal') ORDER BY policy")" = "1.0,0.0"

# an interleaved job (one replica, 4 stages of 2 chunks, stage 2 at half
# speed), read from its results database: only resplit applies (no
# replicas); it moves blocks of every chunk and recovers most of the gap
sed -e 's/^dp = 2$/dp = 1/' -e 's/^count = 4$/count = 4/' -e 's/^pp = 2$/pp = 4\nschedule = interleaved\nvirtual_stages = 2/' \
	-e 's/^micro_batches = 4$/micro_batches = 8/' -e '/^\[failslow.x\]/,$d' "$TMP/small.ini" > "$TMP/il.ini"
printf '[failslow.x]\nstart = 0 s\nduration = 100000 s\ngpus = 2\nfactor = 0.5\n' >> "$TMP/il.ini"
"$LBSIM" "$TMP/il.ini" -o "$TMP/il.db" -q
"$LBSIM" whatif "$TMP/il.db" --forward -o "$TMP/ilw.db" -q
check "an interleaved job's database: static, ideal and resplit" \
	test "$(q "$TMP/ilw.db" "SELECT group_concat(policy) FROM (SELECT policy FROM whatif_forward ORDER BY policy)")" = "ideal,resplit,static"
check "... resplit recovers most of the forward gap (> 50%), moving blocks" test "$(q "$TMP/ilw.db" \
	"SELECT recovered > 0.5 AND changes > 0 FROM whatif_forward WHERE policy = 'resplit'")" = 1

# ByteDance's traces
for n in ST AR SE; do
	"$LBSIM" whatif "$D/trace-$n.csv.gz" --meta "$D/meta-$n.yaml" --forward -o "$TMP/b.db" -q
done
check "three traces, 7 forward rows for each with two replicas or more" \
	test "$(q "$TMP/b.db" 'SELECT count(*) FROM whatif_forward')" = 21
fw() { q "$TMP/b.db" "SELECT printf('%.17g', $3) FROM whatif_forward WHERE whatif_id = $1 AND policy = '$2'"; }
mt() { q "$TMP/b.db" "SELECT printf('%.17g', value) FROM whatif_metrics WHERE whatif_id = $1 AND name = '$2'"; }
for id in 1 2 3; do
	check "trace $id: the ideal job's step is whatif's ideal (1e-3)" near "$(fw $id ideal mean_step_s)" "$(mt $id mean_t_ideal)" 1e-3
	check "trace $id: the job as traced is within 1% of the no-delay replay" near "$(fw $id static mean_step_s)" "$(mt $id mean_t_nodelay)" 0.01
done
check "ST (a long last stage): resplit recovers most of it (> 70%)" above "$(fw 1 resplit recovered)" 0.7
check "ST: the replicas are alike, lbbsp changes nothing" test "$(fw 1 lbbsp changes)" = 0
check "AR (one slow worker): lbbsp recovers > 80%" above "$(fw 2 lbbsp recovered)" 0.8
check "AR: packing does nothing (< 1%)" above 0.01 "$(fw 2 pack recovered)"
check "SE (sequence lengths): pack recovers > 50%" above "$(fw 3 pack recovered)" 0.5
check "SE: the counterfactual of pack is microbatch-balance-global" \
	test "$(q "$TMP/b.db" "SELECT counterfactual FROM whatif_forward WHERE whatif_id = 3 AND policy = 'pack'")" = microbatch-balance-global
check "blocks recorded" test "$(fw 1 resplit blocks)" = 8
# the bound of the replica shares is the forward oracle (the best split of
# each coming step, simulated), not the replay's counterfactual: lbbsp and
# dbs stay under it on every trace, while on AR they beat the replay's
# lbbsp and dbs (their micro-batches whole, the pipeline's fill and drain
# kept, doc/whatif.md)
for id in 1 2 3; do
	for p in lbbsp dbs; do
		check "trace $id: forward $p within the forward oracle" test "$(q "$TMP/b.db" "SELECT
			(SELECT recovered FROM whatif_forward WHERE whatif_id = $id AND policy = '$p') <=
			(SELECT recovered FROM whatif_forward WHERE whatif_id = $id AND policy = 'oracle') + 1e-12")" = 1
	done
done
check "AR: forward lbbsp above the replay's lbbsp counterfactual (not a bound)" above "$(fw 2 lbbsp recovered)" "$(fw 2 lbbsp counterfactual_recovered)"

# --delay: AR's decisions one and three traced steps late recover less
# (the slow worker is there from the first step: every step of lag costs)
"$LBSIM" whatif "$D/trace-AR.csv.gz" --meta "$D/meta-AR.yaml" --forward --delay 1 -o "$TMP/d1.db" -q
"$LBSIM" whatif "$D/trace-AR.csv.gz" --meta "$D/meta-AR.yaml" --forward --delay 3 -o "$TMP/d1.db" -q
dr() { q "$TMP/d1.db" "SELECT printf('%.17g', recovered) FROM whatif_forward WHERE whatif_id = $1 AND policy = 'lbbsp'"; }
check "--delay 1 and 3: lbbsp recovers less on AR than at once ($(fw 2 lbbsp recovered), $(dr 1), $(dr 2))" \
	sh -c "awk -v a='$(fw 2 lbbsp recovered)' -v b='$(dr 1)' -v c='$(dr 2)' 'BEGIN { exit !(a > b && b > c) }'"
check "--delay recorded" test "$(q "$TMP/d1.db" "SELECT group_concat(DISTINCT delay) FROM whatif_forward")" = "1,3"

# options
"$LBSIM" whatif "$D/trace-ST.csv.gz" --meta "$D/meta-ST.yaml" --delay 1 -o "$TMP/x.db" 2> "$TMP/err"
check "--delay without --forward: exit 2, said" test $? -eq 2 -a -n "$(grep -- '--delay: only with --forward' "$TMP/err")"
"$LBSIM" whatif "$D/trace-ST.csv.gz" --meta "$D/meta-ST.yaml" --blocks 4 -o "$TMP/x.db" 2> "$TMP/err"
check "--blocks without --forward: exit 2, said" test $? -eq 2 -a -n "$(grep -- '--blocks: only with --forward' "$TMP/err")"
"$LBSIM" whatif "$D/trace-ST.csv.gz" --meta "$D/meta-ST.yaml" --forward --blocks 0 -o "$TMP/x.db" 2> "$TMP/err"
check "--blocks 0: exit 2, said" test $? -eq 2 -a -n "$(grep -- '--blocks 0' "$TMP/err")"
check "nothing written on a usage error" test ! -e "$TMP/x.db"
"$LBSIM" whatif "$D/trace-ST.csv.gz" --meta "$D/meta-ST.yaml" --forward --blocks 1 -o "$TMP/x.db" -q
check "--blocks 1: resplit cannot move a block" test "$(q "$TMP/x.db" "SELECT changes FROM whatif_forward WHERE policy = 'resplit'")" = 0
finish
