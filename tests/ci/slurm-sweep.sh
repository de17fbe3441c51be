#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# CI (.ci/run, as root, after the build): a sweep as a Slurm job array
# with the shipped template, scenarios/sweeps/slurm-array.sh (doc/sweeps.md,
# "Across machines"), on a one-node Slurm cluster started here: munged,
# slurmctld and slurmd on this machine, with their own configuration,
# ports, key and state in a scratch folder (nothing in /etc is changed).
# Checks that the array and its merge give every point once, with the
# results of the same sweep run directly; then that a task killed in the
# middle of its shard and resubmitted alone finishes the shard without
# running or recording any point twice.
#   LBSIM=/abs/path/lbsim bash tests/ci/slurm-sweep.sh
set -euo pipefail
: "${LBSIM:?set LBSIM to the lbsim binary, an absolute path}"
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
for c in munged slurmctld slurmd sbatch squeue scancel sinfo; do
	command -v "$c" > /dev/null || [ -x "/usr/sbin/$c" ] ||
		{ echo "FAIL: needs $c (Debian packages slurm-wlm and munge)"; exit 1; }
done
export PATH=$PATH:/usr/sbin
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lbsim-slurm.XXXXXX")
chmod 755 "$TMP"
failed=0 passed=0
check() {
	local name=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "ok: $name"; else failed=$((failed + 1)); echo "FAIL: $name"; fi
}
stop() {
	for p in slurmd slurmctld munged; do
		[ -f "$TMP/$p.pid" ] && kill "$(cat "$TMP/$p.pid")" 2> /dev/null || true
	done
	sleep 1
	[ "${KEEP_TMP:-}" ] || rm -rf "$TMP"
}
trap stop EXIT

# munge: its own key and socket.
mkdir -p "$TMP/munge" "$TMP/state" "$TMP/spool"
dd if=/dev/urandom of="$TMP/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$TMP/munge"; chmod 600 "$TMP/munge/munge.key"
munged --force --key-file="$TMP/munge/munge.key" --socket="$TMP/munge/munge.sock" \
	--pid-file="$TMP/munged.pid" --log-file="$TMP/munged.log" --seed-file="$TMP/munge/seed"

node=$(hostname -s)
export SLURM_CONF=$TMP/slurm.conf
cat > "$SLURM_CONF" << EOF2
ClusterName=lbsimci
SlurmctldHost=$node
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${SLURMCTLD_PORT:-16817}
SlurmdPort=${SLURMD_PORT:-16818}
AuthType=auth/munge
AuthInfo=socket=$TMP/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.pid
SlurmctldLogFile=$TMP/slurmctld.log
SlurmdLogFile=$TMP/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF2
slurmctld -i
slurmd
for _ in $(seq 100); do
	[ "$(sinfo -h -o %T 2> /dev/null)" = idle ] && break
	sleep 0.3
done
check "the one-node cluster is up" test "$(sinfo -h -o %T)" = idle

# wait_jobs: until the queue is empty (at most 5 minutes).
wait_jobs() {
	for _ in $(seq 1500); do
		[ -z "$(squeue -h -o %i)" ] && return 0
		sleep 0.2
	done
	squeue; return 1
}
q() { sqlite3 "$1" "$2"; }
per_point="SELECT group_concat(point || '=' || sim_time_s, ' ') FROM (SELECT DISTINCT p.point, r.sim_time_s
	FROM sweep_points p JOIN runs r USING (run_id) ORDER BY p.point)"

# The template, with its #SBATCH lines adjusted to this site, as its header
# says to: one CPU a task.
cd "$TMP"
sed 's/^#SBATCH --cpus-per-task=8$/#SBATCH --cpus-per-task=1/' "$top_srcdir/scenarios/sweeps/slurm-array.sh" > array.sh
chmod +x array.sh
cat > sweep.ini << EOF2
[sweep]
scenario = $top_srcdir/scenarios/default.ini
[vary]
run.iterations = ${ITERATIONS:-200}
policy = static, lbbsp-gpu
seeds = 1..6
EOF2
"$LBSIM" sweep sweep.ini -j 2 -q -o direct.db

# 1. The array (3 shards) and its merge.
LBSIM=$LBSIM ./array.sh sweep.ini out 3 > submit.out
check "submitted: 3 shards and their merge" grep -q '^submitted 3 shards' submit.out
wait_jobs
check "the merge wrote out/results.db" test -f out/results.db
check "every point once" \
	test "$(q out/results.db "SELECT count(DISTINCT run_id) || ' ' || count(DISTINCT point) FROM sweep_points")" = "12 12"
check "... with the results of the sweep run directly" test "$(q out/results.db "$per_point")" = "$(q direct.db "$per_point")"

# 2. A task killed in the middle of its shard, then resubmitted alone. The
#    points are made long enough to be caught running.
sed -i "s/^run.iterations = .*/run.iterations = ${LONG_ITERATIONS:-100000}/" sweep.ini
LBSIM=$LBSIM ./array.sh sweep.ini kill 3 > submit.out
job=$(sed -n 's/.*(job \([0-9]*\)).*/\1/p' submit.out)
merge=$(squeue -h -o '%i %j' | awk '$2 == "lbsim-merge" { print $1 }')
# The points of shard 2 (2, 5, 8, 11) its job databases hold: NNNNNN.db
# one, A-B.db those from A to B (its jobs are of 2 points: 2 for its 1 CPU).
done_points() {
	ls kill/shard-2-of-3.db.sweep/points/ 2> /dev/null | grep -E '^[0-9]{6}(-[0-9]{6})?\.db$' |
		awk -F'[-.]' '{ n += $2 == "db" ? 1 : ($2 - $1) / 3 + 1 } END { print n + 0 }'
}
for _ in $(seq 1200); do # until task 2 has finished a point of its 4
	[ "$(done_points)" -ge 1 ] && break
	sleep 0.1
done
scancel "${job}_2"
scancel "$merge" # its dependency can no longer be met
wait_jobs
done_before=$(sed -n 's/.*interrupted with \([0-9]*\) of 4 points done.*/\1/p' "lbsim-sweep-${job}_2.out")
check "task 2 was killed with part of its shard done (${done_before:-?} of 4 points)" \
	test -n "$done_before" -a "${done_before:-0}" -ge 1 -a "${done_before:-0}" -lt 4
check "... and the other tasks finished" test -f kill/shard-1-of-3.db -a -f kill/shard-3-of-3.db
again=$(LBSIM=$LBSIM sbatch --parsable --array=2 ./array.sh sweep.ini kill 3)
wait_jobs
check "resubmitted alone, task 2 finished its shard" test -f kill/shard-2-of-3.db
ran=$(sed -n 's/^ran \([0-9]*\) point.*/\1/p' "lbsim-sweep-${again%%;*}_2.out")
before=$(sed -n 's/.*; \([0-9]*\) done before$/\1/p' "lbsim-sweep-${again%%;*}_2.out")
check "... resuming: it ran only the points not done before ($ran ran, ${before:-0} done before)" \
	test -n "$ran" -a "${before:-0}" -ge "$done_before" -a $((ran + ${before:-0})) -eq 4
"$LBSIM" merge kill/results.db kill/shard-*-of-3.db -q
check "merged: every point once" \
	test "$(q kill/results.db "SELECT count(DISTINCT run_id) || ' ' || count(DISTINCT point) FROM sweep_points")" = "12 12"
check "... no point twice" \
	test "$(q kill/results.db "SELECT max(n) FROM (SELECT count(DISTINCT run_id) AS n FROM sweep_points GROUP BY point)")" = 1
echo "slurm-sweep: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
