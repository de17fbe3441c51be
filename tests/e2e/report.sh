#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: `lbsim report` writes one self-contained HTML file, checked in
# a real browser: headless Chromium renders it to a screenshot and to PDF
# with no console message, and the rendered page (--dump-dom) holds the
# expected tables and inline plots. The console check is first shown to
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
check "DOM: 8 inline plots" test "$(grep -o '<svg' "$dom" | wc -l)" = 8
for id in plot-speedup plot-gantt plot-wait-share plot-straggler-cdf plot-iteration-time plot-iteration-cdf plot-time-to-train plot-batch-sizes \
	speedup-table straggler-table summary keys common scenarios; do
	check "DOM: #$id" grep -q "id=\"$id\"" "$dom"
done
# The tables hold the database's numbers: a row per run, and the speedups.
rows=$(sed -n '/<table id="summary">/,/<\/table>/p' "$dom" | grep -c '^<tr>')
check "DOM: the summary has a row per run" test "$rows" = "$(q "$TMP/bw.db" 'SELECT count(*) FROM runs')"
best=$(q "$TMP/bw.db" "SELECT printf('%.6g', max(mean_speedup)) FROM speedup_by_size")
check "DOM: the greatest mean speedup is shown ($best)" grep -q "<td class=\"n\">$best</td>" "$dom"
check "DOM: the keys that vary are columns" grep -q '<th>network.bandwidth \[Gbit/s\]</th>' "$dom"
check "DOM: the gantt legend" grep -q 'wait at the barrier' "$dom"
# The screenshot: a PNG of the window's size, and not a blank page.
png="$TMP/r.png"
check "screenshot: a PNG" test "$(head -c 4 "$png" | od -An -c | tr -d ' ')" = '211PNG'
check "screenshot: 1200 pixels wide" test "$(od -An -tu1 -j16 -N4 "$png" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')" = 1200
check "screenshot: not blank (more than 100 kB)" test "$(stat -c %s "$png")" -gt 100000
check "PDF: written" test "$(head -c 5 "$TMP/r.pdf")" = '%PDF-'
check "PDF: more than 50 kB (the plots are in it)" test "$(stat -c %s "$TMP/r.pdf")" -gt 50000

# Without gnuplot, the tables alone, saying why.
PATH=/nonexistent "$LBSIM" report "$TMP/bw.db" -o "$TMP/np.html" 2> "$TMP/err" > /dev/null
check "report without gnuplot: exit 0" test $? -eq 0
check "... says so" grep -q 'gnuplot is not on PATH' "$TMP/err"
check "... no plots, the tables" test "$(grep -c '<svg' "$TMP/np.html") $(grep -c 'id="summary"' "$TMP/np.html")" = "0 1"
"$LBSIM" report "$TMP/none.db" -o "$TMP/none.html" 2> /dev/null
check "report of a missing database: exit 3, nothing written" test $? -eq 3 -a ! -e "$TMP/none.html"
"$LBSIM" report 2> "$TMP/err"
check "report without a database: exit 2, a short usage" test $? -eq 2 -a "$(wc -l < "$TMP/err")" -le 3
finish
