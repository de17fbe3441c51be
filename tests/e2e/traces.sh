#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end with traces: every scenario under scenarios/traces/ runs as
# shipped, records its iterations and is reproducible; a trace changes the
# results; every trace format is documented.
. "$(dirname "$0")/lib.sh"
D="$top_srcdir/scenarios/traces"

for f in "$D"/*.ini; do
	name=$(basename "$f" .ini)
	"$LBSIM" "$f" -o "$TMP/$name.db" -q 2> "$TMP/err"; rc=$?
	its=$(grep -E '^iterations *=' "$f" | sed 's/.*= *//')
	if [ $rc -eq 0 ] && [ ! -s "$TMP/err" ] &&
	   [ "$(q "$TMP/$name.db" 'SELECT count(*) FROM iterations')" = "$its" ]; then
		ok "scenario $name runs ($its iterations)"
	else
		bad "scenario $name (exit $rc): $(cat "$TMP/err")"
	fi
done

# Reproducible: the same scenario twice gives identical iterations.
"$LBSIM" "$D/pai-job1.ini" -o "$TMP/pai-job1.db" -q
check "pai-job1 rerun is identical" test "$(q "$TMP/pai-job1.db" "SELECT count(*) FROM (
	SELECT iteration, start_s, end_s FROM iterations WHERE run_id = 1
	EXCEPT SELECT iteration, start_s, end_s FROM iterations WHERE run_id = 2)")" = 0

# The trace matters: without it (trace_format = none) the PAI job's
# iterations all take the same time; with it they vary.
"$LBSIM" "$D/pai-job1.ini" -o "$TMP/flat.db" -q --set workers.pai.trace_format=none \
	--set workers.pai.trace= --set workers.pai.trace_ids= --set workers.pai.trace_map=
check "without the trace, one iteration time" test "$(q "$TMP/flat.db" \
	'SELECT count(DISTINCT round(end_s - start_s, 9)) FROM iterations')" = 1
check "with the trace, many" test "$(q "$TMP/pai-job1.db" \
	'SELECT count(DISTINCT round(end_s - start_s, 9)) > 50 FROM iterations WHERE run_id = 1')" = 1
# With aggregation free, the longest iteration is 0.5 s times the job's
# largest batch time over its median (1000 / 443, the file's median).
"$LBSIM" "$D/pai-job1.ini" -o "$TMP/free.db" -q --set network.topology=none \
	--set network.bandwidth= --set network.latency=
check "PAI job 1: slowest iteration = 0.5 s * 1000 / median" test "$(q "$TMP/free.db" \
	'SELECT abs(max(end_s - start_s) - 0.5 * 1000 / 438.0) < 1e-9 FROM iterations')" = 1

# The network bucket empties: late all-reduces take longer than early ones.
check "c5.xlarge: aggregation slows after the bucket empties" test "$(q "$TMP/ec2-network-bucket.db" \
	'SELECT (SELECT avg(end_s - compute_end_s) FROM iterations WHERE start_s > 600) >
		3 * (SELECT avg(end_s - compute_end_s) FROM iterations WHERE end_s < 500)')" = 1

# Every format of the registry has its section in doc/traces.md.
for fmt in $("$LBSIM" keys | grep '^| `trace_format`' | grep -o '`none[^`]*`' | tr -d '`' | sed 's/\\|/ /g'); do
	[ "$fmt" = none ] && continue
	check "doc/traces.md documents $fmt" grep -q "trace_format = $fmt" "$top_srcdir/doc/traces.md"
done

finish
