#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: analysis/reproduce.sh (make reproduce) on shortened runs
# (--quick): the table has every figure, the fitted DBS value meets its
# target, the same command run twice prints the same table, and on a
# terminal (only there) it shows its progress.
. "$(dirname "$0")/lib.sh"

for tool in sqlite3; do
	command -v $tool > /dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done

cd "$top_srcdir"
bash analysis/reproduce.sh --quick --lbsim "$LBSIM" --work "$TMP/a" > "$TMP/a.out" 2> "$TMP/a.err"
rc=$?
check "reproduce --quick: exit 0" test $rc -eq 0
check "reproduce: nothing on stderr without a terminal" test ! -s "$TMP/a.err"
check "the table: a header and 9 figures" test "$(wc -l < "$TMP/a/table.tsv")" = 10
t=$TMP/a/table.tsv
check "every row is fitted or predicted" test "$(tail -n +2 "$t" | cut -f5 | grep -c -E '^(fitted|predicted)')" = 9
check "two fitted figures" test "$(tail -n +2 "$t" | cut -f5 | grep -c '^fitted')" = 2
# The bisection on the all-reduce bandwidth meets DBS's 12% at 4 workers.
dbs4=$(awk -F'\t' '$1 ~ /^DBS, 4 workers/ { sub(/%/, "", $3); print $3 }' "$t")
check "DBS at 4 workers is fitted to 12% (got $dbs4)" awk "BEGIN { exit !($dbs4 >= 11.5 && $dbs4 <= 12.5) }"
check "DBS at 8 workers saves less than at 4" awk -F'\t' '$1 == "DBS, 8 workers" { sub(/%/, "", $3); exit !($3 + 0 < 12) }' "$t"
check "the 16-worker trend is evaluated" grep -q -P '^DBS, 16 workers\t.*\t(holds|does not hold)\t' "$t"

# The second run on a terminal (script(1) gives it one, as its standard
# error; the table still goes to a file): the same table, and the progress.
# The quick run has 6 + 8 bisection steps, 2 CPU seeds, the two other
# predictors, the scoring, the disturbance runs and the table: 21 steps.
if command -v script > /dev/null; then
	script -qec "bash analysis/reproduce.sh --quick --lbsim '$LBSIM' --work '$TMP/b' > '$TMP/b.out'" "$TMP/tty" > /dev/null
	tr '\r' '\n' < "$TMP/tty" | grep '^.\[Kreproduce: ' > "$TMP/progress"
	check "on a terminal: a progress line per step, 1 to 21 of 21" test \
		"$(grep -o 'step [0-9]* of [0-9]*' "$TMP/progress" | tr '\n' ,)" = "$(seq -s, -f 'step %g of 21' 1 21),"
	check "on a terminal: the time elapsed and left" grep -Eq '^.\[Kreproduce: step 21 of 21, [0-9]+:[0-5][0-9] elapsed, about [0-9]+:[0-5][0-9] left: table done$' "$TMP/progress"
	check "on a terminal: the first step has no estimate yet" grep -q 'step 1 of 21, 0:0[0-9] elapsed, estimating the time left: fitting h' "$TMP/progress"
else
	bash analysis/reproduce.sh --quick --lbsim "$LBSIM" --work "$TMP/b" > "$TMP/b.out" 2> /dev/null
fi
check "run twice: the same table" cmp -s "$TMP/a.out" "$TMP/b.out"
check "run twice: the same table file" cmp -s "$TMP/a/table.tsv" "$TMP/b/table.tsv"

bash analysis/reproduce.sh --bogus > /dev/null 2> "$TMP/err"
rc=$?
check "an unknown argument: exit 2" test $rc -eq 2
check "an unknown argument: named" grep -q "unknown argument '--bogus'" "$TMP/err"
finish
