# SPDX-License-Identifier: GPL-3.0-or-later
# lbsim whatif: one traced step, op by op, one lane per worker (dp_rank x
# stage), above the same step in the ideal replay, on one time axis.
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line: panel,lane,start_s,end_s,kind; panel 0
#           the traced step, 1 the ideal; lane = dp_rank * stages + stage;
#           kind 1 forward, 2 backward, 3 p2p, 4 collective, 5 other
#   stages  the number of pipeline stages (default 1)
#   out     the picture to write (default: whatif-timeline.FORMAT)
#   format  optional: png (default), svg or pdf
#   title   optional: the plot's title
# By hand:  gnuplot -e "data='whatif-timeline.csv'; stages=4" analysis/whatif-timeline.gp
if (!exists("data")) { print "whatif-timeline.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
if (!exists("format")) format = "png"
if (!exists("out")) out = "whatif-timeline." . format
if (!exists("stages")) stages = 1
if (!exists("title")) title = "A traced step and its ideal"
# The picture: PNG, SVG or PDF (format). Its size: width and height, in
# pixels for png and svg, in inches for pdf (default 1200 x 800 pixels,
# 12.5 x 8.33 in); its font: "NAME,SIZE" (points); scale: the size of text and
# lines on a png, 1 for text at 96 pixels per inch, as cairo draws it
# (lbsim plot --size 3.5x2.5in
# draws a png at 300 pixels per inch: scale 300 / 96).
if (!exists("format")) format = "png"
if (!exists("out")) out = NAME . "." . format
if (!exists("width")) width = (format eq "pdf") ? 12.5 : 1200
if (!exists("height")) height = (format eq "pdf") ? 8.33 : 800
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
stats data using 4:2 nooutput
tmax = STATS_max_x
lanes = STATS_max_y + 1
set xrange [0:tmax * 1.02]
set yrange [lanes - 0.5:-0.5]
set ylabel "worker (dp_rank x stages + stage)"
if (lanes > 24) { set ytics stages * 4 } else { set ytics 1 }
set style fill solid 1 noborder
# The key above the plot, across: it takes no width from it.
set key outside top center horizontal
set multiplot layout 2,1 title title
# colours: forward, backward, p2p, collective, other
array C[5] = ["#31a354", "#3182bd", "#bdbdbd", "#e6550d", "#636363"]
array N[5] = ["forward", "backward", "p2p send/recv", "collective", "other"]
do for [p = 0:1] {
	set title (p == 0 ? "traced" : "ideal (every op at its type's typical duration)")
	if (p == 1) { set xlabel "time from the step's start (s)" } else { unset xlabel }
	plot for [k = 1:5] data using (($1 == p && $5 == k) ? ($3 + $4) / 2 : NaN):2:3:4:($2 - 0.4):($2 + 0.4) \
		with boxxyerror lc rgb C[k] title N[k]
}
unset multiplot
