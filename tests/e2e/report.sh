#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: `lbsim report` writes one self-contained HTML file, checked in
# a real browser: headless Chromium renders it to a screenshot and to PDF
# with no console message, and the rendered page (--dump-dom) holds the
# expected tables and inline plots, and for a validation database the
# measured-against-simulated section. The console check is first shown to
# catch a page with an error, so that its silence means something.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
need gnuplot gnuplot-nox
need chromium chromium
D="$top_srcdir/tests/data/sweep"

# browse FILE.html NAME: renders the file with headless Chromium into
# NAME.dom (the DOM after loading), NAME.png (a screenshot) and NAME.pdf;
# NAME.console holds the page's console messages.
browse() {
	local url="file://$(cd "$(dirname "$1")" && pwd)/$(basename "$1")" flags
	flags="--headless --no-sandbox --disable-gpu --no-first-run --disable-extensions --enable-logging=stderr --v=0 --user-data-dir=$TMP/chromium"
	timeout 120 chromium $flags --dump-dom "$url" > "$2.dom" 2> "$2.log"
	timeout 120 chromium $flags --window-size=1200,4000 --screenshot="$2.png" "$url" > /dev/null 2>> "$2.log"
	timeout 120 chromium $flags --no-pdf-header-footer --print-to-pdf="$2.pdf" "$url" > /dev/null 2>> "$2.log"
	grep ':CONSOLE' "$2.log" > "$2.console"
	return 0
}

# layout FILE.html WIDTH NAME: renders a copy of the file at WIDTH pixels
# with every <details> open and writes to NAME.layout "W V [T...] [C...]":
# the page's width (document.scrollWidth), the window's, the tables outside
# the appendix that overflow their box (would scroll sideways), and those
# with a cell of more than three lines of text (a name wrapping).
layout() {
	cp "$1" "$3.html"
	cat >> "$3.html" <<'JS'
<script>
document.querySelectorAll('details').forEach(function (e) { e.open = true; });
var over = [], tall = [];
document.querySelectorAll('.wide').forEach(function (e) {
  if (e.closest('#appendix')) return;
  var t = e.firstElementChild;
  if (e.scrollWidth > e.clientWidth + 1) over.push(t.id);
  t.querySelectorAll('th, td').forEach(function (c) {
    var s = getComputedStyle(c), lines = (c.clientHeight - parseFloat(s.paddingTop) - parseFloat(s.paddingBottom)) / parseFloat(s.lineHeight);
    if (lines > 3.2 && tall.indexOf(t.id) < 0) tall.push(t.id);
  });
});
var p = document.createElement('pre');
p.textContent = 'LAYOUT ' + document.documentElement.scrollWidth + ' ' + window.innerWidth + ' [' + over.join(',') + '] [' + tall.join(',') + ']';
document.body.appendChild(p);
</script>
JS
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions --hide-scrollbars \
		--user-data-dir="$TMP/chromium" --window-size="$2,900" --dump-dom "file://$3.html" 2> /dev/null |
		grep -o 'LAYOUT [0-9][^<]*' | sed 's/^LAYOUT //' > "$3.layout"
}

# The check itself: a page with a console error is caught.
printf '<!DOCTYPE html><html><body><p>x</p><script>console.error("boom"); nosuch();</script></body></html>\n' > "$TMP/bad.html"
browse "$TMP/bad.html" "$TMP/bad"
check "the console check catches a page's errors" grep -q 'nosuch is not defined' "$TMP/bad.console"

# A sweep with worker detail: every part of the report has data.
"$LBSIM" sweep "$D/bandwidth.ini" -j 2 -q -o "$TMP/bw.db" > /dev/null
"$LBSIM" report "$TMP/bw.db" -o "$TMP/report.html" > "$TMP/out"
check "report: exit 0" test $? -eq 0
check "report: names the file" test "$(cat "$TMP/out")" = "$TMP/report.html"
check "report: no plot folder left behind" test -z "$(ls -d "$TMP"/report.html.plots.* 2> /dev/null)"
h="$TMP/report.html"
check "report: self-contained (no src, link or url() to fetch)" test "$(grep -Eic '<link|<script|<img|<iframe| src=|url\((http|file|//)|@import' "$h")" = 0
check "report: every http address is an XML namespace" test \
	"$(grep -o 'http[s]*://[^"'"'"' ]*' "$h" | sort -u | grep -vc '^http://www.w3.org/')" = 0

browse "$h" "$TMP/r"
check "chromium: no console message" test ! -s "$TMP/r.console"
dom="$TMP/r.dom"
check "DOM: the title" grep -q '<title>lbsim report: ' "$dom"
# A section per key that varies (here the bandwidth): the speedup plot against
# it, then the points in its order, a column per policy: the mean over the
# seeds with its 95% interval, three significant digits.
check "DOM: one section per key that varies" test "$(grep -c '<h2 id="by-' "$dom") $(grep -c '<h2 id="by-0">By network.bandwidth</h2>' "$dom")" = "1 1"
check "DOM: the speedup plot against the bandwidth" grep -q 'Speedup over static against network.bandwidth' "$dom"
srows() { sed -n "/<table id=\"$1\"/,/<\/table>/p" "$dom" | grep '^<tr data-point'; }
check "DOM: a row per point, by bandwidth" test "$(srows speedup-0 | sed 's/^[^>]*><td class="key">\([^<]*\)<.*/\1/' | tr '\n' ,)" = "1 Gbit/s,10 Gbit/s,100 Gbit/s,"
# The 100 Gbit/s cell by hand: the two seeds' speedups (static time over
# lbbsp-gpu's), their mean and mean +- t(0.975, 1) s / sqrt(2), t = 12.7062.
pair=$(q "$TMP/bw.db" "SELECT group_concat(b.sim_time_s / r.sim_time_s, ' ') FROM runs r JOIN runs b ON b.seed = r.seed AND b.policy = 'static' JOIN run_config c ON c.run_id = r.run_id AND c.section = 'network' AND c.key = 'bandwidth' JOIN run_config cb ON cb.run_id = b.run_id AND cb.section = 'network' AND cb.key = 'bandwidth' AND cb.value = c.value WHERE r.policy = 'lbbsp-gpu' AND c.value = '100 Gbit/s'")
want=$(echo "$pair" | awk '{ m = ($1 + $2) / 2; sd = sqrt(($1 - m) ^ 2 + ($2 - m) ^ 2); h = 12.7062 * sd / sqrt(2); printf "%.3g <span class=\"ci\">[%.3g, %.3g]</span>", m, m - h, m + h }')
check "DOM: 100 Gbit/s, lbbsp-gpu: $want (by hand from $pair)" grep -qF "<td class=\"key\">100 Gbit/s</td><td class=\"n\">$want</td>" "$dom"
check "DOM: the simulated times per point, static too" test "$(srows time-0 | wc -l) $(sed -n '/<table id="time-0"/,/<\/thead>/p' "$dom" | grep -c '<th class="policy">static</th>')" = "3 1"
# Short numbers outside the appendix: at most 4 significant digits.
long=$(sed '/<details id="appendix"/,$d' "$dom" | grep -o '<td class="n">[^<]*' | sed 's/<td class="n">//; s/ .*//' |
	awk '{ d = $0; sub(/e.*/, "", d); gsub(/[^0-9]/, "", d); sub(/^0+/, "", d); if (length(d) > 4) print }' | head -3 | tr '\n' ' ')
check "DOM: no number with more than 4 significant digits before the appendix ($long)" test -z "$long"
# The stragglers: a row per point and policy, in the points' order.
check "DOM: the straggler table's rows are the points' (3 x 2 policies)" test \
	"$(srows straggler-table | sed 's/<tr data-point="\([0-9]*\)".*/\1/' | tr '\n' ,)" = "1,1,2,2,3,3,"
# Plots of every point, not only the first; the raw tables folded away.
for p in 1 2 3; do
	check "DOM: point $p's gantt and iteration times" sh -c "grep -q 'id=\"plot-$p-gantt\"' '$dom' && grep -q 'id=\"plot-$p-iteration-time\"' '$dom'"
done
check "DOM: 22 inline plots (the speedup, 7 per point)" test "$(grep -o '<svg' "$dom" | wc -l)" = 22
for id in summary keys common scenarios speedup-table; do
	check "DOM: #$id only in the appendix" test "$(sed '/<details id="appendix"/,$d' "$dom" | grep -c "id=\"$id\"") $(sed -n '/<details id="appendix"/,$p' "$dom" | grep -c "<table id=\"$id\"")" = "0 1"
done
# The layout at 1400 pixels: no sideways scroll, no table overflowing its
# box, no cell over three lines; the check itself catches a narrow window.
layout "$h" 1400 "$TMP/l1400"
check "layout at 1400 px: no horizontal scroll, nothing overflows or wraps over 3 lines ($(cat "$TMP/l1400.layout"))" \
	test "$(cat "$TMP/l1400.layout")" = "1400 1400 [] []"
layout "$h" 500 "$TMP/l500"
check "layout: the check catches tables too wide for a 500 px window (Chromium's narrowest; $(cat "$TMP/l500.layout"))" \
	grep -q '^500 500 \[[a-z]' "$TMP/l500.layout"
# The screenshot: a PNG of the window's size, and not a blank page.
png="$TMP/r.png"
check "screenshot: a PNG" test "$(head -c 4 "$png" | od -An -c | tr -d ' ')" = '211PNG'
check "screenshot: 1200 pixels wide" test "$(od -An -tu1 -j16 -N4 "$png" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')" = 1200
check "screenshot: not blank (more than 100 kB)" test "$(stat -c %s "$png")" -gt 100000
check "PDF: written" test "$(head -c 5 "$TMP/r.pdf")" = '%PDF-'
check "PDF: more than 50 kB (the plots are in it)" test "$(stat -c %s "$TMP/r.pdf")" -gt 50000

check "DOM: no validation section in a file without validations" test "$(grep -c 'id="validation' "$dom")" = 0

# A validation database (lbsim validate writes it; here its comparisons are
# inserted by hand into a copy of the sweep, three runs marked measured), so
# that every expected figure is a hand calculation:
#   static:              0.30 s simulated, 0.32 measured: gap 0.30/0.32 - 1 = -0.0625; the baseline
#   static-proportional: speedups 1.666666667 and 1.6 +- 0.04: gap 0.0416667,
#                        tolerance max(5%, 3 x 0.04/1.6 = 0.075) = 0.075: within
#   lbbsp-cpu:           speedups 2 and 1.6, one repeat (no sd): gap 0.25, tolerance 0.05: not within
cp "$TMP/bw.db" "$TMP/val.db"
sqlite3 "$TMP/val.db" "UPDATE runs SET mode = 'measured' WHERE run_id IN (2, 4, 6);
	INSERT INTO validations VALUES
	(1, 'static', 1, '2', 0.30, 0.32, 0.01, 1, 1, 0, 0.05, 0.09, 0.02, '2026-12-01T11:00:00Z', 0.031),
	(1, 'static-proportional', 3, '4', 0.18, 0.20, 0.004, 1.666666667, 1.6, 0.04, 0.06, 0.1, 0.03, '2026-12-01T11:00:00Z', 0.031),
	(1, 'lbbsp-cpu', 5, '6', 0.15, 0.20, NULL, 2.0, 1.6, NULL, 0.25, 0.3, 0.1, '2026-12-01T11:00:00Z', 0.031)"
"$LBSIM" report "$TMP/val.db" -o "$TMP/val.html" -q
check "validation report: exit 0" test $? -eq 0
browse "$TMP/val.html" "$TMP/v"
check "validation report: no console message" test ! -s "$TMP/v.console"
vdom="$TMP/v.dom"
for id in validation plot-validation validation-table; do
	check "validation DOM: #$id" grep -q "id=\"$id\"" "$vdom"
done
check "validation DOM: 23 inline plots (the 22 and measured against simulated)" test "$(grep -o '<svg' "$vdom" | wc -l)" = 23
check "validation DOM: a point per policy" test "$(sed -n '/id="plot-validation"/,/<\/figure>/p' "$vdom" | grep -o '<circle' | wc -l)" = 3
vrow() { sed -n '/<table id="validation-table">/,/<\/table>/p' "$vdom" | grep "^<tr><td class=\"n\">1</td><td>$1</td>" | sed 's/<\/td>/\n/g; s/<td[^>]*>//g; s/<tr>//g' | sed -n "$2p"; }
check "validation DOM: a row per policy" test "$(sed -n '/<table id="validation-table">/,/<\/table>/p' "$vdom" | grep -c '^<tr>')" = 3
# Columns: 5 simulated_iteration_s, 6 measured, 7 its sd, 8 iteration_gap, 9 and 10
# the speedups, 11 the measured speedup's sd, 12 speedup_gap, 13 tolerance, 14 within,
# 15 to 17 the errors and the batch difference, 18 the machine's drift.
check "static: times 0.3 and 0.32 +- 0.01" test "$(vrow static 5) $(vrow static 6) $(vrow static 7)" = "0.3 0.32 0.01"
check "static: iteration gap -0.0625, the baseline" test "$(vrow static 8) $(vrow static 14)" = "-0.0625 baseline"
check "static: the machine's drift" test "$(vrow static 18)" = 0.031
check "static-proportional: speedups, gap, tolerance, within" test \
	"$(vrow static-proportional 9) $(vrow static-proportional 10) $(vrow static-proportional 12) $(vrow static-proportional 13) $(vrow static-proportional 14)" = "1.66667 1.6 0.0416667 0.075 yes"
check "static-proportional: iteration gap -0.1" test "$(vrow static-proportional 8)" = "-0.1"
check "lbbsp-cpu: no sd with one repeat, gap 0.25 over a tolerance of 0.05: not within" test \
	"[$(vrow lbbsp-cpu 11)] $(vrow lbbsp-cpu 12) $(vrow lbbsp-cpu 13) $(vrow lbbsp-cpu 14)" = "[] 0.25 0.05 no"

# Without gnuplot, the tables alone, saying why.
PATH=/nonexistent "$LBSIM" report "$TMP/bw.db" -o "$TMP/np.html" 2> "$TMP/err" > /dev/null
check "report without gnuplot: exit 0" test $? -eq 0
check "... says so" grep -q 'gnuplot is not on PATH' "$TMP/err"
check "... no plots, the tables" test "$(grep -c '<svg' "$TMP/np.html") $(grep -c 'id="summary"' "$TMP/np.html")" = "0 1"
"$LBSIM" report "$TMP/none.db" -o "$TMP/none.html" 2> /dev/null
check "report of a missing database: exit 3, nothing written" test $? -eq 3 -a ! -e "$TMP/none.html"
"$LBSIM" report 2> "$TMP/err"
check "report without a database: exit 2, a short usage" test $? -eq 2 -a "$(wc -l < "$TMP/err")" -le 3
# A file of what-if analyses and no runs (issue 33): the jobs, the slowdown,
# the policies and the plots lbsim plot draws for it, inline, not "0 runs".
W=$top_srcdir/traces/data/bytedance-whatif
"$LBSIM" whatif "$W/trace-ST.csv.gz" --meta "$W/meta-ST.yaml" -q -o "$TMP/wi.db"
"$LBSIM" report "$TMP/wi.db" -o "$TMP/wi.html" 2> "$TMP/err"; rc=$?
check "report of a whatif database: exit 0 (got $rc)" test $rc -eq 0
check "... says what the file holds, nothing of 0 runs or (null)" \
	sh -c "grep -q '1 what-if analysis of per-operation traces' '$TMP/wi.html' && ! grep -q '(null)\|0 runs' '$TMP/wi.html'"
check "... the policies' recovery (repartition's 89.1%)" grep -q '<td>repartition</td><td>1.8792</td><td>89.1%</td>' "$TMP/wi.html"
check "... its two plots inline, as SVG" test "$(grep -c '<svg' "$TMP/wi.html")" = 2
check "... no forward table without --forward" sh -c "! grep -q 'id=\"whatif-forward\"' '$TMP/wi.html'"
"$LBSIM" whatif "$W/trace-ST.csv.gz" --meta "$W/meta-ST.yaml" --forward -q -o "$TMP/wif.db"
"$LBSIM" report "$TMP/wif.db" -o "$TMP/wif.html" 2> "$TMP/err"
check "with --forward: the forward table, resplit's 80.5% beside repartition's 89.1%" \
	grep -q '<td>resplit</td><td>1.9079</td><td>80.5%</td><td class="n">1</td><td>repartition</td><td>89.1%</td>' "$TMP/wif.html"
rm -rf "$TMP/wip"
"$LBSIM" plot "$TMP/wi.db" --out "$TMP/wip" --format svg,pdf -q
check "lbsim plot --format svg,pdf on a whatif file: SVG and PDF, not PNG data under their names" \
	sh -c "head -c 400 '$TMP/wip/whatif-heatmap.svg' | grep -q '<svg' && head -c 5 '$TMP/wip/whatif-timeline.pdf' | grep -q '%PDF'"

# A single run: the speedup as a table, not a one-point plot, and nothing
# of gnuplot's on the terminal (it warned of an empty y range).
"$LBSIM" "$top_srcdir/scenarios/default.ini" --set run.iterations=20 -q -o "$TMP/one.db"
"$LBSIM" report "$TMP/one.db" -o "$TMP/one.html" 2> "$TMP/err"; rc=$?
check "report of one run: exit 0, silent, no one-point speedup plot, the table" \
	sh -c "[ $rc -eq 0 ] && [ ! -s '$TMP/err' ] && ! grep -q 'plot-speedup' '$TMP/one.html' && grep -q 'id=\"speedup-table\"' '$TMP/one.html'"

# A 54-run sweep (scenarios/sweeps/cluster-size.ini, shortened): its four
# zipped keys vary together, one section; the rows go by cluster size, a
# column of its own; the straggler table has a row per point and policy.
cat > "$TMP/cs.ini" <<EOF
[sweep]
scenario = $top_srcdir/scenarios/default.ini
detail = workers
[zip]
workers.v100.count = 1..32 *2
workers.p100.count = 1..32 *2
workers.k80.count = 1..32 *2
run.global_batch = 192..6144 *2
[vary]
policy = static, static-proportional, lbbsp-gpu
seeds = 1..3
run.iterations = 100
EOF
"$LBSIM" sweep "$TMP/cs.ini" -j 2 -q -o "$TMP/cs.db" > /dev/null
"$LBSIM" report "$TMP/cs.db" -o "$TMP/cs.html" -q
browse "$TMP/cs.html" "$TMP/c"
dom="$TMP/c.dom"
check "54-run sweep: 54 runs, no console message" test "$(q "$TMP/cs.db" 'SELECT count(*) FROM runs')" = 54 -a ! -s "$TMP/c.console"
check "54-run sweep: the zipped keys are one section" test "$(grep -c '<h2 id="by-' "$dom") $(grep -c '<h2 id="by-0">By run.global_batch, workers.k80.count, workers.p100.count, workers.v100.count</h2>' "$dom")" = "1 1"
check "54-run sweep: the speedup rows by cluster size" test "$(srows speedup-0 | sed 's/^[^>]*><td class="n">\([0-9]*\)<.*/\1/' | tr '\n' ,)" = "3,6,12,24,48,96,"
check "54-run sweep: the plot against n_workers" grep -q 'Speedup over static against n_workers' "$dom"
check "54-run sweep: 18 straggler rows, the points' order" test \
	"$(srows straggler-table | sed 's/<tr data-point="\([0-9]*\)".*/\1/' | tr '\n' ,)" = "1,1,1,2,2,2,3,3,3,4,4,4,5,5,5,6,6,6,"
check "54-run sweep: plots for all 6 points" test "$(grep -c '<details id="point-' "$dom")" = 6
layout "$TMP/cs.html" 1400 "$TMP/c1400"
check "54-run sweep: layout at 1400 px ($(cat "$TMP/c1400.layout"))" test "$(cat "$TMP/c1400.layout")" = "1400 1400 [] []"
layout "$TMP/wi.html" 1400 "$TMP/w1400"
check "whatif report: layout at 1400 px ($(cat "$TMP/w1400.layout"))" test "$(cat "$TMP/w1400.layout")" = "1400 1400 [] []"

# A sweep of a policy's option (issue 33 item 1): reported by predictor, a
# column per variant and a section with the speedup against the option.
"$LBSIM" sweep "$top_srcdir/tests/data/sweep/policy-option.ini" -j 2 -q -o "$TMP/popt.db" > /dev/null
"$LBSIM" report "$TMP/popt.db" -o "$TMP/popt.html" -q
check "policy option: a column per variant" grep -q '<th class="policy">lbbsp-cpu (predictor=ema)</th>' "$TMP/popt.html"
check "policy option: a section by the predictor, with its plot" sh -c \
	"grep -q '<h2 id=\"by-option-0\">By policy.lbbsp-cpu.predictor</h2>' '$TMP/popt.html' && grep -q 'Speedup over static against policy.lbbsp-cpu.predictor' '$TMP/popt.html'"

finish
