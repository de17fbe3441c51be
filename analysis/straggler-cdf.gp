# SPDX-License-Identifier: GPL-3.0-or-later
# Cumulative distribution of the straggler gap (slowest minus fastest
# worker's compute time, per iteration), one line per policy.
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line: series,straggler_gap_s,cdf; the rows of
#           each series together, in increasing gap (series = the policy)
#   out     the PNG to write (default: straggler-cdf.png)
#   series  optional: the series to draw, space-separated (default: all)
#   title   optional: the plot's title
# By hand:  gnuplot -e "data='straggler-cdf.csv'" analysis/straggler-cdf.gp
if (!exists("data")) { print "straggler-cdf.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
if (!exists("out")) out = "straggler-cdf.png"
if (!exists("series")) series = system(sprintf("tail -n +2 '%s' | cut -d, -f1 | uniq | tr '\\n' ' '", data))
if (!exists("title")) title = "Straggler gap, cumulative distribution per policy"
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
	set terminal pngcairo size 960,600 noenhanced font ",10"
} else {
	set terminal png size 960,600 noenhanced
}
set output out
set datafile separator ","
set datafile columnheaders
set title title
set xlabel "straggler gap (s)"
set ylabel "fraction of iterations"
set yrange [0:1.02]
set xrange [0:*]
set grid
set key right bottom
plot for [s in series] data using (strcol(1) eq s ? $2 : NaN):3 with steps lw 2 title s
