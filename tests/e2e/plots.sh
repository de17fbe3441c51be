#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: the analysis views stored in a results file (run_keys,
# speedup_by_size per key that varies, `lbsim views` for older files), and
# `lbsim plot` against a swept key (--x, --by, --setting KEY=VALUE), its
# timeline, distributions and formats. Expected values are computed here
# from the tables with sqlite3, not from the views under test.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
need gnuplot gnuplot-nox
need parallel parallel
D="$top_srcdir/tests/data/sweep"

# ---- views in the file -------------------------------------------------------
"$LBSIM" "$D/scenario.ini" -q --policy lbbsp-gpu --set run.iterations=50 -o "$TMP/r.db"
check "run: the views are in the file (any SQLite client sees them)" \
	test "$(sqlite3 "$TMP/r.db" "SELECT count(*) FROM speedup_by_size")" = 2
check "run: speedup_by_size of lbbsp-gpu = static's time / its time" test \
	"$(q "$TMP/r.db" "SELECT printf('%.9f', mean_speedup) FROM speedup_by_size WHERE policy = 'lbbsp-gpu'")" = \
	"$(q "$TMP/r.db" "SELECT printf('%.9f', (SELECT sim_time_s FROM runs WHERE policy = 'static') / sim_time_s) FROM runs WHERE policy = 'lbbsp-gpu'")"
check "run: the views leave the schema version as it is (4)" test "$(q "$TMP/r.db" 'PRAGMA user_version')" = 4
# A file without the views, as older lbsim wrote them: `lbsim views` adds them.
cp "$TMP/r.db" "$TMP/old.db"
for v in $(q "$TMP/old.db" "SELECT name FROM sqlite_master WHERE type = 'view'"); do
	q "$TMP/old.db" "DROP VIEW $v"
done
check "an older file has no views" test "$(q "$TMP/old.db" "SELECT count(*) FROM sqlite_master WHERE type = 'view'")" = 0
"$LBSIM" export "$TMP/old.db" speedup_by_size > "$TMP/old.csv"
check "export reads an older file (its own views)" test "$(wc -l < "$TMP/old.csv")" = 3
"$LBSIM" views "$TMP/old.db" > "$TMP/out"
check "lbsim views: exit 0" test $? -eq 0
check "lbsim views: the views are back" test "$(q "$TMP/old.db" "SELECT count(*) FROM speedup_by_size")" = 2
check "lbsim views: the runs are unchanged" test "$(q "$TMP/old.db" "SELECT group_concat(sim_time_s) FROM runs")" = \
	"$(q "$TMP/r.db" "SELECT group_concat(sim_time_s) FROM runs")"
"$LBSIM" views "$TMP/none.db" 2> /dev/null
check "lbsim views on a missing file: exit 3, not created" test $? -eq 3 -a ! -e "$TMP/none.db"
echo "not a database" > "$TMP/text.db"
"$LBSIM" views "$TMP/text.db" 2> /dev/null
check "lbsim views on a text file: exit 3, unchanged" test $? -eq 3 -a "$(cat "$TMP/text.db")" = "not a database"

# ---- a bandwidth sweep: a key besides policy and seed --------------------------
"$LBSIM" sweep "$D/bandwidth.ini" -j 2 -q -o "$TMP/bw.db" > /dev/null
check "sweep: 12 runs" test "$(q "$TMP/bw.db" 'SELECT count(*) FROM runs')" = 12
check "run_keys: a column per varied key, a number column with its unit" test \
	"$(q "$TMP/bw.db" 'SELECT group_concat(DISTINCT "network.bandwidth" || "=" || "network.bandwidth [Gbit/s]") FROM run_keys')" = \
	"1 Gbit/s=1,10 Gbit/s=10,100 Gbit/s=100"
check "run_keys: no column for keys that do not vary" test \
	"$(q "$TMP/bw.db" "SELECT count(*) FROM pragma_table_info('run_keys') WHERE name LIKE 'network.latency%'")" = 0
# speedup_by_size keeps the bandwidths apart: 3 rows per policy, each the
# mean over the two seeds of static's time over the policy's.
check "speedup_by_size: a row per bandwidth and policy" test "$(q "$TMP/bw.db" 'SELECT count(*) FROM speedup_by_size')" = 6
expect=$(q "$TMP/bw.db" "SELECT group_concat(v, ' ') FROM (SELECT printf('%.6f', avg(b.sim_time_s / r.sim_time_s)) AS v
	FROM runs r JOIN run_config c ON c.run_id = r.run_id AND c.section = 'network' AND c.key = 'bandwidth'
	JOIN runs b ON b.policy = 'static' AND b.seed = r.seed JOIN run_config bc ON bc.run_id = b.run_id
	AND bc.section = 'network' AND bc.key = 'bandwidth' AND bc.value = c.value
	WHERE r.policy = 'lbbsp-gpu' GROUP BY c.value ORDER BY CAST(c.value AS REAL))")
check "speedup_by_size: per bandwidth, from the runs" test "$(q "$TMP/bw.db" "SELECT group_concat(v, ' ') FROM
	(SELECT printf('%.6f', mean_speedup) AS v FROM speedup_by_size WHERE policy = 'lbbsp-gpu' ORDER BY \"network.bandwidth [Gbit/s]\")")" = "$expect"
check "... and they differ (the bandwidth matters)" test "$(echo "$expect" | tr ' ' '\n' | sort -u | wc -l)" = 3

"$LBSIM" export "$TMP/bw.db" speedup_by_size --setting policy=lbbsp-gpu --setting 'network.bandwidth=10Gbit/s' > "$TMP/e.csv"
check "export --setting: the rows of that policy and bandwidth" test "$(tail -n +2 "$TMP/e.csv" | wc -l)" = 1
check "export --setting: its speedup" test "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "mean_speedup") c = i }
	NR == 2 { printf "%.6f", $c }' "$TMP/e.csv")" = "$(echo "$expect" | cut -d' ' -f2)"
"$LBSIM" export "$TMP/bw.db" speedup_by_size --setting nope=1 > /dev/null 2> "$TMP/err"
check "export --setting on a column the view has not: exit 2" test $? -eq 2

# ---- lbsim plot --x / --by / --setting ------------------------------------------
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/p" --x network.bandwidth -q
check "plot --x network.bandwidth: exit 0" test $? -eq 0
check "plot --x: x is the bandwidth in Gbit/s" test "$(awk -F, 'NR > 1 && $2 == "lbbsp-gpu" { printf "%s ", $3 }' "$TMP/p/speedup.csv")" = "1 10 100 "
check "plot --x: the same speedups as the runs give" test \
	"$(awk -F, 'NR > 1 && $2 == "lbbsp-gpu" { printf "%s%.6f", s, $5; s = " " }' "$TMP/p/speedup.csv")" = "$expect"
check "plot --x: each point is the mean of the 2 seeds" test "$(awk -F, 'NR > 1 && $8 != 2' "$TMP/p/speedup.csv" | wc -l)" = 0
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/p1" -q
check "plot: x is by default the key that varies (the size does not)" cmp -s "$TMP/p/speedup.csv" "$TMP/p1/speedup.csv"
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/p2" -q --x n_workers
check "plot --x n_workers: a line per policy and bandwidth, not averaged" test \
	"$(awk -F, 'NR > 1 { print $2 }' "$TMP/p2/speedup.csv" | sort -u | wc -l)" = 6
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/p3" -q --x n_workers --by policy 2> "$TMP/err"
check "plot --by policy over bandwidths: refused (exit 2)" test $? -eq 2
check "... naming the key" grep -q 'differ in network.bandwidth' "$TMP/err"
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/p3" -q --by policy --setting 'network.bandwidth=10 Gbit/s'
check "plot --by policy --setting network.bandwidth=...: exit 0" test $? -eq 0
check "... draws that bandwidth's runs only" test "$(awk -F, 'NR > 1 && $2 == "lbbsp-gpu" { printf "%.6f", $5 }' "$TMP/p3/speedup.csv")" = \
	"$(echo "$expect" | cut -d' ' -f2)"
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/p4" -q --setting network.bandwidth=100Gbit/s --setting seed=2
last=$(awk -F, '$2 == "static" { t = $3 } END { print t }' "$TMP/p4/iteration-time.csv")
check "--setting network.bandwidth=100Gbit/s --setting seed=2: draws that run (spaces do not matter)" test \
	"$(q "$TMP/bw.db" "SELECT count(*) FROM runs r JOIN run_config c ON c.run_id = r.run_id AND c.section = 'network'
	AND c.key = 'bandwidth' AND c.value = '100 Gbit/s' WHERE r.seed = 2 AND r.policy = 'static' AND abs(r.sim_time_s - $last) < 1e-9")" = 1
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/p5" -q --x nope 2> "$TMP/err"
check "--x an unknown key: exit 2" test $? -eq 2
check "... lists the keys that vary" grep -q 'they vary: policy, seed, n_workers, scenario, network.bandwidth' "$TMP/err"
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/p5" -q --setting 'network.bandwidth=3 Gbit/s' 2> "$TMP/err"
check "--setting matching no run: exit 2" test $? -eq 2
"$LBSIM" plot "$TMP/bw.db" --bogus 2> "$TMP/err"
check "a usage error: a short usage, not the whole help" test "$(wc -l < "$TMP/err")" -le 4
check "... and where to look" grep -q 'see lbsim plot --help' "$TMP/err"

# ---- the timeline, the distributions, the formats ------------------------------------
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/g" -q --format png,svg,pdf --setting 'network.bandwidth=1 Gbit/s' --iterations 5..6
check "plot --format png,svg,pdf: exit 0" test $? -eq 0
for p in iteration-time iteration-cdf straggler-cdf time-to-train batch-sizes speedup gantt wait-share; do
	check "$p: PNG" test "$(head -c 4 "$TMP/g/$p.png" | od -An -c | tr -d ' ')" = '211PNG'
	check "$p: SVG" grep -q '<svg' "$TMP/g/$p.svg"
	check "$p: PDF" test "$(head -c 5 "$TMP/g/$p.pdf")" = '%PDF-'
done
# Gantt: for every worker of every run and iteration, compute + wait +
# aggregation span the iteration, from the iterations table.
g="$TMP/g/gantt.csv"
check "gantt: 2 policies x 4 workers x 2 iterations x 3 phases" test "$(tail -n +2 "$g" | wc -l)" = 48
check "gantt: iterations 5 and 6 only" test "$(awk -F, 'NR > 1 { print $5 }' "$g" | sort -u | tr '\n' ' ')" = "5 6 "
span=$(awk -F, 'NR > 1 { k = $1 "," $3 "," $5; if (!(k in a) || $8 < a[k]) a[k] = $8; if ($9 > b[k]) b[k] = $9 }
	END { for (k in a) { split(k, f, ","); if (f[3] == 6) printf "%.9f\n", b[k] - a[k] } }' "$g" | sort -u)
run1=$(q "$TMP/bw.db" "SELECT min(r.run_id) FROM runs r JOIN run_config c ON c.run_id = r.run_id AND c.section = 'network'
	AND c.key = 'bandwidth' AND c.value = '1 Gbit/s' WHERE r.policy = 'static'")
run2=$(q "$TMP/bw.db" "SELECT min(r.run_id) FROM runs r JOIN run_config c ON c.run_id = r.run_id AND c.section = 'network'
	AND c.key = 'bandwidth' AND c.value = '1 Gbit/s' WHERE r.policy = 'lbbsp-gpu' AND r.seed = (SELECT seed FROM runs WHERE run_id = $run1)")
check "gantt: every worker's phases span the iteration (from iterations)" test "$span" = \
	"$(q "$TMP/bw.db" "SELECT printf('%.9f', end_s - start_s) FROM iterations WHERE iteration = 6 AND run_id IN ($run1, $run2) ORDER BY 1" | sort -u)"
check "gantt: the slowest worker does not wait" test "$(awk -F, 'NR > 1 && $6 == 1 && $9 - $8 < 1e-12' "$g" | wc -l)" -ge 4
check "wait-share: static's k80 share from worker_iterations" test \
	"$(awk -F, '$1 == "static" { printf "%.6f", $3 }' "$TMP/g/wait-share.csv")" = \
	"$(q "$TMP/bw.db" "SELECT printf('%.6f', sum(wi.wait_s) / sum(wi.compute_s + wi.wait_s + i.end_s - i.compute_end_s))
	FROM worker_iterations wi JOIN workers w USING (run_id, worker) JOIN iterations i USING (run_id, iteration)
	WHERE wi.run_id = $run1 AND w.group_name = 'k80'")"
check "iteration-cdf: ends at 1 for each policy" test "$(awk -F, 'NR > 1 && $4 == 1' "$TMP/g/iteration-cdf.csv" | cut -d, -f1 | sort -u | wc -l)" = 2
# availability: the groups' CPU readings with the iteration time, from a
# scenario whose background jobs report them.
"$LBSIM" "$top_srcdir/scenarios/predict/cpu-bursty.ini" -q -o "$TMP/cb.db" --policy lbbsp-cpu --detail workers --set run.epochs= --set run.dataset_samples= --set run.iterations=60
"$LBSIM" plot "$TMP/cb.db" --out "$TMP/cb" -q --setting policy=lbbsp-cpu
a="$TMP/cb/availability.csv"
check "availability: the iteration time of each iteration" test "$(awk -F, '$1 == 0' "$a" | wc -l)" = 60
check "availability: readings between 0 and 1" test "$(awk -F, 'NR > 1 && $1 > 0 && ($4 < 0 || $4 > 1)' "$a" | wc -l)" = 0
check "availability: the readings' mean is worker_iterations' (equal groups each iteration)" test \
	"$(awk -F, 'NR > 1 && $1 > 0 { s += $4; n++ } END { printf "%.9f", s / n }' "$a")" = \
	"$(q "$TMP/cb.db" "SELECT printf('%.9f', avg(cpu_util)) FROM worker_iterations wi JOIN runs r USING (run_id) WHERE r.policy = 'lbbsp-cpu'")"
check "availability: not drawn without readings" test ! -e "$TMP/g/availability.png"

# ---- figures for a paper (issue 33): size, font, preset, legend, axes ------------
# png_size FILE: "W H" from the PNG header (big-endian at bytes 16 and 20).
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4, $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }'; }
# pdf_box FILE: the page's MediaBox in points.
pdf_box() { grep -ao 'MediaBox *\[[^]]*\]' "$1" | head -n 1 | tr -s ' ' | sed 's/MediaBox *\[ *//; s/ *\]//'; }
# border SVG: "left right bottom" of the plot's border (gnuplot's closed path).
border() { grep "Z  '/></g>" "$1" | tail -n 1 | grep -o '[0-9.]*,[0-9.]*' | awk -F, '
	NR == 1 { l = r = $1; b = $2 } { if ($1 < l) l = $1; if ($1 > r) r = $1; if ($2 > b) b = $2 } END { print l, r, b }'; }
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/sz" -q --size 800x500 --setting 'network.bandwidth=10 Gbit/s'
check "--size 800x500: every PNG is 800 x 500" test "$(for f in "$TMP"/sz/*.png; do png_size "$f"; done | sort -u)" = "800 500"
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/cm" -q --size 9x6cm --format pdf --setting 'network.bandwidth=10 Gbit/s'
check "--size 9x6cm: a PDF of 9 x 6 cm (255 x 170 pt)" test "$(pdf_box "$TMP/cm/speedup.pdf")" = "0 0 255 170"
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/ps" -q --paper single --format png,pdf,svg --setting 'network.bandwidth=10 Gbit/s'
check "--paper single: a PDF a column wide (3.5 x 2.5 in)" test "$(pdf_box "$TMP/ps/speedup.pdf")" = "0 0 252 180"
check "--paper single: a PNG at 300 pixels per inch" test "$(png_size "$TMP/ps/speedup.png")" = "1050 750"
check "--paper single: serif, 8 points" test "$(grep -o 'font-family="[^"]*" font-size="[^"]*"' "$TMP/ps/speedup.svg" | sort -u)" = 'font-family="serif" font-size="8.00"'
check "--paper single: no title (the caption says)" test "$(grep -c 'Speedup over static vs' "$TMP/ps/speedup.svg")" = 0
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/pd" -q --paper double --format pdf --setting 'network.bandwidth=10 Gbit/s'
check "--paper double: the page's width (7 x 2.75 in)" test "$(pdf_box "$TMP/pd/speedup.pdf")" = "0 0 504 198"
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/fo" -q --font 'DejaVu Serif,9' --format svg --setting 'network.bandwidth=10 Gbit/s'
check "--font 'DejaVu Serif,9'" test "$(grep -o 'font-family="[^"]*" font-size="[^"]*"' "$TMP/fo/iteration-time.svg" | sort -u)" = 'font-family="DejaVu Serif" font-size="9.00"'
for bad in "--size 800" "--size 0x0" "--size 3x2mm" "--font serif" "--font a;b,8" "--font serif,200" "--paper triple"; do
	"$LBSIM" plot "$TMP/bw.db" --out "$TMP/bad" -q $bad 2> "$TMP/err"
	check "plot $bad: exit 2, saying what is expected" sh -c "[ $? -eq 2 ] && grep -q 'expected' '$TMP/err'"
done
# The legend takes no quarter of the width: the plot spans most of the canvas.
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/sv" -q --format svg
for p in speedup iteration-time batch-sizes time-to-train; do
	check "$p: the plot spans at least 80% of the width ($(border "$TMP/sv/$p.svg"))" \
		awk -v b="$(border "$TMP/sv/$p.svg")" 'BEGIN { split(b, a, " "); exit !((a[2] - a[1]) / 960 >= 0.8) }'
done
# A distribution's key is inside the plot, in its empty bottom right.
top=$(grep "Z  '/></g>" "$TMP/sv/iteration-cdf.svg" | tail -n 1 | grep -o '[0-9.]*,[0-9.]*' | cut -d, -f2 | sort -n | head -n 1)
key=$(sed -n '/id="gnuplot_plot_1"/,/<\/text>/p' "$TMP/sv/iteration-cdf.svg" | grep -o 'translate([0-9.]*,[0-9.]*)' | head -n 1 | tr -d 'translate()')
check "iteration-cdf: the key ($key) inside the plot's border ($(border "$TMP/sv/iteration-cdf.svg"), top $top), in its lower half" \
	awk -v k="$key" -v b="$(border "$TMP/sv/iteration-cdf.svg")" -v t="$top" 'BEGIN { split(k, p, ","); split(b, a, " ")
	exit !(p[1] > a[1] && p[1] < a[2] && p[2] > (t + a[3]) / 2 && p[2] < a[3]) }'
# Static's line (speedup 1, the least) is not on the bottom border.
low=$(sed -n '/id="gnuplot_plot_1"/,/id="gnuplot_plot_2"/p' "$TMP/sv/speedup.svg" | grep -o '[ML][0-9.]*,[0-9.]*' | cut -d, -f2 | sort -n | tail -n 1)
check "speedup: static's line ($low) above the bottom border ($(border "$TMP/sv/speedup.svg" | cut -d' ' -f3))" \
	awk -v y="$low" -v b="$(border "$TMP/sv/speedup.svg" | cut -d' ' -f3)" 'BEGIN { exit !(y < b - 10) }'
# A category on x (the policy): bars, a cluster per policy, a bar per bandwidth.
"$LBSIM" plot "$TMP/bw.db" --out "$TMP/cat" -q --format svg --x policy
check "--x policy: bars (filled boxes: 2 policies x 3 bandwidths, and 3 in the key)" test "$(grep -c '<polygon fill' "$TMP/cat/speedup.svg")" = 9
check "--x policy: the lines are the bandwidths, not the policy again" test \
	"$(awk -F, 'NR > 1 { print $2 }' "$TMP/cat/speedup.csv" | sort -u | tr '\n' ,)" = "network.bandwidth=1 Gbit/s,network.bandwidth=10 Gbit/s,network.bandwidth=100 Gbit/s,"
# Restyled from the CSV alone (doc/sweeps.md): the axis is the CSV's, the bandwidth.
(cd "$TMP/sv" && gnuplot -e "data='speedup.csv'; out='restyled.svg'; format='svg'" "$top_srcdir/analysis/speedup.gp")
check "the CSV's column 3 is named after the axis" test "$(head -n 1 "$TMP/sv/speedup.csv" | cut -d, -f3)" = "network.bandwidth (Gbit/s)"
check "restyled from the CSV: the x axis is the bandwidth, not workers" sh -c \
	"grep -q '<text>network.bandwidth (Gbit/s) (log scale)</text>' '$TMP/sv/restyled.svg' && ! grep -q '<text>workers' '$TMP/sv/restyled.svg'"
# --setting n_workers=N keeps the cluster size on x (it does not switch to
# the next key, the global batch that grows with it).
cat > "$TMP/size.ini" <<EOF
[sweep]
scenario = $D/scenario.ini
[zip]
workers.v100.count = 1, 2
workers.k80.count = 1, 2
run.global_batch = 64, 128
[vary]
policy = static, lbbsp-gpu
run.iterations = 20
EOF
"$LBSIM" sweep "$TMP/size.ini" -j 2 -q -o "$TMP/size.db" > /dev/null
"$LBSIM" plot "$TMP/size.db" --out "$TMP/n4" -q --setting n_workers=4
check "--setting n_workers=4: x is still the cluster size" test "$(head -n 1 "$TMP/n4/speedup.csv" | cut -d, -f3) $(awk -F, 'NR > 1 { print $3 }' "$TMP/n4/speedup.csv" | sort -u)" = "workers 4"
# The availability over a long run: at most 200 points a line, each a bin of
# 10 consecutive iterations with its mean and its least and greatest.
"$LBSIM" "$top_srcdir/scenarios/predict/cpu-bursty.ini" -q -o "$TMP/long.db" --policy lbbsp-cpu --detail workers --set run.epochs= --set run.dataset_samples= --set run.iterations=2000
"$LBSIM" plot "$TMP/long.db" --out "$TMP/long" -q --setting policy=lbbsp-cpu
a="$TMP/long/availability.csv"
check "availability of 2000 iterations: 200 points a line" test "$(awk -F, 'NR > 1 { n[$1]++ } END { for (s in n) print n[s] }' "$a" | sort -u)" = 200
check "availability: low <= mean <= high" test "$(awk -F, 'NR > 1 && !($5 <= $4 + 1e-12 && $4 <= $6 + 1e-12)' "$a" | wc -l)" = 0
run=$(q "$TMP/long.db" "SELECT run_id FROM runs WHERE policy = 'lbbsp-cpu'")
check "availability: the 4th bin's iteration time, iterations 30 to 39" test \
	"$(awk -F, '$1 == 0 { if (++k == 4) printf "%.9f %.9f %.9f", $4, $5, $6 }' "$a")" = \
	"$(q "$TMP/long.db" "SELECT printf('%.9f %.9f %.9f', avg(end_s - start_s), min(end_s - start_s), max(end_s - start_s)) FROM iterations WHERE run_id = $run AND iteration BETWEEN 30 AND 39")"
check "availability: the 4th bin's readings, every worker in iterations 30 to 39" test \
	"$(awk -F, '$1 == 1 { if (++k == 4) printf "%.9f %.9f %.9f", $4, $5, $6 }' "$a")" = \
	"$(q "$TMP/long.db" "SELECT printf('%.9f %.9f %.9f', avg(cpu_util), min(cpu_util), max(cpu_util)) FROM worker_iterations WHERE run_id = $run AND iteration BETWEEN 30 AND 39")"
# A what-if plot's title names the trace's file, not where it was.
W=$top_srcdir/traces/data/bytedance-whatif
"$LBSIM" whatif "$W/trace-ST.csv.gz" --meta "$W/meta-ST.yaml" -q -o "$TMP/wi.db"
"$LBSIM" plot "$TMP/wi.db" --out "$TMP/wi" -q --format svg
check "whatif plots: the trace's name in the title, no path" sh -c \
	"grep -q '<text>ST (trace-ST.csv.gz), whatif 1</text>' '$TMP/wi/whatif-heatmap.svg' && ! grep -q '$top_srcdir' '$TMP/wi/whatif-heatmap.svg'"

# ---- the run's summary: the database's names, machine-readable forms, progress ----
"$LBSIM" "$D/scenario.ini" -o "$TMP/f.db" --policy lbbsp-gpu --set run.iterations=40 --format csv > "$TMP/f.csv"
check "run --format csv: exit 0" test $? -eq 0
for col in $(head -n 1 "$TMP/f.csv" | tr ',' ' '); do
	[ "$col" = speedup ] && continue
	check "run --format csv: $col is a column of runs" test \
		"$(q "$TMP/f.db" "SELECT count(*) FROM pragma_table_info('runs') WHERE name = '$col'")" = 1
done
check "run --format csv: the database's values, in full" test \
	"$(awk -F, 'NR > 1 { printf "%s=%s ", $10, $3 }' "$TMP/f.csv")" = \
	"$(q "$TMP/f.db" "SELECT group_concat(run_id || '=' || printf('%!.17g', sim_time_s), ' ') || ' ' FROM runs")"
"$LBSIM" "$D/scenario.ini" -o "$TMP/f.db" --policy lbbsp-gpu --set run.iterations=40 --format json > "$TMP/f.json"
check "run --format json: a run object per policy" test "$(grep -c '"mean_aggregation_s": ' "$TMP/f.json")" = 2
check "run --format json: static's speedup is 1" grep -q '"policy": "static", .*"speedup": 1, ' "$TMP/f.json"
"$LBSIM" "$D/scenario.ini" -o "$TMP/f.db" --format xml 2> "$TMP/err"
check "run --format xml: exit 2" test $? -eq 2
"$LBSIM" "$D/scenario.ini" --no-such-option 2> "$TMP/err"
check "run with an unknown option: exit 2, a short usage" test $? -eq 2 -a "$(wc -l < "$TMP/err")" -le 3
check "... and where to look" grep -q '^see lbsim --help' "$TMP/err"
if command -v script > /dev/null; then
	# On a terminal the run says which policy of how many, and for how long.
	script -qec "'$LBSIM' '$D/scenario.ini' -o '$TMP/t.db' --policy lbbsp-gpu --set run.iterations=300" /dev/null > "$TMP/tty" 2>&1
	check "progress on a terminal: policy k of n" grep -q 'policy 2 of 2 (lbbsp-gpu): iteration 0/300' "$TMP/tty"
	check "progress on a terminal: elapsed time" grep -q 'elapsed [0-9.]* s' "$TMP/tty"
	"$LBSIM" "$D/scenario.ini" -o "$TMP/t2.db" --set run.iterations=300 2> "$TMP/err" > /dev/null
	check "no progress without a terminal" test ! -s "$TMP/err"
	# lbsim predict too: which predictor of how many, which series.
	"$LBSIM" "$D/scenario.ini" -o "$TMP/w.db" --set run.iterations=50 --detail workers -q
	script -qec "'$LBSIM' predict '$TMP/w.db:1' --predictors last,ema" /dev/null > "$TMP/tty" 2>&1
	check "predict: progress on a terminal" grep -q 'predictor 2 of 2 (ema), series 4 of 4, elapsed' "$TMP/tty"
	"$LBSIM" predict "$TMP/w.db:1" --predictors last,ema 2> "$TMP/err" > /dev/null
	check "predict: no progress without a terminal" test ! -s "$TMP/err"
fi
# ---- a hybrid run: its timeline (Gantt by replica and stage) and shares ------
# The shipped job: a fail-slow GPU (17: replica 0, stage 2) lengthens step 5,
# the longest; the timeline is that step's, one lane a (replica, stage)
# group; the shares of each step add up to 1.
"$LBSIM" "$top_srcdir/scenarios/hybrid/llama3-70b-8x16.ini" -q -o "$TMP/hy.db"
"$LBSIM" plot "$TMP/hy.db" -q -o "$TMP/hy" --format png,svg
check "hybrid plots: hybrid-timeline and hybrid-shares drawn" test -s "$TMP/hy/hybrid-timeline.png" -a \
	-s "$TMP/hy/hybrid-timeline.svg" -a -s "$TMP/hy/hybrid-shares.png"
check "hybrid-timeline: the longest step's ops, 16 lanes (4 replicas x 4 stages)" test \
	"$(($(wc -l < "$TMP/hy/hybrid-timeline.csv") - 1)) $(tail -n +2 "$TMP/hy/hybrid-timeline.csv" | cut -d, -f1 | sort -un | tr '\n' ' ')" = \
	"$(q "$TMP/hy.db" "SELECT count(*) FROM hybrid_timeline WHERE step = (SELECT step FROM hybrid_steps ORDER BY step_s DESC LIMIT 1)") 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 "
check "hybrid-timeline: the last op ends with the step" awk -F, -v s="$(q "$TMP/hy.db" "SELECT max(step_s) FROM hybrid_steps")" \
	'NR > 1 && $3 > m { m = $3 } END { d = m - s; exit !(d < 1e-9 && d > -1e-9) }' "$TMP/hy/hybrid-timeline.csv"
check "hybrid-timeline: the slow group's lane (2) computes the most" test "$(tail -n +2 "$TMP/hy/hybrid-timeline.csv" | \
	awk -F, '$4 <= 2 { c[$1] += $3 - $2 } END { for (l in c) if (c[l] > m) { m = c[l]; b = l }; print b }')" = 2
check "hybrid-shares: ten steps, each adding up to 1" awk -F, 'NR > 1 { n++; d = $2 + $3 + $4 + $5 + $6 - 1; if (d > 1e-9 || d < -1e-9) bad++ }
	END { exit !(n == 10 && !bad) }' "$TMP/hy/hybrid-shares.csv"
most=$(tail -n +2 "$TMP/hy/hybrid-shares.csv" | sort -t, -k5 -g | tail -n 1 | cut -d, -f1)
check "hybrid-shares: the step that waits the most ($most) lies in the episode (30 s to 50 s)" test "$(q "$TMP/hy.db" \
	"SELECT start_s >= 30 AND start_s + step_s <= 50 FROM hybrid_steps WHERE step = '$most'")" = 1
finish
