#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lbsim whatif on ByteDance's three per-operation traces: the figures of ST
# that the authors' analyzer gives (doc/whatif.md), the root causes their
# README names for AR (one slow worker) and ST (a long last stage), the
# tables of the results file, and bad input refused with nothing written.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
D="$top_srcdir/traces/data/bytedance-whatif"
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t * (b < 0 ? -b : b)) }'; }
m() { q "$1" "SELECT printf('%.17g', value) FROM whatif_metrics WHERE whatif_id = $2 AND name = '$3'"; }

"$LBSIM" whatif "$D/trace-ST.csv.gz" --meta "$D/meta-ST.yaml" -o "$TMP/r.db" > "$TMP/out"
check "ST: exit 0" test $? -eq 0
check "ST: S printed, to 6 decimals (the database has every digit)" grep -q '^S = 1.178702$' "$TMP/out"
check "ST: S = 1.1787021836556841 recorded (1e-9)" near "$(m "$TMP/r.db" 1 S)" 1.1787021836556841 1e-9
check "ST: M_S = 1.2193563788811714 (1e-9)" near "$(m "$TMP/r.db" 1 M_S)" 1.2193563788811714 1e-9
check "ST: M_W = 0.031404269124045224 (1e-7)" near "$(m "$TMP/r.db" 1 M_W)" 0.031404269124045224 1e-7
check "ST: 32 steps" test "$(q "$TMP/r.db" 'SELECT count(*) FROM whatif_steps WHERE whatif_id = 1')" = 32
check "ST: 11 op types attributed" test "$(q "$TMP/r.db" "SELECT count(*) FROM whatif_slowdowns WHERE whatif_id = 1 AND metric = 'S_t' AND step IS NULL")" = 11
check "ST: per-step attribution, 32 steps x (11 + 2 + 4)" test "$(q "$TMP/r.db" "SELECT count(*) FROM whatif_slowdowns WHERE whatif_id = 1 AND step IS NOT NULL")" = $((32 * 17))
check "ST: the last stage stands out" test "$(q "$TMP/r.db" "SELECT name FROM whatif_slowdowns WHERE whatif_id = 1 AND metric = 'S_stage' AND step IS NULL ORDER BY value DESC LIMIT 1")" = 3
check "ST: the model's size" test "$(q "$TMP/r.db" 'SELECT ops || " " || edges || " " || groups || " " || sync_ops FROM whatif_runs')" = "106 165 34 12"
pol() { q "$TMP/r.db" "SELECT policy FROM whatif_policies WHERE whatif_id = $1 AND policy NOT LIKE '%+%' ORDER BY recovered DESC LIMIT 1"; }
check "ST: repartitioning recovers the most" test "$(pol 1)" = repartition
check "ST: eight policies" test "$(q "$TMP/r.db" 'SELECT count(*) FROM whatif_policies WHERE whatif_id = 1')" = 8

# The same trace uncompressed gives the same figures.
gzip -dc "$D/trace-ST.csv.gz" > "$TMP/st.csv"
"$LBSIM" whatif "$TMP/st.csv" --meta "$D/meta-ST.yaml" -o "$TMP/r.db" -q > "$TMP/out"
check "ST as plain CSV: quiet" test ! -s "$TMP/out"
check "ST as plain CSV: the same S" test "$(m "$TMP/r.db" 2 S)" = "$(m "$TMP/r.db" 1 S)"

# The same trace as Chrome trace events (microseconds from an origin per
# step, seq_id and chunks left to be derived, ranks as pids), gzipped.
awk -F, 'NR == 1 { printf "{\"traceEvents\": [\n"; next }
	{ printf "%s{\"name\":\"%s\",\"ph\":\"X\",\"ts\":%.17g,\"dur\":%.17g,\"pid\":%d,\"tid\":0,\"args\":{\"dp_rank\":%d,\"stage\":%d,\"step\":%d}}\n",
		(NR > 2 ? "," : ""), $5, $4 * 1e7 + $6 * 1e6, $7 * 1e6, $3, $1, $2, $4 }
	END { print "]}" }' "$TMP/st.csv" | gzip > "$TMP/st.json.gz"
"$LBSIM" whatif "$TMP/st.json.gz" --meta "$D/meta-ST.yaml" -o "$TMP/j.db" -q
check "ST as Chrome trace events: exit 0" test $? -eq 0
check "ST as Chrome trace events: the same S" test "$(m "$TMP/j.db" 1 S)" = "$(m "$TMP/r.db" 1 S)"
check "ST as Chrome trace events: the same M_W" test "$(m "$TMP/j.db" 1 M_W)" = "$(m "$TMP/r.db" 1 M_W)"
echo '{"traceEvents": [{"name": "gc", "ph": "X", "ts": 0}' > "$TMP/bad.json"
"$LBSIM" whatif "$TMP/bad.json" --meta "$D/meta-ST.yaml" -o "$TMP/bad.db" 2> "$TMP/err"
check "bad JSON: exit 3" test $? -eq 3
check "bad JSON: line and column named" grep -q 'bad.json:[0-9]*:[0-9]*: .*expected' "$TMP/err"

# AR: an artificially slowed worker; the top worker explains the slowdown.
"$LBSIM" whatif "$D/trace-AR.csv.gz" --meta "$D/meta-AR.yaml" -o "$TMP/r.db" > "$TMP/out"
check "AR: exit 0" test $? -eq 0
check "AR: M_W near 1 (one worker's problem)" near "$(m "$TMP/r.db" 3 M_W)" 1 0.05
check "AR: micro-batch counts per replica recover the most" test "$(pol 3)" = static-proportional
check "AR: the slowest worker is rank 0" test "$(q "$TMP/r.db" "SELECT rank FROM whatif_slowdowns WHERE whatif_id = 3 AND metric = 'S_w' ORDER BY value DESC, rank LIMIT 1")" = 0
# SE: sequence-length imbalance: the computes carry the slowdown.
"$LBSIM" whatif "$D/trace-SE.csv.gz" --meta "$D/meta-SE.yaml" -o "$TMP/r.db" > "$TMP/out"
check "SE: exit 0" test $? -eq 0
check "SE: backward compute the largest S_t" test "$(q "$TMP/r.db" "SELECT name FROM whatif_slowdowns WHERE whatif_id = 4 AND metric = 'S_t' AND step IS NULL ORDER BY value DESC LIMIT 1")" = backward-compute
check "SE: regrouping the step's sequences recovers the most" test "$(pol 4)" = microbatch-balance-global
check "SE: 64 workers" test "$(q "$TMP/r.db" "SELECT count(*) FROM whatif_slowdowns WHERE whatif_id = 4 AND metric = 'S_w'")" = 64

# The plots: the per-worker heat map and the timeline of the slowest step.
if command -v gnuplot > /dev/null; then
	is_png() { test "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a && test "$(wc -c < "$1")" -gt 2000; }
	mkdir -p "$TMP/plots"
	"$LBSIM" plot "$TMP/r.db" --whatif 1 --out "$TMP/plots" > "$TMP/out" 2> "$TMP/err"
	check "plot --whatif 1: exit 0" test $? -eq 0
	for p in whatif-heatmap whatif-timeline; do
		check "plot: $p.png is a PNG" is_png "$TMP/plots/$p.png"
	done
	check "plot: heat map of ST's 8 workers" test "$(tail -n +2 "$TMP/plots/whatif-heatmap.csv" | wc -l)" = 8
	check "plot: timeline of ST's step 23 (the largest S), 2 x 2 x 106 ops" \
		test "$(tail -n +2 "$TMP/plots/whatif-timeline.csv" | wc -l)" = 424
	check "plot: only what-if plots for a file without runs" test "$(wc -l < "$TMP/out")" = 2
	"$LBSIM" plot "$TMP/r.db" --whatif 9 --out "$TMP/plots" 2> "$TMP/err"
	check "plot --whatif 9: no such analysis, exit 2" test $? -eq 2
fi

# Bad input: exit 3, the file and line named, nothing written.
sed 's/dp_size: 2/dp_size: 1/; s/world_size: 8/world_size: 4/' "$D/meta-ST.yaml" > "$TMP/meta1.yaml"
"$LBSIM" whatif "$D/trace-ST.csv.gz" --meta "$TMP/meta1.yaml" -o "$TMP/bad.db" 2> "$TMP/err"
check "dp_rank beyond dp_size: exit 3" test $? -eq 3
check "dp_rank beyond dp_size: file, line and column named" grep -q 'trace-ST.csv.gz:[0-9]*: dp_rank: 1 is out of range' "$TMP/err"
check "bad input: no results file" test ! -e "$TMP/bad.db"
head -c 50000 "$D/trace-ST.csv.gz" > "$TMP/cut.csv.gz"
"$LBSIM" whatif "$TMP/cut.csv.gz" --meta "$D/meta-ST.yaml" -o "$TMP/bad.db" 2> "$TMP/err"
check "truncated gzip: exit 3" test $? -eq 3
check "truncated gzip: said" grep -q 'cut.csv.gz: read error: the compressed file ends early' "$TMP/err"
awk -F, -v OFS=, 'NR == 5 { $6 = "x" } 1' "$TMP/st.csv" > "$TMP/bad.csv"
"$LBSIM" whatif "$TMP/bad.csv" --meta "$D/meta-ST.yaml" -o "$TMP/bad.db" 2> "$TMP/err"
check "bad number: exit 3 naming line 5" grep -q 'bad.csv:5: start_ts' "$TMP/err"
"$LBSIM" whatif "$D/trace-ST.csv.gz" -o "$TMP/bad.db" 2> "$TMP/err"
check "no --meta: exit 2" test $? -eq 2
check "bad runs wrote nothing" test ! -e "$TMP/bad.db"
"$LBSIM" whatif --help > "$TMP/out"
check "--help: exit 0, usage" grep -q 'Usage: lbsim whatif' "$TMP/out"

finish
