#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: analysis/reproduce.sh (make reproduce) in its quick mode. The
# quick mode runs the full report's scenarios and assumption grids with fewer
# seeds for the CPU cluster's figures, so its figures must be the report's:
# every figure, central value and range, is checked against
# doc/reproduction/figures.tsv (written by the full make reproduce) within
# the tolerance that file states (0.05 where both modes run the same runs;
# for the CPU figures three standard deviations of the difference between
# the quick and the full means, from the spread the full run measured over
# its seeds). Also: the table's rows and columns, the fitted DBS value, the
# central values being the grids' points at the scenarios' own values, and
# the progress on a terminal (only there).
. "$(dirname "$0")/lib.sh"

for tool in sqlite3; do
	command -v $tool > /dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done

cd "$top_srcdir"
ref=doc/reproduction/figures.tsv
check "the full report's figures are in the tree" test -s "$ref"

# Without a terminal, nothing on standard error: the first seconds of a run
# (the bisection's steps, each announced on a terminal), then stopped. The
# stop interrupts an lbsim run, which says so ("lbsim: ..."): nothing else.
timeout 3 bash analysis/reproduce.sh --quick --lbsim "$LBSIM" --work "$TMP/c" > /dev/null 2> "$TMP/c.err"
check "reproduce: nothing on stderr without a terminal" test "$(grep -v -c '^lbsim: ' "$TMP/c.err")" = 0

# The quick run, on a terminal where script(1) gives it one (as its standard
# error; the table goes to a file).
if command -v script > /dev/null; then
	script -qec "bash analysis/reproduce.sh --quick --lbsim '$LBSIM' --work '$TMP/a' > '$TMP/a.out'; echo \$? > '$TMP/rc'" "$TMP/tty" > /dev/null
	rc=$(cat "$TMP/rc")
else
	bash analysis/reproduce.sh --quick --lbsim "$LBSIM" --work "$TMP/a" > "$TMP/a.out" 2> /dev/null
	rc=$?
fi
check "reproduce --quick: exit 0" test "$rc" -eq 0
t=$TMP/a/table.tsv
check "the table: a header and 13 figures" test "$(wc -l < "$t")" = 14
check "the table: 8 columns in every row" test "$(awk -F'\t' 'NF != 8' "$t" | wc -l)" = 0
check "the table is printed" grep -q '^LB-BSP, GPU cluster of V100s + K80s' "$TMP/a.out"
check "two fitted figures, 11 predicted" test \
	"$(tail -n +2 "$t" | cut -f7 | sed 's/ .*//' | sort | uniq -c | tr -s ' ' | tr '\n' ,)" = " 2 fitted, 11 predicted,"
check "every predicted row has a range" test "$(awk -F'\t' 'NR > 1 && $7 == "predicted" && $5 !~ /to/' "$t" | wc -l)" = 0
check "every row names the assumed values it depends on" test "$(awk -F'\t' 'NR > 1 && $8 == ""' "$t" | wc -l)" = 0
check "the paper figures are marked verified or not" test \
	"$(awk -F'\t' 'NR > 1 && $2 != "-" && $3 !~ /^(unverified|the paper.s abstract)/' "$t" | wc -l)" = 0

# The bisection on the all-reduce bandwidth meets DBS's 12% at 4 workers.
dbs4=$(awk -F'\t' '$1 ~ /^DBS, 4 workers/ { sub(/%/, "", $4); print $4 }' "$t")
check "DBS at 4 workers is fitted to 12% (got $dbs4)" awk "BEGIN { exit !($dbs4 >= 11.5 && $dbs4 <= 12.5) }"
check "DBS at 8 workers saves less than at 4" awk -F'\t' '$1 == "DBS, 8 workers" { sub(/%/, "", $4); exit !($4 + 0 < 12) }' "$t"
check "the 16-worker trend is evaluated" grep -q -P '^DBS, 16 workers\t.*\t(holds|does not hold)\t' "$t"

# The central values are the grids' points at the scenarios' own values
# (128 samples a worker at 10 Gbit/s; a third of a GPU per process).
f=$TMP/a/figures.tsv
val() { awk -F'\t' -v k="$1" -v c="$2" '$1 == k { print $c }' "$3"; }
check "the GPU grid holds the fitted run" awk -v v="$(val gpu-fitted 2 "$f")" '$1 == 128 && $2 == 10 { d = $3 - v; found = d < 0.00005 && d > -0.00005 } END { exit !found }' "$TMP/a/grid-fitted.txt"
check "the DBS grid holds the 8-worker run" awk -v v="$(val dbs8 2 "$f")" '$1 == 0.3333333333 { d = $2 - v; found = d < 0.00005 && d > -0.00005 } END { exit !found }' "$TMP/a/grid-dbs.txt"

# Every figure against the full report's, within the stated tolerance.
check "the quick run has every figure of the report" test "$(cut -f1 "$f" | sort | tr '\n' ' ')" = "$(cut -f1 "$ref" | sort | tr '\n' ' ')"
while IFS=$'\t' read -r key c lo hi tc tr; do
	[ "$key" = key ] && continue
	read -r qc qlo qhi < <(awk -F'\t' -v k="$key" '$1 == k { print $2, $3, $4 }' "$f")
	check "$key: central $qc against the report's $c (within $tc)" awk "BEGIN { d = $qc - $c; exit !(d <= $tc && -d <= $tc) }"
	check "$key: range $qlo to $qhi against the report's $lo to $hi (within $tr)" \
		awk "BEGIN { a = $qlo - $lo; b = $qhi - $hi; exit !(a <= $tr && -a <= $tr && b <= $tr && -b <= $tr) }"
done < "$ref"

# On a terminal: a progress line per step, 1 to N of N, the last the table's.
if command -v script > /dev/null; then
	tr '\r' '\n' < "$TMP/tty" | grep '^.\[Kreproduce: ' > "$TMP/progress"
	n=$(grep -o 'step [0-9]* of [0-9]*' "$TMP/progress" | head -1 | sed 's/.* of //')
	check "on a terminal: a progress line per step, 1 to $n of $n" test \
		"$(grep -o 'step [0-9]* of [0-9]*' "$TMP/progress" | tr '\n' ,)" = "$(seq -s, -f "step %g of $n" 1 "$n"),"
	check "on a terminal: the time elapsed and left" grep -Eq "^.\[Kreproduce: step $n of $n, [0-9]+:[0-5][0-9] elapsed, about [0-9]+:[0-5][0-9] left: table done$" "$TMP/progress"
	check "on a terminal: the first step has no estimate yet" grep -q 'step 1 of [0-9]*, 0:0[0-9] elapsed, estimating the time left: fitting h' "$TMP/progress"
	# (script(1) writes a line of its own at the start and the end)
	check "on a terminal: nothing but the progress" test \
		"$(tr '\r' '\n' < "$TMP/tty" | grep -v -e '^.\[Kreproduce: ' -e '^Script started' -e '^Script done' | grep -c .)" = 0
fi

bash analysis/reproduce.sh --bogus > /dev/null 2> "$TMP/err"
rc=$?
check "an unknown argument: exit 2" test $rc -eq 2
check "an unknown argument: named" grep -q "unknown argument '--bogus'" "$TMP/err"
finish
