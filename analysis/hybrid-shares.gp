# SPDX-License-Identifier: GPL-3.0-or-later
# Where a hybrid run's steps go: for each step, the mean over the (replica,
# stage) groups of each part of the step as a share of it (compute, pipeline
# bubble, exposed communication, waiting for other replicas, optimizer),
# stacked to 1 (doc/hybrid.md, "Time accounting").
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line:
#           step,compute,bubble,comm,wait,optimizer: one row a step, shares
#   out     the picture to write (default: hybrid-shares.FORMAT)
#   format  optional: png (default), svg or pdf
#   title   optional: the plot's title
# By hand:  gnuplot -e "data='hybrid-shares.csv'" analysis/hybrid-shares.gp
if (!exists("data")) { print "hybrid-shares.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
if (!exists("title")) title = "The shares of the steps"
NAME = "hybrid-shares"
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
set title title
set xlabel "step"
set ylabel "share of the step (mean over groups)"
set yrange [0:1]
set style data histograms
set style histogram rowstacked
set style fill solid 1 border rgb "white"
set boxwidth 0.8
set key outside right top vertical
stats data using 1 nooutput
if (STATS_records > 20) { set xtics 0, ceil(STATS_records / 10.0) } else { set xtics 1 }
array C[5] = ["#3182bd", "#bdbdbd", "#e6550d", "#fd8d3c", "#31a354"]
plot for [k = 2:6] data using k:xtic(1) lc rgb C[k - 1] title columnheader(k)
