#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# lbsim calibrate --fit: a user's measured step times (CSV batch,time
# [,repetitions], doc/profiles.md) become a profile. Exact times of known
# models give back their parameters (hand-computed) and drive a scenario by
# the fitted line or, with profile_cost = measured, by the times themselves
# (interpolated by hand); noisy times give the
# held-out error that a leave-one-out least-squares fit in awk computes
# independently; every malformed file is refused naming its line.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
cd "$TMP" || exit 1
# cond 'A && B': check's form for a condition of several commands.
cond() { eval "$1"; }

# 1. A GPU: 100 ms up to batch 16, then 5 ms a sample (t(32) = 0.18 s, ...).
cat > gpu.csv << 'CSV'
batch,time_s,repetitions
# comment lines and blank lines are skipped

4,0.1,10
8,0.1,10
16,0.1,10
32,0.18,10
64,0.34,10
128,0.66,10
CSV
"$LBSIM" calibrate --fit gpu.csv --device gpu --model 'BERT (mine)' --device-name 'NVIDIA A100 40GB' -o gpu.ini > out
check "gpu: exit 0" test $? -eq 0
check "gpu: piecewise, flat 100 ms to 16, 5 ms a sample" \
	diff <(sed -n '/^\[cost\]/,/^$/p' gpu.ini) <(printf '[cost]\ncost = piecewise\nt_flat = 100 ms\nsaturation_batch = 16\nper_sample = 5 ms\nmax_batch = 128\n\n')
check "gpu: provenance" cond "grep -qx 'kind = measured' gpu.ini && grep -qx 'data = $TMP/gpu.csv' gpu.ini &&
	grep -qx 'device = NVIDIA A100 40GB' gpu.ini && grep -qx 'model = BERT (mine)' gpu.ini &&
	grep -q '^date = 20' gpu.ini"
check "gpu: the command reruns it" \
	grep -qx "command = lbsim calibrate --fit gpu.csv --device gpu --model 'BERT (mine)' --device-name 'NVIDIA A100 40GB' -o gpu.ini" gpu.ini
check "gpu: held-out error of the 4 interior batches: 0" grep -q '^held-out MAPE .*: 0.00% over 4 batches$' out

check "gpu: every GPU kind compared, piecewise chosen" grep -q '^held-out MAPE by cost kind (\* chosen: the least): piecewise 0.00%\* power ' out

# 1b. A GPU whose times follow a power law exactly, t(b) = 20 ms + 0.5 ms b^1.5
#     (t(4) = 24 ms, t(16) = 52 ms, t(64) = 276 ms, ...): of the GPU kinds the
#     power law is chosen, as held-out error says, and gives the parameters back.
awk 'BEGIN { print "batch,time_s"; for (b = 2; b <= 256; b *= 2) printf "%d,%.12g\n", b, 0.02 + 0.0005 * b ^ 1.5 }' > pow.csv
"$LBSIM" calibrate --fit pow.csv --device gpu -o pow.ini > out
check "gpu power law: exit 0" test $? -eq 0
check "gpu power law: the power kind is chosen" grep -qx 'cost = power' pow.ini
check "gpu power law: ... with its exponent" \
	awk -F' = ' '$1 == "exponent" { exit !($2 > 1.4999 && $2 < 1.5001) } END { if (NR == 0) exit 1 }' pow.ini
check "gpu power law: held-out error under 0.01%" \
	awk '/^held-out MAPE by cost kind/ { for (i = 1; i <= NF; i++) if ($i == "power") { v = $(i + 1); sub(/%.*/, "", v); ok = v + 0 < 0.01 } } END { exit !ok }' out
check "gpu power law: the method says so" grep -q '^method = power law' pow.ini

# ... and drives a scenario: 2 GPUs at 48 samples each take 0.1 + 0.005 x 32 = 0.26 s.
cat > one.ini << 'INI'
[run]
global_batch = 96
iterations = 5
[model]
parameters = 1000
[network]
topology = none
[workers.g]
count = 2
device = gpu
profile = gpu.ini
INI
"$LBSIM" one.ini -q -o one.db
check "gpu profile in a scenario: 0.26 s an iteration" \
	test "$(q one.db "SELECT abs(mean_compute_s - 0.26) < 1e-12 FROM runs")" = 1

# 2. A CPU: t(b) = 10 ms + 2 ms b. Batch 8 has two rows, 20 ms once and
#    28 ms three times: (20 + 3 x 28) / 4 = 26 ms; spread 8 / 26 = 30.77%.
cat > cpu.csv << 'CSV'
batch , time_s , repetitions
1, 12 ms, 1
2, 0.014, 1
8, 0.020, 1
4, 0.018, 1
8, 0.028, 3
16, 0.042, 1
CSV
"$LBSIM" calibrate --fit cpu.csv --device cpu -o cpu.ini > out
check "cpu: exit 0" test $? -eq 0
check "cpu: linear, 10 ms + 2 ms a sample, no cap" \
	diff <(sed -n '/^\[cost\]/,/^$/p' cpu.ini) <(printf '[cost]\ncost = linear\nt0 = 10 ms\nper_sample = 2 ms\n\n')
check "cpu: batch 8 is the repetition-weighted mean" grep -qx '8 = 26 ms' cpu.ini
check "cpu: ... and its spread" grep -qx '8 = 30.77%' cpu.ini
check "cpu: 5 batches from 6 rows" cond "grep -qx 'points = 5' cpu.ini && grep -q '(6 rows)' cpu.ini"
check "cpu: model named after the file" grep -qx 'model = cpu' cpu.ini

# 3. Noisy CPU times: the held-out error is the mean |error| of each
#    interior batch predicted by an ordinary least-squares line through the
#    others (through the origin when its intercept is negative), computed
#    here in awk.
printf 'batch,time_s\n1,0.0131\n2,0.0139\n4,0.0192\n8,0.0268\n16,0.0425\n32,0.0770\n64,0.1390\n' > noisy.csv
"$LBSIM" calibrate --fit noisy.csv --device cpu > out
got=$(sed -n 's/^held-out MAPE .*: \([0-9.]*\)% over 5 batches$/\1/p' out)
want=$(awk -F, 'NR > 1 { x[NR - 1] = $1; y[NR - 1] = $2; n = NR - 1 }
END {
	for (i = 2; i < n; i++) {
		sx = sy = sxx = sxy = 0; m = 0
		for (j = 1; j <= n; j++) if (j != i) { m++; sx += x[j]; sy += y[j]; sxx += x[j] * x[j]; sxy += x[j] * y[j] }
		c = (m * sxy - sx * sy) / (m * sxx - sx * sx); a = (sy - c * sx) / m
		if (a < 0) { a = 0; c = sxy / sxx }
		p = a + c * x[i]; e = (p - y[i]) / y[i]; ape += e < 0 ? -e : e
	}
	printf "%.2f", 100 * ape / (n - 2)
}' noisy.csv)
check "noisy: held-out MAPE $got% is the leave-one-out fit's $want%" test -n "$got" -a "$got" = "$want"
check "noisy: no -o, no file" test ! -e noisy.ini

# 3b. profile_cost = measured: the profile's own times, linear between its
#     batches. Two workers of 3 samples: halfway between 2 (13.9 ms) and 4
#     (19.2 ms), 16.55 ms; the fitted line gives t0 + 3 per_sample instead.
"$LBSIM" calibrate --fit noisy.csv --device cpu -o noisy.ini > /dev/null
cat > measured.ini << 'INI'
[run]
global_batch = 6
iterations = 3
[model]
parameters = 1000
[network]
topology = none
[workers.c]
count = 2
device = cpu
profile = noisy.ini
profile_cost = measured
INI
"$LBSIM" measured.ini -q -o measured.db
check "profile_cost = measured: 16.55 ms an iteration at 3 samples" \
	test "$(q measured.db "SELECT abs(mean_compute_s - 0.01655) < 1e-12 FROM runs")" = 1
"$LBSIM" measured.ini --set workers.c.profile_cost=fit -q -o fit.db
line=$(awk -F' = ' '$1 == "t0" { t0 = $2 } $1 == "per_sample" { ps = $2 }
	function s(v) { return v ~ / ms$/ ? v / 1e3 : v ~ / us$/ ? v / 1e6 : v + 0 }
	END { printf "%.9f", s(t0) + 3 * s(ps) }' noisy.ini)
check "profile_cost = fit: the line's t0 + 3 per_sample ($line s), not the measured time" \
	test "$(q fit.db "SELECT abs(mean_compute_s - $line) < 1e-9 AND abs(mean_compute_s - 0.01655) > 1e-4 FROM runs")" = 1

# 4. Malformed files: exit 3, FILE:LINE and what is wrong, nothing written.
refuse() { # NAME CONTENT DEVICE EXPECTED-MESSAGE
	printf '%b' "$2" > bad.csv
	rm -f bad.ini
	local rc=0
	"$LBSIM" calibrate --fit bad.csv --device "$3" -o bad.ini > /dev/null 2> err || rc=$?
	if [ $rc -eq 3 ] && grep -qF -- "$4" err && [ ! -e bad.ini ]; then ok "refused: $1"; else
		bad "refused: $1 (exit $rc: $(cat err))"; fi
}
refuse "no header" '1,0.1\n2,0.2\n' cpu "bad.csv:1: expected the header line batch,time"
refuse "a time not a number" 'batch,time_s\n1,0.1\n# two\n2,abc\n' cpu "bad.csv:4: time_s: 'abc' is not a time > 0"
refuse "a time of 0" 'batch,time_s\n1,0.1\n2,0\n' cpu "bad.csv:3: time_s: '0' is not a time > 0"
refuse "a negative time" 'batch,time_s\n1,-0.1\n2,0.2\n' cpu "bad.csv:2: time_s: '-0.1'"
refuse "a time without its number" 'batch,time_s\n1,ms\n2,0.2\n' cpu "bad.csv:2: time_s: 'ms'"
refuse "batch 0" 'batch,time_s\n0,0.1\n2,0.2\n' cpu "bad.csv:2: batch: '0' is not an integer from 1"
refuse "a fractional batch" 'batch,time_s\n1.5,0.1\n2,0.2\n' cpu "bad.csv:2: batch: '1.5'"
refuse "a missing field" 'batch,time_s\n1,0.1\n2\n' cpu "bad.csv:3: 1 fields: expected 2, as the header (line 1) has"
refuse "an extra field" 'batch,time_s,repetitions\n1,0.1,2,9\n' cpu "bad.csv:2: 4 fields: expected 3"
refuse "repetitions 0" 'batch,time_s,repetitions\n1,0.1,0\n2,0.2,1\n' cpu "bad.csv:2: repetitions: '0'"
refuse "an empty file" '' cpu "bad.csv: empty: expected the header line"
refuse "a bare number under time (meant as ms, taken for seconds before)" 'batch,time\n8,52\n16,90\n' cpu \
	"bad.csv:2: time: '52' has no unit: write it with one ('52 ms', '52 s'), or name the column time_s, time_ms or time_us"
refuse "only a header" 'batch,time_s\n' cpu "0 distinct batches: a CPU (linear) profile needs at least 2"
refuse "a GPU with two batches" 'batch,time_s\n1,0.1\n2,0.1\n2,0.12\n' gpu "2 distinct batches: a GPU profile needs at least 3"
rc=0; "$LBSIM" calibrate --fit nowhere.csv --device cpu 2> err || rc=$?
check "a missing file: exit 3 naming it" cond 'test $rc -eq 3 && grep -q "nowhere.csv: cannot read" err'
rc=0; "$LBSIM" calibrate --fit cpu.csv 2> err || rc=$?
check "--fit without --device: exit 2" cond 'test $rc -eq 2 && grep -q -- "--fit needs --device" err'
rc=0; "$LBSIM" calibrate --fit cpu.csv --device tpu 2> err || rc=$?
check "--device tpu: exit 2" cond 'test $rc -eq 2 && grep -q "expected cpu or gpu" err'
rc=0; "$LBSIM" calibrate --blas cifarnet --model x 2> err || rc=$?
check "--model with --blas: exit 2" cond 'test $rc -eq 2 && grep -q -- "--model does not apply here" err'
finish
