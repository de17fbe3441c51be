#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# How lbsim writes its output files, tried as an attacker and a careless
# user would (issue 32, classes 1, 2 and 7; doc/results.md, "How output is
# written"):
#  1. no output path reaches a shell: a quote in plot --out or report -o is
#     a character of a name, and the gnuplot scripts call no system();
#  2. temporaries are created exclusively beside their target, never
#     through a planted symbolic link; a sweep's work folder that is a link
#     is refused; a stale temporary of a killed lbsim is removed;
#  3. every command that writes a file, killed (SIGKILL at random moments)
#     leaves the old file or the new one, whole, and at most a stale
#     temporary that the next run removes; stopped (SIGTERM, SIGINT) it
#     exits 130 within a second, leaving nothing half-written and no child
#     running; refused, it leaves nothing.
# KILLS (default 4) SIGKILLs per command.
. "$(dirname "$0")/lib.sh"
need gnuplot gnuplot-nox
need pgrep procps
SC="$top_srcdir/tests/data/sweep/scenario.ini"
SW=sweep.ini # 4 short points
WI="$top_srcdir/traces/data/bytedance-whatif"
kills=${KILLS:-4}
RANDOM=${KILL_SEED:-$$}
cd "$TMP" || exit 1

"$LBSIM" "$SC" -q -o r.db --detail workers --policy static,lbbsp-gpu --set run.iterations=30
"$LBSIM" "$SC" -q -o big.db --detail workers --set run.iterations=20000
printf '[sweep]\nname = short\nscenario = %s\n[vary]\npolicy = static, lbbsp-gpu\nseeds = 1..2\nrun.iterations = 300\n' \
	"$SC" > "$SW"
printf 'batch,time_s\n1,0.0131\n2,0.0139\n4,0.0192\n8,0.0268\n16,0.0425\n32,0.0770\n64,0.1390\n' > fit.csv

# no_temps DIR: no temporary of lbsim left in DIR (nor below it).
no_temps() { [ -z "$(find "$1" -name '*.tmp*' -o -name '*.plots*' -o -name '.lbsim-*' -o -name '*-journal' | head -1)" ]; }
# ms_since T0: milliseconds since T0 (date +%s%N).
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
# children PID: the processes whose parent is PID.
children() { pgrep -P "$1"; }
# alive PID: PID runs (a zombie, not yet reaped by init, does not)
alive() { local s; s=$(ps -o stat= -p "$1" 2> /dev/null) && [ "${s#Z}" = "$s" ]; }

# ---- 1. shell injection through an output path -----
check "the gnuplot scripts call no shell" sh -c "! grep -n 'system *(' '$top_srcdir'/analysis/*.gp"
# (but GNU parallel, which runs a sweep's job lines, each word of them
# single-quoted: the sweep below)
check "no C source runs a shell" sh -c "! grep -rn 'system *(\|popen *(\|\"-c\"' '$top_srcdir'/util \
	'$top_srcdir'/sim '$top_srcdir'/analysis '$top_srcdir'/sweep '$top_srcdir'/whatif '$top_srcdir'/models \
	'$top_srcdir'/cli --include='*.c' --exclude=embedded.c"
mkdir inj
dir="inj/p'; touch pwned-plot; echo '\$(touch pwned-plot2)\`touch pwned-plot3\`"
"$LBSIM" plot r.db --out "$dir" -q 2> plot.err; rc=$?
check "plot --out with quotes: exit 0 (got $rc)" test $rc -eq 0
check "plot --out with quotes: no command ran" test -z "$(find . -name 'pwned-plot*')"
check "plot --out with quotes: the plots are in the folder named" test -s "$dir/iteration-time.png"
check "plot --out with quotes: labels read (no awk/sh errors)" sh -c "! grep -q 'awk\|sh:' plot.err"
out="inj/r'; touch pwned-report; echo '.html"
"$LBSIM" report r.db -o "$out" -q 2> report.err; rc=$?
check "report -o with quotes: exit 0 (got $rc)" test $rc -eq 0
check "report -o with quotes: no command ran" test -z "$(find . -name 'pwned-report*')"
check "report -o with quotes: the report has its plots" grep -q 'id="plot-1-iteration-time"' "$out"
check "report -o with quotes: no temporaries left" no_temps inj
out="inj/s'; touch pwned-sweep; echo '.db"
"$LBSIM" sweep "$SW" -j2 -o "$out" -q; rc=$?
check "sweep -o with quotes: exit 0 (got $rc)" test $rc -eq 0
check "sweep -o with quotes: no command ran" test -z "$(find . -name 'pwned-sweep*')"
check "sweep -o with quotes: 4 runs" test "$(q "$out" 'SELECT count(*) FROM runs')" = 4

# ---- 2. writes through planted symbolic links -----
echo precious > victim
mkdir sym
ln -s ../victim sym/out.html.tmp
"$LBSIM" report r.db -o sym/out.html -q; rc=$?
check "report beside a planted out.html.tmp link: exit 0 (got $rc)" test $rc -eq 0
check "report beside a planted link: the link's target unchanged" test "$(cat victim)" = precious
check "report beside a planted link: the report is a file" sh -c 'test -f sym/out.html && ! test -L sym/out.html'
ln -s ../victim sym/fit.ini.tmp
"$LBSIM" calibrate --fit fit.csv --device gpu -o sym/fit.ini > /dev/null; rc=$?
check "calibrate --fit beside a planted fit.ini.tmp link: exit 0 (got $rc)" test $rc -eq 0
check "calibrate --fit beside a planted link: the link's target unchanged" test "$(cat victim)" = precious
check "calibrate --fit beside a planted link: the profile written" grep -q '^cost = ' sym/fit.ini
mkdir prof
ln -s ../victim prof/k80-resnet50.ini.tmp
"$LBSIM" calibrate --from-table --data "$top_srcdir/traces/data" -o prof > /dev/null; rc=$?
check "calibrate --from-table beside a planted link: exit 0 (got $rc)" test $rc -eq 0
check "calibrate --from-table beside a planted link: the link's target unchanged" test "$(cat victim)" = precious
mkdir -p plotdir
ln -s ../victim plotdir/iteration-time.csv
ln -s ../victim plotdir/.iteration-time.png.tmp
"$LBSIM" plot r.db --out plotdir -q; rc=$?
check "plot into a folder of planted links: exit 0 (got $rc)" test $rc -eq 0
check "plot into a folder of planted links: their target unchanged" test "$(cat victim)" = precious
check "plot into a folder of planted links: the CSV replaces the link" sh -c \
	'test -f plotdir/iteration-time.csv && ! test -L plotdir/iteration-time.csv'
# A sweep whose work folder is a link: refused, its target untouched.
mkdir -p elsewhere/points
echo keep > elsewhere/points/keep.db
ln -s elsewhere s.db.sweep
"$LBSIM" sweep "$SW" -j2 -o s.db -q 2> sweep.err; rc=$?
check "sweep with a linked work folder: exit 3 (got $rc)" test $rc -eq 3
check "sweep with a linked work folder: says why" grep -q 's.db.sweep.*symbolic link' sweep.err
check "sweep with a linked work folder: nothing written in its target" \
	test "$(find elsewhere | sort | tr '\n' ' ')" = "elsewhere elsewhere/points elsewhere/points/keep.db "
check "sweep with a linked work folder: no results file" test ! -e s.db
rm s.db.sweep
: > s.db.sweep
"$LBSIM" sweep "$SW" -j2 -o s.db -q 2> sweep.err; rc=$?
check "sweep whose work folder is a file: exit 3 (got $rc), saying why" \
	sh -c "[ $rc = 3 ] && grep -q 's.db.sweep.*not a folder' sweep.err"
rm s.db.sweep
# A temporary whose writer was killed is removed by the next run; one a
# running lbsim holds is not.
mkdir stale
: > stale/out.html.tmp.AbC123
cp fit.csv stale/fit.ini.tmp.xYz789
"$LBSIM" report r.db -o stale/out.html -q
"$LBSIM" calibrate --fit fit.csv --device gpu -o stale/fit.ini > /dev/null
check "a stale temporary is removed by the next run" sh -c '! ls stale/*.tmp.* 2> /dev/null'

# ---- 3. refusals leave nothing -----
mkdir refuse
sed 's/dp_size: 2/dp_size: 1/; s/world_size: 8/world_size: 4/' "$WI/meta-ST.yaml" > meta1.yaml
"$LBSIM" whatif "$WI/trace-ST.csv.gz" --meta meta1.yaml -o refuse/w.db 2> /dev/null; rc=$?
check "whatif refused (trace and meta disagree): exit 3 (got $rc)" test $rc -eq 3
"$LBSIM" "$SC" -q -o refuse/run.db --set run.iterations=5 --set workers.v100.max_batch=1 --set workers.k80.max_batch=1 2> /dev/null; rc=$?
check "run refused (batch does not fit): exit 3 (got $rc)" test $rc -eq 3
printf 'batch,time_s\n1,x\n' > bad-fit.csv
"$LBSIM" calibrate --fit bad-fit.csv --device gpu -o refuse/fit.ini 2> /dev/null; rc=$?
check "calibrate --fit refused (bad row): exit 3 (got $rc)" test $rc -eq 3
check "refused runs leave no file" test -z "$(ls -A refuse)"

# ---- 4. SIGTERM and SIGINT: exit 130 at once, nothing left -----
# stopped CMD...: starts CMD in the background (its output files in the
# current folder), sends the signal $SIG after $WAIT s, and checks exit
# 130, within a second, no child left, no temporary left.
stopped() {
	local what=$1; shift
	"$@" > /dev/null 2>&1 &
	local pid=$! kids
	sleep "$WAIT"
	kids=$(children $pid | tr '\n' ' ')
	local t0=$(date +%s%N)
	kill -"$SIG" $pid
	# (killed after 3 s: a command that ignores the signal fails, not hangs)
	for _ in $(seq 150); do kill -0 $pid 2> /dev/null || break; sleep 0.02; done
	local ms=$(ms_since "$t0")
	kill -KILL $pid 2> /dev/null
	wait $pid; local rc=$?
	check "$what, SIG$SIG: exit 130 (got $rc)" test $rc -eq 130
	check "$what, SIG$SIG: stopped within a second (${ms} ms)" test "$ms" -lt 1000
	sleep 0.1
	local left=""
	for k in $kids; do alive "$k" && left="$left $k"; done
	check "$what, SIG$SIG: no child left running${left:+ ($left)}" test -z "$left"
	for k in $left; do kill -KILL "$k"; done
}
mkfifo slow.csv slow.csv.gz
for SIG in TERM INT; do
	mkdir "sig$SIG" && cd "sig$SIG" || exit 1
	# (big.db: a report or plots of some 1.5 s; r.db's take 0.15 and 0.5 s,
	# too short to be stopped reliably)
	WAIT=0.3 stopped "report -o" "$LBSIM" report ../big.db -o rep.html -q
	check "report -o, SIG$SIG: no report, no temporary" test -z "$(ls -A)"
	WAIT=0.3 stopped "plot" "$LBSIM" plot ../big.db --out plots -q
	check "plot, SIG$SIG: no temporary left" no_temps .
	WAIT=0.2 stopped "calibrate --fit (reading)" "$LBSIM" calibrate --fit ../slow.csv --device gpu -o fit.ini
	WAIT=0.2 stopped "whatif -o (reading)" "$LBSIM" whatif ../slow.csv.gz --meta "$WI/meta-ST.yaml" -o w.db
	WAIT=0.3 stopped "run -o a new file" "$LBSIM" "$SC" -q -o run.db --set run.iterations=4000000
	check "calibrate --fit, whatif and run, SIG$SIG: no file left" test -z "$(ls -A | grep -v '^plots$')"
	cd .. || exit 1
done
# Stopped while waiting (up to 60 s) for another writer's lock on the
# results file: at once too, the file unchanged.
mkfifo hold
locked() {
	cp r.db lk.db
	sqlite3 lk.db < hold &
	local holder=$!
	exec 5> hold
	echo 'BEGIN EXCLUSIVE;' >&5
	sleep 0.3
	WAIT=0.5 stopped "$@"
	exec 5>&- # sqlite3 rolls back and ends
	wait $holder
	check "$1, SIG$SIG: the locked file unchanged" test "$(q lk.db 'SELECT count(*) FROM runs')" = \
		"$(q r.db 'SELECT count(*) FROM runs')"
}
for SIG in TERM INT; do
	locked "run -o a locked file" "$LBSIM" "$SC" -q -o lk.db --set run.iterations=10
	locked "merge into a locked file" "$LBSIM" merge lk.db big.db -q
	locked "whatif -o a locked file" "$LBSIM" whatif "$WI/trace-ST.csv.gz" --meta "$WI/meta-ST.yaml" -o lk.db -q
	locked "sweep -o a locked file" "$LBSIM" sweep "$SW" -j2 -o lk.db -q
	locked "views on a locked file" "$LBSIM" views lk.db -q
	locked "predict -o a locked file" "$LBSIM" predict big.db:1 -o lk.db -q
	rm -rf lk.db.sweep
done
# export (which writes to its standard output only): stopped while its
# output, a pipe nobody reads, is full.
mkfifo pipe
for SIG in TERM INT; do
	sleep 3 < pipe &
	reader=$!
	WAIT=0.3 stopped "export blocked on its output" sh -c "exec '$LBSIM' export big.db worker_iterations > pipe"
	kill $reader 2> /dev/null
	wait $reader 2> /dev/null
done
# whatif exits 130 whenever stopped while it writes.
mkdir wsig
for SIG in TERM INT; do
	"$LBSIM" whatif "$WI/trace-AR.csv.gz" --meta "$WI/meta-AR.yaml" -o "wsig/w$SIG.db" -q 2> /dev/null &
	pid=$!
	sleep 0.0$((RANDOM % 10))
	kill -"$SIG" $pid
	wait $pid; rc=$?
	# a signal that comes before the process has set its handlers (a sleep
	# of 0 s, a busy machine: before exec or main) kills it at once, 128 +
	# the signal, before it could write anything: also no results file
	early=$((128 + $(kill -l "$SIG")))
	check "whatif, SIG$SIG: exit 0 or 130, or $early before its handlers (got $rc)" \
		sh -c "[ $rc = 0 ] || [ $rc = 130 ] || [ $rc = $early ]"
	if [ $rc = 130 ] || [ $rc = $early ]; then
		check "whatif stopped: no results file" test ! -e "wsig/w$SIG.db"
	fi
	check "whatif, SIG$SIG: no journal or temporary" no_temps wsig
done

# ---- 5. SIGKILL at random moments: the old file or the new, whole -----
# killed NAME FILE CHECK CMD...: in a folder of its own (FILE's first
# component), runs CMD to completion once, then $kills (or $KN) times starts CMD
# and kills it after a random 0 to $NAP ms: FILE must be absent or pass
# CHECK (the old file or the new one, whole). A last run to the end must
# succeed and leave no temporary in that folder.
killed() {
	local name=$1 file=$2 whole=$3; shift 3
	local dir=${file%%/*}
	mkdir -p "$dir"
	"$@" > /dev/null 2>&1 || { bad "$name: runs (exit $?)"; return; }
	local bad_kills=0 i pid n=${KN:-$kills} kids=""
	for i in $(seq "$n"); do
		"$@" > /dev/null 2>&1 &
		pid=$!
		sleep "0.$(printf %03d $((RANDOM % NAP)))"
		kids="$kids $(children $pid | tr '\n' ' ')"
		kill -KILL $pid 2> /dev/null
		wait $pid 2> /dev/null
		if [ -e "$file" ] && ! $whole "$file"; then
			bad_kills=$((bad_kills + 1))
			echo "$name: kill $i left $file not whole"
		fi
	done
	check "$name: $n kills at random moments, $file whole every time" test $bad_kills -eq 0
	sleep 0.2
	local left=""
	for k in $kids; do alive "$k" && left="$left $k"; done
	check "$name: no child of a killed lbsim left running${left:+ ($left)}" test -z "$left"
	for k in $left; do kill -KILL "$k" 2> /dev/null; done
	"$@" > /dev/null 2>&1
	check "$name: the next run ends well" test $? -eq 0
	if no_temps "$dir"; then ok "$name: the next run leaves no temporary"; else
		bad "$name: the next run leaves no temporary"; find "$dir"; fi
}
html_whole() { tail -c 20 "$1" | grep -q '</html>'; }
png_whole() { tail -c 12 "$1" | grep -q IEND && [ "$(head -c 4 "$1" | tail -c 3)" = PNG ]; }
profile_whole() { [ "$(wc -l < "$1")" -eq "$(wc -l < "$REF")" ] && [ "$(tail -1 "$1")" = "$(tail -1 "$REF")" ]; }
db_whole() { [ "$(q "$1" 'PRAGMA integrity_check')" = ok ] && [ "$(q "$1" 'SELECT count(*) FROM runs r WHERE
	r.iterations != (SELECT count(*) FROM iterations i WHERE i.run_id = r.run_id)')" = 0 ]; }
whatif_whole() { [ "$(q "$1" 'PRAGMA integrity_check')" = ok ] &&
	[ "$(q "$1" 'SELECT count(*) FROM whatif_runs w WHERE NOT EXISTS
	(SELECT 1 FROM whatif_policies p WHERE p.whatif_id = w.whatif_id)')" = 0 ] &&
	[ "$(q "$1" 'SELECT count(*) FROM whatif_runs')" -ge 1 ]; }
NAP=250 killed "report -o" k1/rep.html html_whole "$LBSIM" report r.db -o k1/rep.html -q
NAP=600 killed "plot" k2/iteration-time.png png_whole "$LBSIM" plot r.db --out k2 -q
"$LBSIM" calibrate --fit fit.csv --device gpu -o ref.ini > /dev/null; REF=ref.ini
NAP=30 killed "calibrate --fit" k3/fit.ini profile_whole "$LBSIM" calibrate --fit fit.csv --device gpu -o k3/fit.ini
cp prof/v100-resnet50.ini ref.ini
NAP=40 killed "calibrate --from-table" k4/v100-resnet50.ini profile_whole \
	"$LBSIM" calibrate --from-table --data "$top_srcdir/traces/data" -o k4
NAP=80 killed "whatif -o" k5/w.db whatif_whole "$LBSIM" whatif "$WI/trace-AR.csv.gz" --meta "$WI/meta-AR.yaml" -o k5/w.db -q
NAP=100 killed "merge" k6/m.db db_whole "$LBSIM" merge k6/m.db r.db
NAP=60 killed "run -o" k7/run.db db_whole "$LBSIM" "$SC" -q -o k7/run.db --detail workers --set run.iterations=3000
NAP=200 killed "sweep -o" k8/s.db db_whole "$LBSIM" sweep "$SW" -j2 -o k8/s.db -q
# A new results file: none, or one with a whole run, never an empty one.
mkdir fresh
empty=0
for i in $(seq "$kills"); do
	rm -f fresh/*
	"$LBSIM" "$SC" -q -o fresh/run.db --set run.iterations=3000 &
	pid=$!
	sleep "0.$(printf %03d $((RANDOM % 80)))"
	kill -KILL $pid 2> /dev/null
	wait $pid 2> /dev/null
	if [ -e fresh/run.db ] && ! { db_whole fresh/run.db && [ "$(q fresh/run.db 'SELECT count(*) FROM runs')" -ge 1 ]; }; then
		empty=$((empty + 1))
		echo "run -o a new file: kill $i left it without a run"
	fi
done
check "run -o a new file: $kills kills at random moments, no file without a run" test $empty -eq 0
mkdir k9 && cp r.db k9/v.db
NAP=15 killed "views" k9/v.db db_whole "$LBSIM" views k9/v.db -q
predict_whole() { [ "$(q "$1" 'PRAGMA integrity_check')" = ok ] && [ "$(q "$1" 'SELECT count(*) FROM predictor_errors')" -gt 0 ]; }
NAP=50 killed "predict -o" k10/p.db predict_whole "$LBSIM" predict r.db:1 -o k10/p.db -q
finish
