#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# CI (.ci/run, as root, after the build): a sweep across two machines with
# GNU parallel over ssh (doc/sweeps.md, "Across machines"): this one (":")
# and a second one reached by ssh, here a local sshd on its own port with
# its own host key, standing for a second machine that sees the same
# files, as a cluster's shared file system makes it. Checks that jobs ran
# on both, that the merged database has every point once, and that the
# results are those of the same sweep on one machine.
#   LBSIM=/abs/path/lbsim bash tests/ci/ssh-sweep.sh
set -euo pipefail
: "${LBSIM:?set LBSIM to the lbsim binary, an absolute path}"
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
port=${SSH_PORT:-2222}
sshd=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$sshd" ] || { echo "FAIL: needs sshd (Debian package openssh-server)"; exit 1; }
command -v parallel > /dev/null || { echo "FAIL: needs GNU parallel (Debian package parallel)"; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lbsim-ssh.XXXXXX")
stop() {
	[ -f "$TMP/sshd.pid" ] && kill "$(cat "$TMP/sshd.pid")" 2> /dev/null || true
	rm -rf "$TMP"
}
trap stop EXIT
failed=0 passed=0
check() {
	local name=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "ok: $name"; else failed=$((failed + 1)); echo "FAIL: $name"; fi
}

# The second machine: an sshd on 127.0.0.1:$port that lets this user in
# with a key of the test's own, and nothing else.
ssh-keygen -q -t ed25519 -N '' -f "$TMP/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$TMP/client_key"
cp "$TMP/client_key.pub" "$TMP/authorized_keys"
chmod 600 "$TMP/authorized_keys"
cat > "$TMP/sshd_config" << EOF2
Port $port
ListenAddress 127.0.0.1
HostKey $TMP/host_key
AuthorizedKeysFile $TMP/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
PidFile $TMP/sshd.pid
EOF2
mkdir -p /run/sshd # sshd's privilege separation folder
"$sshd" -f "$TMP/sshd_config" -E "$TMP/sshd.log"
cat > "$TMP/ssh_config" << EOF2
Host second
	HostName 127.0.0.1
	Port $port
	User $(id -un)
	IdentityFile $TMP/client_key
	IdentitiesOnly yes
	StrictHostKeyChecking no
	UserKnownHostsFile /dev/null
	BatchMode yes
	LogLevel ERROR
EOF2
# GNU parallel reaches its --sshlogin hosts with $PARALLEL_SSH.
export PARALLEL_SSH="ssh -F $TMP/ssh_config"
for _ in $(seq 50); do $PARALLEL_SSH second true 2> /dev/null && break; sleep 0.2; done
check "the second machine answers over ssh" $PARALLEL_SSH second true

cd "$TMP"
cat > sweep.ini << EOF2
[sweep]
scenario = $top_srcdir/scenarios/default.ini
[vary]
run.iterations = 100
policy = static, lbbsp-gpu
seeds = 1..6
EOF2
"$LBSIM" sweep sweep.ini -j 1 -S 2/second,2/: --keep -q -o both.db
check "a sweep over ssh and this machine: exit 0" test $? -eq 0
hosts=$(awk -F'\t' 'NR > 1 && $7 == 0 { print $2 }' both.db.sweep/joblog | sort | uniq -c | awk '{ print $2 }' | tr '\n' ' ')
check "jobs ran on both machines (joblog hosts: $hosts)" test "$hosts" = ": second "
q() { sqlite3 "$1" "$2"; }
check "the merged database has 12 runs, one per point" \
	test "$(q both.db "SELECT count(DISTINCT run_id) || ' ' || count(DISTINCT point) FROM sweep_points")" = "12 12"
check "... no point twice" \
	test "$(q both.db "SELECT max(n) FROM (SELECT count(DISTINCT run_id) AS n FROM sweep_points GROUP BY point)")" = 1
"$LBSIM" sweep sweep.ini -j 2 -q -o one.db
per_point="SELECT group_concat(point || '=' || sim_time_s, ' ') FROM (SELECT DISTINCT p.point, r.sim_time_s
	FROM sweep_points p JOIN runs r USING (run_id) ORDER BY p.point)"
check "... with the results of the same sweep on one machine" test "$(q both.db "$per_point")" = "$(q one.db "$per_point")"
"$LBSIM" sweep sweep.ini -j 1 -S 2/second,2/: -q -o both.db
check "run again: nothing added" test "$(q both.db "SELECT count(*) FROM runs")" = 12
# Jobs of three points each (four jobs for the four slots): the same again.
"$LBSIM" sweep sweep.ini -j 1 -S 2/second,2/: --points-per-job 3 --keep -q -o batched.db
check "jobs of 3 points over ssh and here: exit 0" test $? -eq 0
hosts=$(awk -F'\t' 'NR > 1 && $7 == 0 { print $2 }' batched.db.sweep/joblog | sort | uniq -c | awk '{ print $2 }' | tr '\n' ' ')
check "... 4 jobs, on both machines (joblog hosts: $hosts)" \
	test "$(tail -n +2 batched.db.sweep/joblog | wc -l) $hosts" = "4 : second "
check "... with the results of the sweep on one machine" test "$(q batched.db "$per_point")" = "$(q one.db "$per_point")"
echo "ssh-sweep: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
