# SPDX-License-Identifier: GPL-3.0-or-later
# The machines' load overlaid on the iteration time: each worker group's
# mean CPU utilisation reading (what a background job or a trace's
# cpu_util column says of the machine, right axis) and the iteration time
# of one run (left axis), over simulated time. Where the load rises, the
# iterations slow down, until a policy moves the samples away.
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line: series,label,time_s,value; series 0 is
#           the iteration time (s), 1, 2, ... the groups' readings (0 to 1)
#   out     the picture to write (default: availability.FORMAT)
#   format  optional: png (default), svg or pdf
#   title   optional: the plot's title
# By hand:  gnuplot -e "data='availability.csv'" analysis/availability.gp
if (!exists("data")) { print "availability.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
NAME = "availability"
# The picture: PNG, SVG or PDF (format), 960 x 600 pixels or 10 x 6.25 in.
if (!exists("format")) format = "png"
if (!exists("out")) out = NAME . "." . format
if (format eq "svg") {
	set terminal svg size 960,600 dynamic noenhanced font "sans,11" background "white"
}
if (format eq "pdf") {
	set terminal pdfcairo size 10in,6.25in noenhanced font "sans,10"
}
if (format eq "png" && strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
	set terminal pngcairo size 960,600 noenhanced font ",10"
}
if (format eq "png" && strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
	set terminal png size 960,600 noenhanced
}
set output out
set datafile separator ","
set datafile columnheaders
# Lines told apart by colour, dash pattern and marker, not colour alone.
do for [i = 1:8] { dti = (i - 1) % 5 + 1; pti = (i - 1) % 7 + 4; set linetype i dashtype dti pointtype pti }
# The title of series i: its label column (labels have no commas), at most
# 60 characters, read by gnuplot itself (no shell: the file's name and its
# labels are data, never code).
stats data using 1 nooutput
array L_[int(STATS_max) + 1]
do for [k_ = 1:|L_|] { L_[k_] = "" }
stats data using (L_[int($1) + 1] = strcol(2), 0) nooutput
label(i) = strlen(L_[i + 1]) > 60 ? L_[i + 1][1:57] . "..." : L_[i + 1]
if (!exists("title")) title = "Load and iteration time"
stats data using 1 nooutput
n = int(STATS_max)
set title title
set xlabel "simulated time (s)"
set ylabel "iteration time (s)"
set y2label "CPU utilisation reading, mean per group"
set yrange [0:*]
set y2range [0:1.05]
set y2tics ("0%%" 0, "25%%" 0.25, "50%%" 0.5, "75%%" 0.75, "100%%" 1)
set ytics nomirror
set grid
set key outside right top
plot data using ($1 == 0 ? $3 : NaN):4 with lines lw 1.5 lc rgb "black" title label(0), \
	for [i = 1:n] data using ($1 == i ? $3 : NaN):4 axes x1y2 with steps lw 1 lt i + 1 dt solid \
		title label(i)
