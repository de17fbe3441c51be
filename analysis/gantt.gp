# SPDX-License-Identifier: GPL-3.0-or-later
# Per-worker timeline of a few iterations, one panel per policy: each
# worker's compute (from the iteration's start), its wait at the barrier
# for the slowest worker, and the aggregation. The picture of a straggler:
# every worker but one waiting.
#
# Input, set with -e or by `lbsim plot` (which also writes the CSV):
#   data    CSV with a header line:
#           series,label,worker,group_name,iteration,phase,what,from_s,to_s
#           series numbers the panels 0, 1, ... (label: the policy); phase
#           is 0 compute, 1 wait, 2 aggregation; times from the first
#           iteration's start
#   out     the picture to write (default: gantt.FORMAT)
#   format  optional: png (default), svg or pdf
#   title   optional: the plot's title
# By hand:  gnuplot -e "data='gantt.csv'" analysis/gantt.gp
if (!exists("data")) { print "gantt.gp: set data to the CSV file: gnuplot -e \"data='FILE.csv'\" ..."; exit status 1 }
NAME = "gantt"
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
if (!exists("title")) title = "Per-worker timeline"
stats data using 1 nooutput
n = int(STATS_max)
stats data using 3 nooutput
workers = int(STATS_max) + 1
stats data using 9 nooutput
tmax = STATS_max
# The worker's group, for the y tics (column 4 of its rows).
array G_[workers]
do for [k_ = 1:workers] { G_[k_] = "" }
stats data using (G_[int($3) + 1] = strcol(4), 0) nooutput
group(w) = G_[w + 1]
set style fill solid 0.9 noborder
set xrange [0:tmax * 1.02]
set yrange [workers - 0.5:-0.5]
set ytics 1
set ylabel "worker"
set grid x
colour(p) = p == 0 ? 0x2a7ab0 : p == 1 ? 0xe8b04a : 0x7a7a7a
# The panels are placed by hand, in screen coordinates from the size of a
# character (the font's points over the canvas's; cairo draws a point of
# text as 4/3 of a png's pixels, times scale), so that a small canvas
# (a paper's column) keeps its text apart: the title and the key at the
# top, the panels one under the other with their names above them, the
# time axis's numbers and label under the last one alone.
fsize_ = strstrt(font, ",") > 0 ? real(font[strstrt(font, ",") + 1:]) : 10
fsize_ = fsize_ > 0 ? fsize_ : 10
tpt_ = (format eq "png") ? scale * 4.0 / 3 : 1
hpt_ = (format eq "pdf") ? height * 72 : height / tpt_
wpt_ = (format eq "pdf") ? width * 72 : width / tpt_
ch_ = 1.25 * fsize_ / hpt_
cw_ = 0.6 * fsize_ / wpt_
lines_ = title eq "" ? 0 : 1 + (strstrt(title, "\n") > 0) + (strstrt(title[strstrt(title, "\n") + 1:], "\n") > 0)
top_ = 1 - (lines_ + 2.5) * ch_
bottom_ = 3.2 * ch_
gap_ = 1.4 * ch_
panel_ = (top_ - bottom_ - n * gap_) / (n + 1)
set multiplot
if (lines_ > 0) { set label 2 title at screen 0.5, screen 1 - 0.6 * ch_ center front }
set lmargin at screen 13 * cw_
set rmargin at screen 1 - 2 * cw_
# The key, drawn here in one row under the title (gnuplot's own wraps on a
# narrow canvas): a swatch and a name per phase.
unset key
array P_[3] = ["compute", "wait at the barrier", "aggregation"]
kw_ = 0
do for [p_ = 1:3] { kw_ = kw_ + (strlen(P_[p_]) + 5) * cw_ }
kx_ = 0.5 - kw_ / 2
ky_ = 1 - (lines_ + 0.9) * ch_
do for [p_ = 1:3] {
	set object 10 + p_ rectangle from screen kx_, ky_ - 0.3 * ch_ to screen kx_ + 2 * cw_, ky_ + 0.3 * ch_ \
		fc rgb colour(p_ - 1) fs solid 0.9 noborder front
	set label 10 + p_ P_[p_] at screen kx_ + 2.6 * cw_, screen ky_ left front
	kx_ = kx_ + (strlen(P_[p_]) + 5) * cw_
}
do for [i = 0:n] {
	unset xlabel
	set format x ""
	if (i == n) { set xlabel "simulated time from the first iteration's start (s)"; set format x "% h" }
	set tmargin at screen top_ - i * (panel_ + gap_)
	set bmargin at screen top_ - i * (panel_ + gap_) - panel_
	set label 1 label(i) at graph 0.0, graph 1 offset 0, 0.5 left
	set ytics ()
	do for [w = 0:workers - 1] { set ytics add (sprintf("%d %s", w, group(w)) w) }
	plot data using ($1 == i && $6 == 0 ? ($8 + $9) / 2 : NaN):3:(($9 - $8) / 2):(0.38) \
			with boxxyerror lc rgb colour(0) notitle, \
		data using ($1 == i && $6 == 1 ? ($8 + $9) / 2 : NaN):3:(($9 - $8) / 2):(0.38) \
			with boxxyerror lc rgb colour(1) notitle, \
		data using ($1 == i && $6 == 2 ? ($8 + $9) / 2 : NaN):3:(($9 - $8) / 2):(0.38) \
			with boxxyerror lc rgb colour(2) notitle
	unset label 2
	do for [p_ = 1:3] { unset object 10 + p_; unset label 10 + p_ }
}
unset multiplot
