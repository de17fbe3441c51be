# SPDX-License-Identifier: GPL-3.0-or-later
# Iteration time over simulated time, one line per policy.
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line: series,label,time_s,iteration_s; series
#           numbers the lines 0, 1, ... (rows of a line together), label
#           names them (the policy)
#   out     the picture to write (default: iteration-time.FORMAT)
#   format  optional: png (default), svg or pdf
#   title   optional: the plot's title
# By hand:  gnuplot -e "data='iteration-time.csv'" analysis/iteration-time.gp
if (!exists("data")) { print "iteration-time.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
NAME = "iteration-time"
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
if (!exists("title")) title = "Iteration time per policy"
stats data using 1 nooutput
n = int(STATS_max)
set title title
set xlabel "simulated time (s)"
set ylabel "iteration time (s)"
set yrange [0:*]
set grid
set key outside right top
plot for [i = 0:n] data using ($1 == i ? $3 : NaN):4 with linespoints lw 1.5 lt i + 1 pi -40 ps 0.8 \
	title label(i)
