# SPDX-License-Identifier: GPL-3.0-or-later
# Speedup over the static baseline against a key (the cluster size by
# default), one line per policy and value of the other keys that vary: the
# mean over seeds, with bars for its 95% confidence interval (Student's t
# over the seeds; none with one seed). The least and greatest are in the CSV.
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line:
#           series,label,X,x_text,mean_speedup,min_speedup,max_speedup,
#           runs,points,ci95_low,ci95_high
#           series numbers the lines 0, 1, ... (rows of a line together, in
#           increasing x), label names them; column 3, x, is named after
#           the axis ("workers", "network.bandwidth (Gbit/s)"); x_text is
#           x as written
#   out     the picture to write (default: speedup.FORMAT)
#   format  optional: png (default), svg or pdf
#   title   optional: the plot's title
#   xlabel  optional: the x axis' label (default: column 3's name)
#   categorical  optional: 1 when x numbers values that are not numbers
#           (x_text labels the ticks): bars, a cluster per value
# By hand:  gnuplot -e "data='speedup.csv'" analysis/speedup.gp
if (!exists("data")) { print "speedup.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
NAME = "speedup"
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
# The default title says what the bars are, when any point has more than one seed.
if (!exists("title")) {
	title = "Speedup over static vs cluster size"
	stats data using 8 nooutput
	if (STATS_max > 1) { title = title . " (mean over seeds; bars: its 95% confidence interval)" }
}
if (!exists("xlabel")) { xl_ = ""; stats data using (xl_ = columnheader(3), 0) nooutput; xlabel = xl_ }
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
categories = int(STATS_max) + 1
if (categorical) {
	# A tic at each value's cluster, named by x_text.
	array X_[categories]
	do for [k_ = 1:categories] { X_[k_] = "" }
	stats data using (X_[int($3) + 1] = strcol(4), 0) nooutput
	set xtics ()
	do for [k_ = 1:categories] { set xtics add (X_[k_] k_ - 1) }
	set offsets 0, 0, 0, 0
	set xrange [-0.5 : categories - 0.5]
}
# More lines than a key can name: their labels are in the CSV.
if (n >= 12) {
	unset key
	title = title . sprintf("\n(%d lines: too many to name here; their labels are in the CSV)", n + 1)
}
# The y range holds every interval with room above and below, so that no
# line (static's, at 1) lies on the border; bars start at 0.
stats data using 10 nooutput
lo_ = STATS_min
stats data using 11 nooutput
hi_ = STATS_max
pad_ = hi_ > lo_ ? (hi_ - lo_) * 0.08 : 0.5
if (categorical) { set yrange [0 : hi_ + pad_] } else { set yrange [lo_ - pad_ : hi_ + pad_] }
set title title
set xlabel xlabel
set ylabel "speedup over static"
set grid
# The key above the plot, across: it takes no width from it.
if (n < 12) { set key outside top center horizontal }
set bars 2
if (categorical) {
	# A cluster of bars per value, one bar per line, its interval on it.
	bw_ = 0.8 / (n + 1)
	set boxwidth bw_ absolute
	set style fill solid 0.75 border -1
	plot for [i = 0:n] data using ($1 == i ? $3 + (i - n / 2.0) * bw_ : NaN):5 with boxes lt i + 1 \
		title label(i), \
		for [i = 0:n] data using ($1 == i ? $3 + (i - n / 2.0) * bw_ : NaN):5:10:11 with yerrorbars lc "black" ps 0 \
		notitle
} else {
	plot for [i = 0:n] data using ($1 == i ? $3 : NaN):5:10:11 with yerrorlines lw 2 lt i + 1 ps 1.2 \
		title label(i)
}
