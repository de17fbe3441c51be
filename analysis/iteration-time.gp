# SPDX-License-Identifier: GPL-3.0-or-later
# Iteration time over simulated time, one line per policy.
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line: series,time_s,iteration_s; the rows of
#           each series together (series = the policy)
#   out     the PNG to write (default: iteration-time.png)
#   series  optional: the series to draw, space-separated (default: all)
#   title   optional: the plot's title
# By hand:  gnuplot -e "data='iteration-time.csv'" analysis/iteration-time.gp
if (!exists("data")) { print "iteration-time.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
if (!exists("out")) out = "iteration-time.png"
if (!exists("series")) series = system(sprintf("tail -n +2 '%s' | cut -d, -f1 | uniq | tr '\\n' ' '", data))
if (!exists("title")) title = "Iteration time per policy"
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
	set terminal pngcairo size 960,600 noenhanced font ",10"
} else {
	set terminal png size 960,600 noenhanced
}
set output out
set datafile separator ","
set datafile columnheaders
set title title
set xlabel "simulated time (s)"
set ylabel "iteration time (s)"
set yrange [0:*]
set grid
set key outside right top
plot for [s in series] data using (strcol(1) eq s ? $2 : NaN):3 with lines lw 1 title s
