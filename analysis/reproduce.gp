# SPDX-License-Identifier: GPL-3.0-or-later
# The plots of doc/reproduction.md (analysis/reproduce.sh): lines of y
# against x, one per series, with the papers' figures as labelled points
#.
#
# Input, set with -e:
#   data    CSV with a header line: series,x,y (the rows of each series
#           together, in increasing x)
#   out     the PNG to write
#   xlabel, ylabel, title
#   marks   optional: CSV with a header line: label,x,y (drawn as points)
#   logx    optional: 1 for a log2 x axis
#   dashprefix  optional: series whose names start with it are drawn dashed
# Series names cannot contain spaces.
# By hand:  gnuplot -e "data='s.csv'; out='s.png'; xlabel='h'; ylabel='speedup'; title='t'" analysis/reproduce.gp
if (!exists("data") || !exists("out")) { print "reproduce.gp: set data and out"; exit status 1 }
if (!exists("xlabel")) xlabel = "x"
if (!exists("ylabel")) ylabel = "y"
if (!exists("title")) title = ""
if (!exists("dashprefix")) dashprefix = "\001"
if (!exists("marks")) marks = ""
all = sprintf("tail -n +2 '%s' | cut -d, -f1 | uniq", data)
solid = system(all . sprintf(" | grep -v '^%s' | tr '\\n' ' '", dashprefix))
dashed = system(all . sprintf(" | grep '^%s' | tr '\\n' ' '", dashprefix))
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
	set terminal pngcairo size 900,540 noenhanced font ",10"
} else {
	set terminal png size 900,540 noenhanced
}
set output out
set datafile separator ","
set datafile columnheaders
if (exists("logx") && logx == 1) { set logscale x 2 }
set title title
set xlabel xlabel
set ylabel ylabel
set grid
set key outside right top
set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05
# The series, solid ones then dashed ones, and the papers' figures if any.
extra = (marks eq "") ? "" : \
	sprintf(", '%s' using 2:3 with points pt 7 ps 1.5 lc rgb 'black' title 'paper', '%s' using 2:3:1 with labels offset 0,1 notitle", marks, marks)
plot for [i = 1:words(solid)] data using 2:(strcol(1) eq word(solid, i) ? $3 : NaN) \
		with lines lw 2 lc i title word(solid, i), \
	for [i = 1:words(dashed)] data using 2:(strcol(1) eq word(dashed, i) ? $3 : NaN) \
		with lines lw 2 dt 2 lc (i + words(solid)) title word(dashed, i) @extra
