#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Small inputs that would cost large CPU or memory, and inputs wrongly
# accepted or refused (issue 32, classes 5, 6 and 9): every input is
# bounded by its size before the work, the algorithms are linear or
# n log n, and what the machine cannot hold is refused with exit 3 before
# anything is allocated or forked. Memory is checked as peak RSS
# (/usr/bin/time -f %M), time by wall seconds, each bound well above what
# this code takes (under sanitizers too) and well below what the code
# before it took (given beside each).
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
need awk gawk
cd "$TMP" || exit 1
cond() { eval "$1"; }
# peak KB COMMAND...: runs COMMAND (its exit status in $rc, stderr in err),
# its peak RSS in kB in $kb (0 without /usr/bin/time).
peak() {
	rc=0
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -o rss -f %M "$@" > out 2> err || rc=$?
		kb=$(tail -1 rss)
	else
		"$@" > out 2> err || rc=$?
		kb=0
	fi
}
# secs COMMAND...: wall seconds (to 0.01) in $s, exit status in $rc.
secs() {
	local t0 t1
	t0=$(date +%s.%N); rc=0
	"$@" > out 2> err || rc=$?
	t1=$(date +%s.%N)
	s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
H=dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc
meta() { # DP PP [WORLD]: a job's metadata
	printf 'trial_name: t\nrun_id: 1\ndp_size: %s\ndsp_size: 1\npp_size: %s\ntp_size: 1\nvpp_size: 1\nworld_size: %s\n' \
		"$1" "$2" "${3:-$(($1 * $2))}"
}

# ---- class 5: whatif ------------------------------------------------------
# A 68 kB per-op trace whose steps and dp_ranks make 60 million op
# instances out of 1,700 rows: refused before the cells are allocated
# (it took 239 MB before).
{ echo $H; awk 'BEGIN { for (k = 0; k < 1500; k++) printf "0,0,0,0,forward-compute,%d,1,%d,0,0,0\n", k, k
	for (s = 1; s < 200; s++) printf "0,0,0,%d,forward-compute,0,1,0,0,0,0\n", s
	print "200,0,200,1,forward-compute,0,1,0,0,0,0" }'; } > cells.csv
meta 256 1 > m256.yaml
peak "$LBSIM" whatif cells.csv --meta m256.yaml -o r.db
check "whatif: a trace of far fewer rows than op instances: exit 3, naming them" \
	cond 'test $rc -eq 3 && grep -q "make 60300000 op instances, but the trace has 1700 rows" err'
check "... in bounded memory (peak RSS $kb kB < 120 MB)" test "$kb" -lt 120000
# A 15 kB .json.gz that inflates to 15 MB of tiny JSON values (jansson
# would hold them as a 650 MB tree): refused once past 100 x its size.
awk 'BEGIN { printf "{\"traceEvents\": ["; for (i = 0; i < 5000000; i++) printf "[],"; printf "[]]}" }' | gzip -9 > bomb.json.gz
peak "$LBSIM" whatif bomb.json.gz --meta m256.yaml -o r.db
check "whatif: a decompression bomb (.json.gz, $(stat -c %s bomb.json.gz) bytes): exit 3, named" \
	cond 'test $rc -eq 3 && grep -q "bomb.json.gz: decompresses to more than [0-9]* bytes (the limit of a compressed file: 100 times its size" err'
check "... in bounded memory (peak RSS $kb kB < 250 MB)" test "$kb" -lt 250000
awk 'BEGIN { print "'$H'"; for (i = 0; i < 200000; i++) print "0,0,0,0,gc,0,0,0,-1,-1,-1" }' | gzip -9 > bomb.csv.gz
peak "$LBSIM" whatif bomb.csv.gz --meta m256.yaml -o r.db
check "whatif: a CSV decompression bomb: exit 3, named ($kb kB)" \
	cond 'test $rc -eq 3 && grep -q "bomb.csv.gz: decompresses to more than" err && test $kb -lt 150000'
# Matching a stage's operations: 100,000 computes and their sends and
# receives on two stages (400,000 ops), then a step that lacks them. The
# quadratic matching took 15 s; n log n takes about half a second.
awk 'BEGIN { print "'$H'"; for (st = 0; st < 2; st++) { for (k = 0; k < 100000; k++) {
	printf "0,%d,%d,0,forward-compute,0,1,%d,0,0,%d\n", st, st, k, st
	printf "0,%d,%d,0,%s,0,1,%d,-1,-1,-1\n", st, st, st ? "forward-recv" : "forward-send", k }
	printf "0,%d,%d,0,optimizer,0,1,0,-1,-1,-1\n", st, st }
	print "0,0,0,1,optimizer,0,1,0,-1,-1,-1" }' > quad.csv
meta 1 2 > quad.yaml
secs "$LBSIM" whatif quad.csv --meta quad.yaml -o r.db
check "whatif: 400,000 template ops matched in n log n ($s s < 8 s)" \
	cond 'test $rc -eq 3 && grep -q "step 1, dp_rank 0 lacks forward-compute_0_0" err && lt $s 8'

# ---- class 6: whatif ------------------------------------------------------
# A valid trace with no slowdown: every step as ideal. A result (S = 1,
# each policy recovers 0), not exit 4.
{ echo $H; for s in 1 2; do echo 0,0,0,$s,forward-compute,0,1,0,0,0,0; echo 0,0,0,$s,backward-compute,1,2,0,0,0,0
	echo 0,0,0,$s,optimizer,3,0.5,0,-1,-1,-1; done; } > flat.csv
meta 1 1 > one.yaml
rc=0; "$LBSIM" whatif flat.csv --meta one.yaml -o flat.db > out 2> err || rc=$?
check "whatif: a trace with no slowdown: exit 0, S = 1" cond 'test $rc -eq 0 && grep -q "^S = 1.000000$" out'
check "... every policy recorded as recovering 0" \
	test "$(q flat.db 'SELECT count(*) || " " || sum(recovered = 0) FROM whatif_policies')" = "1 1"
sed 's/,1,0,0,0,0$/,0,0,0,0,0/; s/,2,0,0,0,0$/,0,0,0,0,0/; s/,0.5,0,-1,-1,-1$/,0,0,-1,-1,-1/' flat.csv > zero.csv
rc=0; "$LBSIM" whatif zero.csv --meta one.yaml -o zero.db > out 2> err || rc=$?
check "whatif: steps of 0 s: bad input (exit 3), nothing written" \
	cond 'test $rc -eq 3 && grep -q "zero.csv: step 1 takes no time" err && test ! -e zero.db'
# world_size whose product overflows 64 bits (2^24 x 8992475 x 9703511 x
# 3003749 = 2^24 mod 2^64) was accepted as 2^24.
gzip -dc "$top_srcdir/traces/data/bytedance-whatif/trace-ST.csv.gz" > st.csv
printf 'trial_name: x\nrun_id: 1\ndp_size: 16777216\ndsp_size: 8992475\npp_size: 9703511\ntp_size: 3003749\nvpp_size: 1\nworld_size: 16777216\n' > ov.yaml
rc=0; "$LBSIM" whatif st.csv --meta ov.yaml -o ov.db > out 2> err || rc=$?
check "whatif: a world_size product that overflows: exit 3 naming the line" \
	cond 'test $rc -eq 3 && grep -q "ov.yaml:8: world_size: 16777216 is not dp_size x dsp_size x pp_size x tp_size = .*more than 2^63" err'

# ---- classes 5 and 6: calibrate --fit -------------------------------------
secs timeout 20 "$LBSIM" calibrate --fit /dev/zero --device cpu
check "--fit /dev/zero: exit 3 at once, a NUL byte ($s s)" cond 'test $rc -eq 3 && grep -q "/dev/zero:1: a NUL byte" err'
printf 'batch,time_s\n' > blank.csv; head -c 70000000 /dev/zero | tr '\0' '\n' >> blank.csv
secs "$LBSIM" calibrate --fit blank.csv --device cpu
check "--fit: 70 MB of blank lines: exit 3, the byte limit ($s s)" cond 'test $rc -eq 3 && grep -q "more than 67108864 bytes" err'
printf 'batch,time_s\n1,0.1\n500000000,0.2\n1000000000,0.3\n' > big.csv
secs "$LBSIM" calibrate --fit big.csv --device gpu
check "--fit: three batches up to 1e9, GPU: fitted in $s s (< 5 s; it took minutes)" cond 'test $rc -eq 0 && lt $s 5'
awk 'BEGIN { srand(2); print "batch,time_s"; for (i = 1; i <= 100; i++) printf "%d,%.6f\n", i * 9999991, 0.1 + i * 0.001 * (0.9 + 0.2 * rand()) }' > b100.csv
secs "$LBSIM" calibrate --fit b100.csv --device gpu
check "--fit: 100 distinct batches up to 1e9, GPU, held-out error and all: $s s (< 30 s; over 10 minutes before)" cond 'test $rc -eq 0 && lt $s 30'
{ cat b100.csv; echo 1000000000,0.5; } > b101.csv
rc=0; "$LBSIM" calibrate --fit b101.csv --device gpu > out 2> err || rc=$?
check "--fit: 101 distinct batches: exit 3, the documented limit" cond 'test $rc -eq 3 && grep -q "101 distinct batches: a fit takes at most 100" err'
awk 'BEGIN { print "batch,time_s"; for (i = 0; i < 600000; i++) printf "%d,0.%d\n", 1 + i % 2, 1 + i % 2 }' > rows.csv
rc=0; "$LBSIM" calibrate --fit rows.csv --device cpu > out 2> err || rc=$?
check "--fit: 600,000 rows, under the limit of 1,000,000: read (it stopped at 524,288)" cond 'test $rc -eq 0 && grep -q "600000 rows, 2 batches" out'
awk 'BEGIN { print "batch,time_s"; for (i = 0; i < 1000001; i++) printf "%d,0.%d\n", 1 + i % 2, 1 + i % 2 }' > many.csv
rc=0; "$LBSIM" calibrate --fit many.csv --device cpu > out 2> err || rc=$?
check "--fit: 1,000,001 rows: exit 3 at the row past the limit, as the message says" \
	cond 'test $rc -eq 3 && grep -q "many.csv:1000002: more than 1000000 rows" err'
for t in 0x1p-3 0X.2p0 -0x1 inf nan 1e999 '0x10 ms'; do
	printf 'batch,time_s\n1,%s\n2,0.2\n3,0.3\n' "$t" > hex.csv
	rc=0; "$LBSIM" calibrate --fit hex.csv --device cpu > out 2> err || rc=$?
	check "--fit: time '$t' (not a decimal number): exit 3" cond 'test $rc -eq 3 && grep -q "hex.csv:2: time_s:" err'
done
printf 'batch,time_s\n1,1.25e-1\n2,+0.2\n3, 300 ms \n' > dec.csv
rc=0; "$LBSIM" calibrate --fit dec.csv --device cpu > out 2> err || rc=$?
check "--fit: decimal times with exponent, sign and unit are read" test $rc -eq 0

# ---- classes 5 and 9: the testbed, refused before anything is forked ------
TB=$top_srcdir/scenarios/testbed/small.ini
ncpu=$(getconf _NPROCESSORS_ONLN)
secs timeout 60 "$LBSIM" testbed "$TB" --set workers.q20.count=100000 -o tb.db
check "testbed: 100,000 workers: exit 3 at once ($s s), the documented limit" \
	cond 'test $rc -eq 3 && grep -q "workers.q20.count: the testbed cannot emulate this: 100002 workers, a process each: at most" err && lt $s 5'
n=$((4 * ncpu + 1))
rc=0; "$LBSIM" testbed "$TB" --set workers.q50.count=$n --set workers.q50.availability=1 -o tb.db > out 2> err || rc=$?
check "testbed: quotas of $((n + 0)).5 cores on $ncpu CPUs (over 4 x): exit 3, said" \
	cond 'test $rc -eq 3 && grep -q "the workers. quotas sum to .* cores at their peak, more than 4 times the $ncpu online CPUs" err'
rc=0; "$LBSIM" validate "$TB" --set workers.q50.count=$n --set workers.q50.availability=1 -o tb.db > out 2> err &
pid=$!; wait $pid || rc=$?
check "validate: the same: exit 3" cond 'test $rc -eq 3 && grep -q "more than 4 times" err'
check "... nothing written, no control group of its own left" \
	cond 'test ! -e tb.db && test -z "$(find /sys/fs/cgroup -maxdepth 3 -name "lbsim-testbed-$pid" 2> /dev/null)"'
# Above the CPUs but within 4 x: a warning, then the run (one short
# iteration; only where the testbed can run: root and a cgroup cpu controller).
n=$((ncpu + 1))
rc=0; "$LBSIM" testbed "$TB" --set workers.q50.count=$n --set workers.q50.availability=1 --set run.iterations=1 \
	-q -o warn.db > out 2> err || rc=$?
if [ $rc -eq 6 ] || [ $rc -eq 7 ]; then
	echo "SKIP: the testbed cannot run here (exit $rc): the warning's run is not checked"
else
	check "testbed: quotas above the $ncpu CPUs (under 4 x): a warning, and the run (exit $rc)" \
		cond 'test $rc -eq 0 && grep -q "warning: the workers. quotas sum to $n.50 cores at their peak, more than the $ncpu online CPUs" err'
fi
finish
