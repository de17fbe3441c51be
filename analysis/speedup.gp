# SPDX-License-Identifier: GPL-3.0-or-later
# Speedup over the static baseline against a key (the cluster size by
# default), one line per policy and value of the other keys that vary: the
# mean over seeds, with bars for its 95% confidence interval (Student's t
# over the seeds; none with one seed). The least and greatest are in the CSV.
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line:
#           series,label,x,x_text,mean_speedup,min_speedup,max_speedup,
#           runs,points,ci95_low,ci95_high
#           series numbers the lines 0, 1, ... (rows of a line together, in
#           increasing x), label names them; x_text is x as written
#   out     the picture to write (default: speedup.FORMAT)
#   format  optional: png (default), svg or pdf
#   title   optional: the plot's title
#   xlabel  optional: the x axis' label (default: workers)
#   categorical  optional: 1 when x numbers values that are not numbers
#           (x_text labels the ticks)
# By hand:  gnuplot -e "data='speedup.csv'" analysis/speedup.gp
if (!exists("data")) { print "speedup.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
NAME = "speedup"
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
# The default title says what the bars are, when any point has more than one seed.
if (!exists("title")) {
	title = "Speedup over static vs cluster size"
	stats data using 8 nooutput
	if (STATS_max > 1) { title = title . " (mean over seeds; bars: its 95% confidence interval)" }
}
if (!exists("xlabel")) xlabel = "workers"
if (!exists("categorical")) categorical = 0
stats data using 1 nooutput
n = int(STATS_max)
stats data using 3 nooutput
# Values a decade or more apart read best on a log10 axis, doubling ones
# on a log2 axis (either said on the axis); a single value needs room.
if (!categorical && STATS_min > 0 && STATS_max >= 100 * STATS_min) {
	set logscale x 10
	xlabel = xlabel . " (log scale)"
}
if (!categorical && STATS_min > 0 && STATS_max >= 8 * STATS_min && STATS_max < 100 * STATS_min) {
	set logscale x 2
	xlabel = xlabel . " (log2 scale)"
}
if (STATS_max == STATS_min) {
	set xrange [STATS_min * 0.5 : STATS_max * 1.5]
} else {
	set offsets graph 0.05, graph 0.05, 0, 0
}
if (categorical) { set xtics () ; set offsets 0.3, 0.3, 0, 0 }
# More lines than a key can name: their labels are in the CSV.
if (n >= 12) {
	unset key
	title = title . sprintf("\n(%d lines: too many to name here; their labels are in the CSV)", n + 1)
}
# One speedup value (a single run, or static alone): room around it, no
# "empty y range" warning.
stats data using 5 nooutput
if (STATS_max == STATS_min) { set yrange [STATS_min - 0.5 : STATS_max + 0.5] }
set title title
set xlabel xlabel
set ylabel "speedup over static (static time / policy time)"
set grid
if (n < 12) { set key outside right top }
set bars 2
if (categorical) {
	plot for [i = 0:n] data using ($1 == i ? $3 : NaN):5:10:11:xtic(4) with yerrorlines lw 2 lt i + 1 ps 1.2 \
		title label(i)
} else {
	plot for [i = 0:n] data using ($1 == i ? $3 : NaN):5:10:11 with yerrorlines lw 2 lt i + 1 ps 1.2 \
		title label(i)
}
