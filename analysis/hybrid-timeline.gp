# SPDX-License-Identifier: GPL-3.0-or-later
# A hybrid run's longest step, op by op: one lane per (replica, stage)
# group, its forward and backward computes, p2p transfers, collectives and
# the rest on one time axis (a Gantt chart by stage and replica). The
# picture of a straggler: the other lanes' gaps (bubbles and waits) line up
# behind the slow group's computes.
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line: lane,start_s,end_s,kind; lane = dp_rank
#           * stages + stage; kind 1 forward, 2 backward, 3 p2p, 4
#           collective, 5 other (gc, the optimizer); computes are drawn
#           on top, the rest at half height beneath them
#   stages  the number of pipeline stages (default 1)
#   out     the picture to write (default: hybrid-timeline.FORMAT)
#   format  optional: png (default), svg or pdf
#   title   optional: the plot's title
# By hand:  gnuplot -e "data='hybrid-timeline.csv'; stages=4" analysis/hybrid-timeline.gp
if (!exists("data")) { print "hybrid-timeline.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
if (!exists("stages")) stages = 1
if (!exists("title")) title = "A hybrid run's longest step"
NAME = "hybrid-timeline"
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
stats data using 3:1 nooutput
tmax = STATS_max_x
lanes = STATS_max_y + 1
set xrange [0:tmax * 1.02]
set yrange [lanes - 0.5:-0.5]
set xlabel "time from the step's start (s)"
set ylabel "group (dp_rank x stages + stage)"
if (lanes > 24) { set ytics stages * 4 } else { set ytics 1 }
set style fill solid 1 noborder
set key outside top center horizontal
set title title
# colours: forward, backward, p2p, collective, other
array C[5] = ["#31a354", "#3182bd", "#bdbdbd", "#e6550d", "#636363"]
array N[5] = ["forward", "backward", "p2p send/recv", "collective", "other"]
# computes on top, full height; transfers and collectives (a posted receive
# spans the wait for its peer) beneath them, half height
h(k) = k <= 2 ? 0.4 : 0.2
plot for [j = 0:4] data using (($4 == 5 - j) ? ($2 + $3) / 2 : NaN):1:2:3:($1 - h(5 - j)):($1 + h(5 - j)) \
	with boxxyerror lc rgb C[5 - j] title N[5 - j]
