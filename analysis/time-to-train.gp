# SPDX-License-Identifier: GPL-3.0-or-later
# Time to train: the simulated time at which each policy's run has done so
# many epochs (or, for a run given in iterations, so many iterations), one
# line per policy. The policy whose line is lowest trains fastest.
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line: series,label,done,time_s; series numbers
#           the lines 0, 1, ... (rows of a line together, in increasing
#           done), label names them (the policy)
#   out     the picture to write (default: time-to-train.FORMAT)
#   format  optional: png (default), svg or pdf
#   title   optional: the plot's title
#   xlabel  optional: what done counts (default: iterations)
# By hand:  gnuplot -e "data='time-to-train.csv'" analysis/time-to-train.gp
if (!exists("data")) { print "time-to-train.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
NAME = "time-to-train"
# The picture: PNG, SVG or PDF (format). Its size: width and height, in
# pixels for png and svg, in inches for pdf (default 960 x 600 pixels,
# 10 x 6.25 in); its font: "NAME,SIZE" (points); scale: the size of text and
# lines on a png, 1 for text at 96 pixels per inch, as cairo draws it
# (lbsim plot --size 3.5x2.5in
# draws a png at 300 pixels per inch: scale 300 / 96).
if (!exists("format")) format = "png"
if (!exists("out")) out = NAME . "." . format
if (!exists("width")) width = (format eq "pdf") ? 10 : 960
if (!exists("height")) height = (format eq "pdf") ? 6.25 : 600
if (!exists("font")) font = (format eq "svg") ? "sans,11" : "sans,10"
if (!exists("scale")) scale = 1
if (format eq "svg") {
	set terminal svg size width,height dynamic noenhanced font font background "white"
}
if (format eq "pdf") {
	set terminal pdfcairo size width,height noenhanced font font
}
if (format eq "png" && strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
	set terminal pngcairo size width,height noenhanced font font fontscale scale linewidth scale
}
if (format eq "png" && strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
	set terminal png size width,height noenhanced
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
if (!exists("title")) title = "Time to train per policy"
if (!exists("xlabel")) xlabel = "iterations"
stats data using 1 nooutput
n = int(STATS_max)
set title title
set xlabel xlabel
set ylabel "simulated time (s)"
set xrange [0:*]
set yrange [0:*]
set grid
# The key above the plot, across: it takes no width from it.
set key outside top center horizontal
plot for [i = 0:n] data using ($1 == i ? $3 : NaN):4 with linespoints lw 2 lt i + 1 pi -20 ps 0.8 \
	title label(i)
