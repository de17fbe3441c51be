#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The testbed's real-framework worker (doc/validation.md, "The torch
# worker"): PyTorch training of the scenario's network, one process per
# worker in its cgroup, the gradient exchanged by torch.distributed inside
# the workers' quotas. What it checks, independently of lbsim's model:
#  - the worker builds lbsim's networks layer for layer (parameter counts);
#  - no python3, no PyTorch, or no worker program: exit 6 naming it;
#  - what the torch worker cannot run is refused (exit 3);
#  - a policy changes time, never the maths: after the same iterations,
#    every policy's split (and DDP) leaves the same weights;
#  - calibrate --torch measures a profile of real training steps;
#  - a small validation (scenarios/testbed/small.ini): the simulated
#    speedups over static within a tolerance derived from the measured
#    spread, and the measured ranking of the policies reproduced.
#
# It needs root, a cgroup cpu controller, and python3 with Debian's
# python3-torch (.ci/run installs it). Without PyTorch it skips (exit 77)
# saying so; without root or cgroups it fails, as tests/e2e/testbed.sh.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3

py=${LBSIM_PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import torch' 2> /dev/null; then
	echo "SKIP: $py cannot import torch (Debian: apt-get install python3-torch); the torch worker is not tested"
	exit 77
fi
export LBSIM_PATH=$top_srcdir
worker=$top_srcdir/testbed/torch_worker.py
sc=$top_srcdir/scenarios/testbed/small.ini

# The same networks: the parameter counts lbsim's builders give.
for net in $("$py" "$worker" nets); do
	mine=$("$LBSIM" calibrate --list | awk -v n="$net" '$1 == n { print $2 }')
	theirs=$("$py" "$worker" params "$net")
	check "torch worker: $net has lbsim's $mine parameters (got $theirs)" test "$mine" = "$theirs"
done

# What is missing is named, exit 6: no python3; a python3 that cannot
# import torch (a real interpreter, its torch shadowed by a package that
# fails to import); no worker program.
expect_6() { # NAME WORDS ENV...
	local name=$1 words=$2 rc=0
	shift 2
	env "$@" "$LBSIM" testbed "$sc" --worker torch --set run.iterations=1 -q -o "$TMP/x.db" 2> "$TMP/err" || rc=$?
	check "$name: exit 6 (got $rc)" test $rc -eq 6
	check "$name: the message says so ($(head -c 200 "$TMP/err"))" grep -q "$words" "$TMP/err"
	check "$name: no results written" test ! -e "$TMP/x.db"
}
expect_6 "no python3" "needs python3" LBSIM_PYTHON=$TMP/nonexistent
mkdir -p "$TMP/shadow/torch"
echo 'raise ImportError("no module named torch here")' > "$TMP/shadow/torch/__init__.py"
printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$TMP/shadow" "$py" > "$TMP/python3"
chmod +x "$TMP/python3"
expect_6 "no PyTorch" "python3-torch" LBSIM_PYTHON=$TMP/python3
expect_6 "no worker program" "torch_worker.py" LBSIM_TORCH_WORKER=$TMP/nonexistent.py

# Refused before anything runs (exit 3), naming why.
refuse() { # NAME WORDS ARGS...
	local name=$1 words=$2 rc=0
	shift 2
	"$LBSIM" testbed "$@" --worker torch --set run.iterations=1 -q -o "$TMP/r.db" 2> "$TMP/err" || rc=$?
	check "refused: $name (exit 3, got $rc)" test $rc -eq 3
	check "refused: $name: says why" grep -q "$words" "$TMP/err"
}
refuse "a network it does not build" "torch worker builds" "$sc" --set model.name=densenet121
refuse "tc-shaped links" "exchange their gradient" "$top_srcdir/scenarios/testbed/ring-shaped.ini"
refuse "work stealing" "micro-batches" "$sc" --policy work-stealing

# The testbed runs: here on, a failure to run is a failure.
rc=0
msg=$("$LBSIM" testbed "$sc" --worker torch --set run.iterations=2 -q -o "$TMP/probe.db" 2>&1) || rc=$?
if [ $rc -ne 0 ]; then
	echo "$msg"
	bad "the torch testbed runs on this machine (exit $rc)"
	finish
	exit 1
fi
ok "the torch testbed runs on this machine"
check "a torch run is recorded as measured, its worker in run_config" \
	test "$(q "$TMP/probe.db" "SELECT r.mode || ',' || c.value FROM runs r JOIN run_config c USING (run_id)
		WHERE c.section = 'testbed' AND c.key = 'worker'")" = "measured,torch"
check "no torch worker outlives its run" sh -c "! pgrep -f torch_worker.py > /dev/null"
check "no rendezvous folder is left behind" sh -c "! ls -d /tmp/lbsim-torch-* 2> /dev/null"

# A policy changes time, never the maths: every worker trains on its slice
# of the same global batch, its loss the sum over its samples divided by
# B, the exchange sums the gradients: the update is the global batch's
# whatever the split. Rank 0's parameters after 4 iterations (the sum
# and the sum of squares, LBSIM_TORCH_DIGEST) agree across the even split,
# the proportional one, lbbsp-cpu's and DDP's to within float rounding
# (1e-6 relative; they differ in the 8th digit here), and a different
# seed's differ (the check can fail).
dg=$TMP/digest
for run in "--policy static-proportional" "--policy lbbsp-cpu" "--policy lbbsp-cpu --set testbed.ddp=yes" \
	"--policy static --seed 2"; do
	# shellcheck disable=SC2086
	LBSIM_TORCH_DIGEST=$dg "$LBSIM" testbed "$sc" --worker torch $run --set run.iterations=4 -q \
		-o "$TMP/dg.db" || bad "torch run $run"
done
cat "$dg"
# lines: static, static-proportional, static, lbbsp-cpu, static, lbbsp-cpu (DDP), static (seed 2)
check "the same update under every split and DDP (6 runs within 1e-6)" \
	awk 'NR <= 6 { s[NR] = $2; q[NR] = $3 } END { for (i = 2; i <= 6; i++)
		if ((s[i] - s[1]) ^ 2 > 1e-12 * s[1] ^ 2 || (q[i] - q[1]) ^ 2 > 1e-12 * q[1] ^ 2) exit 1;
		exit NR != 7 }' "$dg"
check "a different seed gives different weights" \
	awk 'NR == 1 { a = $3 } NR == 7 { b = $3 } END { exit !((a - b) ^ 2 > 1e-8 * a ^ 2) }' "$dg"

# calibrate --torch: real training steps timed, a linear profile written.
"$LBSIM" calibrate --torch cifarnet --batches 4,8,16 --reps 2 -o "$TMP/tp.ini" > "$TMP/tp.out" ||
	bad "calibrate --torch"
check "calibrate --torch: a profile of source torch" grep -q '^kind = torch' "$TMP/tp.ini"
check "calibrate --torch: its three batches" grep -q '^points = 3$' "$TMP/tp.ini"
rc=0
"$LBSIM" calibrate --torch densenet121 > /dev/null 2> "$TMP/err" || rc=$?
check "calibrate --torch densenet121: refused (exit 2, got $rc), naming what it builds" \
	sh -c "test $rc -eq 2 && grep -q 'torch worker builds' '$TMP/err'"

finish
