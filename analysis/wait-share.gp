# SPDX-License-Identifier: GPL-3.0-or-later
# The share of each worker group's time spent waiting at the barrier for
# the slowest worker, per policy: one cluster of bars per policy, a bar per
# group.
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line: policy,GROUP,GROUP,...: one row per
#           policy, the share (0 to 1) of each group in its column
#   out     the picture to write (default: wait-share.FORMAT)
#   format  optional: png (default), svg or pdf
#   title   optional: the plot's title
# By hand:  gnuplot -e "data='wait-share.csv'" analysis/wait-share.gp
if (!exists("data")) { print "wait-share.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
NAME = "wait-share"
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
if (!exists("title")) title = "Share of each group's time spent waiting"
stats data using 0 nooutput
cols = STATS_columns
set title title
set ylabel "share of the time spent waiting at the barrier"
set yrange [0:1]
set ytics ("0%%" 0, "20%%" 0.2, "40%%" 0.4, "60%%" 0.6, "80%%" 0.8, "100%%" 1)
set grid y
# The key above the plot, across: it takes no width from it.
set key outside top center horizontal title "worker group"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
plot for [c = 2:cols] data using c:xtic(1) title columnhead(c) lt c - 1
