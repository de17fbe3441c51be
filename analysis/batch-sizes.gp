# SPDX-License-Identifier: GPL-3.0-or-later
# Batch sizes over simulated time: one step line per worker (or per group of
# workers, for large clusters), coloured by worker group.
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line: series,label,time_s,batch_samples; series
#           numbers the lines 0, 1, ...; the rows of each line together, in
#           increasing time; label names the line's group
#   out     the picture to write (default: batch-sizes.FORMAT)
#   format  optional: png (default), svg or pdf
#   labels  optional: the key entry of each line, space-separated, "-" for
#           none (default: the label column, at the first line of a group)
#   colors  optional: the line type of each line, space-separated
#           (default: one per group)
#   title   optional: the plot's title
# By hand:  gnuplot -e "data='batch-sizes.csv'" analysis/batch-sizes.gp
if (!exists("data")) { print "batch-sizes.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
# Defaults from the CSV, read by gnuplot itself (no shell): a key entry at
# the first line of each group, one colour per group.
if (!exists("labels") || !exists("colors")) {
	set datafile separator ","
	set datafile columnheaders
	stats data using 1 nooutput
	array G_[int(STATS_max) + 1]
	do for [k_ = 1:|G_|] { G_[k_] = "" }
	stats data using (G_[int($1) + 1] = strcol(2), 0) nooutput
	labels_ = ""
	colors_ = ""
	g_ = ""
	n_ = 0
	do for [k_ = 1:|G_|] {
		if (G_[k_] ne g_) { n_ = n_ + 1 }
		labels_ = labels_ . (G_[k_] eq g_ ? "-" : G_[k_]) . " "
		colors_ = colors_ . sprintf("%d ", n_)
		g_ = G_[k_]
	}
	if (!exists("labels")) { labels = labels_ }
	if (!exists("colors")) { colors = colors_ }
}
if (!exists("title")) title = "Batch size per worker"
NAME = "batch-sizes"
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
stats data using 1 nooutput
n = int(STATS_max)
set title title
set xlabel "simulated time (s)"
set ylabel "batch (samples)"
set yrange [0:*]
set grid
# The key above the plot, across: it takes no width from it.
set key outside top center horizontal
plot for [i=0:n] data using ($1 == i ? $3 : NaN):4 with steps lw 2 lc int(word(colors, i + 1)) dt int(word(colors, i + 1)) \
	title (word(labels, i + 1) eq "-" ? "" : word(labels, i + 1))
