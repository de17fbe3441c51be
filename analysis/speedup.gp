# SPDX-License-Identifier: GPL-3.0-or-later
# Speedup over the static baseline against cluster size, one line per
# policy: the mean over seeds, with bars from the least to the greatest.
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line:
#           series,n_workers,mean_speedup,min_speedup,max_speedup
#           the rows of each series together, in increasing n_workers
#   out     the PNG to write (default: speedup.png)
#   series  optional: the series to draw, space-separated (default: all)
#   title   optional: the plot's title
# By hand:  gnuplot -e "data='speedup.csv'" analysis/speedup.gp
if (!exists("data")) { print "speedup.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
if (!exists("out")) out = "speedup.png"
if (!exists("series")) series = system(sprintf("tail -n +2 '%s' | cut -d, -f1 | uniq | tr '\\n' ' '", data))
if (!exists("title")) title = "Speedup over static vs cluster size"
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
	set terminal pngcairo size 960,600 noenhanced font ",10"
} else {
	set terminal png size 960,600 noenhanced
}
set output out
set datafile separator ","
set datafile columnheaders
stats data using 2 nooutput
# Doubling sizes read best on a log2 axis; a single size needs some room.
if (STATS_max >= 8 * STATS_min) { set logscale x 2 }
if (STATS_max == STATS_min) {
	set xrange [STATS_min * 0.5 : STATS_max * 1.5]
} else {
	set offsets graph 0.05, graph 0.05, 0, 0
}
set title title
set xlabel "workers"
set ylabel "speedup over static (static time / policy time)"
set grid
set key outside right top
plot for [s in series] data using (strcol(1) eq s ? $2 : NaN):3:4:5 with yerrorlines lw 2 pt 7 title s
