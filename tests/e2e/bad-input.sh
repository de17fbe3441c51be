#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The bad-input corpus: every malformed scenario (tests/data/bad/*.ini, with
# the malformed traces of tests/data/bad/traces/ and cost profiles of
# tests/data/bad/profiles/ they bind) and sweep file
# (tests/data/bad-sweep/*.ini), plus files made here (empty, a directory,
# unreadable, wrong encodings and line endings). Each must exit 3 with a
# message naming the file and line (first line of a corpus file:
# "; expect: LINE WORDS", LINE "-" for a whole-file error), print nothing on
# stdout, not crash, create no results file, and add no rows to an
# existing one.
. "$(dirname "$0")/lib.sh"
D="$top_srcdir/tests/data"

counts() {
	q "$1" "SELECT (SELECT count(*) FROM runs) || ' ' || (SELECT count(*) FROM iterations) || ' ' ||
		(SELECT count(*) FROM workers) || ' ' || (SELECT count(*) FROM worker_iterations)"
}
"$LBSIM" "$D/sweep/scenario.ini" -q -o "$TMP/base.db" --detail workers --set run.iterations=5
base=$(counts "$TMP/base.db")
check "a results file to protect" test "$base" = "1 5 4 20"

# expect_bad NAME FILE LINE WORDS lbsim-ARGS... (the results file is added)
n=0
expect_bad() {
	local name=$1 file=$2 line=$3 words=$4 rc rc2 where; shift 4
	n=$((n + 1))
	rm -f "$TMP/fresh.db"
	"$LBSIM" "$@" -o "$TMP/fresh.db" > "$TMP/out" 2> "$TMP/err"; rc=$?
	cp "$TMP/base.db" "$TMP/old.db"
	"$LBSIM" "$@" -o "$TMP/old.db" > /dev/null 2>&1; rc2=$?
	if [ "$line" = - ]; then where="$file: "; else where="$file:$line:"; fi
	if [ $rc -eq 3 ] && [ $rc2 -eq 3 ] && grep -qF -- "$where" "$TMP/err" && grep -qF -- "$words" "$TMP/err" &&
	   [ ! -s "$TMP/out" ] && [ ! -e "$TMP/fresh.db" ] && [ "$(counts "$TMP/old.db")" = "$base" ]; then
		ok "bad input $name"
	else
		bad "bad input $name (exit $rc, $rc2; rows $(counts "$TMP/old.db" 2>&1)): $(cat "$TMP/err")"
	fi
}

for f in "$D"/bad/*.ini; do
	read -r _ _ line words < "$f"
	expect_bad "$(basename "$f")" "$f" "$line" "$words" "$f"
done
for f in "$D"/bad-sweep/*.ini; do
	read -r _ _ line words < "$f"
	expect_bad "sweep $(basename "$f")" "$f" "$line" "$words" sweep "$f"
done

# Files made here. A scenario that binds trace T:
G="$D/bad/zero-workers.ini"
with_trace() { sed -e 's/^count = 0/count = 2/' -e '1d' "$G"; printf 'trace_format = lbsim\ntrace = %s\n' "$1"; }
printf '# lbsim-trace 1\ntime_s,availability\n0,1.0\n10,0.5\n' > "$TMP/good.csv"
with_trace good.csv > "$TMP/ok.ini"
"$LBSIM" "$TMP/ok.ini" -q -o "$TMP/ok.db"; check "the made-up scenario is good" test $? -eq 0
sed 's/$/\r/' "$TMP/ok.ini" > "$TMP/crlf.ini"
"$LBSIM" "$TMP/crlf.ini" -q -o "$TMP/ok.db"; check "CRLF line endings are read" test $? -eq 0

: > "$TMP/empty.ini"
expect_bad "empty scenario" "$TMP/empty.ini" - "empty scenario" "$TMP/empty.ini"
printf '\n\n; nothing\n' > "$TMP/blank.ini"
expect_bad "blank scenario" "$TMP/blank.ini" - "empty scenario" "$TMP/blank.ini"
: > "$TMP/empty-sweep.ini"
expect_bad "empty sweep" "$TMP/empty-sweep.ini" - "missing [sweep] scenario" sweep "$TMP/empty-sweep.ini"
mkdir "$TMP/dir.ini"
expect_bad "directory as scenario" "$TMP/dir.ini" - "is a directory" "$TMP/dir.ini"
expect_bad "directory as sweep" "$TMP/dir.ini" - "is a directory" sweep "$TMP/dir.ini"
mkdir "$TMP/dir.csv"
with_trace dir.csv > "$TMP/trace-dir.ini"
expect_bad "directory as trace" "$TMP/trace-dir.ini" 16 "is a directory" "$TMP/trace-dir.ini"
iconv -f UTF-8 -t UTF-16 "$TMP/ok.ini" > "$TMP/utf16.ini"
expect_bad "UTF-16 scenario" "$TMP/utf16.ini" 1 "NUL byte" "$TMP/utf16.ini"
sed 's/^name = .*/name = caf\xe9/; s/^\[run\]/[run]\nname = caf\xe9/' "$TMP/ok.ini" > "$TMP/latin1.ini"
expect_bad "Latin-1 scenario" "$TMP/latin1.ini" 2 "not valid UTF-8" "$TMP/latin1.ini"
# Invalid UTF-8 of every kind (Unicode's table 3-7), in a file and in --set.
for bytes in 'C0 AF:overlong' 'E0 80 AF:overlong' 'ED A0 80:surrogate' 'F4 90 80 80:above U+10FFFF' \
	'F8 88 80 80 80:five-byte' 'E2 82:truncated'; do
	hex=${bytes%%:*} kind=${bytes#*:}
	esc=$(printf '\\x%s' $hex)
	sed "s/^\[run\]/[run]\nname = x$esc/" "$TMP/ok.ini" > "$TMP/utf8.ini"
	expect_bad "UTF-8 $kind ($hex)" "$TMP/utf8.ini" 2 "not valid UTF-8" "$TMP/utf8.ini"
	expect_bad "UTF-8 $kind ($hex) in --set" "--set run.name" - "not valid UTF-8" "$TMP/ok.ini" \
		--set "run.name=x$(printf "$esc")"
done
expect_bad "Latin-1 in --set" "--set run.name" - "not valid UTF-8" "$TMP/ok.ini" --set "run.name=caf$(printf '\xe9')"
sed "s/^\[run\]/[run]\nname = caf\xc3\xa9 \xf0\x9f\x9a\x80 \xed\x9f\xbf \xf4\x8f\xbf\xbf/" "$TMP/ok.ini" > "$TMP/utf8-ok.ini"
"$LBSIM" "$TMP/utf8-ok.ini" -q -o "$TMP/ok.db"; check "valid UTF-8 (2, 3, 4 bytes, U+D7FF, U+10FFFF) is read" test $? -eq 0
long=$(head -c 5000 /dev/zero | tr '\0' x)
"$LBSIM" "$TMP/ok.ini" -q -o "$TMP/long.db" --set "run.name=$long" 2> "$TMP/err"; rc=$?
check "a too-long --set value: exit 2, nothing written" test $rc -eq 2 -a ! -e "$TMP/long.db"
check "a too-long --set value: the message says why" grep -qF -- "--set run.name: too long (a value of 5000 bytes; at most 255)" "$TMP/err"
# Bytes inih takes for whitespace (the corpus has \f, \v and \r before
# headers); a second byte-order mark, which inih would skip as well:
{ printf '\xef\xbb\xbf'; cat "$TMP/ok.ini"; } > "$TMP/bom.ini"
"$LBSIM" "$TMP/bom.ini" -q -o "$TMP/ok.db"; check "one byte-order mark is read" test $? -eq 0
{ printf '\xef\xbb\xbf\xef\xbb\xbf'; cat "$TMP/ok.ini"; } > "$TMP/bom2.ini"
expect_bad "a second byte-order mark" "$TMP/bom2.ini" 1 "a second byte-order mark" "$TMP/bom2.ini"
tr '\n' '\r' < "$TMP/ok.ini" > "$TMP/cr.ini"
expect_bad "CR-only line endings" "$TMP/cr.ini" 1 "line longer than" "$TMP/cr.ini"
head -c 100 "$TMP/ok.ini" > "$TMP/truncated.ini"
expect_bad "truncated scenario" "$TMP/truncated.ini" 8 "expected '[section]'" "$TMP/truncated.ini"
iconv -f UTF-8 -t UTF-16 "$TMP/good.csv" > "$TMP/utf16.csv"
with_trace utf16.csv > "$TMP/trace-utf16.ini"
expect_bad "UTF-16 trace" "$TMP/trace-utf16.ini" 16 "utf16.csv:1:" "$TMP/trace-utf16.ini"
: > "$TMP/empty.csv"
with_trace empty.csv > "$TMP/trace-empty.ini"
expect_bad "empty trace" "$TMP/trace-empty.ini" 16 "empty.csv" "$TMP/trace-empty.ini"

# Inputs whose size is the attack (lbsim reads them in time linear in their
# size, in memory bounded before any limit; timings are in the report, not
# here): a 20 MB scenario of one line, a CloudWatch console export with
# 60,000 columns and one repeated label.
head -c 20000000 /dev/zero | tr '\0' a > "$TMP/one-line.ini"
expect_bad "a 20 MB line" "$TMP/one-line.ini" 1 "line longer than 198 characters" "$TMP/one-line.ini"
awk 'BEGIN { n = 60000; printf "timestamp"; for (i = 1; i < n; i++) printf ",%x", i; printf ",1\n";
	printf "2014-03-09 01:46:00"; for (i = 0; i < n; i++) printf ",1"; printf "\n" }' > "$TMP/wide.csv"
{ with_trace wide.csv | sed 's/^trace_format = lbsim/trace_format = cloudwatch/'; echo 'trace_map = direct'; } > "$TMP/trace-wide.ini"
expect_bad "CloudWatch file, 60000 columns, one repeated" "$TMP/trace-wide.ini" 16 "wide.csv:1: header: column '1' appears twice" "$TMP/trace-wide.ini"

# Usage errors (exit 2): each named in the message, nothing on stdout,
# nothing written (the command runs in an empty folder that must stay so).
# expect_usage NAME WORDS lbsim-ARGS...
expect_usage() {
	local name=$1 words=$2 rc; shift 2
	n=$((n + 1))
	rm -rf "$TMP/u" && mkdir "$TMP/u"
	(cd "$TMP/u" && "$LBSIM" "$@" > "$TMP/out" 2> "$TMP/err"); rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$words" "$TMP/err" && [ ! -s "$TMP/out" ] && [ -z "$(ls -A "$TMP/u")" ]; then
		ok "usage error $name"
	else
		bad "usage error $name (exit $rc; left: $(ls -A "$TMP/u")): $(cat "$TMP/err")"
	fi
}
"$LBSIM" "$TMP/ok.ini" -q -o "$TMP/src.db" --detail workers
# Outputs that are not files: SQLite would throw the results away.
for o in '' ':memory:' 'file:x.db?mode=memory' 'FILE:x.db'; do
	expect_usage "run -o '$o'" "-o '$o': not a file path" "$TMP/ok.ini" -o "$o"
	expect_usage "sweep -o '$o'" "-o '$o': not a file path" sweep "$D/sweep/sweep.ini" -o "$o"
	expect_usage "merge '$o'" "output '$o': not a file path" merge "$o" "$TMP/src.db"
	expect_usage "predict -o '$o'" "-o '$o': not a file path" predict "$TMP/src.db:1" -o "$o"
done
expect_usage "plot --out ''" "--out '': expected a folder" plot "$TMP/src.db" --out ''
expect_usage "calibrate --from-table -o ''" "-o '': expected a file" calibrate --from-table \
	--data "$top_srcdir/traces/data" -o ''
# Options that would drop work or fail late: all checked before any work.
many=$(printf 'oracle,%.0s' $(seq 32)); many=${many%,}
expect_usage "--policy, 33 names" "--policy: 33 runs (33 policies)" "$TMP/ok.ini" --policy "static,$many"
expect_usage "--policy, 32 names and the baseline" "33 runs (32 policies and the static baseline)" \
	"$TMP/ok.ini" --policy "$many"
expect_usage "--policy, a name twice" "policy 'oracle' named twice" "$TMP/ok.ini" --policy oracle,dbs,oracle
expect_usage "--policy, 2000 characters" "--policy: a list of 2000 characters" "$TMP/ok.ini" \
	--policy "$(head -c 2000 /dev/zero | tr '\0' a)"
expect_usage "predict, a predictor twice" "predictor 'last' named twice" predict "$TMP/src.db:1" -p last,ema,last
expect_usage "predict, no predictor" "-p: no predictor named" predict "$TMP/src.db:1" -p ''
expect_usage "predict, only commas" "-p: no predictor named" predict "$TMP/src.db:1" -p ,,
expect_usage "predict --skip ''" "--skip : expected an integer from 0 to 1e9" predict "$TMP/src.db:1" --skip ''
expect_usage "predict --skip 2^64" "--skip 18446744073709551616: expected" predict "$TMP/src.db:1" \
	--skip 18446744073709551616
expect_usage "predict --skip past the series" "--skip 10: the longest series" predict "$TMP/src.db:1" --skip 10
expect_usage "predict, run id 2^63" "run id above 2^63 - 1" predict "$TMP/src.db:9223372036854775808"

# Unreadable files: root reads them anyway, so this needs an ordinary user.
if [ "$(id -u)" -eq 0 ]; then
	echo "skip: unreadable files (running as root, which chmod 000 does not stop)"
else
	cp "$TMP/ok.ini" "$TMP/unreadable.ini" && chmod 000 "$TMP/unreadable.ini"
	expect_bad "unreadable scenario" "$TMP/unreadable.ini" - "Permission denied" "$TMP/unreadable.ini"
	cp "$TMP/good.csv" "$TMP/unreadable.csv" && chmod 000 "$TMP/unreadable.csv"
	with_trace unreadable.csv > "$TMP/trace-unreadable.ini"
	expect_bad "unreadable trace" "$TMP/trace-unreadable.ini" 16 "Permission denied" "$TMP/trace-unreadable.ini"
	cp "$D/sweep/sweep.ini" "$TMP/unreadable-sweep.ini" && chmod 000 "$TMP/unreadable-sweep.ini"
	expect_bad "unreadable sweep" "$TMP/unreadable-sweep.ini" - "Permission denied" sweep "$TMP/unreadable-sweep.ini"
fi
echo "bad-input: $n malformed inputs tried"
finish
