# SPDX-License-Identifier: GPL-3.0-or-later
# The machines' load overlaid on the iteration time: each worker group's
# CPU utilisation readings (what a background job or a trace's cpu_util
# column says of the machine, right axis) and the iteration time of one run
# (left axis), over simulated time. Where the load rises, the iterations
# slow down, until a policy moves the samples away. However long the run,
# a line has at most 200 points: each a bin of consecutive iterations (one
# each in a run of 200 or fewer), drawn as the mean with a band from the
# least to the greatest value in the bin (over its iterations and, for a
# group, its workers).
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line: series,label,time_s,value,low,high;
#           series 0 is the iteration time (s), 1, 2, ... the groups'
#           readings (0 to 1); time_s is the bin's first iteration's start,
#           value the mean in the bin, low and high the least and greatest
#   out     the picture to write (default: availability.FORMAT)
#   format  optional: png (default), svg or pdf
#   title   optional: the plot's title
# By hand:  gnuplot -e "data='availability.csv'" analysis/availability.gp
if (!exists("data")) { print "availability.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
NAME = "availability"
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
if (!exists("title")) title = "Load and iteration time"
stats data using 1 nooutput
n = int(STATS_max)
set title title
set xlabel "simulated time (s)"
set ylabel "iteration time (s)"
set y2label "CPU utilisation reading per group (mean; band: least to greatest)"
set yrange [0:*]
set y2range [0:1.05]
set y2tics ("0%%" 0, "25%%" 0.25, "50%%" 0.5, "75%%" 0.75, "100%%" 1)
set ytics nomirror
set grid
# The key above the plot, across: it takes no width from it.
set key outside top center horizontal
set style fill transparent solid 0.2 noborder
# The bands (least to greatest in each bin), then the means over them.
plot data using ($1 == 0 ? $3 : NaN):5:6 with filledcurves lc rgb "black" notitle, \
	for [i = 1:n] data using ($1 == i ? $3 : NaN):5:6 axes x1y2 with filledcurves lt i + 1 notitle, \
	data using ($1 == 0 ? $3 : NaN):4 with lines lw 1.5 lc rgb "black" dt solid title label(0), \
	for [i = 1:n] data using ($1 == i ? $3 : NaN):4 axes x1y2 with lines lw 1 lt i + 1 dt solid \
		title label(i)
