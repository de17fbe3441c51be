# SPDX-License-Identifier: GPL-3.0-or-later
# The plots of doc/reproduction.md (analysis/reproduce.sh): lines of y
# against x, one per series, with the papers' figures and the fitted points
# as labelled marks.
#
# Input, set with -e:
#   data    CSV with a header line: series,x,y (the rows of each series
#           together, in increasing x). A series is named POLICY or
#           POLICY:VARIANT, POLICY one of lbsim's policies (static,
#           lbbsp-gpu, lbbsp-cpu, dbs, oracle); VARIANT has ~ for spaces.
#           Each policy has one colour in every plot (BSP / S-SGD grey,
#           LB-BSP blue, DBS orange, the oracle green); the variants of a
#           policy differ in their dashes (the first solid).
#   out     the PNG to write
#   xlabel, ylabel, title
#   marks   optional: CSV with a header line: label,x,y,kind,pos (kind:
#           paper, for a paper's figure, or fitted, for a point lbsim was
#           fitted to; pos: where its label goes, clear of the curves:
#           right, left, above or below the point, or DX/DY, in the axes'
#           units (linear axes only), with a thin line to the point)
#   xmin    optional: the x axis starts there (a time axis at 0)
#   logx    optional: 1 for a log2 x axis
#   baseline  optional: the name the legend gives the static policy
#           (default "BSP")
# By hand:  gnuplot -e "data='s.csv'; out='s.png'; xlabel='h'; ylabel='speedup'; title='t'" analysis/reproduce.gp
if (!exists("data") || !exists("out")) { print "reproduce.gp: set data and out"; exit status 1 }
if (!exists("xlabel")) xlabel = "x"
if (!exists("ylabel")) ylabel = "y"
if (!exists("title")) title = ""
if (!exists("marks")) marks = ""
if (!exists("baseline")) baseline = "BSP"
# The files are read by gnuplot itself (no shell: their names and contents
# are data, never code).
set datafile separator ","
set datafile columnheaders
# the series, in the order of the file
series = ""
s_ = ""
stats data using (strcol(1) ne s_ ? (series = series . strcol(1) . " ", s_ = strcol(1)) : 0, 0) nooutput
policy(s) = strstrt(s, ":") ? s[1:strstrt(s, ":") - 1] : s
# the dash type of each series: its rank among the series of its policy
dashes = ""
do for [i = 1:words(series)] {
	d_ = 1
	do for [j = 1:i - 1] { if (policy(word(series, j)) eq policy(word(series, i))) { d_ = d_ + 1 } }
	dashes = dashes . sprintf("%d ", d_)
}
variant(s) = strstrt(s, ":") ? s[strstrt(s, ":") + 1:] : ""
spaces(s) = strstrt(s, "~") ? s[1:strstrt(s, "~") - 1] . " " . spaces(s[strstrt(s, "~") + 1:]) : s
name(p) = p eq "static" ? baseline : p eq "lbbsp-gpu" ? "LB-BSP" : p eq "lbbsp-cpu" ? "LB-BSP" : \
	p eq "dbs" ? "DBS" : p eq "oracle" ? "oracle" : p
colour(p) = p eq "static" ? "#555555" : p eq "lbbsp-gpu" || p eq "lbbsp-cpu" ? "#1f77b4" : \
	p eq "dbs" ? "#ff7f0e" : p eq "oracle" ? "#2ca02c" : "#9467bd"
legend(s) = variant(s) eq "" ? name(policy(s)) : name(policy(s)) . ", " . spaces(variant(s))
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
	set terminal pngcairo size 900,600 noenhanced font ",10"
} else {
	set terminal png size 900,600 noenhanced
}
set output out
if (exists("logx") && logx == 1) { set logscale x 2 }
set title title
set xlabel xlabel
set ylabel ylabel
set grid
set key below height 1
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
if (exists("xmin")) { set xrange [xmin:*] }
# The marks: a paper's figure (filled) or a fitted point (open), each kind
# in the legend only if there is one, and their labels, by position.
# (the macro @extra names the file by the variable marks, and a position
# by its number: nothing of the files' is code)
papers = 0
fitted = 0
positions = ""
if (marks ne "") {
	stats marks using (strcol(4) eq "paper" ? papers = papers + 1 : 0, \
		strcol(4) eq "fitted" ? fitted = fitted + 1 : 0, \
		strstrt(" " . positions, " " . strcol(5) . " ") == 0 ? positions = positions . strcol(5) . " " : 0, 0) nooutput
}
pos(k) = word(positions, k)
dx(p) = real(p[1:strstrt(p, "/") - 1])
dy(p) = real(p[strstrt(p, "/") + 1:])
at(k) = strstrt(pos(k), "/") ? \
	sprintf(", marks using 2:(strcol(5) eq word(positions, %d) ? $3 : NaN):(%g):(%g) with vectors nohead lw 1 lc rgb 'black' notitle", k, dx(pos(k)), dy(pos(k))) . \
	sprintf(", marks using ($2 + %g):(strcol(5) eq word(positions, %d) ? $3 + %g : NaN):1 with labels left offset 0.5,0 notitle", dx(pos(k)), k, dy(pos(k))) : \
	sprintf(", marks using 2:(strcol(5) eq word(positions, %d) ? $3 : NaN):1 with labels %s notitle", k, \
	pos(k) eq "left" ? "right offset -1.5,0" : pos(k) eq "above" ? "center offset 0,1.2" : \
	pos(k) eq "below" ? "center offset 0,-1.2" : "left offset 1.5,0")
extra = ""
if (papers > 0) { extra = extra . ", marks using 2:(strcol(4) eq 'paper' ? $3 : NaN) with points pt 7 ps 1.5 lc rgb 'black' title \"the paper's figure\"" }
if (fitted > 0) { extra = extra . ", marks using 2:(strcol(4) eq 'fitted' ? $3 : NaN) with points pt 12 ps 2 lw 2 lc rgb 'black' title \"fitted to the paper's figure\"" }
# (one labels plot per position in the file: one with no point at all
# crashes gnuplot 5.4)
do for [k = 1:words(positions)] { extra = extra . at(k) }
plot for [i = 1:words(series)] data using 2:(strcol(1) eq word(series, i) ? $3 : NaN) \
	with lines lw 2 dt int(word(dashes, i)) lc rgb colour(policy(word(series, i))) title legend(word(series, i)) @extra
