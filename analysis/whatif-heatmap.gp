# SPDX-License-Identifier: GPL-3.0-or-later
# lbsim whatif: the slowdown attributed to each worker, S_w, as a heat map
# of pipeline stage (rows) by data-parallel rank (columns).
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line: dp_rank,stage,S_w,rank
#   out     the picture to write (default: whatif-heatmap.FORMAT)
#   format  optional: png (default), svg or pdf
#   title   optional: the plot's title
# By hand:  gnuplot -e "data='whatif-heatmap.csv'" analysis/whatif-heatmap.gp
if (!exists("data")) { print "whatif-heatmap.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
if (!exists("format")) format = "png"
if (!exists("out")) out = "whatif-heatmap." . format
if (!exists("title")) title = "Slowdown per worker, S_w"
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
stats data using 1:2 nooutput
set title title
set xlabel "data-parallel rank"
set ylabel "pipeline stage"
set xrange [STATS_min_x - 0.5:STATS_max_x + 0.5]
set yrange [STATS_min_y - 0.5:STATS_max_y + 0.5]
set xtics 1
set ytics 1
if (STATS_max_x > 31) set xtics 4
set cblabel "S_w (1 = ideal)"
set palette defined (0 "#f7fbff", 1 "#fdae6b", 2 "#e6550d", 3 "#7f2704")
unset key
# each worker a cell; its value written in it when there is room
if ((STATS_max_x - STATS_min_x + 1) * (STATS_max_y - STATS_min_y + 1) <= 32) {
	plot data using 1:2:(0.5):(0.5):3 with boxxyerror fill solid 1 noborder fc palette, \
	     data using 1:2:(sprintf("%.3f", $3)) with labels font ",8" textcolor "black"
} else {
	plot data using 1:2:(0.5):(0.5):3 with boxxyerror fill solid 1 noborder fc palette
}
